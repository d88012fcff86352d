package app

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

// startConfig serves supply without any list, and every stablecoin and
// every equity through the upstream's lists.
func startConfig(url, tokenFile string) string {
	return fmt.Sprintf(`
data:
  url: %[1]q
  token_file: %[2]q
  metrics:
    - path: /v1/btc/network-data/supply
    - path: /v2/network/events-count
      asset: all
      chain: ethereum
indicator:
  url: %[3]q
  token_file: %[2]q
  metrics:
    - path: /api/equities/{equity}/pbr-band
      equity: all
`, url, tokenFile, url+"/indicator")
}

// count returns how many series lines of family carry every label pair.
func count(body, family string, pairs ...string) int {
	n := 0
	for _, l := range strings.Split(body, "\n") {
		if !strings.HasPrefix(l, family+"{") {
			continue
		}
		all := true
		for i := 0; i+1 < len(pairs); i += 2 {
			all = all && strings.Contains(l, pairs[i]+`="`+pairs[i+1]+`"`)
		}
		if all {
			n++
		}
	}
	return n
}

// The exporter started with its upstream down serves at once (how soon is
// BenchmarkStartWhileUpstreamIsDown's figure, not a bound of this test),
// serves its own metrics (which say the expansion fails), reloads, and
// serves every stablecoin and every equity once the upstream is back on
// the same address, without a restart.
func TestStartWhileUpstreamIsDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // down: connections are refused
	dir := t.TempDir()
	cfgFile, tokenFile := filepath.Join(dir, "onchain.yml"), filepath.Join(dir, "token")
	writeFile(t, tokenFile, "token-A\n")
	writeFile(t, cfgFile, startConfig("http://"+addr, tokenFile))

	e := startRun(t, http.DefaultClient, "http", flags{config: cfgFile})
	body := e.metrics()
	for _, api := range []string{"data", "indicator"} {
		if v := valueOf(body, `onchain_exporter_expansion_success{api="`+api+`"}`); v != "0" {
			t.Errorf("expansion_success{api=%q} = %q while the upstream is down", api, v)
		}
		if v := valueOf(body, `onchain_exporter_expansion_entries_waiting{api="`+api+`"}`); v != "1" {
			t.Errorf("entries_waiting{api=%q} = %q while the upstream is down", api, v)
		}
	}
	if valueOf(body, `onchain_exporter_tuples{api="data"}`) != "1" || count(body, "onchain_exporter_query_success", "endpoint", "/v1/btc/network-data/supply") != 1 {
		t.Errorf("the entry that needs no list is not served:\n%s", body)
	}
	if code, answer := e.get(http.MethodPost, "/-/reload"); code != http.StatusOK {
		t.Errorf("reload while the upstream is down: HTTP %d: %s", code, answer)
	}
	if code, page := e.get(http.MethodGet, "/"); code != http.StatusOK ||
		!strings.Contains(page, `Metrics of the data API only</a>: 1 tuple, lists failing (`) || !strings.Contains(page, "1 entry waiting") {
		t.Errorf("the landing page does not say the data API's lists fail: HTTP %d\n%s", code, page)
	}

	fake := fakeapi.New(fakeapi.Options{DataToken: "token-A", IndicatorToken: "token-A"})
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the upstream's address is taken meanwhile: %v", err)
	}
	srv := httptest.NewUnstartedServer(fake)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	defer srv.Close()
	back := time.Now()
	stablecoins, equities := listed(t, srv.URL+"/v2/discovery/endpoints", "/v2/network/events-count"), listed(t, srv.URL+"/indicator/api/equities", "")
	if len(stablecoins) < 3 || len(equities) < 3 {
		t.Fatalf("the fake lists too little: %v, %v", stablecoins, equities)
	}
	// The retries back off from 5 s, and the upstream was down for
	// under a second: a few seconds here, but the wait is a generous
	// limit for a loaded machine, not the figure.
	for {
		body = e.metrics()
		if valueOf(body, `onchain_exporter_expansion_success{api="data"}`) == "1" && valueOf(body, `onchain_exporter_expansion_success{api="indicator"}`) == "1" {
			break
		}
		if time.Since(back) > 5*time.Minute {
			t.Fatalf("five minutes after the upstream came back, the expansion still fails:\n%s", e.stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("expanded %v after the upstream came back", time.Since(back).Round(time.Millisecond))
	// The tuples the expansion adds are served once their first refresh
	// ends: a moment after the expansion, longer on a loaded machine.
	served := func(body string) bool {
		for _, a := range stablecoins {
			if count(body, "onchain_exporter_query_success", "endpoint", "/v2/network/events-count", "asset", a) != 1 {
				return false
			}
		}
		return true
	}
	for body = e.metrics(); !served(body) && time.Since(back) < 5*time.Minute; body = e.metrics() {
		time.Sleep(100 * time.Millisecond)
	}
	for _, a := range stablecoins {
		if count(body, "onchain_exporter_query_success", "endpoint", "/v2/network/events-count", "asset", a) != 1 {
			t.Errorf("stablecoin %s is not served", a)
		}
	}
	for _, eq := range equities {
		if count(body, "onchain_exporter_query_success", "api", "indicator", "equity", eq) != 1 {
			t.Errorf("equity %s is not served", eq)
		}
	}
	if v := valueOf(body, `onchain_exporter_tuples{api="data"}`); v != fmt.Sprint(1+len(stablecoins)) {
		t.Errorf("%s data tuples, want %d", v, 1+len(stablecoins))
	}
	if valueOf(body, `onchain_exporter_expansion_last_success_timestamp_seconds{api="data"}`) == "" ||
		valueOf(body, "onchain_exporter_config_last_reload_successful ") != "1" {
		t.Errorf("after the expansion:\n%s", body)
	}
}

// listed reads a list of the fake directly: the asset values of one v2
// discovery path, or the equity ids.
func listed(t *testing.T, url, path string) []string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer token-A")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer struct {
		Data   []map[string]any `json:"data"`
		Result struct {
			Data []map[string]any `json:"data"`
		} `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range answer.Result.Data {
		if it["path"] != path {
			continue
		}
		params, _ := it["parameters"].(map[string]any)
		values, _ := params["asset"].([]any)
		for _, v := range values {
			out = append(out, fmt.Sprint(v))
		}
	}
	for _, row := range answer.Data {
		out = append(out, fmt.Sprint(row["id"]))
	}
	return out
}

// BenchmarkStartWhileUpstreamIsDown measures how long New and Start take to
// answer /-/healthy with its upstream refusing connections, the figure
// behind the README's "serves within a second" (BENCHMARKS.md).
func BenchmarkStartWhileUpstreamIsDown(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	down := ln.Addr().String()
	ln.Close()
	dir := b.TempDir()
	cfgFile, tokenFile := filepath.Join(dir, "onchain.yml"), filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("token-A\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(cfgFile, []byte(startConfig("http://"+down, tokenFile)), 0o600); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		f := flags{config: cfgFile, storage: new(""), logLevel: "error"}
		a, err := New(f.options(io.Discard))
		if err != nil {
			b.Fatal(err)
		}
		if err := a.Start(); err != nil {
			b.Fatal(err)
		}
		for {
			resp, err := http.Get("http://" + a.Addr() + "/-/healthy")
			if err == nil {
				resp.Body.Close()
				break
			}
			select {
			case err := <-a.Done():
				b.Fatalf("serving ended: %v", err)
			case <-time.After(time.Millisecond):
			}
		}
		b.StopTimer()
		a.Stop()
		b.StartTimer()
	}
}
