package backfill

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/common/version"
)

// Remote write and its read-back name the program and its version in
// User-Agent, as the remote-write specification asks of a sender.
func TestUserAgentCarriesTheVersion(t *testing.T) {
	defer func(v string) { version.Version = v }(version.Version)
	version.Version = "1.2.3"
	got := map[string]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got[r.URL.Path] = r.Header.Get("User-Agent")
		if r.URL.Path == "/api/v1/query" {
			_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[]}}`))
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	rw := &RemoteWrite{URL: srv.URL + "/api/v1/write", Redacted: srv.URL + "/api/v1/write", Client: srv.Client(),
		Timeout: 10 * time.Second, QueryURL: srv.URL + "/api/v1/query"}
	if _, err := rw.post(context.Background(), []byte("x")); err != nil {
		t.Fatal(err)
	}
	v := newVerifier(context.Background(), rw, log.NewNopLogger())
	if _, err := v.ask(url.Values{"query": {"up"}}, "vector"); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/api/v1/write", "/api/v1/query"} {
		if got[path] != "onchain_exporter/1.2.3" {
			t.Errorf("%s: User-Agent %q, want onchain_exporter/1.2.3", path, got[path])
		}
	}
}
