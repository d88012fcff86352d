package app

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/page"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// pageConfig has live series of two windows, one series the upstream
// fails (pageUpstream), a daily budget and the credential in the query.
func pageConfig(url, tokenFile string) string {
	return fmt.Sprintf(`
data:
  url: %q
  token_file: %q
  auth: query
  daily_budget: 20000
  metrics:
    - path: /v1/btc/market-data/open-interest
      window: [hour, day]
      exchange: [binance, okx]
    - path: /v1/btc/network-data/supply
      window: day
    - path: /v1/btc/bench-data/not-served
      window: day
`, url, tokenFile)
}

// notServed is the path of pageConfig whose every call fails: listed by
// discovery and in the key's plan (a path no list knows is a typo the
// exporter keeps out, not a failing series).
const notServed = "/v1/btc/bench-data/not-served"

// pageUpstream is the fake upstream of pageConfig: it lists notServed and
// answers it 500.
func pageUpstream(t *testing.T, o fakeapi.Options) *fakeUpstream {
	t.Helper()
	o.ExtraPaths = append(o.ExtraPaths, notServed)
	up := newFakeUpstream(t, o)
	up.fake.SetFault("data", fakeapi.Fault{Kind: fakeapi.Status500, PathPrefix: notServed})
	return up
}

// sampleValue is the value of the series line of family that carries
// every label pair, and whether there is exactly one.
func sampleValue(body, family string, pairs ...string) (float64, bool) {
	var v float64
	n := 0
	for _, l := range strings.Split(body, "\n") {
		if !strings.HasPrefix(l, family+"{") {
			continue
		}
		all := true
		for i := 0; i+1 < len(pairs); i += 2 {
			all = all && strings.Contains(l, pairs[i]+`="`+pairs[i+1]+`"`)
		}
		if !all {
			continue
		}
		f, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
		if err != nil {
			return 0, false
		}
		v, n = f, n+1
	}
	return v, n == 1
}

// pageStatus reads the page's JSON.
func pageStatus(t *testing.T, e *exporter, query string) page.Status {
	t.Helper()
	code, body := e.get(http.MethodGet, page.PathJSON+query)
	if code != http.StatusOK {
		t.Fatalf("%s: HTTP %d: %s", page.PathJSON, code, body)
	}
	var st page.Status
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("%s: %v", page.PathJSON, err)
	}
	return st
}

