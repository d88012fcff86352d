package upstream

import (
	"net/http"
	"testing"
	"time"
)

func TestDataDialectStatus(t *testing.T) {
	now := time.Now()
	dd := dataDialect{}
	for _, tc := range []struct {
		status int
		body   string
		code   string
	}{
		{200, `{"status":{"code":200,"message":"success"},"result":{"data":[]}}`, ""},
		{200, `{"status":{"code":200,"message":"deprecated"},"result":{"data":[]}}`, ""},
		{200, `{"status":{"code":500,"message":"internal_server_error"},"result":{}}`, "internal_server_error"},
		{200, `{"status":{"code":403,"message":"Your plan cannot read this endpoint."},"result":{}}`, "plan_refused"},
		{403, `{"status":{"code":403,"message":"forbidden"},"result":{}}`, "plan_refused"},
		{401, `{"status":{"code":401,"message":"unauthorized"},"result":{}}`, "unauthorized"},
		{429, `not json`, "too_many_requests"},
		{502, ``, "http_502"},
		{200, `{"result":{"data":[]}}`, "decode"},
		{200, `<html>`, "decode"},
	} {
		e := dd.check(tc.status, http.Header{}, []byte(tc.body), now)
		got := ""
		if e != nil {
			got = e.Code
		}
		if got != tc.code {
			t.Errorf("HTTP %d %s: code %q, want %q", tc.status, tc.body, got, tc.code)
		}
	}
	if e := dd.check(401, http.Header{}, []byte(`{}`), now); e.Pause != AuthPause {
		t.Errorf("401 pauses the API for %v", e.Pause)
	}
	h := http.Header{"Retry-After": []string{"7"}}
	if e := dd.check(429, h, nil, now); e.Pause != 7*time.Second {
		t.Errorf("429 with Retry-After 7 pauses for %v", e.Pause)
	}
}

// TestPlanRefusalHoldsTheRequestNotTheAPI: what the key's plan refuses (a
// 403, the plan words, a required_plans field, a 401 that names a plan)
// holds the request for PlanHold and pauses nothing; a rejected key (401,
// INVALID_API_KEY) pauses the API as before.
func TestPlanRefusalHoldsTheRequestNotTheAPI(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name    string
		d       dialect
		status  int
		body    string
		refused bool
		detail  string
	}{
		{"data 403", dataDialect{}, 403, `{"status":{"code":403,"message":"forbidden"},"result":{}}`, true, "code=forbidden"},
		{"data 403 sentence", dataDialect{}, 403, `{"status":{"code":403,"message":"Your plan cannot read this."}}`, true, "code=forbidden"},
		{"data 200 with 403 inside", dataDialect{}, 200, `{"status":{"code":403,"message":"forbidden"},"result":{}}`, true, "code=forbidden"},
		{"data required_plans", dataDialect{}, 400, `{"status":{"code":400,"message":"bad_request"},"required_plans":["PROFESSIONAL"]}`, true, "code=plan_required"},
		{"data 401 naming a plan", dataDialect{}, 401, `{"status":{"code":401,"message":"Upgrade your plan to read this metric"}}`, true, "code=unauthorized"},
		{"data 401", dataDialect{}, 401, `{"status":{"code":401,"message":"unauthorized"}}`, false, ""},
		// The Indicator API is refused whole below its plan: the key's.
		{"indicator plan_required", indicatorDialect{}, 403, `{"error":"plan_required","message":"Pro plan required"}`, false, ""},
		{"indicator required_plans", indicatorDialect{}, 402, `{"error":"payment","required_plans":["pro"]}`, false, ""},
		{"indicator 401", indicatorDialect{}, 401, `{"error":"unauthorized","message":"bad key"}`, false, ""},
		{"consensus PLAN_REQUIRED", consensusDialect{}, 403, `{"code":"PLAN_REQUIRED","message":"Upgrade","plan":"pro","required_plans":["premium"]}`, true, "code=PLAN_REQUIRED plan=pro required_plans=premium"},
		{"consensus INVALID_API_KEY", consensusDialect{}, 401, `{"code":"INVALID_API_KEY","message":"bad key"}`, false, ""},
	} {
		e := tc.d.check(tc.status, http.Header{}, []byte(tc.body), now)
		if e == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if tc.refused {
			if e.Code != PlanRefused || !e.Refused || e.Hold != PlanHold || e.Pause != 0 || !e.PauseUntil.IsZero() || e.Credential || e.Retryable {
				t.Errorf("%s: %+v, want the request held for %v and nothing paused", tc.name, e, PlanHold)
			}
			if e.Details != tc.detail {
				t.Errorf("%s: details %q, want %q", tc.name, e.Details, tc.detail)
			}
			continue
		}
		if e.Refused || e.Pause != AuthPause || !e.Credential {
			t.Errorf("%s: %+v, want the API paused for a rejected key", tc.name, e)
		}
	}
}
