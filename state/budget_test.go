package state

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-kit/log"

	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// A reservation is on disk, synced and renamed into place, when Reserve
// returns; a restart hands it back once, to the same account only.
func TestReservationHandedBackOnce(t *testing.T) {
	dir := t.TempDir()
	s := OpenStore(dir, log.NewNopLogger())
	if err := s.Reserve("data", "acct", json.RawMessage(`{"day":"2026-11-20","used":7}`)); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "budget-data.json"))
	if err != nil || string(data) != `{"version":1,"api":"data","account":"acct","budget":{"day":"2026-11-20","used":7}}` {
		t.Fatalf("reservation file %s (%v)", data, err)
	}
	again := OpenStore(dir, log.NewNopLogger())
	if got := again.TakeReservation("data", "acct"); string(got) != `{"day":"2026-11-20","used":7}` {
		t.Errorf("handed back %s", got)
	}
	if got := again.TakeReservation("data", "acct"); got != nil {
		t.Errorf("handed back twice: %s", got)
	}
	if got := OpenStore(dir, log.NewNopLogger()).TakeReservation("data", "another"); got != nil {
		t.Errorf("another account was handed %s", got)
	}
}

// A reservation file that is not one is ignored at open, with a warning
// naming it and why.
func TestReservationFileIgnored(t *testing.T) {
	for _, tc := range []struct{ name, content, problem string }{
		{"garbage", "{", "unexpected end of JSON input"},
		{"other version", `{"version":9,"api":"data","account":"a","budget":{}}`, "format version 9"},
		{"other API", `{"version":1,"api":"indicator","account":"a","budget":{}}`, `budget of API \"indicator\"`},
		{"no budget", `{"version":1,"api":"data","account":"a"}`, "no budget in it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "budget-data.json")
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			logs := &testtool.LogBuffer{}
			s := OpenStore(dir, log.NewLogfmtLogger(logs))
			if got := s.TakeReservation("data", "a"); got != nil {
				t.Errorf("handed back %s", got)
			}
			if !strings.Contains(logs.String(), "budget reservation file ignored") || !strings.Contains(logs.String(), "file="+path) ||
				!strings.Contains(logs.String(), tc.problem) {
				t.Errorf("want a warning naming %s and %q:\n%s", path, tc.problem, logs)
			}
		})
	}
}

// A reservation that cannot be written is an error, logged once naming
// the file until a write succeeds again.
func TestReservationThatCannotBeWritten(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "budget-data.json")
	if err := os.MkdirAll(filepath.Join(path, "x"), 0o755); err != nil { // a rename cannot replace it
		t.Fatal(err)
	}
	logs := &testtool.LogBuffer{}
	s := OpenStore(dir, log.NewLogfmtLogger(logs))
	for range 3 {
		if err := s.Reserve("data", "acct", json.RawMessage(`{}`)); err == nil {
			t.Fatal("a reservation that cannot be written returned no error")
		}
	}
	if n := strings.Count(logs.String(), "cannot write the day's call count"); n != 1 || !strings.Contains(logs.String(), "file="+path) {
		t.Errorf("%d error lines; want one naming %s:\n%s", n, path, logs)
	}
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	if err := s.Reserve("data", "acct", json.RawMessage(`{}`)); err != nil {
		t.Errorf("the disk writable again: %v", err)
	}
}
