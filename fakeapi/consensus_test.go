package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"
)

var consensusOpts = Options{
	ConsensusKeys: map[string]string{"free-key": "free", "pro-key": "pro", "prem-key": "premium", "ent-key": "enterprise"},
	RawAccessKeys: []string{"ent-key"},
}

// consensusError checks an error answer's status and common fields and
// returns its body.
func consensusError(t *testing.T, rec *httptest.ResponseRecorder, status int, code string) map[string]any {
	t.Helper()
	m := decode(t, rec.Body.Bytes())
	if rec.Code != status || m["code"] != code {
		t.Fatalf("HTTP %d code %v, want %d %s: %s", rec.Code, m["code"], status, code, rec.Body)
	}
	for _, k := range []string{"error", "message", "docs_url"} {
		if s, _ := m[k].(string); s == "" {
			t.Errorf("%s: field %s missing", code, k)
		}
	}
	return m
}

func intField(t *testing.T, m map[string]any, k string) int {
	t.Helper()
	n, ok := m[k].(json.Number)
	if !ok {
		t.Fatalf("field %s = %v, want an integer", k, m[k])
	}
	i, err := n.Int64()
	if err != nil {
		t.Fatal(err)
	}
	return int(i)
}

// uncovered finds an analyst and asset pair without calls.
func uncovered(t *testing.T) (string, string) {
	for _, h := range analysts {
		for _, a := range consensusAssets {
			if !covers(h, a.key) {
				return h, a.key
			}
		}
	}
	t.Fatal("every analyst covers every asset")
	return "", ""
}

func TestConsensusErrorCodes(t *testing.T) {
	s, _ := newTestServer(consensusOpts)
	h, a := uncovered(t)
	cases := []struct {
		url, key string
		status   int
		code     string
		fields   map[string]any
	}{
		{"/consensus/consensus?asset=btc&days=7", "", 401, "API_KEY_REQUIRED", nil},
		{"/consensus/analysts/bitvane", "", 401, "API_KEY_REQUIRED", nil},
		{"/consensus/assets", "bogus", 401, "INVALID_API_KEY", nil},
		{"/consensus/analysts/bitvane", "pro-key", 401, "PLAN_REQUIRED", map[string]any{"plan": "pro", "required_plans": "[premium enterprise]"}},
		{"/consensus/analysts/bitvane/calls?asset=btc", "free-key", 401, "PLAN_REQUIRED", map[string]any{"plan": "free"}},
		{"/consensus/analysts/bitvane/calls?asset=btc&source_text=statement", "prem-key", 403, "RAW_ACCESS_REQUIRED", nil},
		{"/consensus/assets?source_text=statement", "", 403, "RAW_ACCESS_REQUIRED", nil},
		{"/consensus/consensus?asset=btc&days=0", "pro-key", 400, "INVALID_PARAMETER", map[string]any{"param": "days"}},
		{"/consensus/consensus?asset=btc&days=366", "free-key", 400, "INVALID_PARAMETER", map[string]any{"param": "days"}},
		{"/consensus/analysts/top?asset=btc&limit=51", "", 400, "INVALID_PARAMETER", map[string]any{"param": "limit"}},
		{"/consensus/analysts/top?asset=btc&limit=x", "", 400, "INVALID_PARAMETER", map[string]any{"param": "limit"}},
		{"/consensus/assets?colour=blue", "", 400, "INVALID_PARAMETER", map[string]any{"param": "colour"}},
		{"/consensus/calls", "", 400, "INVALID_PARAMETER", map[string]any{"param": "asset"}},
		{"/consensus/analyst-views?asset=btc&source_text=full", "", 400, "INVALID_PARAMETER", map[string]any{"param": "source_text"}},
		{"/consensus/calls?asset=doge", "", 400, "UNKNOWN_ASSET", nil},
		{"/consensus/analysts/top?asset=dogecoin", "", 400, "UNKNOWN_ASSET", nil},
		{"/consensus/analysts/nobody", "prem-key", 404, "ANALYST_NOT_FOUND", nil},
		{"/consensus/analysts/newsfeed_bot", "ent-key", 404, "ANALYST_NOT_ELIGIBLE", nil},
		{"/consensus/analysts/" + h + "/calls?asset=" + a, "prem-key", 404, "NO_DATA", nil},
		{"/consensus/nothing", "", 404, "NOT_FOUND", nil},
	}
	for _, c := range cases {
		var hdr []string
		if c.key != "" {
			hdr = []string{"X-API-Key", c.key}
		}
		m := consensusError(t, get(t, s, c.url, hdr...), c.status, c.code)
		for k, v := range c.fields {
			if got := fmt.Sprint(m[k]); got != fmt.Sprint(v) {
				t.Errorf("%s: %s = %s, want %v", c.url, k, got, v)
			}
		}
		switch c.code {
		case "PLAN_REQUIRED":
			if m["upgrade_url"] == nil || m["upgradeUrl"] != m["upgrade_url"] || m["contact_url"] == nil {
				t.Errorf("PLAN_REQUIRED links: %v", m)
			}
		case "RAW_ACCESS_REQUIRED":
			if m["contact_email"] == nil || m["contact_url"] == nil {
				t.Errorf("RAW_ACCESS_REQUIRED contact: %v", m)
			}
		}
	}
	// The key may come as a query parameter too.
	if rec := get(t, s, "/consensus/consensus?asset=btc&days=7&api_key=free-key"); rec.Code != 200 {
		t.Errorf("api_key query: %d %s", rec.Code, rec.Body)
	}
}