// What the page says agrees with /metrics: series per API, calls today
// and the budget, failing series, the forecast and the learned
// publication delay of each endpoint, the coarsening, each series' last
// answer (ok where query_success is 1, its error's code one
// api_errors_total counts), the key's plan in force. The credential never
// shows.
func TestPageAgreesWithMetrics(t *testing.T) {
	const secret = "page-agree-secret-1f2e"
	up := pageUpstream(t, fakeapi.Options{DataToken: secret})
	dir := t.TempDir()
	tokenFile, cfgFile := filepath.Join(dir, "token"), filepath.Join(dir, "onchain.yml")
	writeFile(t, tokenFile, secret)
	writeFile(t, cfgFile, pageConfig(up.URL, tokenFile))
	e := startRun(t, http.DefaultClient, "http", flags{config: cfgFile})
	e.metrics() // the first fill

	// Calls may land between two reads: take a status read between two
	// scrapes that agree on the day's calls.
	var before, after string
	var st page.Status
	for try := 0; ; try++ {
		before = e.metrics()
		st = pageStatus(t, e, "")
		after = e.metrics()
		b, _ := sampleValue(before, "onchain_exporter_daily_calls_used", "api", "data")
		a, _ := sampleValue(after, "onchain_exporter_daily_calls_used", "api", "data")
		if a == b {
			break
		}
		if try == 20 {
			t.Fatal("the day's calls never held still for two scrapes")
		}
		time.Sleep(200 * time.Millisecond)
	}
	data := st.APIs[0]
	want := func(what string, got float64, family string, pairs ...string) {
		t.Helper()
		v, ok := sampleValue(after, family, pairs...)
		if !ok || math.Abs(v-got) > 1e-9 {
			t.Errorf("%s: the page says %v, /metrics %s%v says %v (found: %v)", what, got, family, pairs, v, ok)
		}
	}
	want("series", float64(data.Series), "onchain_exporter_tuples", "api", "data")
	want("calls today", float64(data.CallsToday), "onchain_exporter_daily_calls_used", "api", "data")
	want("calls today here", float64(data.CallsTodayHere), "onchain_exporter_daily_calls_used_here", "api", "data")
	want("limit today", float64(data.Limit), "onchain_exporter_daily_budget_calls", "api", "data")
	failing := 0
	for _, s := range st.Series.Items {
		if s.State == page.StateFailing || s.State == page.StateRefused || s.State == page.StateRateHeld {
			failing++
			if !strings.Contains(s.Error, "not-served") {
				t.Errorf("the failing series' error is not shown in full: %+v", s)
			}
		}
		if len(s.Answers) == 0 {
			t.Errorf("series %s has no answer after the first fill", s.Key)
			continue
		}
		last := s.Answers[0]
		pairs := []string{"api", "data", "endpoint", s.Path, "window", s.Window}
		for k, v := range s.Labels {
			pairs = append(pairs, k, v)
		}
		success, one := sampleValue(after, "onchain_exporter_query_success", pairs...)
		if !one || (last.Outcome == "ok") != (success == 1) {
			t.Errorf("series %s: its last answer %+v, query_success %v (found once: %v)", s.Key, last, success, one)
		}
		// A refusal is counted by the upstream's own word, or not at all
		// when the plan refused it before it was sent (query_refused).
		if last.Code != "" && last.Outcome != "refused" {
			if v, ok := sampleValue(after, "onchain_exporter_api_errors_total", "api", "data", "code", last.Code); !ok || v < 1 {
				t.Errorf("series %s failed with %s, which api_errors_total does not count (%v)", s.Key, last.Code, v)
			}
		}
	}
	// The key's plan in force is the newest of the page's plan history.
	if ph := data.PlanHistory; len(ph) == 0 {
		t.Error("the page has no plan history of the data API, whose key's plan the fake describes")
	} else if v, ok := sampleValue(after, "onchain_exporter_plan_info", "api", "data", "plan", ph[len(ph)-1].Plan); !ok || v != 1 {
		t.Errorf("the page's plan in force %q is not /metrics' plan_info", ph[len(ph)-1].Plan)
	}
	if got := count(after, "onchain_exporter_query_success"); got != st.Series.Total || st.Series.Total != 6 {
		t.Errorf("%d series on the page, %d query_success on /metrics, want 6", st.Series.Total, got)
	}
	if zero := count0(after, "onchain_exporter_query_success"); failing != zero || failing != 1 {
		t.Errorf("%d series failing or refused on the page, %d query_success 0 on /metrics, want 1", failing, zero)
	}
	for _, ep := range st.Endpoints {
		sum := 0.0
		for _, o := range st.Endpoints {
			if o.Path == ep.Path {
				sum += o.CallsPerDay
			}
		}
		if _, ok := sampleValue(after, "onchain_exporter_forecast_calls_per_day", "api", "data", "endpoint", ep.Path); ok || sum != 0 {
			// An endpoint the key's plan refuses costs nothing: the page
			// says 0, /metrics has no forecast of it.
			want("forecast of "+ep.Path, sum, "onchain_exporter_forecast_calls_per_day", "api", "data", "endpoint", ep.Path)
		}
		want("coarsening of "+ep.Window, ep.OneRowIn, "onchain_exporter_coarsening_factor", "api", "data", "window", ep.Window)
		if ep.PublicationDelay != nil {
			want("publication delay of "+ep.Path+" "+ep.Window, *ep.PublicationDelay, "onchain_exporter_publication_delay_seconds",
				"api", "data", "endpoint", ep.Path, "window", ep.Window)
		}
	}
	_, html := e.get(http.MethodGet, "/")
	if strings.Contains(html, secret) || strings.Contains(e.answers.String(), secret) {
		t.Error("the credential shows on the page or its JSON")
	}
}

