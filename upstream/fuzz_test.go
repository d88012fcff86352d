package upstream

import (
	"math"
	"net/http"
	"testing"
	"time"
	"unicode/utf8"
)

// To fuzz longer than CI does:
//
//	go test -run '^$' -fuzz FuzzDialectCheck -fuzztime 10m -parallel 1 ./upstream

// FuzzDialectCheck gives each API's answer check any status, Retry-After
// and body: it must not panic; an error status is never taken for data;
// codes are one of Codes (a closed set of label values) and waits stay
// within sense.
func FuzzDialectCheck(f *testing.F) {
	seeds := []struct {
		status     int
		retryAfter string
		body       string
	}{
		{200, "", `{"status":{"code":200,"message":"success"},"result":{"data":[]}}`},
		{200, "", `{"status":{"code":"500","message":"internal_server_error"},"result":{}}`},
		{200, "", `{"status":{"code":429,"message":"Too many requests, slow down"}}`},
		{401, "", `{"status":{"code":401,"message":"unauthorized"},"result":{}}`},
		{429, "7", `{"code":"RATE_LIMIT_EXCEEDED","retry_after":30,"message":"Too many requests this minute."}`},
		{429, "", `{"code":"DAILY_LIMIT_EXCEEDED","limit":100,"used":100}`},
		{401, "", `{"code":"PLAN_REQUIRED","plan":"free","required_plans":["premium","enterprise"]}`},
		{400, "", `{"code":"INVALID_PARAMETER","param":"asset"}`},
		{503, "Fri, 20 Nov 2026 12:00:30 GMT", `{"code":"SERVICE_UNAVAILABLE"}`},
		{500, "", `{"error":"internal_error","message":"Internal server error."}`},
		{404, "", `not json`},
		{302, "", ``},
		{200, "", `{"data":[`},
	}
	for _, s := range seeds {
		f.Add(s.status, s.retryAfter, []byte(s.body))
	}
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	dialects := []dialect{dataDialect{}, indicatorDialect{}, consensusDialect{}}
	f.Fuzz(func(t *testing.T, status int, retryAfter string, body []byte) {
		status = 100 + abs(status)%500
		h := http.Header{}
		if retryAfter != "" {
			h.Set("Retry-After", retryAfter)
		}
		for _, d := range dialects {
			e := d.check(status, h, body, now)
			if e == nil {
				if status < 200 || status > 299 {
					t.Fatalf("%T took HTTP %d for data", d, status)
				}
				continue
			}
			if !Codes[e.Code] {
				t.Fatalf("%T: code %q is not one of Codes", d, e.Code)
			}
			if e.RetryAfter < 0 || e.Pause < 0 || e.Hold < 0 {
				t.Fatalf("%T: negative wait: %+v", d, e)
			}
			if e.RetryAfter > 24*time.Hour || e.Pause > 24*time.Hour || (!e.PauseUntil.IsZero() && e.PauseUntil.Sub(now) > 24*time.Hour) {
				t.Fatalf("%T: a wait of more than a day: %+v", d, e)
			}
			if !utf8.ValidString(e.Error()) {
				t.Fatalf("%T: error text is not UTF-8: %q", d, e.Error())
			}
		}
	})
}

func abs(n int) int {
	if n < 0 {
		if n == math.MinInt {
			return 0
		}
		return -n
	}
	return n
}
