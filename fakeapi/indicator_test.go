package fakeapi

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestIndicatorCatalog(t *testing.T) {
	s, _ := newTestServer(Options{IndicatorToken: "ind-key"})
	rec := get(t, s, "/indicator/api")
	m := decode(t, rec.Body.Bytes())
	if rec.Code != 200 || m["name"] != "indicator-api" || len(m["endpoints"].([]any)) != 3 {
		t.Errorf("/api: %d %s", rec.Code, rec.Body)
	}
	rec = get(t, s, "/indicator/api/equities")
	ids := map[string]bool{}
	for _, e := range decode(t, rec.Body.Bytes())["data"].([]any) {
		e := e.(map[string]any)
		id := e["id"].(string)
		ids[id] = true
		if id != e["exchange_code"].(string)+":"+e["security_code"].(string) || e["name"] == "" {
			t.Errorf("equity %v", e)
		}
	}
	for _, id := range []string{"KRX:005930", "KRX:000660", "NASDAQ:AAPL", "NYSE:BRK.B"} {
		if !ids[id] {
			t.Errorf("equities lack %s", id)
		}
	}
	rec = get(t, s, "/indicator/api/indicators")
	ind := decode(t, rec.Body.Bytes())["data"].([]any)[0].(map[string]any)
	if ind["id"] != "pbr-band" || ind["path"] != "/api/equities/{equity_id}/pbr-band" {
		t.Errorf("indicators %s", rec.Body)
	}
}

func TestIndicatorAuth(t *testing.T) {
	s, _ := newTestServer(Options{IndicatorToken: "ind-key", IndicatorLowPlanToken: "basic-key"})
	const u = "/indicator/api/equities/KRX:005930/pbr-band"
	for _, c := range []struct {
		hdr   []string
		code  int
		error string
	}{
		{nil, 401, "unauthorized"},
		{[]string{"Authorization", "Bearer nope"}, 401, "unauthorized"},
		{[]string{"Authorization", "Bearer basic-key"}, 401, "plan_required"},
		{[]string{"Authorization", "Bearer ind-key"}, 200, ""},
	} {
		rec := get(t, s, u, c.hdr...)
		if rec.Code != c.code {
			t.Errorf("%v: HTTP %d, want %d", c.hdr, rec.Code, c.code)
			continue
		}
		m := decode(t, rec.Body.Bytes())
		if c.error != "" && (m["error"] != c.error || m["message"] == "") {
			t.Errorf("%v: body %s", c.hdr, rec.Body)
		}
		if c.error == "plan_required" && !strings.Contains(m["message"].(string), "Pro plan") {
			t.Errorf("plan_required message %q", m["message"])
		}
	}
	// The catalog stays public.
	if rec := get(t, s, "/indicator/api/equities"); rec.Code != 200 {
		t.Errorf("catalog needs a key: %d", rec.Code)
	}
}

func TestPBRBand(t *testing.T) {
	s, _ := newTestServer(Options{IndicatorToken: "k"})
	auth := []string{"Authorization", "Bearer k"}
	rec := get(t, s, "/indicator/api/equities/KRX:005930/pbr-band", auth...)
	m := decode(t, rec.Body.Bytes())
	rows := m["data"].([]any)
	if m["equity"] != "KRX:005930" || len(rows) != 30 {
		t.Fatalf("default answer: equity %v, %d rows", m["equity"], len(rows))
	}
	var prev time.Time
	for i, r := range rows {
		r := r.(map[string]any)
		d, err := time.Parse(time.DateOnly, r["date"].(string))
		if err != nil || d.Weekday() == time.Saturday || d.Weekday() == time.Sunday {
			t.Errorf("row date %v", r["date"])
		}
		if i == 0 && r["date"] != "2026-11-20" {
			t.Errorf("newest row %v, want the last published trading day 2026-11-20", r["date"])
		}
		if i > 0 && !d.Before(prev) {
			t.Errorf("rows not newest first: %v after %v", d, prev)
		}
		prev = d
		bps, pbr, cl := num(t, r["bps"]), num(t, r["pbr"]), num(t, r["close"])
		if diff := cl/bps - pbr; diff > 0.01 || diff < -0.01 {
			t.Errorf("pbr %v != close/bps %v", pbr, cl/bps)
		}
		bands := r["bands"].(map[string]any)
		for _, k := range []string{"0.5", "1.0", "1.5", "2.0", "2.5"} {
			var f float64
			fmt.Sscan(k, &f)
			if d := num(t, bands[k]) - f*bps; d > 0.01 || d < -0.01 {
				t.Errorf("band %s = %v, want %v", k, bands[k], f*bps)
			}
		}
	}

	asc := decode(t, get(t, s, "/indicator/api/equities/NYSE:BRK.B/pbr-band?limit=5&order=asc", auth...).Body.Bytes())["data"].([]any)
	desc := decode(t, get(t, s, "/indicator/api/equities/NYSE:BRK.B/pbr-band?limit=5&order=desc", auth...).Body.Bytes())["data"].([]any)
	if len(asc) != 5 || fmt.Sprint(asc[0]) != fmt.Sprint(desc[4]) {
		t.Errorf("asc is not desc reversed: %v / %v", asc, desc)
	}

	aapl := decode(t, get(t, s, "/indicator/api/equities/NASDAQ:AAPL/pbr-band?limit=2", auth...).Body.Bytes())["data"].([]any)
	first, second := aapl[0].(map[string]any), aapl[1].(map[string]any)
	if v, ok := first["bps"]; !ok || v != nil {
		t.Errorf("AAPL newest bps %v", v)
	}
	num(t, first["close"])
	num(t, second["bps"])

	for _, c := range []struct {
		url  string
		code int
		err  string
	}{
		{"/indicator/api/equities/KRX:999999/pbr-band", 404, "not_found"},
		{"/indicator/api/equities/KRX:005930/pbr-band?order=sideways", 400, "bad_request"},
		{"/indicator/api/equities/KRX:005930/pbr-band?limit=0", 400, "bad_request"},
		{"/indicator/api/equities/KRX:005930/other", 404, "not_found"},
	} {
		rec := get(t, s, c.url, auth...)
		if rec.Code != c.code || decode(t, rec.Body.Bytes())["error"] != c.err {
			t.Errorf("%s: %d %s", c.url, rec.Code, rec.Body)
		}
	}
}
