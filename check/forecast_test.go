package check

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/onchain-exporter/onchain_exporter/budget"
	"github.com/onchain-exporter/onchain_exporter/config"
)

var updateGolden = flag.Bool("update", false, "rewrite the check/testdata/*.golden outputs of --config.check")

// --config.check prints, after OK, the forecast of the upstream calls a
// day: the example a new user starts from (within its daily_budget), and
// a file with all, a block spacing not known,
// windowless APIs and rate_limit.
func TestConfigCheckForecast(t *testing.T) {
	t.Setenv("ONCHAIN_DATA_TOKEN", "example-token")
	t.Setenv("ONCHAIN_TEST_TOKEN", "test-token")
	for _, tc := range []struct{ file, golden string }{
		{"examples/config.yml", "check/testdata/config_check_example.golden"},
		{"check/testdata/forecast_mixed.yml", "check/testdata/config_check_mixed.golden"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := run([]string{"--config.check", "--config.file=" + tc.file}, &out, &errOut); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			if *updateGolden {
				if err := os.WriteFile(tc.golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(tc.golden)
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != string(want) {
				t.Errorf("--config.check on %s:\n%s\nwant (%s, -update rewrites it):\n%s", tc.file, out.String(), tc.golden, want)
			}
			if strings.Contains(out.String(), "-token") {
				t.Error("a credential was printed")
			}
		})
	}
}

// docs/budget.md shows the example's forecast and its plan's log line as
// the exporter prints them.
func TestBudgetDocShowsTheForecast(t *testing.T) {
	t.Setenv("ONCHAIN_DATA_TOKEN", "example-token")
	doc, err := os.ReadFile("docs/budget.md")
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile("check/testdata/config_check_example.golden")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "```text\n"+string(golden)+"```") {
		t.Error("docs/budget.md does not show check/testdata/config_check_example.golden as it is")
	}
	cfg, err := config.Load("examples/config.yml")
	if err != nil {
		t.Fatal(err)
	}
	line := budget.Forecast(cfg).APIs[0].Allotment.Summary(3)
	if !strings.Contains(string(doc), "```text\n"+line+"\n```") {
		t.Errorf("docs/budget.md does not show the plan's log line:\n%s", line)
	}
}

// TestPerMinuteText: a configuration of a few calls a day is not
// forecast at "0.0 calls a minute".
func TestPerMinuteText(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{{0, "0.0"}, {2.18, "2.2"}, {0.1, "0.1"}, {4.2 / 1440, "0.0029"}, {0.05, "0.05"}} {
		if got := perMinuteText(tc.v); got != tc.want {
			t.Errorf("perMinuteText(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}
