package plan

import (
	"encoding/json"
	"strings"
	"testing"
)

// A plan's name is the provider's text: it reaches the plan_info label,
// the logs and the page as text.Outside makes it, 128 bytes at most, a
// U+202E, an ESC or a BEL written out, never acting; the plan read back
// from its answer (MarshalJSON) has the same name.
func TestPlanNameIsInertAndShort(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"PREMIUM", "PREMIUM"},
		{"  Professional ", "Professional"},
		{"refused: 0 series\u202E\x1b[2J\x07", `refused: 0 series\u{202E}\u{1B}[2J\u{7}`},
		{strings.Repeat("P", 1<<20), strings.Repeat("P", 125) + "…"},
	} {
		for _, answer := range []map[string]any{{"plan": map[string]any{"name": tc.name}}, {"plan": tc.name}} {
			raw, err := json.Marshal(answer)
			if err != nil {
				t.Fatal(err)
			}
			p, err := Parse(raw)
			if err != nil {
				t.Fatalf("%.60s: %v", raw, err)
			}
			if p.Name != tc.want || len(p.Name) > 128 {
				t.Errorf("%.60s: name %.200q, want %.200q", raw, p.Name, tc.want)
			}
			back, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			var q Plan
			if err := json.Unmarshal(back, &q); err != nil || q.Name != p.Name {
				t.Errorf("read back: %q, %v; want %q", q.Name, err, p.Name)
			}
		}
	}
}
