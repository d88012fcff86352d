package upstream

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// Every request on the wire is counted under the endpoint its call was
// made for: the configured path (WithEndpoint), retries included, and a
// listing call under its listing path.
func TestRequestsCountedPerEndpoint(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 && r.URL.Path == "/v1/eth/network-data/supply" {
			w.WriteHeader(http.StatusBadGateway) // retried once
			return
		}
		_, _ = w.Write([]byte(`{"status":{"code":200,"message":"success"},"result":{"data":[{"path":"/v1/btc/network-data/supply"}]}}`))
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	reg := prometheus.NewRegistry()
	pool := NewPool(reg, time.Now, log.NewNopLogger())
	defer pool.Close()
	c := pool.Client(&config.API{Name: config.APIData, URL: u, Concurrency: 1, Timeout: 10 * time.Second})

	ctx := WithEndpoint(context.Background(), "/v1/{asset}/network-data/supply")
	for _, asset := range []string{"eth", "btc"} {
		if _, err := c.Get(ctx, "/v1/"+asset+"/network-data/supply", url.Values{"window": {"day"}}, true); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.List(context.Background(), config.ListDataV1, nil, true); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(context.Background(), "/v1/btc/network-data/supply", nil, true); err != nil {
		t.Fatal(err)
	}
	want := `
# HELP onchain_exporter_upstream_requests_total Requests sent to an upstream API (retries and listing calls included), by configured endpoint (the path as written in the file, or the listing path) and HTTP status code (error: no answer; other: a status outside the standard ones).
# TYPE onchain_exporter_upstream_requests_total counter
onchain_exporter_upstream_requests_total{api="data",code="200",endpoint=""} 1
onchain_exporter_upstream_requests_total{api="data",code="200",endpoint="/v1/discovery/endpoints"} 1
onchain_exporter_upstream_requests_total{api="data",code="200",endpoint="/v1/{asset}/network-data/supply"} 2
onchain_exporter_upstream_requests_total{api="data",code="502",endpoint="/v1/{asset}/network-data/supply"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "onchain_exporter_upstream_requests_total"); err != nil {
		t.Error(err)
	}
}
