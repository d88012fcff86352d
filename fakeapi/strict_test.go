package fakeapi

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The data API answers a path it does not serve with 404 and a query
// parameter the path does not take with 400, in its status envelope, as
// the real API does: a typo fails against the fake where it would fail
// for real, not as a series served regardless.
func TestDataRefusesUnknownPathsAndParameters(t *testing.T) {
	s, _ := newTestServer(Options{})
	for _, c := range []struct {
		target string
		code   int
		word   string
	}{
		{"/v1/btc/exchange-flows/reserve?exchange=binance", 200, "success"},
		{"/v1/btc/exchange-flows/reserve?exchange=binance&window=hour&limit=3&from=20261101&to=20261110&format=json&api_key=k", 200, "success"},
		{"/v1/btc/exchange-flow/reserve?exchange=binance", 404, "not_found"},
		{"/v1/btc/exchange-flows/whatever", 404, "not_found"},
		{"/v1/doge/network-data/supply", 404, "not_found"},
		{"/v2/network/events-count-typo?asset=usdt", 404, "not_found"},
		{"/v1/btc/exchange-flows/reserve?exchanges=binance", 400, "bad_request"},
		{"/v1/btc/network-data/supply?exchange=binance", 400, "bad_request"},
		{"/v2/network/events-count?asset=usdt&chains=ethereum", 400, "bad_request"},
		{"/v1/discovery/endpoints?verbose=1", 400, "bad_request"},
	} {
		rec := get(t, s, c.target)
		e := parseEnvelope(t, rec)
		if rec.Code != c.code || e.code != c.code || e.message != c.word {
			t.Errorf("GET %s: HTTP %d, status %d %q; want %d %q", c.target, rec.Code, e.code, e.message, c.code, c.word)
		}
	}
}

// Discovery lists every path the fake serves and no other: each listed
// path answers 200 with its required parameters, and Options.ExtraPaths
// adds paths to both.
func TestDiscoveryListsWhatIsServed(t *testing.T) {
	const extra = "/v1/btc/bench/m0001"
	for _, o := range []Options{{}, {ExtraPaths: []string{extra, "/v1/nosuchcoin/a/b", "not a path"}}} {
		s, _ := newTestServer(o)
		listed := map[string]bool{}
		for _, list := range []string{"/v1/discovery/endpoints", "/v2/discovery/endpoints"} {
			for _, item := range rowsOf(t, s, list).rows {
				path := item["path"].(string)
				listed[path] = true
				q := url.Values{}
				if required, _ := item["required_parameters"].([]any); len(required) > 0 {
					params := item["parameters"].(map[string]any)
					for _, r := range required {
						q.Set(r.(string), params[r.(string)].([]any)[0].(string))
					}
				}
				if rec := get(t, s, path+"?"+q.Encode()); rec.Code != http.StatusOK {
					t.Errorf("%s lists %s, which answers HTTP %d: %s", list, path, rec.Code, rec.Body)
				}
			}
		}
		want := len(o.ExtraPaths) > 0
		if listed[extra] != want {
			t.Errorf("ExtraPaths %v: %s listed %v", o.ExtraPaths, extra, listed[extra])
		}
		if code := get(t, s, extra).Code; (code == http.StatusOK) != want {
			t.Errorf("ExtraPaths %v: %s answers HTTP %d", o.ExtraPaths, extra, code)
		}
		if listed["/v1/nosuchcoin/a/b"] {
			t.Error("an extra path of an unknown asset is listed")
		}
	}
}

// The Indicator API refuses a parameter of no endpoint too; the Analyst
// Consensus API already names it (INVALID_PARAMETER).
func TestIndicatorRefusesUnknownParameters(t *testing.T) {
	s, _ := newTestServer(Options{})
	for target, code := range map[string]int{
		"/indicator/api/equities/KRX:005930/pbr-band?limit=5&order=desc": 200,
		"/indicator/api/equities/KRX:005930/pbr-band?limt=5":             400,
		"/indicator/api/equities?page=2":                                 400,
		"/indicator/api/equities/KRX:005930/pbr-bands?limit=5":           404,
	} {
		if rec := get(t, s, target); rec.Code != code {
			t.Errorf("GET %s: HTTP %d, want %d: %s", target, rec.Code, code, rec.Body)
		}
	}
	m := consensusError(t, get(t, s, "/consensus/calls?asset=btc&assets=eth"), 400, "INVALID_PARAMETER")
	if m["param"] != "assets" {
		t.Errorf("param = %v, want assets", m["param"])
	}
}

// Issue 26: 40 000 requests of unique unknown paths grew the fake from 16
// to 238 MB, never freed. Only the paths it serves are counted per path.
func TestUnknownPathsKeepNoMemory(t *testing.T) {
	s, _ := newTestServer(Options{})
	pad := strings.Repeat("x", 1024)
	for i := range 40000 {
		for _, prefix := range []string{"/v1/btc/", "/indicator/api/", "/consensus/analysts/"} {
			get(t, s, fmt.Sprintf("%s%s%d", prefix, pad, i))
		}
	}
	get(t, s, "/v1/btc/network-data/supply")
	get(t, s, "/consensus/analysts/top?asset=btc")
	s.mu.Lock()
	n := len(s.pathCalls)
	s.mu.Unlock()
	if n != 2 {
		t.Errorf("%d paths remembered after 120 000 unknown ones and 2 served, want 2", n)
	}
	if s.CallsFor("/v1/btc/network-data/supply") != 1 || s.Calls("data") != 40001 || s.Calls("consensus") != 40001 {
		t.Errorf("calls: supply %d, data %d, consensus %d", s.CallsFor("/v1/btc/network-data/supply"), s.Calls("data"), s.Calls("consensus"))
	}
}

// Issue 26: an error answer quotes at most a short, cut value of the
// request, never a 500 KB one whole.
func TestErrorAnswersEchoShortValues(t *testing.T) {
	s, _ := newTestServer(Options{})
	huge := strings.Repeat("é", 250_000) // 500 KB
	for _, target := range []string{
		"/consensus/calls?asset=btc&" + huge + "=1",
		"/indicator/api/equities/" + huge + "/pbr-band",
		"/indicator/api/equities/KRX:005930/pbr-band?" + huge + "=1",
		"/v1/btc/network-data/supply?" + huge + "=1",
		"/v1/" + huge,
	} {
		rec := get(t, s, target)
		if rec.Code < 400 || rec.Body.Len() > 1024 {
			t.Errorf("GET %.40s...: HTTP %d, %d bytes of answer", target, rec.Code, rec.Body.Len())
		}
		if strings.Contains(rec.Body.String(), "\ufffd") {
			t.Errorf("GET %.40s...: a character was cut in two: %s", target, rec.Body)
		}
	}
	if got := echoed(huge); got != strings.Repeat("é", 32)+"..." {
		t.Errorf("echoed = %q", got)
	}
}
