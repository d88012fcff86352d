package daytwo

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/tsdb/chunks"
	"github.com/prometheus/prometheus/util/annotations"
)

// recording is what Prometheus would have stored of the scrapes of a run:
// each answer's samples at its scrape time, with the target's labels
// (job, instance, pod) and up. Only the families the rules read are kept:
// the rest cannot change what they say.
type recording struct {
	keep    map[string]bool // family names the rules read
	series  map[string]*memSeries
	byName  map[string][]*memSeries // the series of each metric name
	samples int
}

// memSeries is one series of the recording, its samples in time order.
type memSeries struct {
	ls      labels.Labels
	samples []chunks.Sample
}

// metricNameRE finds the metric names a rule's expression reads.
var metricNameRE = regexp.MustCompile(`\b((?:onchain_|up\b|process_|ALERTS)[a-zA-Z0-9_:]*)`)

func newRecording(t *testing.T, groups *rulefmt.RuleGroups) *recording {
	r := &recording{keep: map[string]bool{"up": true}, series: map[string]*memSeries{}, byName: map[string][]*memSeries{}}
	for _, g := range groups.Groups {
		for _, rule := range g.Rules {
			for _, m := range metricNameRE.FindAllString(rule.Expr, -1) {
				r.keep[m] = true
				for _, suffix := range []string{"_total", "_sum", "_count", "_bucket"} {
					r.keep[strings.TrimSuffix(m, suffix)] = true
				}
			}
		}
	}
	return r
}

// add stores one scrape of a target at ts: up 1 and its samples, or up 0
// when the scrape failed (body "").
func (r *recording) add(t *testing.T, ts time.Time, target map[string]string, body string) {
	t.Helper()
	ms := ts.UnixMilli()
	up := 0.0
	if body != "" {
		up = 1
	}
	r.append(t, ms, "up", target, nil, up)
	if body == "" {
		return
	}
	tp := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := tp.TextToMetricFamilies(strings.NewReader(r.kept(body)))
	if err != nil {
		t.Fatalf("parsing a scrape at %s: %v", ts.UTC().Format(time.RFC3339), err)
	}
	for name, mf := range fams {
		if !r.keep[name] {
			continue
		}
		for _, m := range mf.GetMetric() {
			own := map[string]string{}
			for _, lp := range m.GetLabel() {
				own[lp.GetName()] = lp.GetValue()
			}
			switch {
			case m.Gauge != nil:
				r.append(t, ms, name, target, own, m.GetGauge().GetValue())
			case m.Counter != nil:
				r.append(t, ms, name, target, own, m.GetCounter().GetValue())
			case m.Untyped != nil:
				r.append(t, ms, name, target, own, m.GetUntyped().GetValue())
			case m.Histogram != nil:
				h := m.GetHistogram()
				r.append(t, ms, name+"_sum", target, own, h.GetSampleSum())
				r.append(t, ms, name+"_count", target, own, float64(h.GetSampleCount()))
				for _, b := range h.GetBucket() {
					withLe := map[string]string{"le": strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64)}
					for k, v := range own {
						withLe[k] = v
					}
					r.append(t, ms, name+"_bucket", target, withLe, float64(b.GetCumulativeCount()))
				}
				inf := map[string]string{"le": "+Inf"}
				for k, v := range own {
					inf[k] = v
				}
				r.append(t, ms, name+"_bucket", target, inf, float64(h.GetSampleCount()))
			}
		}
	}
}

// kept is body without the lines of the families the rules do not read:
// the parse of a whole answer was most of what recording it cost.
func (r *recording) kept(body string) string {
	var b strings.Builder
	b.Grow(len(body) / 4)
	for l := range strings.Lines(body) {
		name := l
		if strings.HasPrefix(l, "# ") {
			if f := strings.Fields(l); len(f) >= 3 {
				name = f[2]
			}
		} else if i := strings.IndexAny(l, "{ "); i >= 0 {
			name = l[:i]
		}
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")
		if r.keep[name] || r.keep[base] {
			b.WriteString(l)
		}
	}
	return b.String()
}

func (r *recording) append(t *testing.T, ms int64, name string, target, own map[string]string, v float64) {
	t.Helper()
	b := labels.NewBuilder(labels.EmptyLabels())
	for k, v := range own {
		b.Set(k, v)
	}
	for k, v := range target { // the target's labels win, as honor_labels: false
		b.Set(k, v)
	}
	b.Set(model.MetricNameLabel, name)
	ls := b.Labels()
	key := ls.String()
	s := r.series[key]
	if s == nil {
		s = &memSeries{ls: ls}
		r.series[key] = s
		r.byName[name] = append(r.byName[name], s)
	}
	if n := len(s.samples); n > 0 && s.samples[n-1].T() >= ms {
		t.Fatalf("%s: a sample at %d after one at %d", key, ms, s.samples[n-1].T())
	}
	s.samples = append(s.samples, fsample{t: ms, f: v})
	r.samples++
}

