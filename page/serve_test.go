package page

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

const secret = "page-secret-4b5c6d"

// smallRig runs three entries: two live (three series) and one the
// upstream does not serve (failing), with the credential in the query.
func smallRig(t *testing.T) *rig {
	t.Helper()
	r := newRig(t, fakeapi.Options{DataToken: secret}, func(u string) string {
		return fmt.Sprintf(`
data:
  url: %s
  token_env: T
  auth: query
  daily_budget: 100000
  metrics:
    - path: /v1/btc/market-data/open-interest
      window: hour
      exchange: [binance, okx]
    - path: /v1/btc/network-data/supply
      window: day
    - path: /v1/btc/bench-data/not-served
      window: day
`, u)
	})
	return r
}

func statusOf(t *testing.T, r *rig, target string) Status {
	t.Helper()
	code, body := r.get(t, target)
	if code != http.StatusOK {
		t.Fatalf("%s: HTTP %d: %s", target, code, body)
	}
	var st Status
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("%s: %v\n%s", target, err, body)
	}
	return st
}

// The page and its JSON say, per series, the state, the newest row and
// the next call, and the last error in full without the credential;
// filters and pages are the server's.
func TestPageAndJSON(t *testing.T) {
	r := smallRig(t)
	st := statusOf(t, r, PathJSON)
	if st.Version != 3 || st.Series.Total != 4 || st.Series.Matched != 4 || len(st.Series.Items) != 4 {
		t.Fatalf("version %d, %d series (%d matched, %d shown), want 3, 4", st.Version, st.Series.Total, st.Series.Matched, len(st.Series.Items))
	}
	var failing *Series
	for i, s := range st.Series.Items {
		switch {
		case strings.Contains(s.Path, "not-served"):
			failing = &st.Series.Items[i]
		case s.State != StateFresh && s.State != StateAwaiting || s.Newest.IsZero() || s.Next.IsZero() || s.Why == "" || !s.Served:
			t.Errorf("a live series: %+v", s)
		}
	}
	if failing == nil || failing.State != StateFailing || failing.Served || !strings.Contains(failing.Error, "refresh failed") ||
		!strings.Contains(failing.Error, "HTTP 404") || !strings.Contains(failing.Error, "api_key=<redacted>") {
		t.Fatalf("the failing series: %+v", failing)
	}
	a := st.APIs[0]
	if a.Name != "data" || a.Series != 4 || a.CallsToday < 4 || a.Limit != 100000 || a.DailyBudget != 100000 ||
		!strings.Contains(a.PlanLine, "natural cost") || !strings.Contains(a.PlanLine, "nothing cut") ||
		a.KeyPlan != "unknown" || a.Credential != "environment variable T" {
		t.Errorf("the data API: %+v", a)
	}
	if len(st.Endpoints) != 3 || st.Endpoints[0].Series != 2 || st.Endpoints[0].Window != "hour" || st.Endpoints[0].CallsPerDay <= 0 {
		t.Errorf("endpoints: %+v", st.Endpoints)
	}

	// Filters and pages.
	for target, want := range map[string][2]int{ // matched, shown
		PathJSON + "?state=failing":                       {1, 1},
		PathJSON + "?api=data&limit=3":                    {4, 3},
		PathJSON + "?api=data&limit=3&offset=3":           {4, 1},
		PathJSON + "?endpoint=open-interest&offset=1":     {2, 1},
		PathJSON + "?endpoint=open-interest":              {2, 2},
		PathJSON + "?api=indicator":                       {0, 0},
		PathJSON + "?api=data&state=late":                 {0, 0},
		PathJSON + "?key=" + url.QueryEscape(failing.Key): {1, 1},
		PathJSON + "?api=data&per_page=3&page=2":          {4, 1},
		PathJSON + "?per_page=1&page=4":                   {4, 1},
		PathJSON + "?per_page=1&page=5":                   {4, 0},
		PathJSON + "?endpoint=open-interest&per_page=1":   {2, 1},
	} {
		st := statusOf(t, r, target)
		if st.Series.Matched != want[0] || len(st.Series.Items) != want[1] || st.Series.Total != 4 {
			t.Errorf("%s: %d matched, %d shown of %d, want %v of 4", target, st.Series.Matched, len(st.Series.Items), st.Series.Total, want)
		}
	}
	for target, want := range map[string]string{
		"/?state=asleep":         `state="asleep": not a state`,
		"/?api=weather":          `api="weather": not an API`,
		"/?limit=5000":           `limit="5000": not a whole number from 0 to 1000`,
		"/?offset=-1":            `offset="-1": not a whole number`,
		"/?per_page=5000":        `per_page="5000": not a whole number from 0 to 1000`,
		"/?page=x":               `page="x": not a whole number`,
		"/series?api=data":       "/series needs api and key",
		"/series?api=data&key=x": `no series "x" of the API "data"`,
		"/nothing":               "404 page not found",
	} {
		code, body := r.get(t, target)
		if code < 400 || !strings.Contains(body, want) {
			t.Errorf("%s: HTTP %d %q, want an error saying %s", target, code, body, want)
		}
	}

	// The HTML: the same, escaped, with a link to each series' view.
	code, page := r.get(t, "/")
	if code != http.StatusOK {
		t.Fatalf("/: HTTP %d", code)
	}
	for _, want := range []string{
		`<a href="/metrics?collect[]=data">Metrics of the data API only</a>: 4 tuples<`,
		`<td class="state failing">failing</td>`,
		"nothing cut",
		`href="/series?api=data&amp;key=`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	code, view := r.get(t, "/series?api=data&key="+url.QueryEscape(failing.Key))
	if code != http.StatusOK || !strings.Contains(view, "HTTP 404") || !strings.Contains(view, `<td class="state failing">failing</td>`) {
		t.Errorf("the failing series' view: HTTP %d\n%s", code, view)
	}
	// The view of one series is a look-up; it says what the page over
	// every series says of it, its API and its endpoint.
	for _, s := range st.Series.Items {
		one, ok := NewHandler(r.src).BuildSeries("data", s.Key)
		all := statusOf(t, r, PathJSON+"?key="+url.QueryEscape(s.Key))
		if !ok || len(one.Series.Items) != 1 || one.Series.Items[0].State != s.State || one.Series.Items[0].Why != all.Series.Items[0].Why ||
			len(one.Endpoints) != 1 || one.APIs[0].PlanLine != a.PlanLine {
			t.Errorf("the view of %s: %+v, want the page's %+v", s.Key, one.Series.Items, s)
			continue
		}
		var want Endpoint
		for _, e := range all.Endpoints {
			if e.Path == s.Endpoint && e.Window == s.Window {
				want = e
			}
		}
		got := one.Endpoints[0]
		if got.Series != want.Series || got.CallsPerDay != want.CallsPerDay || got.OneRowIn != want.OneRowIn || (got.PublicationDelay == nil) != (want.PublicationDelay == nil) {
			t.Errorf("the endpoint of %s: %+v, want %+v", s.Key, got, want)
		}
	}
	for _, body := range []string{page, view, fmt.Sprint(st)} {
		if strings.Contains(body, secret) {
			t.Errorf("the credential or unescaped text on the page:\n%s", body)
		}
	}
}

// A rejected credential pauses the API: the page says so per API (the
// lane, the code, until when) and per series, with the error in full and
// without the credential.
func TestPageShowsAPause(t *testing.T) {
	r := newRig(t, fakeapi.Options{DataToken: secret}, func(u string) string {
		return fmt.Sprintf(`
data:
  url: %s
  token_env: T
  auth: query
  metrics:
    - path: /v1/btc/network-data/supply
      window: day
      cache_ttl: 100ms
`, u)
	})
	r.fake.SetFault("data", fakeapi.Fault{Kind: fakeapi.Unauthorized})
	var st Status
	for deadline := time.Now().Add(20 * time.Second); ; {
		r.scrape(t)
		// The client pauses the API before the refresh's failure reaches
		// the series' view: both are waited for.
		if st = statusOf(t, r, PathJSON); st.States[StatePaused] == 1 && len(st.Series.Items) == 1 && st.Series.Items[0].Error != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the series was never paused with its error: %+v", st.Series.Items)
		}
		time.Sleep(50 * time.Millisecond)
	}
	a, s := st.APIs[0], st.Series.Items[0]
	if len(a.Pauses) != 1 || a.Pauses[0].Lane != "keyed" || !a.Pauses[0].Credential || !a.Pauses[0].Until.After(time.Now()) {
		t.Errorf("the pauses of the data API: %+v", a.Pauses)
	}
	if !strings.Contains(s.Why, "paused after "+a.Pauses[0].By) || !s.Next.Equal(a.Pauses[0].Until) ||
		!strings.Contains(s.Error, "HTTP 401") || !strings.Contains(s.Error, "api_key=<redacted>") {
		t.Errorf("the paused series: %+v", s)
	}
	_, page := r.get(t, "/")
	if !strings.Contains(page, `<td class="state paused">paused</td>`) || !strings.Contains(page, `<span class="pause">keyed calls paused by `) {
		t.Errorf("the page does not show the pause")
	}
	if strings.Contains(page, secret) || strings.Contains(fmt.Sprint(st), secret) {
		t.Error("the credential shows")
	}
}

