package upstream

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/version"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// Every upstream request says which program and version sends it, as
// version.Version is at the time of the request (main fills it in at
// start-up).
func TestUserAgentCarriesTheVersion(t *testing.T) {
	defer func(v string) { version.Version = v }(version.Version)
	version.Version = "1.2.3"
	got := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("User-Agent")
		_, _ = w.Write([]byte(`{"status":{"code":200,"message":"success"},"result":{"data":[]}}`))
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	pool := NewPool(prometheus.NewRegistry(), time.Now, log.NewNopLogger())
	defer pool.Close()
	c := pool.Client(&config.API{Name: config.APIData, URL: u, Concurrency: 1, Timeout: 10 * time.Second})
	if _, err := c.Get(context.Background(), "/v1/btc/network-data/supply", nil, true); err != nil {
		t.Fatal(err)
	}
	if ua := <-got; ua != "onchain_exporter/1.2.3" {
		t.Errorf("User-Agent %q, want onchain_exporter/1.2.3", ua)
	}
}
