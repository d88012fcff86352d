package collector

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// TestNoSecretInLogsOrMetricsUnderFaults runs every fault of every API
// with debug logging and credentials in the URL (api_key) and in headers,
// and looks for the credentials in everything the exporter says: logs,
// /metrics, the rows it would gossip (each with its failure's text) and
// what the page reads.
func TestNoSecretInLogsOrMetricsUnderFaults(t *testing.T) {
	const secret = "fault-secret-5d8e"
	up := testtool.StartFake(t, fakeapi.Options{DataToken: secret, IndicatorToken: secret, ConsensusKeys: map[string]string{secret: "enterprise"}})
	c, fake, srv := up.Clock, up.Fake, up.Srv
	yml := strings.Replace(faultConfig, "auth: header # data", "auth: query", 1) // api_key in the URL
	cfg := up.ConfigToken(t, yml, secret)
	var logs testtool.LogBuffer
	reg := prometheus.NewRegistry()
	exp, err := New(cfg, level.NewFilter(log.NewLogfmtLogger(&logs), level.AllowDebug()), reg, Options{Clock: c, IdleAfter: neverIdle})
	if err != nil {
		t.Fatal(err)
	}
	defer exp.Close()
	var out, gossip, page strings.Builder
	scrape := func() {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "3")
		exp.ServeHTTP(rec, req)
		out.WriteString(rec.Body.String())
		waitIdle(t, exp)
		for _, e := range engines(exp) {
			for _, row := range e.appendRows(nil, nil) {
				b, err := json.Marshal(row)
				if err != nil {
					t.Fatal(err)
				}
				gossip.Write(b)
			}
		}
		for _, a := range exp.View() {
			for _, s := range a.Series {
				page.WriteString(s.LastError + "\n")
			}
		}
	}
	scrape()
	if !strings.Contains(out.String(), "onchain_supply{") {
		t.Fatalf("the healthy scrape has no data:\n%s", out.String())
	}
	for _, tc := range faultCases(config.APIData) {
		if tc.fault.Kind == fakeapi.Redirect {
			tc.fault.Location = srv.URL + "/elsewhere?api_key=" + url.QueryEscape(secret)
		}
		fake.SetFault("", tc.fault) // every API at once
		c.Add(2 * time.Minute)
		scrape()
		fake.ClearFaults()
		c.Add(31 * time.Minute)
		scrape()
	}
	// A reload keeps the cache and sends the credential again.
	if err := exp.ApplyConfig(cfg); err != nil {
		t.Fatal(err)
	}
	c.Add(2 * time.Minute)
	scrape()
	if !strings.Contains(gossip.String(), `"err":"`) {
		t.Errorf("no row to gossip carried its failure's text; the test proves nothing")
	}
	for what, text := range map[string]string{"/metrics": out.String(), "log": logs.String(), "gossip": gossip.String(), "page": page.String()} {
		if strings.Contains(text, secret) {
			i := strings.Index(text, secret)
			t.Errorf("%s carries the credential: ...%s...", what, text[max(0, i-200):min(len(text), i+50)])
		}
	}
	if n := strings.Count(logs.String(), "refresh failed"); n < 2*len(faultCases(config.APIData)) {
		t.Errorf("the log has %d failed refreshes; the test proves nothing:\n%s", n, logs.String())
	}
}

// otherHost is a second server standing for a host the credential must
// never reach; it records what it was sent.
type otherHost struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newOtherHost(t *testing.T) *otherHost {
	o := &otherHost{}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		_ = r.Header.Write(&b)
		o.mu.Lock()
		o.seen = append(o.seen, r.URL.String()+"\n"+b.String())
		o.mu.Unlock()
		fmt.Fprintln(w, `{"status":{"code":200,"message":"success"},"result":{"data":[]},"data":[]}`)
	}))
	t.Cleanup(o.Close)
	return o
}

// TestRedirectToAnotherHostKeepsTheCredential: a redirect to another host
// is refused before anything is sent there, whichever way the API takes its
// credential (bearer header, api_key, X-API-Key), even with
// follow_redirects on (off, no redirect is followed at all).
func TestRedirectToAnotherHostKeepsTheCredential(t *testing.T) {
	const secret = "redirect-secret-7f3a"
	for _, tc := range []struct{ name, api, auth string }{
		{"data bearer", config.APIData, "header"},
		{"data api_key", config.APIData, "query"},
		{"indicator bearer", config.APIIndicator, "header"},
		{"consensus X-API-Key", config.APIConsensus, "header"},
		{"consensus api_key", config.APIConsensus, "query"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			other := newOtherHost(t)
			up := testtool.StartFake(t, fakeapi.Options{Now: time.Now, DataToken: secret, IndicatorToken: secret, ConsensusKeys: map[string]string{secret: "enterprise"}})
			up.Fake.SetFault(tc.api, fakeapi.Fault{Kind: fakeapi.Redirect, Location: other.URL + "/v1/btc/network-data/supply?window=day"})
			yml := strings.Replace(faultConfig, "auth: header # "+tc.api, "auth: "+tc.auth, 1)
			yml = strings.ReplaceAll(yml, "  token_env: T\n", "  token_env: T\n  follow_redirects: true\n")
			cfg := up.ConfigToken(t, yml, secret)
			if got := cfg.APIs[tc.api].Auth; got != tc.auth {
				t.Fatalf("auth of %s = %q, want %q", tc.api, got, tc.auth)
			}
			var logs testtool.LogBuffer
			exp, err := New(cfg, level.NewFilter(log.NewLogfmtLogger(&logs), level.AllowDebug()), prometheus.NewRegistry())
			if err != nil {
				t.Fatal(err)
			}
			defer exp.Close()
			rec := httptest.NewRecorder()
			exp.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
			other.mu.Lock()
			seen := other.seen
			other.mu.Unlock()
			for _, s := range seen {
				if strings.Contains(s, secret) {
					t.Errorf("the other host received the credential:\n%s", s)
				}
			}
			if len(seen) != 0 {
				t.Errorf("the other host was called %d times", len(seen))
			}
			if got := requests(rec.Body.String(), tc.api, "302"); got != 1 {
				t.Errorf("upstream_requests_total{code=302} = %v", got)
			}
			if strings.Contains(rec.Body.String(), secret) || strings.Contains(logs.String(), secret) {
				t.Error("the credential appears in /metrics or in the log")
			}
			if !strings.Contains(logs.String(), "refused redirect to another host") {
				t.Errorf("the log does not say why the refresh failed:\n%s", logs.String())
			}
		})
	}
}
