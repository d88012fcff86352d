package decode

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestShareRows(t *testing.T) {
	body := `[{"path": "/v1/a", "parameters": {"window": ["day", "hour"]}, "n": 1},
		{"path": "/v1/b", "parameters": {"window": ["day", "hour"]}, "n": 1},
		{"path": "/v1/c", "parameters": {"window": ["hour", "day"]}, "n": 1.0, "ok": true, "none": null},
		{"path": "/v1/d", "parameters": {"window": ["day", "hour"], "exchange": []}, "plan": "kept"}]`
	parsed, err := Parse([]byte(body), 0)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Parse([]byte(body), 0)
	var rows []map[string]any
	for _, r := range parsed.([]any) {
		rows = append(rows, r.(map[string]any))
	}
	// A value of another type than JSON's is kept, with what holds it.
	type plan struct{ name string }
	p := &plan{"PREMIUM"}
	rows[3]["plan"] = []any{p, "day"}
	want.([]any)[3].(map[string]any)["plan"] = []any{p, "day"}

	ShareRows(rows)
	for i, r := range rows {
		if !reflect.DeepEqual(r, want.([]any)[i]) {
			t.Errorf("row %d: %v, want %v", i, r, want.([]any)[i])
		}
	}
	same := func(a, b any) bool { return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer() }
	if !same(rows[0]["parameters"], rows[1]["parameters"]) {
		t.Error("equal parameters are not one map")
	}
	if same(rows[0]["parameters"], rows[2]["parameters"]) || same(rows[0]["parameters"], rows[3]["parameters"]) {
		t.Error("parameters that differ are one map")
	}
	if w2, w3 := rows[2]["parameters"].(map[string]any)["window"], rows[3]["parameters"].(map[string]any)["window"]; same(w2, w3) {
		t.Error("windows in another order are one list")
	}
	if w1, w3 := rows[1]["parameters"].(map[string]any)["window"], rows[3]["parameters"].(map[string]any)["window"]; !same(w1, w3) {
		t.Error("equal windows in objects that differ are not one list")
	}
	if rows[0]["n"] != json.Number("1") || rows[2]["n"] != json.Number("1.0") {
		t.Errorf("numbers: %v, %v", rows[0]["n"], rows[2]["n"])
	}
	if got := rows[3]["plan"].([]any); got[0] != p {
		t.Errorf("a value of another type: %v", got)
	}
}
