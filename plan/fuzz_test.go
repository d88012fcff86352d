package plan

import (
	"encoding/json"
	"testing"
	"time"
)

// FuzzParse: no answer makes Parse panic, and a plan it reads is written
// back and read again to an Equal plan, whose checks do not panic.
func FuzzParse(f *testing.F) {
	for _, s := range []string{current, older, `{}`, `{"plan":"x"}`, `{"apiEndpoint":{"statics":[1,"/a"]}}`,
		`{"apiEndpoint":{"a":{"b":{"c":{"window":{"day":"P1Y"}}}}}}`, `{"apiRateLimit":{"token":"7","window":"day"}}`} {
		f.Add([]byte(s))
	}
	now := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Parse(b)
		if err != nil {
			return
		}
		for _, path := range p.PathsListed() {
			for _, w := range append(p.WindowsOf(path), "", "day", "min") {
				_ = p.Check(path, w, now.AddDate(-5, 0, 0), now)
				_, _ = p.Earliest(path, w, now)
			}
		}
		out, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("a plan Parse read cannot be written back: %v", err)
		}
		q, err := Parse(out)
		if err != nil {
			t.Fatalf("reading back %s: %v", out, err)
		}
		if !p.Equal(q) {
			t.Fatalf("round trip changed the plan:\n%+v\n%+v", p, q)
		}
	})
}