// count0 counts the series lines of family whose value is 0.
func count0(body, family string) int {
	n := 0
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, family+"{") && strings.HasSuffix(l, " 0") {
			n++
		}
	}
	return n
}

// The page and its JSON are behind --web.config.file, as /metrics is.
func TestPageBehindWebAuth(t *testing.T) {
	const user, password = "operator", "page-auth-password-7a8b"
	up := pageUpstream(t, fakeapi.Options{})
	dir := t.TempDir()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	webFile, tokenFile, cfgFile := filepath.Join(dir, "web.yml"), filepath.Join(dir, "token"), filepath.Join(dir, "onchain.yml")
	writeFile(t, webFile, fmt.Sprintf("basic_auth_users:\n  %s: %q\n", user, hash))
	writeFile(t, tokenFile, "token")
	writeFile(t, cfgFile, pageConfig(up.URL, tokenFile))
	e := startRun(t, http.DefaultClient, "http", flags{config: cfgFile, webConfig: webFile})
	for _, path := range []string{"/", page.PathJSON, page.PathSeries + "?api=data&key=x", "/metrics"} {
		e.user, e.password = "", ""
		if code, _ := e.get(http.MethodGet, path); code != http.StatusUnauthorized {
			t.Errorf("%s without credentials: HTTP %d, want 401", path, code)
		}
		e.user, e.password = user, password
		if code, _ := e.get(http.MethodGet, path); code == http.StatusUnauthorized {
			t.Errorf("%s with credentials: HTTP %d", path, code)
		}
	}
	e.user, e.password = user, password
	if st := pageStatus(t, e, ""); st.Series.Total != 6 {
		t.Errorf("the JSON with credentials: %d series, want 6", st.Series.Total)
	}
}

// updateScreenshot rewrites docs/page.png from the browser test.
var updateScreenshot = flag.Bool("update-screenshot", false, "rewrite docs/page.png, the picture of the operator's page, from TestPageInBrowser (page's TestSeriesViewInBrowser takes docs/page-series.png)")

// chromium finds Debian's chromium: under CI=true a test without it
// fails, elsewhere it is skipped.
func chromium(t *testing.T) string {
	t.Helper()
	return testtool.Require(t, "apt-get install -y chromium", "chromium", "chromium-browser")
}

