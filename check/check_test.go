package check

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

// The example configuration passes --config.check as written, given its
// credential; a broken one fails with file:line messages and exit code 1.
func TestConfigCheck(t *testing.T) {
	t.Setenv("ONCHAIN_DATA_TOKEN", "example-token")
	var out, errOut bytes.Buffer
	if code := run([]string{"--config.check", "--config.file=examples/config.yml"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	// The forecast that follows is TestConfigCheckForecast's.
	if got, _, _ := strings.Cut(out.String(), "\n"); got != "OK: examples/config.yml: 13 tuples" {
		t.Errorf("stdout = %q", got)
	}
	if strings.Contains(out.String()+errOut.String(), "example-token") {
		t.Error("the credential was printed")
	}

	out.Reset()
	errOut.Reset()
	t.Setenv("T", "x")
	code := run([]string{"--config.check", "--config.file=config/testdata/bad_window_not_allowed.yml"}, &out, &errOut)
	want := "config/testdata/bad_window_not_allowed.yml:6: data.metrics[0].window: \"block\" is not allowed for /v1/btc/market-data/open-interest (allowed: day, hour, min)\n"
	if code != 1 || errOut.String() != want {
		t.Errorf("exit %d, stderr %q; want 1 and %q", code, errOut.String(), want)
	}

	t.Setenv("ONCHAIN_DATA_TOKEN", "")
	errOut.Reset()
	if code := run([]string{"--config.check", "--config.file=examples/config.yml"}, &out, &errOut); code != 1 ||
		!strings.Contains(errOut.String(), "examples/config.yml:9: data.token_env: environment variable ONCHAIN_DATA_TOKEN is not set or empty") {
		t.Errorf("missing credential: exit %d, stderr %q", code, errOut.String())
	}
}

// One tuple is "1 tuple".
func TestConfigCheckSingular(t *testing.T) {
	t.Setenv("ONCHAIN_TEST_TOKEN", "x")
	file := filepath.Join(t.TempDir(), "one.yml")
	writeFile(t, file, "data:\n  url: http://127.0.0.1:1\n  token_env: ONCHAIN_TEST_TOKEN\n  metrics:\n    - path: /v1/btc/network-data/supply\n")
	var out, errOut bytes.Buffer
	if code := run([]string{"--config.check", "--config.file=" + file}, &out, &errOut); code != 0 || !strings.HasPrefix(out.String(), "OK: "+file+": 1 tuple\n") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
}

// A first run without a configuration file says what to do, and doing it
// works: examples/config.yml copied to the file passes --config.check.
func TestMissingConfigFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "onchain.yml")
	hint := "no configuration file: to try the exporter without a real upstream, run it with --demo; " +
		"to configure it, copy examples/config.yml to " + file + ", set ONCHAIN_DATA_TOKEN and edit its metrics"

	var out, errOut bytes.Buffer
	code := run([]string{"--config.check", "--config.file=" + file}, &out, &errOut)
	want := "reading config: open " + file + ": no such file or directory\n" + hint + "\n"
	if code != 1 || errOut.String() != want {
		t.Errorf("--config.check: exit %d, stderr %q; want 1 and %q", code, errOut.String(), want)
	}
	// Serving says it too: app's TestMissingConfigFileServing.

	example, err := os.ReadFile("examples/config.yml")
	if err != nil {
		t.Fatalf("the file the hint names: %v", err)
	}
	writeFile(t, file, string(example))
	t.Setenv("ONCHAIN_DATA_TOKEN", "example-token")
	out.Reset()
	errOut.Reset()
	if code := run([]string{"--config.check", "--config.file=" + file}, &out, &errOut); code != 0 || !strings.HasPrefix(out.String(), "OK: ") {
		t.Errorf("the example copied as the hint says: exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}

	// A file that exists but cannot be read gets no such hint.
	errOut.Reset()
	if code := run([]string{"--config.check", "--config.file=" + dir}, &out, &errOut); code != 1 || strings.Contains(errOut.String(), "--demo") {
		t.Errorf("a directory as the file: exit %d, stderr %q", code, errOut.String())
	}
}

// Issue 27: a typo outside the built-in catalog passed --config.check.
// Offline, a path or parameter name near one of the catalog is a warning
// with what it nearly matches; the check still passes (exit 0).
func TestConfigCheckFindings(t *testing.T) {
	t.Setenv("ONCHAIN_TEST_TOKEN", "x")
	file := filepath.Join(t.TempDir(), "typos.yml")
	writeFile(t, file, `data:
  url: http://127.0.0.1:1
  token_env: ONCHAIN_TEST_TOKEN
  metrics:
    - path: /v1/btc/exchange-flow/reserve
      exchange: binance
    - path: /v1/btc/exchange-flows/reserve
      exchanges: [binance, coinbase_advanced]
`)
	var out, errOut bytes.Buffer
	code := run([]string{"--config.check", "--config.file=" + file}, &out, &errOut)
	got, _, _ := strings.Cut(out.String(), "\nForecast")
	want := "OK: " + file + ": 3 tuples\n" +
		"WARNING: " + file + ":5: data.metrics[0].path: /v1/btc/exchange-flow/reserve is outside the built-in catalog; did you mean /v1/btc/exchange-flows/reserve? (it is asked for as written)\n" +
		"WARNING: " + file + `:8: data.metrics[1].exchanges: no endpoint of the built-in catalog takes a parameter exchanges; did you mean "exchange"? (it is sent, and labels the series, as written)` + "\n"
	if code != 0 || got != want {
		t.Errorf("exit %d, stdout before the forecast:\n%s\nwant exit 0 and\n%s\nstderr: %s", code, got, want, errOut.String())
	}
}

// --config.check.upstream reads each listing endpoint once and checks
// every path, parameter name and value against what they list, with
// suggestions, and says what it did not check. The Indicator and
// consensus lists' shapes are not published: both of the fake's dialects
// give the same findings.
func TestConfigCheckUpstream(t *testing.T) {
	for _, d := range fakeapi.Dialects {
		t.Run(d.String(), func(t *testing.T) { checkUpstreamAgainst(t, d) })
	}
}

func checkUpstreamAgainst(t *testing.T, d fakeapi.Dialect) {
	up := newFakeUpstream(t, fakeapi.Options{DataToken: "data-tok", IndicatorToken: "ind-tok", Dialect: d})
	t.Setenv("ONCHAIN_TEST_DATA", "data-tok")
	t.Setenv("ONCHAIN_TEST_INDICATOR", "ind-tok")
	file := filepath.Join(t.TempDir(), "lists.yml")
	writeFile(t, file, fmt.Sprintf(`data:
  url: %[1]s
  token_env: ONCHAIN_TEST_DATA
  metrics:
    - path: /v1/btc/exchange-flows/netflow
      exchange: [binance, binanse]
    - path: /v1/btc/exchange-flow/reserve
      exchange: binance
    - path: /v1/btc/exchange-flows/inflow
      exchanges: binance
    - path: /v2/network/events-count
      asset: usdt
indicator:
  url: %[1]s/indicator
  token_env: ONCHAIN_TEST_INDICATOR
  metrics:
    - path: /api/equities/{equity}/pbr-band
      equity: [KRX:005930, KRX:05930]
consensus:
  url: %[1]s/consensus
  metrics:
    - path: /consensus
      asset: [bitcoin, Etherium]
`, up.URL))
	var out, errOut bytes.Buffer
	code := run([]string{"--config.check.upstream", "--config.file=" + file}, &out, &errOut)
	got, _, _ := strings.Cut(out.String(), "\nForecast")
	// The fake's statics are its own (check_plan_test.go checks the
	// plan's line against answers of fixed content).
	got = regexp.MustCompile(`, \d+ always allowed,`).ReplaceAllString(got, ", N always allowed,")
	w := "WARNING: " + file
	// A path no list knows is a typo, an error, not a path the plan
	// refuses (issue 39).
	typo := file + ":7: data.metrics[1].path: discovery lists no endpoint /v1/btc/exchange-flow/reserve, nor does the key's plan (PREMIUM); did you mean /v1/btc/exchange-flows/reserve?"
	want := strings.Join([]string{
		"FAILED: " + file + ": " + typo,
		w + `:6: data.metrics[0].exchange: discovery lists no value "binanse" of exchange for /v1/btc/exchange-flows/netflow (listed: all_exchange, binance, bybit, okx, deribit, bitmex, gate_io, huobi and 9 more); it is asked for anyway; did you mean "binance"?`,
		w + `:10: data.metrics[2].exchanges: discovery lists no parameter exchanges for /v1/btc/exchange-flows/inflow (listed: exchange, window); it is sent anyway; did you mean "exchange"?`,
		w + `:18: indicator.metrics[0].equity: /api/equities lists no equity "KRX:05930"; did you mean "KRX:005930"?`,
		w + `:23: consensus.metrics[0].asset: /assets lists no asset "Etherium"; did you mean "ethereum"?`,
		"Checked against the upstream's lists: data /v1/discovery/endpoints (18 items); data /v2/discovery/endpoints (2 items); " +
			"indicator /api/indicators (1 item); indicator /api/equities (6 items); consensus /assets (4 items)",
		"Plan: plan PREMIUM: 18 paths with windows, N always allowed, rate limit 600 per minute",
		"Plan: rate_limit and daily_budget not set in the file: rate_limit 540 a minute, daily_budget 777600 a day, the plan's rate limit less the 10 % reserve",
		"Not checked: data: window and limit against discovery (the built-in catalog checks them for its endpoints)",
		"Not checked: indicator: parameter names (the Indicator API lists none)",
		"Not checked: consensus: paths and parameter names (the Analyst Consensus API lists its assets only)",
		""}, "\n")
	if code != 1 || got != want || !strings.HasSuffix(errOut.String(), "\n"+typo+"\n") && errOut.String() != typo+"\n" {
		t.Errorf("exit %d, stdout before the forecast:\n%s\nwant exit 1 and\n%s\nstderr: %s", code, got, want, errOut.String())
	}
	for _, list := range []string{"/v1/discovery/endpoints", "/v2/discovery/endpoints", "/indicator/api/indicators", "/indicator/api/equities", "/consensus/assets", "/v1/my/discovery/endpoints"} {
		if n := up.fake.CallsFor(list); n != 1 {
			t.Errorf("%s called %d times, want 1", list, n)
		}
	}
	if n := up.fake.Calls("data") + up.fake.Calls("indicator") + up.fake.Calls("consensus"); n != 6 {
		t.Errorf("%d upstream calls, want the 5 lists and the plan only", n)
	}
}

// A list that cannot be read is said not checked, with why, and never
// quotes the credential; the findings against the catalog stay. A
// credential the upstream rejects fails the check (exit 1, the first
// line says why): the exporter would run and serve nothing. (It printed
// OK and exited 0: the check could not gate a deploy.)
func TestConfigCheckUpstreamSaysWhatFailed(t *testing.T) {
	up := newFakeUpstream(t, fakeapi.Options{DataToken: "right-tok"})
	t.Setenv("ONCHAIN_TEST_DATA", "wrong-tok-83c1")
	file := filepath.Join(t.TempDir(), "wrong.yml")
	writeFile(t, file, "data:\n  url: "+up.URL+"\n  token_env: ONCHAIN_TEST_DATA\n  metrics:\n    - path: /v1/btc/exchange-flow/reserve\n")
	var out, errOut bytes.Buffer
	code := run([]string{"--config.check.upstream", "--config.file=" + file}, &out, &errOut)
	got, _, _ := strings.Cut(out.String(), "\nForecast")
	for _, want := range []string{
		"WARNING: " + file + ":5: data.metrics[0].path: /v1/btc/exchange-flow/reserve is outside the built-in catalog; did you mean /v1/btc/exchange-flows/reserve?",
		"Checked against the upstream's lists: none\n",
		"Not checked: data: what /v1/discovery/endpoints lists (/v1/discovery/endpoints: unauthorized (HTTP 401)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the output lacks %q:\n%s", want, got)
		}
	}
	if first, _, _ := strings.Cut(out.String(), "\n"); !strings.HasPrefix(first, "FAILED: "+file+": the upstream rejects the credential: data:") {
		t.Errorf("first line %q, want the rejected credential", first)
	}
	if code != 1 || strings.Contains(out.String()+errOut.String(), "wrong-tok-83c1") {
		t.Errorf("exit %d, or the credential was printed:\n%s\n%s", code, out.String(), errOut.String())
	}
}