func TestConsensusForcedErrors(t *testing.T) {
	s, _ := newTestServer(consensusOpts)
	for code, kind := range errorKinds {
		s.SetConsensusError(code)
		for _, u := range []string{"/consensus/assets", "/consensus/consensus?asset=btc&days=3"} {
			rec := get(t, s, u, "X-API-Key", "pro-key")
			m := consensusError(t, rec, kind.status, code)
			switch code {
			case "RATE_LIMIT_EXCEEDED":
				if rec.Header().Get("Retry-After") != "2" || intField(t, m, "retry_after") != 2 {
					t.Errorf("forced rate limit: %v %v", rec.Header(), m)
				}
			case "DAILY_LIMIT_EXCEEDED":
				if intField(t, m, "limit") != 100 || intField(t, m, "used") != 100 || rec.Header().Get("Retry-After") == "" {
					t.Errorf("forced daily limit: %v", m)
				}
			case "PLAN_REQUIRED":
				if m["plan"] != "pro" || m["required_plans"] == nil {
					t.Errorf("forced plan required: %v", m)
				}
			}
			if rec.Header().Get("X-RateLimit-Limit") != "60" {
				t.Errorf("%s: X-RateLimit-Limit %q", code, rec.Header().Get("X-RateLimit-Limit"))
			}
		}
	}
	s.SetConsensusError("")
	if rec := get(t, s, "/consensus/assets"); rec.Code != 200 {
		t.Errorf("after clearing: %d", rec.Code)
	}
}

func TestConsensusRateLimit(t *testing.T) {
	s, clock := newTestServer(consensusOpts)
	for i := 1; i <= 10; i++ {
		rec := get(t, s, "/consensus/assets", "X-API-Key", "free-key")
		h := rec.Header()
		if rec.Code != 200 || h.Get("X-RateLimit-Limit") != "10" || h.Get("X-RateLimit-Remaining") != fmt.Sprint(10-i) ||
			h.Get("X-Daily-Limit") != "100" || h.Get("X-Daily-Used") != fmt.Sprint(i) {
			t.Fatalf("call %d: %d %v", i, rec.Code, h)
		}
	}
	rec := get(t, s, "/consensus/assets", "X-API-Key", "free-key")
	m := consensusError(t, rec, 429, "RATE_LIMIT_EXCEEDED")
	// t0 is hh:17:30, so the minute ends in 30 s.
	if rec.Header().Get("Retry-After") != "30" || intField(t, m, "retry_after") != 30 || rec.Header().Get("X-RateLimit-Remaining") != "0" {
		t.Errorf("429: %v %v", rec.Header(), m)
	}
	// Other keys and key-free callers have their own allowance.
	if rec := get(t, s, "/consensus/assets", "X-API-Key", "prem-key"); rec.Code != 200 || rec.Header().Get("X-RateLimit-Limit") != "300" || rec.Header().Get("X-Daily-Limit") != "" {
		t.Errorf("premium key: %d %v", rec.Code, rec.Header())
	}
	clock.Add(30 * time.Second)
	if rec := get(t, s, "/consensus/assets", "X-API-Key", "free-key"); rec.Code != 200 || rec.Header().Get("X-RateLimit-Remaining") != "9" {
		t.Errorf("next minute: %d %v", rec.Code, rec.Header())
	}

	for i := 1; i <= 30; i++ {
		if rec := get(t, s, "/consensus/calls?asset=eth"); rec.Code != 200 || rec.Header().Get("X-RateLimit-Limit") != "30" {
			t.Fatalf("key-free call %d: %d %v", i, rec.Code, rec.Header())
		}
	}
	consensusError(t, get(t, s, "/consensus/calls?asset=eth"), 429, "RATE_LIMIT_EXCEEDED")
}

