package upstream

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/plan"
)

// A plan in force: what it refuses is not sent (and is held as the
// upstream's refusal would be, in the plan's words); what it allows is;
// a client rebuilt for the same account keeps it; its name and rate
// limit are shown, and gone when no plan is known.
func TestPlanRefusesBeforeTheCall(t *testing.T) {
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent.Add(1)
		_, _ = w.Write([]byte(`{"status":{"code":200,"message":"success"},"result":{"window":"day","data":[{"date":"2026-11-26","value":1}]}}`))
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	a := &config.API{Name: config.APIData, URL: u, Timeout: 5 * time.Second, Concurrency: 1}
	reg := prometheus.NewRegistry()
	pool := NewPool(reg, time.Now, log.NewNopLogger())
	c := pool.Client(a)

	p, err := plan.Parse([]byte(`{"plan":{"name":"PROFESSIONAL"},"apiEndpoint":{
		"btc":{"market-indicator":{"mvrv":{"day":"P1Y"}},"market-data":{"open-interest":{"day":"P0D","hour":"P1Y"}}},
		"statics":["/v1/status"]},"apiRateLimit":{"token":1000,"window":"hour"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !c.SetPlan(p) {
		t.Error("a first plan did not count as a change")
	}
	if c.SetPlan(p) {
		t.Error("the same plan again counted as a change")
	}
	ctx := context.Background()
	for _, tc := range []struct {
		path, window string
		refused      string // the plan's words, or "" when allowed
	}{
		{"/v1/btc/market-data/open-interest", "hour", ""},
		{"/v1/btc/market-indicator/mvrv", "day", ""},
		{"/v1/btc/market-indicator/mvrv", "hour", "your plan (PROFESSIONAL) reads /v1/btc/market-indicator/mvrv at day only"},
		{"/v1/btc/market-indicator/sopr", "day", "your plan (PROFESSIONAL) does not include /v1/btc/market-indicator/sopr"},
		{"/v1/status", "", ""},
		{"/v2/indicator/valuation/mvrv-z-score", "day", ""}, // the plan says nothing of v2
	} {
		before := sent.Load()
		_, err := c.Fetch(ctx, tc.path, url.Values{"window": {tc.window}}, true, 10)
		if tc.refused == "" {
			if err != nil || sent.Load() != before+1 {
				t.Errorf("%s %s: %v, %d sent; want it sent", tc.path, tc.window, err, sent.Load()-before)
			}
			continue
		}
		e := AsErrorOrNil(err)
		if e == nil || !e.Refused || e.Code != PlanRefused || e.Hold != PlanHold || !strings.Contains(e.Error(), tc.refused) {
			t.Errorf("%s %s: %v, want the plan's refusal %q", tc.path, tc.window, err, tc.refused)
		}
		if sent.Load() != before {
			t.Errorf("%s %s: sent although the plan refuses it", tc.path, tc.window)
		}
		if _, _, paused := c.paused(true); paused {
			t.Errorf("%s %s: the refusal paused the API", tc.path, tc.window)
		}
	}

	want := `
# HELP onchain_exporter_plan_info 1 for the plan the API's key has, as the upstream last said (/v1/my/discovery/endpoints); absent while none is known.
# TYPE onchain_exporter_plan_info gauge
onchain_exporter_plan_info{api="data",plan="PROFESSIONAL"} 1
# HELP onchain_exporter_plan_request_limit Requests the key's plan allows per window (day, hour, minute), as the upstream last said; absent while none is known.
# TYPE onchain_exporter_plan_request_limit gauge
onchain_exporter_plan_request_limit{api="data",window="hour"} 1000
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "onchain_exporter_plan_info", "onchain_exporter_plan_request_limit"); err != nil {
		t.Error(err)
	}

	// A reload that changes the timeout rebuilds the client: the plan
	// is the account's and stays.
	b := *a
	b.Timeout = 7 * time.Second
	if got := pool.Client(&b).Plan(); got != p {
		t.Errorf("the rebuilt client's plan is %v", got)
	}
	if !pool.Client(&b).SetPlan(nil) {
		t.Error("dropping the plan did not count as a change")
	}
	if n, err := testutil.GatherAndCount(reg, "onchain_exporter_plan_info"); err != nil || n != 0 {
		t.Errorf("%d plan_info series without a plan (%v)", n, err)
	}
}

// ReadPlan goes through the client: the key as the dialect sends it,
// counted as a request, and a 401 pauses the API as a rejected key does.
func TestReadPlanThroughTheClient(t *testing.T) {
	const key = "plan-key-secret"
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != plan.Path || r.Header.Get("Authorization") != "Bearer "+key || !strings.HasPrefix(r.Header.Get("User-Agent"), "onchain_exporter/") {
			http.Error(w, "wrong request", http.StatusBadRequest)
			return
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"plan":{"name":"BASIC"},"apiEndpoint":{"btc":{"market-data":{"price-ohlcv":{"day":"P7D"}}}},"apiRateLimit":{"token":100,"window":"day"}}`))
	}))
	t.Cleanup(srv.Close)
	cfg, err := config.Parse("t.yml", []byte("data:\n  url: "+srv.URL+"\n  token_env: T\n  metrics:\n    - path: /v1/btc/network-data/supply\n"),
		func(string) string { return key })
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	c := NewPool(reg, time.Now, log.NewNopLogger()).Client(cfg.APIs[config.APIData])
	out := c.ReadPlan(context.Background())
	if out.Kind != plan.Read || out.Plan.Name != "BASIC" || out.Plan.RateLimit.Token != 100 {
		t.Fatalf("outcome %v", out)
	}
	if c.Plan() != nil {
		t.Error("reading the plan put it in force")
	}
	status = http.StatusUnauthorized
	out = c.ReadPlan(context.Background())
	if out.Kind != plan.Rejected {
		t.Fatalf("401: outcome %v", out)
	}
	if _, _, paused := c.paused(true); !paused {
		t.Error("a 401 on the plan endpoint did not pause the API")
	}
	if strings.Contains(out.String(), key) {
		t.Error("the outcome names the key")
	}
}

// A 403 on everything is the key's: refused for the plan, the plan
// endpoint refusing too (403), and nothing of the key answered: the API
// is paused as for a rejected key. Once the key has read something, the
// same refusals are the plan's and pause nothing.
func TestRefusedEverywhereIsARejectedKey(t *testing.T) {
	answer := http.StatusForbidden
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(answer)
		_, _ = w.Write([]byte(`{"status":{"code":` + strconv.Itoa(answer) + `,"message":"x"},"result":{"data":[{"date":"2026-11-26","v":1}]}}`))
	}))
	t.Cleanup(srv.Close)
	cfg, err := config.Parse("t.yml", []byte("data:\n  url: "+srv.URL+"\n  token_env: T\n  metrics:\n    - path: /v1/btc/network-data/supply\n"),
		func(string) string { return "k" })
	if err != nil {
		t.Fatal(err)
	}
	for _, answeredFirst := range []bool{false, true} {
		c := NewPool(prometheus.NewRegistry(), time.Now, log.NewNopLogger()).Client(cfg.APIs[config.APIData])
		if answeredFirst {
			answer = http.StatusOK
			if _, err := c.Fetch(context.Background(), "/v1/btc/network-data/supply", nil, true, 10); err != nil {
				t.Fatal(err)
			}
			answer = http.StatusForbidden
		}
		if _, err := c.Fetch(context.Background(), "/v1/btc/market-indicator/mvrv", nil, true, 10); !AsError(err).Refused {
			t.Fatalf("a 403: %v", err)
		}
		out := c.ReadPlan(context.Background())
		if out.Kind != plan.Basic {
			t.Fatalf("the plan endpoint's 403: %v", out)
		}
		rejected := c.RejectIfRefusedEverywhere(out)
		_, _, paused := c.paused(true)
		if rejected != !answeredFirst || paused != !answeredFirst {
			t.Errorf("key answered before: %v; rejected %v, paused %v", answeredFirst, rejected, paused)
		}
	}
}

// A 403 the plan in force does not explain (it lists what was asked) is
// not held a day: the request is asked again with the error back-off. A
// 403 of what the plan does not list, or with no plan known, is held as
// before. (One transient 403 of 75 s held an endpoint the plan lists for
// 24 h.)
func TestUnexplainedRefusalIsAskedAgainSoon(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"status":{"code":403,"message":"forbidden"},"result":{}}`))
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	a := &config.API{Name: config.APIData, URL: u, Timeout: 5 * time.Second, Concurrency: 1}
	c := NewPool(prometheus.NewRegistry(), time.Now, log.NewNopLogger()).Client(a)
	ask := func(path, window string) *Error {
		t.Helper()
		_, err := c.Get(context.Background(), path, url.Values{"window": {window}}, true)
		e, ok := err.(*Error)
		if !ok || !e.Refused {
			t.Fatalf("%s at %s: %v, want a refusal", path, window, err)
		}
		return e
	}
	if e := ask("/v1/btc/market-data/open-interest", "hour"); e.Hold != PlanHold {
		t.Errorf("no plan known: held %v, want %v", e.Hold, PlanHold)
	}
	p, err := plan.Parse([]byte(`{"plan":{"name":"PROFESSIONAL"},"apiEndpoint":{
		"btc":{"market-data":{"open-interest":{"hour":"P1Y"}}}},"apiRateLimit":{"token":1000,"window":"hour"}}`))
	if err != nil {
		t.Fatal(err)
	}
	c.SetPlan(p)
	if e := ask("/v1/btc/market-data/open-interest", "hour"); e.Hold != 0 || e.Code != PlanRefused || e.Word != "forbidden" {
		t.Errorf("the plan lists it: hold %v code %s word %s, want no hold, the refusal by the upstream's word", e.Hold, e.Code, e.Word)
	}
}
