package fakeapi

import (
	"encoding/json"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// pathWindow is one window of one path.
type pathWindow struct{ path, window string }

// planDoc is a decoded plan answer.
type planDoc struct {
	name    string
	grants  map[pathWindow]string // ISO 8601 duration per path and window
	statics []string
	token   int64
	window  string
}

var isoDays = regexp.MustCompile(`^P(?:([0-9]+)Y)?(?:([0-9]+)D)?$`)

// days reads a duration of the plan answer as days, a year as 366; P0D
// (no limit) is the largest.
func days(t *testing.T, iso string) int {
	t.Helper()
	m := isoDays.FindStringSubmatch(iso)
	if m == nil || iso == "P" {
		t.Fatalf("%q is not an ISO 8601 duration of years and days", iso)
	}
	y, _ := strconv.Atoi(m[1])
	d, _ := strconv.Atoi(m[2])
	if y == 0 && d == 0 {
		return 1 << 30
	}
	return 366*y + d
}

// planOf asks for the plan of key (a bearer token) and decodes it; the
// windows of a metric are read from either dialect.
func planOf(t *testing.T, s http.Handler, key string) planDoc {
	t.Helper()
	rec := get(t, s, planPath, "Authorization", "Bearer "+key)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s with %s: HTTP %d %s", planPath, key, rec.Code, rec.Body)
	}
	var raw struct {
		Plan struct {
			Name string `json:"name"`
		} `json:"plan"`
		APIEndpoint  map[string]json.RawMessage `json:"apiEndpoint"`
		APIRateLimit struct {
			Token  int64  `json:"token"`
			Window string `json:"window"`
		} `json:"apiRateLimit"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &raw); err != nil {
		t.Fatalf("plan answer: %v\n%s", err, rec.Body)
	}
	doc := planDoc{name: raw.Plan.Name, grants: map[pathWindow]string{}, token: raw.APIRateLimit.Token, window: raw.APIRateLimit.Window}
	for asset, v := range raw.APIEndpoint {
		if asset == "statics" {
			if err := json.Unmarshal(v, &doc.statics); err != nil {
				t.Fatalf("statics: %v", err)
			}
			continue
		}
		var cats map[string]map[string]map[string]any
		if err := json.Unmarshal(v, &cats); err != nil {
			t.Fatalf("apiEndpoint.%s: %v", asset, err)
		}
		for cat, metrics := range cats {
			for metric, m := range metrics {
				if nested, ok := m["window"].(map[string]any); ok {
					m = nested
				}
				for w, d := range m {
					if iso, ok := d.(string); ok {
						doc.grants[pathWindow{"/v1/" + asset + "/" + cat + "/" + metric, w}] = iso
					}
				}
			}
		}
	}
	return doc
}

// listedWindows is what /v1/discovery/endpoints lists: each path's
// windows.
func listedWindows(t *testing.T, s http.Handler, key string) map[pathWindow]bool {
	t.Helper()
	rec := get(t, s, "/v1/discovery/endpoints", "Authorization", "Bearer "+key)
	e := parseEnvelope(t, rec)
	out := map[pathWindow]bool{}
	for _, item := range e.rows {
		params := item["parameters"].(map[string]any)
		for _, w := range params["window"].([]any) {
			out[pathWindow{item["path"].(string), w.(string)}] = true
		}
	}
	return out
}

// planKeys is a key per plan, and the demo's token.
var planKeys = map[string]Tier{"k-basic": TierBasic, "k-advanced": TierAdvanced, "k-professional": TierProfessional, "k-premium": TierPremium}

// Each key is told its own plan: the name in upper case, windows and
// depths only of what discovery lists, the statics, a rate limit. Each
// plan allows at least what the one below it does, as far back; premium
// allows every window of every v1 path without limit, basic only day.
func TestPlanAnswerPerKey(t *testing.T) {
	for _, c := range []Catalog{CatalogSmall, CatalogFull} {
		t.Run(c.String(), func(t *testing.T) { planAnswerPerKey(t, c) })
	}
}

func planAnswerPerKey(t *testing.T, c Catalog) {
	s, _ := newTestServer(Options{DataToken: "tok", DataKeys: planKeys, Catalog: c})
	listed := listedWindows(t, s, "tok")
	wantRate := map[Tier]struct {
		token  int64
		window string
	}{TierBasic: {1000, "day"}, TierAdvanced: {5000, "day"}, TierProfessional: {1000, "hour"}, TierPremium: {600, "minute"}}
	docs := map[Tier]planDoc{}
	for key, p := range planKeys {
		doc := planOf(t, s, key)
		docs[p] = doc
		want := map[Tier]string{TierBasic: "BASIC", TierAdvanced: "ADVANCED", TierProfessional: "PROFESSIONAL", TierPremium: "PREMIUM"}[p]
		if doc.name != want {
			t.Errorf("%s: plan.name %q, want %q", key, doc.name, want)
		}
		if doc.token != wantRate[p].token || doc.window != wantRate[p].window {
			t.Errorf("%s: apiRateLimit %d per %s", key, doc.token, doc.window)
		}
		if !slices.Equal(doc.statics, []string{"/v1/discovery/endpoints", "/v2/discovery/endpoints", planPath,
			"/v1/btc/status/entity-list", "/v1/eth/status/entity-list", "/v1/xrp/status/entity-list", "/v1/trx/status/entity-list"}) {
			t.Errorf("%s: statics %v", key, doc.statics)
		}
		for _, path := range doc.statics {
			if rec := get(t, s, path+"?type=exchange", "Authorization", "Bearer "+key); strings.Contains(path, "entity-list") && rec.Code != http.StatusOK {
				t.Errorf("%s: the static %s answers HTTP %d", key, path, rec.Code)
			}
		}
		if len(doc.grants) == 0 {
			t.Errorf("%s: the plan allows nothing", key)
		}
		for pw, iso := range doc.grants {
			days(t, iso)
			if !listed[pw] {
				t.Errorf("%s: the plan allows %s at %s, which discovery does not list", key, pw.path, pw.window)
			}
			if p == TierBasic && pw.window != "day" {
				t.Errorf("basic allows %s at %s", pw.path, pw.window)
			}
		}
	}
	if got := planOf(t, s, "tok"); !maps.Equal(got.grants, docs[TierPremium].grants) || got.name != "PREMIUM" {
		t.Errorf("the demo token is on %s with %d grants, want premium's %d", got.name, len(got.grants), len(docs[TierPremium].grants))
	}
	for pw := range listed {
		if docs[TierPremium].grants[pw] != "P0D" {
			t.Errorf("premium: %s at %s is %q, want P0D", pw.path, pw.window, docs[TierPremium].grants[pw])
		}
	}
	for i := 1; i < len(Tiers); i++ {
		lower, higher := docs[Tiers[i-1]], docs[Tiers[i]]
		if len(higher.grants) <= len(lower.grants) {
			t.Errorf("%s allows %d windows of paths, %s %d", Tiers[i], len(higher.grants), Tiers[i-1], len(lower.grants))
		}
		for pw, iso := range lower.grants {
			if h, ok := higher.grants[pw]; !ok || days(t, h) < days(t, iso) {
				t.Errorf("%s allows %s at %s back %s, %s %q", Tiers[i-1], pw.path, pw.window, iso, Tiers[i], h)
			}
		}
	}
}

// A key's plan is read from the bearer token or the api_key parameter;
// an unknown key is 401 on the plan endpoint too, and SetDataKey
// changes a key's plan while the server runs.
func TestPlanKeysAndChanges(t *testing.T) {
	s, _ := newTestServer(Options{DataToken: "tok", DataKeys: map[string]Tier{"k": TierBasic}})
	if rec := get(t, s, planPath+"?api_key=k"); rec.Code != http.StatusOK || !regexp.MustCompile(`"name":"BASIC"`).Match(rec.Body.Bytes()) {
		t.Errorf("api_key=k: HTTP %d %s", rec.Code, rec.Body)
	}
	for _, hdr := range [][]string{nil, {"Authorization", "Bearer nope"}} {
		rec := get(t, s, planPath, hdr...)
		if e := parseEnvelope(t, rec); rec.Code != http.StatusUnauthorized || e.message != "unauthorized" {
			t.Errorf("%v: HTTP %d %q", hdr, rec.Code, e.message)
		}
	}
	basic := planOf(t, s, "k")
	s.SetDataKey("k", TierProfessional)
	s.SetDataKey("new", TierAdvanced)
	if got := planOf(t, s, "k"); got.name != "PROFESSIONAL" || len(got.grants) <= len(basic.grants) {
		t.Errorf("after the upgrade: %s with %d grants (basic had %d)", got.name, len(got.grants), len(basic.grants))
	}
	if got := planOf(t, s, "new"); got.name != "ADVANCED" {
		t.Errorf("a key added while serving: %s", got.name)
	}
	if got := planOf(t, s, "tok"); got.name != "PREMIUM" {
		t.Errorf("DataToken: %s", got.name)
	}
	open, _ := newTestServer(Options{})
	if got := planOf(t, open, ""); got.name != "PREMIUM" {
		t.Errorf("without authentication: %s", got.name)
	}
	open.SetDataKey("k", TierBasic)
	if rec := get(t, open, planPath); rec.Code != http.StatusUnauthorized {
		t.Errorf("a server given a key still serves without one: HTTP %d", rec.Code)
	}
}

func TestParseTier(t *testing.T) {
	for _, p := range Tiers {
		if got, err := ParseTier(" " + p.String() + " "); got != p || err != nil {
			t.Errorf("ParseTier(%q) = %v, %v", p.String(), got, err)
		}
	}
	if got, err := ParseTier("PREMIUM"); got != TierPremium || err != nil {
		t.Errorf("ParseTier(PREMIUM) = %v, %v", got, err)
	}
	if _, err := ParseTier("gold"); err == nil || err.Error() != `unknown plan "gold" (basic, advanced, professional, premium)` {
		t.Errorf("ParseTier(gold): %v", err)
	}
	if s := Tier(9).String(); s != "Tier(9)" {
		t.Errorf("Tier(9) = %q", s)
	}
}

// metricObjects returns every metric object of a plan answer.
func metricObjects(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	var raw struct {
		APIEndpoint map[string]json.RawMessage `json:"apiEndpoint"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for asset, v := range raw.APIEndpoint {
		if asset == "statics" {
			continue
		}
		var cats map[string]map[string]map[string]any
		if err := json.Unmarshal(v, &cats); err != nil {
			t.Fatalf("apiEndpoint.%s: %v", asset, err)
		}
		for _, metrics := range cats {
			for _, m := range metrics {
				out = append(out, m)
			}
		}
	}
	return out
}

// The older dialect nests each metric's windows under "window" beside a
// "limit"; it says the same as the current one, for every plan.
func TestPlanAnswerDialects(t *testing.T) {
	current, _ := newTestServer(Options{DataKeys: planKeys, Catalog: CatalogFull})
	nested, _ := newTestServer(Options{DataKeys: planKeys, Catalog: CatalogFull, PlanAnswer: PlanAnswer{Nested: true}})
	for key, p := range planKeys {
		a, b := planOf(t, current, key), planOf(t, nested, key)
		if a.name != b.name || !maps.Equal(a.grants, b.grants) || !slices.Equal(a.statics, b.statics) || a.token != b.token || a.window != b.window {
			t.Errorf("%s: the dialects differ: %d and %d grants, %s and %s", p, len(a.grants), len(b.grants), a.name, b.name)
		}
		for _, m := range metricObjects(t, get(t, current, planPath, "Authorization", "Bearer "+key).Body.Bytes()) {
			for w, d := range m {
				if _, ok := d.(string); !ok || w == "window" {
					t.Errorf("%s current: a metric holds %s: %v", p, w, d)
				}
			}
		}
		for _, m := range metricObjects(t, get(t, nested, planPath, "Authorization", "Bearer "+key).Body.Bytes()) {
			w, ok := m["window"].(map[string]any)
			if limit, _ := m["limit"].(float64); !ok || len(w) == 0 || limit != 100000 || len(m) != 2 {
				t.Errorf("%s nested: metric object %v", p, m)
			}
		}
	}
	current.SetPlanAnswer(PlanAnswer{Nested: true})
	if got := get(t, current, planPath, "Authorization", "Bearer k-basic").Body.String(); !strings.Contains(got, `{"window":{"day":"P90D"},"limit":100000}`) {
		t.Errorf("after SetPlanAnswer(nested): %.300s", got)
	}
}

// The plan endpoint can fail as an upstream without it (404) or as one
// that refuses it (403, 500: the provider's client reads those as the
// basic plan): in the data API's envelope, for known keys; an unknown
// key is still 401, and data calls are not affected.
func TestPlanAnswerFailures(t *testing.T) {
	for _, code := range []int{404, 403, 500} {
		a, err := ParsePlanAnswer(strconv.Itoa(code))
		if err != nil {
			t.Fatal(err)
		}
		s, _ := newTestServer(Options{DataToken: "tok", DataKeys: planKeys, PlanAnswer: a})
		rec := get(t, s, planPath, "Authorization", "Bearer k-professional")
		if e := parseEnvelope(t, rec); rec.Code != code || e.code != code || e.message != statusWords[code] {
			t.Errorf("%d: HTTP %d, status %d %q", code, rec.Code, e.code, e.message)
		}
		if rec := get(t, s, planPath, "Authorization", "Bearer nope"); rec.Code != http.StatusUnauthorized {
			t.Errorf("%d: an unknown key: HTTP %d", code, rec.Code)
		}
		for key, want := range map[string]int{"k-professional": 200, "k-basic": 403, "tok": 200} {
			if rec := get(t, s, "/v1/btc/network-indicator/pnl-utxo?limit=5", "Authorization", "Bearer "+key); rec.Code != want {
				t.Errorf("%d: a data call of %s: HTTP %d, want %d", code, key, rec.Code, want)
			}
		}
		s.SetPlanAnswer(PlanAnswer{})
		if got := planOf(t, s, "k-professional"); got.name != "PROFESSIONAL" {
			t.Errorf("%d, then the plan again: %s", code, got.name)
		}
	}
	for in, want := range map[string]PlanAnswer{"": {}, "current": {}, " Nested": {Nested: true}, "404": {Status: 404}, "503": {Status: 503}} {
		if got, err := ParsePlanAnswer(in); got != want || err != nil {
			t.Errorf("ParsePlanAnswer(%q) = %+v, %v", in, got, err)
		}
	}
	for _, in := range []string{"200", "302", "418", "old", "-1"} {
		if _, err := ParsePlanAnswer(in); err == nil {
			t.Errorf("ParsePlanAnswer(%q) accepted", in)
		}
	}
}