// browse runs headless chromium on a URL with args (--dump-dom, or
// --screenshot=FILE) and returns what it printed.
func browse(t *testing.T, bin, target string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args = append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir(), "--window-size=1280,1600"}, args...)
	cmd := exec.CommandContext(ctx, bin, append(args, target)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// screenshot writes a picture of the page to the artifacts' directory
// ($ONCHAIN_ARTIFACTS, or onchain_exporter-artifacts in the temporary
// directory) and returns its path.
func screenshot(t *testing.T, bin, target, name string) string {
	t.Helper()
	dir := os.Getenv("ONCHAIN_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "onchain_exporter-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file, err := filepath.Abs(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	browse(t, bin, target, "--screenshot="+file)
	b, err := os.ReadFile(file)
	if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) || len(b) < 10_000 {
		t.Fatalf("chromium wrote no picture of %s to %s: %v (%d bytes)", target, file, err, len(b))
	}
	t.Logf("screenshot of %s: %s", target, file)
	return file
}

// rows counts the series rows of a page's DOM.
func rows(dom string) int { return strings.Count(dom, `<tr class="series"`) }

// The page in a real browser, on the demo: every series is listed with a
// state in words, each API with its plan line, and nothing needs a
// script; a series' view lists its answers and its key's plan as the JSON
// does. Its screenshot is docs/page.png (-update-screenshot); the series'
// view's, docs/page-series.png, is page's TestSeriesViewInBrowser's.
func TestPageInBrowser(t *testing.T) {
	bin := chromium(t)
	e := startRun(t, http.DefaultClient, "http", flags{demo: true})
	e.metrics() // the first fill
	st := pageStatus(t, e, "")
	dom := browse(t, bin, e.base+"/", "--dump-dom")
	if got := rows(dom); got != st.Series.Total || got < 50 {
		t.Errorf("the browser shows %d series rows, the JSON %d", got, st.Series.Total)
	}
	for _, want := range []string{
		`id="series-table"`, `<td class="state fresh">fresh</td>`, "natural cost", "nothing cut",
		"Configuration file: <code>demo.yml (embedded)</code>", `<form class="filter" method="get" action="/">`,
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the DOM after loading lacks %s", want)
		}
	}
	if strings.Contains(dom, "<script") || strings.Contains(dom, "<link") || strings.Contains(dom, "src=") || strings.Contains(dom, "url(") {
		t.Error("the page carries a script or loads something")
	}
	// A filter is a link: the failing series of the demo's fault-free
	// upstream are none; the late ones are the delisted exchange's.
	late := browse(t, bin, e.base+"/?state=late", "--dump-dom")
	if got := rows(late); got != st.States[page.StateLate] || !strings.Contains(late, "late") {
		t.Errorf("?state=late shows %d rows, the JSON counts %d late", got, st.States[page.StateLate])
	}
	// A series' own view: its last answers, and its key's plan as it
	// changed, as the JSON of the series says them.
	var fresh page.Series
	for _, s := range st.Series.Items {
		if s.State == page.StateFresh {
			fresh = s
			break
		}
	}
	q := url.Values{"api": {fresh.API}, "key": {fresh.Key}}.Encode()
	one := pageStatus(t, e, "?"+q)
	if len(one.Series.Items) != 1 || len(one.Series.Items[0].Answers) == 0 {
		t.Fatalf("the JSON of the fresh series %q: %+v", fresh.Key, one.Series.Items)
	}
	s := one.Series.Items[0]
	view := browse(t, bin, e.base+page.PathSeries+"?"+q, "--dump-dom")
	if got := strings.Count(view, `<tr class="answer `); got != len(s.Answers) || !strings.Contains(view, `<tr class="answer ok">`) ||
		!strings.Contains(view, "rows at <code>"+s.Answers[0].Rows+"</code>") {
		t.Errorf("the series' view shows %d answers, its JSON %d: %+v\n%.3000s", got, len(s.Answers), s.Answers, view)
	}
	// The plans' rows are the only <tr><td> rows, after the table's id.
	shown := 0
	if i := strings.Index(view, `id="series-plans"`); i >= 0 {
		shown = strings.Count(view[i:], "<tr><td>")
	}
	if shown != len(s.PlanHistory) {
		t.Errorf("the series' view shows %d plans, its JSON %d: %+v", shown, len(s.PlanHistory), s.PlanHistory)
	}
	screenshot(t, bin, e.base+page.PathSeries+"?"+q, "page-series-demo.png") // an artifact
	file := screenshot(t, bin, e.base+"/", "page-demo.png")
	if *updateScreenshot {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join("..", "docs", "page.png"), string(b))
	}
}