// Querier serves the recording to the PromQL engine.
func (r *recording) Querier(mint, maxt int64) (storage.Querier, error) {
	return &storage.MockQuerier{SelectMockFunction: func(_ bool, _ *storage.SelectHints, ms ...*labels.Matcher) storage.SeriesSet {
		var out seriesSet
		for _, s := range r.candidates(ms) {
			if !matchAll(ms, s.ls) {
				continue
			}
			lo := sort.Search(len(s.samples), func(i int) bool { return s.samples[i].T() >= mint })
			hi := sort.Search(len(s.samples), func(i int) bool { return s.samples[i].T() > maxt })
			if lo < hi {
				out.series = append(out.series, storage.NewListSeries(s.ls, s.samples[lo:hi]))
			}
		}
		sort.Slice(out.series, func(i, j int) bool { return labels.Compare(out.series[i].Labels(), out.series[j].Labels()) < 0 })
		out.i = -1
		return &out
	}}, nil
}

// candidates are the series a selector can match: those of its metric
// name when it names one, else every series.
func (r *recording) candidates(ms []*labels.Matcher) []*memSeries {
	for _, m := range ms {
		if m.Name == model.MetricNameLabel && m.Type == labels.MatchEqual {
			return r.byName[m.Value]
		}
	}
	all := make([]*memSeries, 0, len(r.series))
	for _, s := range r.series {
		all = append(all, s)
	}
	return all
}

func matchAll(ms []*labels.Matcher, ls labels.Labels) bool {
	for _, m := range ms {
		if !m.Matches(ls.Get(m.Name)) {
			return false
		}
	}
	return true
}

type seriesSet struct {
	series []storage.Series
	i      int
}

func (s *seriesSet) Next() bool                        { s.i++; return s.i < len(s.series) }
func (s *seriesSet) At() storage.Series                { return s.series[s.i] }
func (s *seriesSet) Err() error                        { return nil }
func (s *seriesSet) Warnings() annotations.Annotations { return nil }

// fsample is a float sample.
type fsample struct {
	t int64
	f float64
}

func (s fsample) T() int64                      { return s.t }
func (s fsample) ST() int64                     { return 0 }
func (s fsample) F() float64                    { return s.f }
func (s fsample) H() *histogram.Histogram       { return nil }
func (s fsample) FH() *histogram.FloatHistogram { return nil }
func (s fsample) Type() chunkenc.ValueType      { return chunkenc.ValFloat }
func (s fsample) Copy() chunks.Sample           { return s }

// firing is one alert that fired in a run: its name and labels, when it
// started firing and when it was last seen firing.
type firing struct {
	name, labels string
	ls           labels.Labels
	severity     string
	from, to     time.Time
}

func (f firing) String() string {
	return fmt.Sprintf("%s{%s} firing %s..%s", f.name, f.labels, f.from.UTC().Format("Jan 2 15:04"), f.to.UTC().Format("Jan 2 15:04"))
}

// loadRules reads rules files as Prometheus does, their groups in one.
func loadRules(t *testing.T, files ...string) *rulefmt.RuleGroups {
	t.Helper()
	all := &rulefmt.RuleGroups{}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		groups, errs := rulefmt.Parse(b, false, model.UTF8Validation, parser.NewParser(parser.Options{}), slog.New(slog.DiscardHandler))
		if len(errs) > 0 {
			t.Fatalf("%s: %v", file, errs)
		}
		all.Groups = append(all.Groups, groups.Groups...)
	}
	return all
}

// alertRule is an alerting rule as Prometheus's rule manager holds it.
type alertRule struct {
	name       string
	expr       string
	hold, keep time.Duration
	labels     map[string]string
	active     map[string]*activeAlert
}

type activeAlert struct {
	labels             string
	ls                 labels.Labels
	severity           string
	activeAt, lastSeen time.Time
	firing             bool
	episode            *firing
}

