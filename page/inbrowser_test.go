package page

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/plan"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// serveHandler serves the page on 127.0.0.1 for the browser.
func serveHandler(t *testing.T, src Source) string {
	t.Helper()
	srv := httptest.NewServer(NewHandler(src))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A series' view in a real browser leads with the series' value, its unit
// and its family's HELP, as the JSON says them, and draws its rows: the
// chart has a dot a point of the JSON, left to right in row order, and
// the line through them. The upstream's clock moves an hour between
// refreshes, so that each brings a new row. Its picture is
// docs/page-series.png (-update-screenshot).
func TestSeriesViewInBrowser(t *testing.T) {
	b := newBrowser(t, 1100, 1300)
	var hours atomic.Int64
	start := time.Now().Add(-30 * 24 * time.Hour).Truncate(time.Hour)
	r := newRig(t, fakeapi.Options{Now: func() time.Time { return start.Add(time.Duration(hours.Load()) * time.Hour) }}, func(u string) string {
		return fmt.Sprintf(`
data:
  url: %s
  token_env: T
  metrics:
    - path: /v1/btc/network-data/supply
      window: hour
      cache_ttl: 50ms
`, u)
	})
	const want = 12 // points
	var s Series
	for deadline := time.Now().Add(30 * time.Second); ; {
		s = statusOf(t, r, PathJSON).Series.Items[0]
		if len(s.Points) >= want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the series has %d points after 30 s, want %d: %+v", len(s.Points), want, s.Points)
		}
		hours.Add(1)
		time.Sleep(60 * time.Millisecond)
		r.scrape(t)
	}
	time.Sleep(200 * time.Millisecond) // a refresh under way ends
	s = statusOf(t, r, PathJSON+"?api=data&key="+url.QueryEscape(s.Key)).Series.Items[0]
	if len(s.Values) == 0 || s.Values[0].Help == "" || s.Values[len(s.Values)-1].Value != s.Points[len(s.Points)-1].Value && len(s.Values) == 1 {
		t.Fatalf("the series' values %+v, points %+v", s.Values, s.Points)
	}
	base := serveHandler(t, r.src)
	b.open(base + PathSeries + "?" + url.Values{"api": {"data"}, "key": {s.Key}}.Encode())

	type shown struct {
		Number, Unit, Help, Family string
		Dots                       []float64 // each dot's cx, in order
		Line                       int       // the polyline's points
		ChartWidth                 float64
		ChartAboveAnswers          bool
	}
	var got shown
	b.eval(`(() => {
		const q = s => document.querySelector(s);
		const text = s => q(s) ? q(s).textContent : null;
		const chart = q("#series-chart");
		return {
			Number: text("#series-value .value-number"), Unit: text("#series-value .value-unit"),
			Help: text("#series-value .value-help"), Family: text("#series-value .value-family"),
			Dots: chart ? [...chart.querySelectorAll("circle.point")].map(c => c.cx.baseVal.value) : [],
			Line: chart ? chart.querySelector("polyline.line").points.numberOfItems : 0,
			ChartWidth: chart ? chart.getBoundingClientRect().width : 0,
			ChartAboveAnswers: !!chart && chart.getBoundingClientRect().bottom <= q("#series-answers").getBoundingClientRect().top,
		};
	})()`, &got)
	lead := s.Values[0]
	unit := lead.Unit
	if unit == "" {
		unit = "no unit"
	}
	if got.Number != number(lead.Value) || got.Unit != unit || got.Help != lead.Help || got.Family != lead.Family {
		t.Errorf("the view shows %q %q (%q) %q; the JSON says %v %q (%q) %q", got.Number, got.Unit, got.Family, got.Help, lead.Value, unit, lead.Family, lead.Help)
	}
	if len(got.Dots) != len(s.Points) || got.Line != len(s.Points) || got.ChartWidth < 300 || !got.ChartAboveAnswers {
		t.Errorf("the chart: %d dots, a line of %d points, %v px wide, above the answers %v; the JSON has %d points",
			len(got.Dots), got.Line, got.ChartWidth, got.ChartAboveAnswers, len(s.Points))
	}
	for i := 1; i < len(got.Dots); i++ {
		if got.Dots[i] <= got.Dots[i-1] {
			t.Errorf("dot %d at x=%v, left of dot %d at %v", i, got.Dots[i], i-1, got.Dots[i-1])
		}
	}
	var scripts int
	b.eval(`document.querySelectorAll("script, link, img, iframe").length`, &scripts)
	if scripts != 0 {
		t.Errorf("the view carries %d scripts or loads", scripts)
	}
	file := b.screenshot("page-series.png")
	if *updatePictures {
		png, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("..", "docs", "page-series.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// syncBuffer is a log a test reads while the exporter writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A key's plan named with a U+202E, an ESC, a BEL and 1 MiB of text: the
// plan_info label, the log line that says the plan, the JSON and the
// page each hold its name escaped and cut to 128 bytes, and in a real
// browser the page's own words after it still read left to right (each
// character of "; refused: …" right of the one before). Before, the page
// read "seires 0 :desufer", and label, page and log line were 1 MB.
func TestOutsideTextStaysInert(t *testing.T) {
	b := newBrowser(t, 1100, 900)
	name := "BASIC\u202E\x1b[2J\x07" + strings.Repeat("x", 1<<20)
	const shownName = `BASIC\u{202E}\u{1B}[2J\u{7}` // then x up to 128 bytes, with the mark
	fake := fakeapi.New(fakeapi.Options{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != plan.Path {
			fake.ServeHTTP(w, req)
			return
		}
		rec := httptest.NewRecorder()
		fake.ServeHTTP(rec, req)
		var answer any
		if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil {
			t.Errorf("the fake's plan answer: %v", err)
		}
		renamePlan(answer, name)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(answer)
	}))
	t.Cleanup(srv.Close)

	var logged syncBuffer
	logger := log.NewLogfmtLogger(&logged)
	cfg, err := config.Parse("page.yml", []byte(fmt.Sprintf("data:\n  url: %s\n  token_env: T\n  metrics:\n    - path: /v1/btc/network-data/supply\n      window: day\n", srv.URL)),
		func(string) string { return secret })
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	pool := upstream.NewPool(reg, time.Now, logger)
	t.Cleanup(pool.Close)
	plans := NewPlanHistory()
	expander := expand.New(logger, expand.Options{Clients: pool})
	expander.OnPlanChanged(func(api string) {
		if c := pool.Current(api); c != nil {
			plans.Note(api, c.Plan(), time.Now())
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	expanded, err := expander.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	exp, err := collector.New(expanded, logger, reg, collector.Options{Clients: pool})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(exp.Close)
	src := Source{Version: "test", MetricsPath: "/metrics", Config: func() *config.Config { return expanded }, Engines: exp,
		Clean: pool.Clean, Now: time.Now, Plans: plans}
	(&rig{exp: exp}).scrape(t)

	inert := func(where, s string) {
		t.Helper()
		if !strings.Contains(s, shownName) || strings.ContainsAny(s, "\u202E\x1b\x07") || strings.Contains(s, strings.Repeat("x", 200)) {
			t.Errorf("%s: %d bytes, %.300q", where, len(s), s)
		}
	}
	// The plan_info label.
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	label := ""
	for _, f := range families {
		if f.GetName() == "onchain_exporter_plan_info" {
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "plan" {
						label = l.GetValue()
					}
				}
			}
		}
	}
	inert("the plan_info label", label)
	if len(label) > 128 || !strings.HasSuffix(label, "x…") {
		t.Errorf("the plan_info label is %d bytes: %.200q", len(label), label)
	}
	// The log line that says the plan.
	line := ""
	for _, l := range strings.Split(logged.String(), "\n") {
		if strings.Contains(l, `msg="the key's plan"`) {
			line = l
		}
	}
	inert("the log line", strings.ReplaceAll(line, `\\`, `\`))
	if len(logged.String()) > 64<<10 {
		t.Errorf("the log is %d bytes", len(logged.String()))
	}
	// The JSON.
	code, body := (&rig{src: src}).get(t, PathJSON)
	if code != http.StatusOK || len(body) > 64<<10 {
		t.Fatalf("%s: HTTP %d, %d bytes", PathJSON, code, len(body))
	}
	var st Status
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	inert("the JSON's key_plan", st.APIs[0].KeyPlan)
	if ph := st.APIs[0].PlanHistory; len(ph) != 1 {
		t.Errorf("the plan history: %+v", ph)
	} else {
		inert("the JSON's plan_history", ph[0].Plan)
	}
	// The page, in the browser.
	b.open(serveHandler(t, src) + "/")
	var page struct {
		Plan, After string
		Xs          []float64
		Size        int
	}
	b.eval(`(() => {
		const dd = [...document.querySelectorAll("#api-data dt")].find(d => d.textContent === "Key's plan").nextElementSibling;
		const xs = [];
		let after = "";
		const walk = document.createTreeWalker(dd, NodeFilter.SHOW_TEXT);
		for (let n = walk.nextNode(); n; n = walk.nextNode()) {
			const i = n.textContent.indexOf("; refused:");
			if (i < 0) continue;
			after = n.textContent.slice(i) + (n.nextSibling ? n.nextSibling.textContent : "");
			for (let j = i; j < n.textContent.length; j++) {
				const r = document.createRange();
				r.setStart(n, j);
				r.setEnd(n, j + 1);
				const box = r.getBoundingClientRect();
				if (box.width > 0) xs.push(box.left);
			}
		}
		return {Plan: dd.textContent, After: after, Xs: xs, Size: document.documentElement.outerHTML.length};
	})()`, &page)
	inert("the page's key plan", page.Plan)
	if page.Size > 256<<10 {
		t.Errorf("the page is %d bytes", page.Size)
	}
	if page.After != "; refused: 0 series" || len(page.Xs) < len("; refused:") {
		t.Errorf("the words after the plan's name: %q, %d characters drawn", page.After, len(page.Xs))
	}
	for i := 1; i < len(page.Xs); i++ {
		if page.Xs[i] <= page.Xs[i-1] {
			t.Fatalf("the words after the plan's name run right to left: character %d at x=%v, the one before at %v (%v)", i, page.Xs[i], page.Xs[i-1], page.Xs)
		}
	}
	b.screenshot("page-outside-text.png")
}

// renamePlan sets the plan's name in a plan answer, in whichever
// envelope it comes.
func renamePlan(v any, name string) {
	if m, ok := v.(map[string]any); ok {
		for k, e := range m {
			if k == "plan" {
				m[k] = map[string]any{"name": name}
				continue
			}
			renamePlan(e, name)
		}
	}
}
