package demo

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/go-kit/log"
)

// ONCHAIN_DEMO_DIALECT picks the fake upstream's payload dialect, so that
// `--demo` (and a test running the binary) can show either.
func TestDialectFromTheEnvironment(t *testing.T) {
	for env, prefix := range map[string]string{"": `{"data":[`, "b": `[{`} {
		t.Setenv(DialectEnv, env)
		d, err := Start(log.NewNopLogger())
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Get(d.URL + "/consensus/assets")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		d.Close()
		if !strings.HasPrefix(string(b), prefix) {
			t.Errorf("%s=%q: /assets answers %.40s, want %s...", DialectEnv, env, b, prefix)
		}
	}
	t.Setenv(DialectEnv, "c")
	if d, err := Start(log.NewNopLogger()); err == nil || !strings.Contains(err.Error(), DialectEnv) {
		if d != nil {
			d.Close()
		}
		t.Errorf("an unknown dialect: %v", err)
	}
}
