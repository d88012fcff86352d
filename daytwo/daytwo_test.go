//go:build !race

// Package daytwo runs the exporter as the Helm chart's default deploys it
// and holds what must stay true after the first scrape, over simulated
// days started at three hours of the UTC day: two members of one cluster,
// the two scrape jobs of examples/prometheus.yml, a file whose key's plan
// refuses one entry, block, hour and day windows and the Indicator and
// Consensus APIs; the shipped rules, the late rows' and the signal pack
// evaluated on what Prometheus would have stored (rules_test.go), rows
// held back at the fake (late_test.go) and the pack's levels recomputed
// on the fake's rows (signals_test.go).
package daytwo

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"

	"github.com/onchain-exporter/onchain_exporter/app"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
	"github.com/onchain-exporter/onchain_exporter/testtool/simclock"
)

// proKey is the data API key of the run, on the professional plan: it
// reads /v1/btc/market-indicator/mvrv at day only.
const proKey = "day-two-professional-key"

const configTemplate = `
data:
  url: "{{URL}}"
  token_file: "{{DIR}}/data-token"
  metrics:
    - path: /v1/btc/network-data/supply
      window: [block, hour, day]
    - path: /v1/btc/market-indicator/mvrv # the plan reads it at day only
      window: [hour, day]
    - path: /v1/btc/exchange-flows/{reserve,netflow}
      exchange: [binance]
      window: day
indicator:
  url: "{{URL}}/indicator"
  token_file: "{{DIR}}/data-token"
  metrics:
    - path: /api/equities/{equity}/pbr-band
      equity: [NASDAQ:AAPL]
consensus:
  url: "{{URL}}/consensus"
  token_file: "{{DIR}}/data-token"
  max_staleness: 1d
  metrics:
    - path: /consensus
      asset: bitcoin
      days: 7
`

// The reload adds an entry.
const reloadedEntry = `    - path: /v1/btc/market-data/open-interest
      exchange: [binance]
      window: hour
`

// job is a scrape job of examples/prometheus.yml: its collect[] and the
// families it drops (metric_relabel_configs).
type job struct {
	name    string
	collect []string
	drop    *regexp.Regexp
}

var jobs = []job{
	{name: "onchain_exporter", collect: []string{"data"}},
	{name: "onchain_exporter_daily", collect: []string{"indicator", "consensus"},
		drop: regexp.MustCompile(`^(onchain_exporter_(upstream_.+|stale_values_served_total|api_errors_total|api_paused|ratelimit_.+|daily_quota_.+|daily_budget_calls|daily_calls_used|daily_calls_used_here|cluster_.+|forecast_calls_per_day|coarsening_factor|tuples|tuples_due|tuples_unasked|calls_held_back_total|config_.+|build_info|expansion_.+|publication_delay_seconds|row_delay_seconds|row_due_timestamp_seconds|excess_staleness_seconds)|go_.+|process_.+|promhttp_.+)$`)},
}

// scenario is one run of the harness: when its simulated clock starts
// (the suite is green at any hour of the UTC day), how long it runs and
// whether it injects a week's faults.
type scenario struct {
	name   string
	start  time.Time
	length time.Duration
	faults bool
}

// window is a fault the run injects, for the alerts it explains.
type window struct {
	what     string
	from, to time.Time
}

// event is something the run does at a simulated time.
type event struct {
	at time.Time
	do func()
}

// The rules the runs hold the answers to: the shipped ones (alerts.yml),
// the late rows' (late.yml, off in the mixin's default) and the signal
// pack with every category (signals.yml).
var ruleFiles = []string{"../examples/alerts.yml", "../examples/late.yml", "../examples/signals.yml"}

// TestDayTwo runs the chart's default for a simulated week, and for the
// first day and a bit from two other hours of the UTC day (the start's
// burst and first fill, and the first day rows, at 00:30 and 23:30), and
// holds every answer of both members to the OpenMetrics reference parser
// and promtool check metrics, every delay the exporter learned to at least
// 0, and the rules (evaluated by Prometheus's engine on what the two jobs
// would have stored) to this: in the steady state with a refused entry no
// warning or critical alert fires and no late alert, and the signal pack
// only on the rows that cross its levels (signals_test.go); each fault the week injects (a provider outage, a member lost,
// rows held back past their due time, a provider incident holding many)
// raises its documented alerts once, not once per member or job, and none
// of them pages; each row held back is detected within minutes of its due
// time.
func TestDayTwo(t *testing.T) {
	promtool := testtool.Require(t, "apt-get install -y prometheus", "promtool")
	groups := loadRules(t, ruleFiles...)
	at := func(h, m int) time.Time { return time.Date(2026, 11, 20, h, m, 0, 0, time.UTC) }
	for _, sc := range []scenario{
		{name: "12h00", start: at(12, 0), length: 7 * 24 * time.Hour, faults: true},
		{name: "00h30", start: at(0, 30), length: 27 * time.Hour},
		{name: "23h30", start: at(23, 30), length: 27 * time.Hour},
	} {
		t.Run(sc.name, func(t *testing.T) { sc.run(t, promtool, groups) })
	}
}

