package jsonerr

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestShort(t *testing.T) {
	var v map[string]any
	err := json.Unmarshal([]byte(`{"secret-token-xyz" 1}`), &v)
	if err == nil {
		t.Fatal("want a syntax error")
	}
	if s := Short(err); strings.Contains(s, "secret") || len(s) > 120 || s == "" {
		t.Errorf("Short(%q) = %q", err, s)
	}
	long := json.Unmarshal([]byte(strings.Repeat("[", 10)+"x"), &v)
	if s := Short(long); len(s) > 120 {
		t.Errorf("%d characters", len(s))
	}
}