// A configuration that costs more than its daily_budget: the page says
// what the plan cut, per API and per endpoint and window.
func TestPageSaysHowTheBudgetCuts(t *testing.T) {
	r := newRig(t, fakeapi.Options{}, func(u string) string {
		return fmt.Sprintf(`
data:
  url: %s
  token_env: T
  daily_budget: 300
  metrics:
    - path: /v1/btc/market-data/open-interest
      window: min
      exchange: [binance, okx]
    - path: /v1/btc/network-data/supply
      window: day
`, u)
	})
	st := statusOf(t, r, PathJSON)
	a := st.APIs[0]
	if !strings.Contains(a.PlanLine, "natural cost") || !strings.Contains(a.PlanLine, "min polled every") || a.Planned >= a.Forecast {
		t.Errorf("the plan line: %q (forecast %v, planned %v)", a.PlanLine, a.Forecast, a.Planned)
	}
	for _, e := range st.Endpoints {
		if cut := e.OneRowIn > 1; cut != (e.Window == "min") || e.Window == "min" && e.PlannedPerDay >= e.CallsPerDay {
			t.Errorf("endpoint %s %s: one row in %v, %v calls a day planned of %v", e.Path, e.Window, e.OneRowIn, e.PlannedPerDay, e.CallsPerDay)
		}
	}
	if _, page := r.get(t, "/"); !strings.Contains(page, "min polled every") {
		t.Error("the page does not show the plan's cut")
	}
}

// A daily_budget smaller than the series' calls: the series due wait for
// the budget, and the page says they are held by it, and until when.
func TestPageShowsTheBudgetHolding(t *testing.T) {
	r := newRig(t, fakeapi.Options{}, func(u string) string {
		return fmt.Sprintf(`
data:
  url: %s
  token_env: T
  daily_budget: 10
  metrics:
    - path: /v1/btc/market-data/open-interest
      window: hour
      exchange: [binance, okx, bybit, deribit]
`, u)
	})
	var st Status
	for deadline := time.Now().Add(20 * time.Second); ; {
		r.scrape(t)
		if st = statusOf(t, r, PathJSON); st.States[StateHeld] > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no series held by the budget: %v, %+v", st.States, st.APIs[0])
		}
		time.Sleep(50 * time.Millisecond)
	}
	a := st.APIs[0]
	if !strings.Contains(a.Hold, "daily_budget") {
		t.Errorf("the data API's hold: %q", a.Hold)
	}
	for _, s := range st.Series.Items {
		if s.State == StateHeld && (!strings.Contains(s.Why, "daily_budget") || !s.Next.After(st.Generated.Add(-time.Second))) {
			t.Errorf("a held series: %+v", s)
		}
	}
}
