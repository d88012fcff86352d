package collector

import (
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

// newClock is the simulated time shared by the fake upstream and the
// exporter of a test.
func newClock() *fakeapi.SimClock {
	return fakeapi.NewSimClock(time.Date(2026, 11, 20, 12, 34, 56, 0, time.UTC))
}

const testToken = "test-data-token"

// env is a running fake upstream and an exporter configured against it.
type env struct {
	t     *testing.T
	clock *fakeapi.SimClock
	fake  *fakeapi.Server
	srv   *httptest.Server
	exp   *Exporter
	reg   *prometheus.Registry
}

// newEnv starts the fake upstream and an exporter on the config in yml,
// where {{URL}} stands for the fake's address and token_env T holds the
// fake's credential.
func newEnv(t *testing.T, yml string, fo fakeapi.Options) *env {
	t.Helper()
	c := newClock()
	if fo.Now == nil {
		fo.Now = c.Now
	}
	if fo.DataToken == "" {
		fo.DataToken = testToken
	}
	fake := fakeapi.New(fo)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	cfg, err := config.Parse("test.yml", []byte(strings.ReplaceAll(yml, "{{URL}}", srv.URL)), func(string) string { return testToken })
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	exp, err := New(cfg, log.NewNopLogger(), reg, Options{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(exp.Close)
	return &env{t: t, clock: c, fake: fake, srv: srv, exp: exp, reg: reg}
}

// parse loads yml against the env's fake, unexpanded.
func (e *env) parse(yml string) *config.Config {
	e.t.Helper()
	cfg, err := config.Parse("test.yml", []byte(strings.ReplaceAll(yml, "{{URL}}", e.srv.URL)), func(string) string { return testToken })
	if err != nil {
		e.t.Fatal(err)
	}
	return cfg
}

// scrape serves one /metrics request and returns the body.
func (e *env) scrape(timeout string) string {
	e.t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	if timeout != "" {
		req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", timeout)
	}
	rec := httptest.NewRecorder()
	e.exp.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		e.t.Fatalf("scrape: HTTP %d: %s", rec.Code, rec.Body.String())
	}
	return rec.Body.String()
}

// lines returns the sample lines of families whose name starts with one
// of the prefixes, sorted.
func lines(body string, prefixes ...string) []string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		for _, p := range prefixes {
			if strings.HasPrefix(l, p) {
				out = append(out, l)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// valueOf returns the value text of the one series line starting with
// prefix, or "" when there is none.
func valueOf(body, prefix string) string {
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l[strings.LastIndexByte(l, ' ')+1:]
		}
	}
	return ""
}

func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }
