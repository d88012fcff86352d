package upstream

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

// The rules of the APIs that the client keeps: redirects, raw access.

// TestRedirectsAreOffByDefault: without follow_redirects the answer of a
// redirect is an error and its target is never asked.
func TestRedirectsAreOffByDefault(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, "/elsewhere", http.StatusMovedPermanently)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	a := &config.API{Name: config.APIConsensus, URL: u, Timeout: time.Second, Concurrency: 1}
	c := New(a, NewMetrics(prometheus.NewRegistry()), time.Now, log.NewNopLogger())
	_, err := c.Get(context.Background(), "/consensus", nil, false)
	if hits.Load() != 1 || err == nil || AsError(err).Message != "redirect (HTTP 301) not followed: follow_redirects is off" {
		t.Errorf("%d requests, error %v", hits.Load(), err)
	}
}

// TestRawAccessFallsBackUntilReload: a key the Analyst Consensus API
// refuses raw access is asked again at once without source_text, the
// calls after go without it, and a reload asks with it again.
func TestRawAccessFallsBackUntilReload(t *testing.T) {
	fake := fakeapi.New(fakeapi.Options{ConsensusKeys: map[string]string{"k": "premium"}})
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.Query().Get("source_text"))
		fake.ServeHTTP(w, r)
	}))
	defer srv.Close()
	yml := fmt.Sprintf("consensus:\n  url: %s/consensus\n  token_env: T\n  metrics:\n    - path: /consensus\n      asset: bitcoin\n", srv.URL)
	cfg, err := config.Parse("test.yml", []byte(yml), func(string) string { return "k" })
	if err != nil {
		t.Fatal(err)
	}
	c := New(cfg.APIs[config.APIConsensus], NewMetrics(prometheus.NewRegistry()), time.Now, log.NewNopLogger())
	q := url.Values{"asset": {"bitcoin"}, "days": {"7"}, "source_text": {"statement"}}
	get := func() {
		t.Helper()
		if _, err := c.Get(context.Background(), "/consensus", q, true); err != nil {
			t.Fatal(err)
		}
	}
	get()
	get()
	c.Reloaded()
	get()
	if want := []string{"statement", "", "", "statement", ""}; !slices.Equal(asked, want) {
		t.Errorf("source_text asked %q, want %q", asked, want)
	}
}

// TestTooLargeSaysSo: an answer past MaxBody is not read, and its error
// says so by a flag, so that a caller asking for many rows can ask for
// fewer (backfill); an answer within it is read.
func TestTooLargeSaysSo(t *testing.T) {
	var size atomic.Int64
	size.Store(MaxBody + 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		pad := make([]byte, int(size.Load())-len(`{"data":[],"pad":""}`))
		for i := range pad {
			pad[i] = 'x'
		}
		fmt.Fprintf(w, `{"data":[],"pad":"%s"}`, pad)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	a := &config.API{Name: config.APIIndicator, URL: u, Timeout: 5 * time.Second, Concurrency: 1}
	c := New(a, NewMetrics(prometheus.NewRegistry()), time.Now, log.NewNopLogger())
	_, err := c.Fetch(context.Background(), "/x", nil, false, 0)
	if e := AsErrorOrNil(err); e == nil || !e.TooLarge || e.Code != "decode" {
		t.Fatalf("an answer of MaxBody+1 bytes: got %v, want a decode error marked TooLarge", err)
	}
	size.Store(MaxBody)
	if _, err := c.Fetch(context.Background(), "/x", nil, false, 0); err != nil {
		t.Fatalf("an answer of MaxBody bytes: %v", err)
	}
}