func (sc scenario) run(t *testing.T, promtool string, groups *rulefmt.RuleGroups) {
	began := time.Now()
	clk := simclock.New(sc.start)
	day := func(d int, h int) time.Time {
		return sc.start.Add(time.Duration(d)*24*time.Hour + time.Duration(h)*time.Hour)
	}
	// midnight is 00:00 UTC of the d-th day after the start's.
	midnight := func(d int) time.Time { return sc.start.Truncate(24 * time.Hour).Add(time.Duration(d) * 24 * time.Hour) }
	var late []lateRow
	if sc.faults {
		late = []lateRow{
			{what: "supply's hour row late", path: "/v1/btc/network-data/supply", windows: []string{"hour"},
				from: midnight(1).Add(15 * time.Hour), until: midnight(1).Add(16*time.Hour + 30*time.Minute)},
			{what: "supply's hour row late again", path: "/v1/btc/network-data/supply", windows: []string{"hour"},
				from: midnight(3).Add(9 * time.Hour), until: midnight(3).Add(10*time.Hour + 30*time.Minute)},
			// While member b is lost.
			{what: "mvrv's day row late", path: "/v1/btc/market-indicator/mvrv", windows: []string{"day"},
				from: midnight(4), until: midnight(4).Add(5 * time.Hour)},
			{what: "netflow's day row late", path: "/v1/btc/exchange-flows/netflow", windows: []string{"day"},
				from: midnight(5), until: midnight(5).Add(5 * time.Hour)},
			// Supply's hour and day rows, open interest's hour rows and
			// reserve's day rows late: three of the five endpoints with a
			// due time (mvrv and netflow learned a late row's delay the
			// days before).
			{what: "provider incident", path: "/v1/", windows: []string{"hour", "day"},
				from: midnight(6), until: midnight(6).Add(5 * time.Hour)},
			{what: "open interest's hour row late", path: "/v1/btc/market-data/open-interest", windows: []string{"hour"},
				from: midnight(6).Add(14 * time.Hour), until: midnight(6).Add(15*time.Hour + 30*time.Minute)},
			{what: "open interest's hour row late again", path: "/v1/btc/market-data/open-interest", windows: []string{"hour"},
				from: midnight(7).Add(6 * time.Hour), until: midnight(7).Add(7*time.Hour + 30*time.Minute)},
		}
	}
	hold := &holder{now: clk.Now, late: late}
	up := testtool.StartFake(t, fakeapi.Options{
		Now:      clk.Now,
		DataKeys: map[string]fakeapi.Tier{proKey: fakeapi.TierProfessional},
		Catalog:  fakeapi.CatalogFull,
		Publish: map[string]fakeapi.Delay{
			"hour": {Base: 4 * time.Minute, Jitter: 0.5},
			"day":  {Base: 50 * time.Minute, Jitter: 0.5},
		},
	}, hold.wrap)
	up.Clock = clk
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "data-token"), []byte(proKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	yml := strings.NewReplacer("{{URL}}", up.Srv.URL, "{{DIR}}", dir).Replace(configTemplate)
	cfgFile := filepath.Join(dir, "onchain.yml")
	if err := os.WriteFile(cfgFile, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &run{t: t, up: up, cfgFile: cfgFile, shapes: map[[32]byte]bool{}, promtool: promtool, rec: newRecording(t, groups),
		parser: startReferenceParser(t), late: late,
		seen: map[*member]counts{}, seenApp: map[*member]*app.App{}, owed: map[*member]float64{}}
	a := &member{name: "a", storage: filepath.Join(dir, "a"), cluster: freeAddr(t)}
	b := &member{name: "b", storage: filepath.Join(dir, "b"), cluster: freeAddr(t)}
	a.peers, b.peers = []string{b.cluster}, []string{a.cluster}
	r.members = []*member{a, b}
	r.start(a)
	r.start(b)
	t.Cleanup(func() {
		for _, m := range r.members {
			r.stop(m)
		}
	})

	var injected []window
	var events []event
	if sc.faults {
		outage := window{"provider outage", day(2, 10), day(2, 12)}
		lost := window{"member b lost", day(3, 14), day(3, 16)}
		injected = []window{outage, lost}
		for _, l := range late {
			if l.incident() {
				injected = append(injected, window{l.what, l.from, l.until})
			}
		}
		events = []event{
			{outage.from, func() { up.Fake.SetFault("data", fakeapi.Fault{Kind: fakeapi.Status503}) }},
			{outage.to, up.Fake.ClearFaults},
			{lost.from, func() { r.stop(b) }},
			{lost.to, func() { r.start(b); r.wake(); r.converge() }},
			{day(4, 9), func() { // the ConfigMap changed: each pod reloads
				if err := os.WriteFile(cfgFile, []byte(strings.Replace(yml, "indicator:\n", reloadedEntry+"indicator:\n", 1)), 0o600); err != nil {
					t.Fatal(err)
				}
				for _, m := range r.members {
					if err := m.app.Reload(); err != nil {
						t.Fatalf("reload of %s: %v", m.name, err)
					}
				}
				r.converge()
			}},
			{day(5, 9), func() { r.stop(a); r.start(a); r.wake(); r.converge() }},
		}
		sort.Slice(events, func(i, j int) bool { return events[i].at.Before(events[j].at) })
	}

	// A step of 10 minutes, and of a minute from a held row's due time
	// on, for the time its late alert takes.
	const step, fineStep, fineFor = 10 * time.Minute, time.Minute, 8 * time.Minute
	end := sc.start.Add(sc.length)
	r.converge()
	r.wake()
	r.settle()
	r.observe(clk.Now())
	t.Logf("members up and first fill: %v", time.Since(began).Round(time.Millisecond))
	var fineUntil time.Time
	for now := clk.Now(); now.Before(end); {
		next := now.Add(step)
		if now.Before(fineUntil) {
			next = now.Add(fineStep)
		}
		for _, d := range r.heldDues(now) {
			if d.After(now) && !d.After(next) {
				next = now.Add(fineStep)
				if d.Truncate(time.Minute).After(next) {
					next = d.Truncate(time.Minute)
				}
				if d.Add(fineFor).After(fineUntil) {
					fineUntil = d.Add(fineFor)
				}
			}
		}
		if len(events) > 0 && events[0].at.Before(next) {
			next = events[0].at
		}
		if next.After(end) {
			next = end
		}
		now = next
		clk.Set(now)
		for len(events) > 0 && !events[0].at.After(now) {
			events[0].do()
			events = events[1:]
		}
		r.settle()
		r.observe(now)
	}
	t.Logf("the run: %v, %d steps, %d requests answered without held rows", time.Since(began).Round(time.Millisecond), len(r.times), hold.held)

	checked := time.Now()
	r.checkAnswers()
	t.Logf("the checks: %v", time.Since(checked).Round(time.Millisecond))

	evaluated := time.Now()
	fired := evalAlerts(t, groups, r.rec, r.times)
	t.Logf("the rules: %v", time.Since(evaluated).Round(time.Millisecond))
	grace := 30 * time.Minute // an alert resolves within its rate window after the fault
	pack := map[string]bool{}
	for _, g := range groups.Groups {
		if strings.HasPrefix(g.Name, "onchain-signals-") { // a group a category
			for _, rule := range g.Rules {
				pack[rule.Alert] = true
			}
		}
	}
	hits := map[string]int{}
	for _, f := range fired {
		t.Logf("fired: %s (%s)", f, f.severity)
		switch {
		case f.name == "OnchainSeriesDeprecated":
			continue // the fake marks some series deprecated: info
		case f.name == "OnchainDataLate" || f.name == "OnchainProviderLate":
			continue // lateFigures
		case pack[f.name]:
			continue // signalsMatch
		}
		if f.severity == "critical" {
			t.Errorf("paged: %s", f)
		}
		var in *window
		for i := range injected {
			w := &injected[i]
			if !f.from.Before(w.from) && f.from.Before(w.to.Add(grace)) {
				in = w
			}
		}
		if in == nil && f.severity != "info" {
			t.Errorf("fired outside any injected fault: %s", f)
			continue
		}
		if in != nil {
			// Once per series or API, not per member or job.
			hits[in.what+" "+f.name+labels.NewBuilder(f.ls).Del("instance", "pod", "job").Labels().String()]++
			t.Logf("%s: %s", in.what, f)
		}
	}
	for key, n := range hits {
		if n > 1 {
			t.Errorf("%s fired %d times, want once (not per member or job)", key, n)
		}
	}
	for _, w := range injected {
		found := false
		for key := range hits {
			if strings.HasPrefix(key, w.what+" ") {
				found = true
			}
		}
		if !found && !strings.Contains(w.what, "incident") {
			t.Errorf("%s raised no alert", w.what)
		}
	}
	signals, crossed := r.signalsMatch(fired, pack, end, 6*time.Hour)
	afterRelease, afterDue := r.lateFigures(fired)
	falseLate := 0
	for _, f := range fired {
		if (f.name == "OnchainDataLate" || f.name == "OnchainProviderLate") && !r.injectedLate(f) {
			falseLate++
		}
	}
	t.Logf("day two %s: %v wall, %d steps; late rows: %d held, detected after the learned release %s; after the due time %s; "+
		"false late alerts %d; signal pack firings %d, on %d rows that cross a level",
		sc.name, time.Since(began).Round(time.Second), len(r.times), len(late), figures(afterRelease), figures(afterDue), falseLate, signals, crossed)
	for w, ds := range afterDue {
		if p95 := quantile(ds, 0.95); p95 > fineStep+2*time.Minute+fineStep {
			t.Errorf("late %s rows: p95 %v after the due time, want within the rule's for: (2m) and two steps", w, p95)
		}
	}
	if p95 := quantile(afterRelease["hour"], 0.95); p95 > 15*time.Minute {
		t.Errorf("late hour rows: p95 %v after the learned release, want at most 15m", p95)
	}
}
