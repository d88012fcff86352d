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

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// A listing endpoint answering a bare array is read (the exporter once
// refused to start on it), and the shape is logged at info once per
// endpoint for the process, also across a client rebuilt by a reload; an
// answer in the documented place is logged at debug only.
func TestListFindsRowsAndLogsTheShapeOnce(t *testing.T) {
	var body atomic.Value
	body.Store(`[{"symbol":"BTC","key":"bitcoin"},{"symbol":"ETH","key":"ethereum"},"not an item"]`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(body.Load().(string)))
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	logs := &testtool.LogBuffer{}
	pool := NewPool(prometheus.NewRegistry(), time.Now, log.NewLogfmtLogger(logs))
	defer pool.Close()
	a := &config.API{Name: config.APIConsensus, URL: u, Concurrency: 1, Timeout: 5 * time.Second}

	for i := range 2 {
		rows, err := pool.Client(a).List(context.Background(), "/assets", nil, false)
		if err != nil || len(rows) != 2 || rows[1]["key"] != "ethereum" {
			t.Fatalf("list %d: %v %v", i, rows, err)
		}
	}
	shape := []string{"level=info", `msg="payload shape detected"`, "api=consensus", "endpoint=/assets", "rows=."}
	if n := logs.Count(shape...); n != 1 {
		t.Errorf("%d info lines with %v, want 1:\n%s", n, shape, logs.String())
	}
	if n := logs.Count("api=consensus api=consensus"); n != 0 {
		t.Errorf("the api label is logged twice")
	}

	a2 := *a
	a2.Timeout = 4 * time.Second // another client for the section
	if _, err := pool.Client(&a2).List(context.Background(), "/assets", nil, false); err != nil {
		t.Fatal(err)
	}
	if n := logs.Count(shape...); n != 1 {
		t.Errorf("a rebuilt client logged the same shape again (%d lines)", n)
	}

	body.Store(`{"data":[{"symbol":"BTC","key":"bitcoin"}]}`)
	if rows, err := pool.Client(&a2).List(context.Background(), "/assets", nil, false); err != nil || len(rows) != 1 {
		t.Fatalf("%v %v", rows, err)
	}
	if n := logs.Count("level=debug", "endpoint=/assets", "rows=data"); n != 1 {
		t.Errorf("a change to the documented shape: %d debug lines, want 1", n)
	}

	body.Store(`{"bullish":[{"handle":"a"}],"bearish":[{"handle":"b"}]}`)
	_, err := pool.Client(&a2).List(context.Background(), "/assets", nil, false)
	if err == nil || !strings.Contains(err.Error(), "/assets: ") || !strings.Contains(err.Error(), `"bullish"`) {
		t.Errorf("two lists: %v", err)
	}
}