// The page of 10 000 series in a real browser, behind basic auth: one page
// of 100 rows, paged by the server, with the credentials in the URL;
// without them the browser gets 401.
func TestPageInBrowserAt10000Series(t *testing.T) {
	bin := chromium(t)
	const user, password = "operator", "browser-auth-password-2c3d"
	// 50 paths, each at 10 exchanges, 10 tokens and two windows: few
	// entries, so that the start stays quick under -race.
	paths := make([]string, 50)
	var b strings.Builder
	for i := range paths {
		paths[i] = fmt.Sprintf("/v1/erc20/bench-data/metric-%02d", i)
		fmt.Fprintf(&b, "    - path: %s\n      window: [day, hour]\n      exchange: [all_exchange, binance, bybit, okx, deribit, bitmex, gate_io, huobi, kraken, bitfinex]\n"+
			"      token: [usdt, usdc, link, uni, shib, dai, matic, aave, mkr, wbtc]\n", paths[i])
	}
	up := newFakeUpstream(t, fakeapi.Options{ExtraPaths: paths})
	dir := t.TempDir()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	webFile, tokenFile, cfgFile := filepath.Join(dir, "web.yml"), filepath.Join(dir, "token"), filepath.Join(dir, "onchain.yml")
	writeFile(t, webFile, fmt.Sprintf("basic_auth_users:\n  %s: %q\n", user, hash))
	writeFile(t, tokenFile, "token")
	writeFile(t, cfgFile, fmt.Sprintf("data:\n  url: %q\n  token_file: %q\n  concurrency: 16\n  max_tuples: 10000\n  metrics:\n%s", up.URL, tokenFile, b.String()))
	// No storage: nothing of 10 000 series to save at the stop, which
	// the test's 15 s for SIGTERM must hold under -race.
	e := startRunIn(t, http.DefaultClient, "http", flags{config: cfgFile, webConfig: webFile, storage: new("")})
	e.user, e.password = user, password
	e.metrics() // a scrape: the engine calls while it is scraped
	// The engine fills in the configuration's order: the first page of
	// the screenshot is filled long before the last series.
	firstPageFilled := func(st page.Status) bool {
		for _, s := range st.Series.Items {
			if s.State == page.StateFirst {
				return false
			}
		}
		return true
	}
	st := pageStatus(t, e, "")
	for deadline := time.Now().Add(time.Minute); !firstPageFilled(st) && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		st = pageStatus(t, e, "")
	}
	if st.Series.Total != 10000 || len(st.Series.Items) != 100 || !firstPageFilled(st) {
		t.Fatalf("%d series, %d on the first page, states %v, want 10000, 100 filled", st.Series.Total, len(st.Series.Items), st.States)
	}
	authed := strings.Replace(e.base, "://", "://"+user+":"+password+"@", 1)
	dom := browse(t, bin, authed+"/?offset=9900", "--dump-dom")
	if got := rows(dom); got != 100 || !strings.Contains(dom, "Series 9901–10000 of 10000 matching") ||
		!strings.Contains(dom, "metric-49") || !strings.Contains(dom, `rel="prev"`) {
		t.Errorf("the last page of 10 000 series: %d rows\n%.2000s", got, dom)
	}
	if denied := browse(t, bin, e.base+"/", "--dump-dom"); rows(denied) != 0 || strings.Contains(denied, "series-table") {
		t.Errorf("the browser without credentials got the page:\n%.500s", denied)
	}
	screenshot(t, bin, authed+"/", "page-10000.png")
}

// A pattern entry past max_tuples: the page says what it expanded to and
// how many tuples max_tuples cut.
func TestPageShowsAPatternCut(t *testing.T) {
	up := newFakeUpstream(t, fakeapi.Options{})
	dir := t.TempDir()
	tokenFile, cfgFile := filepath.Join(dir, "token"), filepath.Join(dir, "onchain.yml")
	writeFile(t, tokenFile, "token")
	writeFile(t, cfgFile, fmt.Sprintf("data:\n  url: %q\n  token_file: %q\n  max_tuples: 1\n  metrics:\n    - path: /v1/btc/*/*\n      window: day\n", up.URL, tokenFile))
	e := startRun(t, http.DefaultClient, "http", flags{config: cfgFile})
	// The expansion through discovery runs beside the start.
	var ps []page.Pattern
	testtool.Until(t, 30*time.Second, "the pattern expanded", func() bool {
		ps = pageStatus(t, e, "").APIs[0].Patterns
		return len(ps) > 0
	})
	if len(ps) != 1 || ps[0].Entry != "data.metrics[0]" || ps[0].Pattern != "/v1/btc/*/*" || ps[0].Tuples != 1 || ps[0].Cut < 1 || ps[0].Paths != ps[0].Tuples+ps[0].Cut {
		t.Fatalf("the pattern: %+v", ps)
	}
	if _, html := e.get(http.MethodGet, "/"); !strings.Contains(html, fmt.Sprintf("<strong>%d cut by max_tuples</strong>", ps[0].Cut)) {
		t.Error("the page does not show the cut")
	}
}
