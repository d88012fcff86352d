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
		{200, `{"status":{"code":403,"message":"Your plan cannot read this endpoint."},"result":{}}`, "forbidden"},
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