func TestConsensusDailyLimit(t *testing.T) {
	s, clock := newTestServer(consensusOpts)
	for i := 1; i <= 100; i++ {
		if i%10 == 1 {
			clock.Add(time.Minute)
		}
		if rec := get(t, s, "/consensus/assets", "X-API-Key", "free-key"); rec.Code != 200 {
			t.Fatalf("call %d: %d %s", i, rec.Code, rec.Body)
		}
	}
	clock.Add(time.Minute)
	rec := get(t, s, "/consensus/assets", "X-API-Key", "free-key")
	m := consensusError(t, rec, 429, "DAILY_LIMIT_EXCEEDED")
	if intField(t, m, "limit") != 100 || intField(t, m, "used") != 100 || rec.Header().Get("X-Daily-Used") != "100" || m["upgrade_url"] == nil {
		t.Errorf("daily limit answer %v %v", rec.Header(), m)
	}
	clock.Set(time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC))
	if rec := get(t, s, "/consensus/assets", "X-API-Key", "free-key"); rec.Code != 200 || rec.Header().Get("X-Daily-Used") != "1" {
		t.Errorf("after midnight UTC: %d %v", rec.Code, rec.Header())
	}
}

func TestConsensusPayloads(t *testing.T) {
	s, _ := newTestServer(consensusOpts)
	body := func(u string, hdr ...string) map[string]any {
		t.Helper()
		rec := get(t, s, u, hdr...)
		if rec.Code != 200 {
			t.Fatalf("%s: %d %s", u, rec.Code, rec.Body)
		}
		return decode(t, rec.Body.Bytes())
	}
	assets := body("/consensus/assets")["data"].([]any)
	if len(assets) != 4 || assets[0].(map[string]any)["key"] != "bitcoin" || assets[0].(map[string]any)["symbol"] != "BTC" {
		t.Errorf("assets %v", assets)
	}
	if a := body("/consensus/assets?q=XBT")["data"].([]any); len(a) != 1 || a[0].(map[string]any)["key"] != "bitcoin" {
		t.Errorf("q=XBT %v", a)
	}
	if a := body("/consensus/assets?q=Ripple")["data"].([]any); len(a) != 1 || a[0].(map[string]any)["symbol"] != "XRP" {
		t.Errorf("q=Ripple %v", a)
	}

	top := body("/consensus/analysts/top?asset=BTC")
	rows := top["data"].([]any)
	if top["asset"] != "bitcoin" || len(rows) != 10 {
		t.Fatalf("top: %v", top)
	}
	for i, r := range rows {
		r := r.(map[string]any)
		if intField(t, r, "rank") != i+1 || r["handle"] == "" || num(t, r["accuracy"]) <= 0 {
			t.Errorf("top row %v", r)
		}
		if i > 0 && num(t, r["accuracy"]) > num(t, rows[i-1].(map[string]any)["accuracy"]) {
			t.Errorf("top not sorted by accuracy")
		}
	}
	if n := len(body("/consensus/analysts/top?asset=bitcoin&limit=3")["data"].([]any)); n != 3 {
		t.Errorf("top limit=3 gave %d", n)
	}

	// At t0 the newest day is the day before: each day is published
	// after it closes (windowless.go).
	views := body("/consensus/analyst-views?asset=eth")
	if views["asset"] != "ethereum" || views["date"] != "2026-11-21" || len(views["data"].([]any)) != 3 {
		t.Errorf("views %v", views)
	}
	calls := body("/consensus/calls?asset=solana")
	if calls["asset"] != "solana" || len(calls["data"].([]any)) != 2 {
		t.Errorf("calls %v", calls)
	}

	cons := body("/consensus/consensus?asset=xrp")
	crow := cons["data"].([]any)
	if cons["asset"] != "ripple" || len(crow) != 7 || crow[0].(map[string]any)["date"] != "2026-11-21" || crow[1].(map[string]any)["date"] != "2026-11-20" {
		t.Errorf("consensus %v", cons)
	}
	for _, r := range crow {
		r := r.(map[string]any)
		if intField(t, r, "bullish")+intField(t, r, "bearish")+intField(t, r, "neutral") != intField(t, r, "analysts") {
			t.Errorf("consensus counts %v", r)
		}
	}
	// The day's views agree with the day's consensus row.
	today := body("/consensus/consensus?asset=eth&days=1", "X-API-Key", "free-key")["data"].([]any)[0].(map[string]any)
	if fmt.Sprint(views["data"].([]any)[0].(map[string]any)["count"]) != fmt.Sprint(today["bullish"]) {
		t.Errorf("views %v vs consensus %v", views, today)
	}
	if n := len(body("/consensus/consensus?asset=btc&days=30", "X-API-Key", "free-key")["data"].([]any)); n != 30 {
		t.Errorf("days=30 gave %d rows", n)
	}

	prof := body("/consensus/analysts/bitvane", "X-API-Key", "prem-key")["data"].(map[string]any)
	if prof["handle"] != "bitvane" || len(prof["covered_assets"].([]any)) == 0 || prof["date"] != "2026-11-22" {
		t.Errorf("profile %v", prof)
	}
	ex := body("/consensus/analysts/bitvane/calls?asset=btc&days=60", "X-API-Key", "prem-key")["data"].([]any)
	raw := body("/consensus/analysts/bitvane/calls?asset=btc&days=60&source_text=statement", "X-API-Key", "ent-key")["data"].([]any)
	if len(ex) == 0 || len(ex) != len(raw) {
		t.Fatalf("analyst calls: %d excerpts, %d statements", len(ex), len(raw))
	}
	e0, r0 := ex[0].(map[string]any), raw[0].(map[string]any)
	if len(e0["text"].(string)) > 200 || e0["truncated"] != true || e0["source_url"] == "" ||
		len(r0["text"].(string)) <= 200 || r0["truncated"] != false {
		t.Errorf("excerpt %v / statement %v", e0, r0)
	}

	// Identical requests give identical answers.
	a := get(t, s, "/consensus/consensus?asset=btc&days=9", "X-API-Key", "ent-key").Body.String()
	b := get(t, New(consensusOpts.withNow(t0)), "/consensus/consensus?asset=btc&days=9", "X-API-Key", "ent-key").Body.String()
	if a != b {
		t.Error("consensus differs between servers")
	}
}

func (o Options) withNow(t time.Time) Options {
	o.Now = func() time.Time { return t }
	return o
}

func TestConsensusWithoutKeys(t *testing.T) {
	s, _ := newTestServer(Options{})
	for _, u := range []string{"/consensus/analysts/bitvane", "/consensus/consensus?asset=btc&days=3", "/consensus/analysts/bitvane/calls?asset=btc&days=90"} {
		if rec := get(t, s, u); rec.Code != 200 {
			t.Errorf("%s without keys configured: %d %s", u, rec.Code, rec.Body)
		}
	}
	if rec := get(t, s, "/consensus/assets", "X-API-Key", "anything"); rec.Code != 200 || rec.Header().Get("X-RateLimit-Limit") != "1000" {
		t.Errorf("any key: %d %v", rec.Code, rec.Header())
	}
	consensusError(t, get(t, s, "/consensus/assets?source_text=statement", "X-API-Key", "anything"), 403, "RAW_ACCESS_REQUIRED")
}
