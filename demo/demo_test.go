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

// ONCHAIN_DEMO_TIMELESS=true has the Indicator and Consensus answers carry
// no time: the band's rows lose their dates, the same numbers stay.
func TestTimelessFromTheEnvironment(t *testing.T) {
	band := func(env string) string {
		t.Helper()
		t.Setenv(TimelessEnv, env)
		d, err := Start(log.NewNopLogger())
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		req, _ := http.NewRequest(http.MethodGet, d.URL+"/indicator/api/equities/KRX:005930/pbr-band?limit=2", nil)
		req.Header.Set("Authorization", "Bearer "+IndicatorToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s=%q: status %d: %s", TimelessEnv, env, resp.StatusCode, b)
		}
		return string(b)
	}
	if timed := band(""); !strings.Contains(timed, `"date"`) {
		t.Errorf("the band's rows carry no date by default: %.200s", timed)
	}
	if timeless := band("true"); strings.Contains(timeless, `"date"`) || !strings.Contains(timeless, `"pbr"`) {
		t.Errorf("%s=true: want the band's rows without their date, with their numbers: %.200s", TimelessEnv, timeless)
	}
	t.Setenv(TimelessEnv, "sometimes")
	if d, err := Start(log.NewNopLogger()); err == nil || !strings.Contains(err.Error(), TimelessEnv) {
		if d != nil {
			d.Close()
		}
		t.Errorf("an unreadable %s: %v", TimelessEnv, err)
	}
}