// evalAlerts evaluates every alerting rule of groups over the recording,
// at each of times (in order), with Prometheus's PromQL engine and the
// rule manager's semantics: an alert is pending from the first
// evaluation its expression returns its series, firing once that lasted
// for:, kept firing keep_firing_for: after its series went, resolved
// then. It returns each firing episode: an alert that fires, resolves
// and fires again is two.
func evalAlerts(t *testing.T, groups *rulefmt.RuleGroups, rec *recording, times []time.Time) []firing {
	t.Helper()
	var rules []*alertRule
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				rules = append(rules, &alertRule{name: r.Alert, expr: r.Expr, hold: time.Duration(r.For), keep: time.Duration(r.KeepFiringFor),
					labels: r.Labels, active: map[string]*activeAlert{}})
			}
		}
	}
	results := make([][][]promql.Sample, len(rules))
	for i, r := range rules {
		results[i] = evalAt(t, r, rec, times)
	}
	var out []*firing
	for i, ts := range times {
		for j, r := range rules {
			seen := map[string]bool{}
			for _, smp := range results[j][i] {
				b := labels.NewBuilder(smp.Metric)
				b.Del(model.MetricNameLabel)
				for k, v := range r.labels {
					b.Set(k, v)
				}
				b.Set("alertname", r.name)
				ls := b.Labels()
				key := ls.String()
				seen[key] = true
				a := r.active[key]
				if a == nil {
					a = &activeAlert{labels: key, ls: ls, severity: ls.Get("severity"), activeAt: ts}
					r.active[key] = a
				}
				a.lastSeen = ts
			}
			for key, a := range r.active {
				if !seen[key] && (!a.firing || ts.Sub(a.lastSeen) >= r.keep) {
					delete(r.active, key) // resolved
					continue
				}
				if !a.firing && ts.Sub(a.activeAt) >= r.hold {
					a.firing = true
					a.episode = &firing{name: r.name, labels: a.labels, ls: a.ls, severity: a.severity, from: ts}
					out = append(out, a.episode)
				}
				if a.firing {
					a.episode.to = ts
				}
			}
		}
	}
	fired := make([]firing, 0, len(out))
	for _, f := range out {
		fired = append(fired, *f)
	}
	sort.SliceStable(fired, func(i, j int) bool { return fired[i].from.Before(fired[j].from) })
	return fired
}

// evalEngine is the PromQL engine of the evaluations, with Prometheus's
// defaults for rules.
var evalEngine = promql.NewEngine(promql.EngineOpts{MaxSamples: 50_000_000, Timeout: time.Minute, LookbackDelta: 5 * time.Minute,
	EnableAtModifier: true, EnableNegativeOffset: true})

// evalAt is what a rule's expression returns at each of times: one range
// query for each run of evenly spaced times, as an instant query at each
// would (a range query is its instant queries, parsed once: the parse,
// its regular expressions compiled anew, is most of an instant query's
// cost here).
func evalAt(t *testing.T, r *alertRule, rec *recording, times []time.Time) [][]promql.Sample {
	t.Helper()
	ctx := context.Background()
	out := make([][]promql.Sample, len(times))
	for lo := 0; lo < len(times); {
		hi, step := lo+1, time.Duration(0)
		if hi < len(times) {
			step = times[hi].Sub(times[lo])
			for hi < len(times) && times[hi].Sub(times[hi-1]) == step {
				hi++
			}
		}
		q, err := evalEngine.NewRangeQuery(ctx, rec, nil, r.expr, times[lo], times[hi-1], max(step, time.Second))
		if err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		res := q.Exec(ctx)
		if res.Err != nil {
			t.Fatalf("%s from %s: %v", r.name, times[lo].UTC().Format(time.RFC3339), res.Err)
		}
		m, err := res.Matrix()
		if err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		for _, s := range m {
			for _, p := range s.Floats {
				i := lo + int(time.Duration(p.T-times[lo].UnixMilli())*time.Millisecond/max(step, time.Second))
				out[i] = append(out[i], promql.Sample{Metric: s.Metric, T: p.T, F: p.F})
			}
		}
		q.Close()
		lo = hi
	}
	return out
}

// The evaluator is Prometheus's own: an alert on up fires after its for:
// on a recording where a target is down, and not where it is up, so a
// run that raises nothing says something.
func TestEvalAlertsFiresOnARecording(t *testing.T) {
	groups := loadRules(t, "../examples/alerts.yml")
	rec := newRecording(t, groups)
	start := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	var times []time.Time
	for i := range 30 {
		ts := start.Add(time.Duration(i) * time.Minute)
		rec.add(t, ts, map[string]string{"job": "onchain_exporter", "instance": "a:9799", "namespace": "m"}, "")
		times = append(times, ts)
	}
	got := evalAlerts(t, groups, rec, times)
	names := []string{}
	for _, f := range got {
		names = append(names, f.name)
	}
	if !slices.Contains(names, "OnchainExporterDown") {
		t.Errorf("a target down 30 minutes fired %v, want OnchainExporterDown among them", names)
	}
}
