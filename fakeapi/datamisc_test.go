package fakeapi

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestDataRateLimitHeaders(t *testing.T) {
	s, clock := newTestServer(Options{})
	for i := 1; i <= 3; i++ {
		rec := get(t, s, "/v1/btc/network-data/supply?limit=1")
		if rec.Header().Get("X-RateLimit-Limit") != "600" || rec.Header().Get("X-RateLimit-Remaining") != fmt.Sprint(600-i) {
			t.Errorf("call %d headers %v", i, rec.Header())
		}
		next := t0.Truncate(time.Minute).Add(time.Minute).Unix()
		if rec.Header().Get("X-RateLimit-Reset") != fmt.Sprint(next) {
			t.Errorf("reset %s, want %d", rec.Header().Get("X-RateLimit-Reset"), next)
		}
	}
	if rec := get(t, s, "/v9/nothing"); rec.Header().Get("X-RateLimit-Remaining") != "596" {
		t.Errorf("error answers carry no rate headers: %v", rec.Header())
	}
	clock.Add(time.Minute)
	if rec := get(t, s, "/v1/btc/network-data/supply?limit=1"); rec.Header().Get("X-RateLimit-Remaining") != "599" {
		t.Errorf("new minute remaining %s", rec.Header().Get("X-RateLimit-Remaining"))
	}
}

func TestDiscovery(t *testing.T) {
	s, _ := newTestServer(Options{})
	paths := map[string]map[string]any{}
	for _, v := range []string{"v1", "v2"} {
		e := parseEnvelope(t, get(t, s, "/"+v+"/discovery/endpoints"))
		data, _ := e.result["data"].([]any)
		for _, d := range data {
			m := d.(map[string]any)
			paths[m["path"].(string)] = m
			if _, ok := m["required_parameters"].([]any); !ok {
				t.Errorf("%v: required_parameters missing", m["path"])
			}
		}
	}
	for _, u := range seriesURLs {
		p, _, _ := strings.Cut(u, "?")
		m, ok := paths[p]
		if !ok {
			t.Errorf("discovery misses %s", p)
			continue
		}
		ps := m["parameters"].(map[string]any)
		if _, ok := ps["window"].([]any); !ok {
			t.Errorf("%s: no window list", p)
		}
		if strings.HasPrefix(p, "/v2/") && len(ps["asset"].([]any)) == 0 {
			t.Errorf("%s: no asset list", p)
		}
	}
	oi := paths["/v1/btc/market-data/open-interest"]["parameters"].(map[string]any)
	if ex := fmt.Sprint(oi["exchange"]); !strings.Contains(ex, "gate_io") || !strings.Contains(ex, "ftx") || len(oi["exchange"].([]any)) != 12 {
		t.Errorf("open-interest exchanges %v", ex)
	}
	if tok := paths["/v1/erc20/exchange-flows/reserve"]["parameters"].(map[string]any)["token"].([]any); len(tok) < 5 {
		t.Errorf("reserve tokens %v", tok)
	}
}

func TestMethodNotAllowed(t *testing.T) {
	s, _ := newTestServer(Options{})
	r, _ := http.NewRequest(http.MethodPost, "/v1/btc/network-data/supply", nil)
	rec := httpRecorder(s, r)
	if rec.Code != 405 || parseEnvelope(t, rec).message != "not_allowed" {
		t.Errorf("POST: %d %s", rec.Code, rec.Body)
	}
}

// BenchmarkRowsFromLongAgo: ten minute rows from ten years back cost what
// ten rows cost, not the years in between (BENCHMARKS.md).
func BenchmarkRowsFromLongAgo(b *testing.B) {
	s := New(Options{Now: func() time.Time { return t0 }})
	r, _ := http.NewRequest(http.MethodGet, "/v1/btc/market-data/open-interest?exchange=binance&window=min&limit=10&from=20160101", nil)
	for b.Loop() {
		if rec := httpRecorder(s, r); rec.Code != http.StatusOK {
			b.Fatalf("HTTP %d: %s", rec.Code, rec.Body)
		}
	}
}

func BenchmarkSeriesLimit10(b *testing.B) {
	s := New(Options{Now: func() time.Time { return t0 }})
	r, _ := http.NewRequest(http.MethodGet, "/v1/erc20/exchange-flows/reserve?token=usdt&window=block&limit=10", nil)
	for b.Loop() {
		httpRecorder(s, r)
	}
}
