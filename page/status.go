package page

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/onchain-exporter/onchain_exporter/budget"
	"github.com/onchain-exporter/onchain_exporter/cluster"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/internal/text"
	"github.com/onchain-exporter/onchain_exporter/published"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// Version is the version of the JSON at /api/v1/status: a field's meaning
// never changes within it; fields may be added. 2: "held by the rate
// limit" state; cluster.members lists failed members too. 3: that state
// is a series due waiting for a turn (apis[].waiting); a series never
// asked is "waiting for first call"; apis[].fill.
const Version = 3

// Source is where the page reads the running exporter; no function of it
// calls upstream.
type Source struct {
	Version     string // the exporter's version line
	MetricsPath string
	Demo        bool
	Config      func() *config.Config // in force
	Engines     Engines
	Peer        *cluster.Peer // nil alone
	// Expansion says how each API's lists stand (expand.Expander.State).
	Expansion func() map[string]expand.State
	// Clean masks an API's credential in a text (upstream.Pool.Clean).
	Clean func(api, text string) string
	// Plans is the key's plan history (nil: none kept).
	Plans *PlanHistory
	Now   func() time.Time
}

// expansion is how each API's lists stand, nil without an expander.
func (s Source) expansion() map[string]expand.State {
	if s.Expansion == nil {
		return nil
	}
	return s.Expansion()
}

// Engines is what the page reads of the refresh engines
// (collector.Exporter), without their locks.
type Engines interface {
	// View is every API's published view.
	View() []published.API
	// SeriesView is one series, by its API and key, and its API's view.
	SeriesView(api, key string) (published.API, published.Series, bool)
	// Plans is each API's allotment of calls for the day.
	Plans() map[string]budget.Allotment
	// PublicationDelays is the learned delay of each endpoint and window.
	PublicationDelays() map[published.EndpointWindow]time.Duration
	// PublicationDelay is one endpoint and window's learned delay.
	PublicationDelay(published.EndpointWindow) (time.Duration, bool)
	// Owner is the member that fetches a unit (empty alone).
	Owner(unit string) string
}

// apiTitles name the APIs on the page.
var apiTitles = map[string]string{
	config.APIData:      "the data API",
	config.APIIndicator: "the Indicator API",
	config.APIConsensus: "the Analyst Consensus API",
}

// maxLimit is the most series one page holds.
const maxLimit = 1000

// derived is what the page computes of a configuration once; groups are
// made on first use.
type derived struct {
	cfg      *config.Config
	findings []string
	forecast map[*config.API]budget.APIForecast

	mu     sync.Mutex
	groups map[*config.API]map[groupKey]*group
}

// groupKey is an endpoint as configured and window.
type groupKey struct{ path, window string }

// group is the tuples of one endpoint and window: how many, and the paths
// they ask (the publication delay is learned per path).
type group struct {
	series int
	paths  []string
}

// keyOf is the endpoint as configured and window of a tuple.
func keyOf(t *config.Tuple) groupKey {
	path := t.Path
	if t.Entry != nil {
		path = t.Entry.Path
	}
	return groupKey{path, t.Window}
}

// groupsOf are the groups of the section an engine runs, made once.
func (d *derived) groupsOf(a *config.API) map[groupKey]*group {
	d.mu.Lock()
	defer d.mu.Unlock()
	if gs := d.groups[a]; gs != nil {
		return gs
	}
	gs := map[groupKey]*group{}
	type pathKey struct {
		groupKey
		path string
	}
	seen := map[pathKey]bool{}
	for _, t := range a.Tuples {
		k := keyOf(t)
		g := gs[k]
		if g == nil {
			g = &group{}
			gs[k] = g
		}
		g.series++
		if pk := (pathKey{k, t.Path}); !seen[pk] {
			seen[pk] = true
			g.paths = append(g.paths, t.Path)
		}
	}
	if d.groups == nil {
		d.groups = map[*config.API]map[groupKey]*group{}
	}
	d.groups[a] = gs
	return gs
}

// endpointOf is the line of one series' endpoint and window, as endpoints
// says it, from the groups of the configuration.
func (d *derived) endpointOf(a *config.API, s published.Series, allot budget.Allotment, delay func(published.EndpointWindow) (time.Duration, bool)) Endpoint {
	t := s.Tuple
	k := keyOf(t)
	e := Endpoint{API: a.Name, Path: k.path, Window: t.Window, OneRowIn: 1, Series: 1}
	paths := []string{t.Path}
	if g := d.groupsOf(a)[k]; g != nil {
		e.Series, paths = g.series, g.paths
	}
	for _, p := range paths {
		if dl, ok := delay(published.EndpointWindow{API: a.Name, Endpoint: p, Window: t.Window}); ok {
			v := dl.Seconds()
			if e.PublicationDelay == nil || v > *e.PublicationDelay {
				e.PublicationDelay = &v
			}
		}
	}
	if s.Spacing > 0 {
		e.OneRowIn = max(e.OneRowIn, allot.Factor(t.Window, s.Spacing))
	}
	for _, en := range d.forecast[a].Entries {
		for _, w := range en.Windows {
			if en.Path == k.path && w.Window == t.Window {
				e.CallsPerDay += w.CallsPerDay
				e.PlannedPerDay += w.CallsPerDay / allot.Factor(w.Window, w.Every)
			}
		}
	}
	return e
}

// derive returns what is derived of cfg, computed on its first page.
func (h *Handler) derive(cfg *config.Config, views map[string]published.API) *derived {
	if d := h.derived.Load(); d != nil && d.cfg == cfg {
		ok := true
		for _, v := range views {
			_, has := d.forecast[v.API]
			ok = ok && has
		}
		if ok {
			return d
		}
	}
	d := &derived{cfg: cfg, findings: []string{}, forecast: map[*config.API]budget.APIForecast{}}
	for _, fd := range cfg.Findings() {
		d.findings = append(d.findings, fd.String())
	}
	for _, v := range views {
		d.forecast[v.API] = budget.ForecastAPI(v.API, nil)
	}
	h.derived.Store(d)
	return d
}

// Build returns the exporter's status: every API, endpoint and the
// cluster, and at most limit of the series the filter keeps from offset,
// in the order asked (SortKeys; "": the configuration's).
func (h *Handler) Build(f Filter, order string, offset, limit int) Status {
	src := h.src
	now := src.Now()
	cfg := src.Config()
	st := Status{Version: Version, Generated: now.UTC(), Exporter: src.Version, ConfigFile: cfg.File, Demo: src.Demo,
		MetricsPath: src.MetricsPath, States: map[string]int{}, Findings: []string{}, Endpoints: []Endpoint{}}
	limit = min(max(limit, 1), maxLimit)
	offset = max(offset, 0)
	st.Series = SeriesPage{Filter: f, Offset: offset, Limit: limit, Sort: order, Items: []Series{}}
	var sorted []candidate // the series the filter keeps, when ordered
	var lines []apiNow
	views := map[string]published.API{}
	for _, v := range src.Engines.View() {
		views[v.Name] = v
	}
	d := h.derive(cfg, views)
	st.Findings = d.findings
	plans := src.Engines.Plans()
	delays := src.Engines.PublicationDelays()
	for _, name := range config.APINames {
		a := API{Name: name, Title: apiTitles[name], Pauses: []Pause{}, KeyPlan: "unknown", Refusals: "unknown"}
		sec, v := cfg.APIs[name], views[name]
		if sec == nil || v.API == nil {
			st.APIs = append(st.APIs, a)
			continue
		}
		sec = v.API // the section the engine runs
		allot := plans[name]
		an := apiLine(&a, src, v, allot, now)
		lines = append(lines, an)
		due := 0
		st.Endpoints = append(st.Endpoints, endpoints(sec, v.Series, allot, delays, d.forecast[sec])...)
		for _, s := range v.Series {
			state := stateOf(s, an)
			st.States[state]++
			if !s.InFlight && !s.Next.After(now) {
				due++
			}
			if state == StateRefused {
				a.Refused++
			}
			st.Series.Total++
			if !f.keeps(name, state, s.Tuple) {
				continue
			}
			st.Series.Matched++
			if order != "" {
				sorted = append(sorted, candidate{api: len(lines) - 1, name: name, s: s, state: state, key: sortKey(order, s)})
				continue
			}
			if st.Series.Matched <= offset || len(st.Series.Items) >= limit {
				continue
			}
			st.Series.Items = append(st.Series.Items, seriesOf(src, name, s, state, an, f.Key != ""))
		}
		if a.Waiting != nil {
			a.Waiting.Due = due
		}
		if a.KeyPlan != "unknown" || a.Refused > 0 {
			a.Refusals = plural(a.Refused, "series")
		}
		st.APIs = append(st.APIs, a)
	}
	sortCandidates(order, sorted)
	for _, c := range sorted[min(offset, len(sorted)):min(offset+limit, len(sorted))] {
		st.Series.Items = append(st.Series.Items, seriesOf(src, c.name, c.s, c.state, lines[c.api], f.Key != ""))
	}
	if src.Peer != nil {
		st.Cluster = clusterOf(src, views, now)
	}
	return st
}

// apiLine fills an API's line and returns what its series' words need.
func apiLine(a *API, src Source, v published.API, allot budget.Allotment, now time.Time) apiNow {
	describe(a, v.API, src.Clean)
	an := apiState(a, v.Client, allot, now)
	if an.wait = v.Wait; an.wait.By != published.NotHeld && an.wait.Until.After(now) {
		a.Waiting = &Waiting{Limit: an.wait.By.String(), Until: an.wait.Until.UTC()}
	}
	if f := v.Fill; f.Filling {
		a.Fill = &Fill{Series: f.Total, Asked: f.Asked, Since: f.Since.UTC(), PerMinute: f.PerMinute, Done: f.Done.UTC(), Line: f.Line}
	}
	a.PlanLine = allot.Summary(3)
	a.Forecast, a.Planned = allot.Natural+allot.Listing, allot.Planned+allot.Listing
	if ex, ok := src.expansion()[a.Name]; ok {
		a.Expansion = Expansion{Lists: true, OK: ex.OK, Read: ex.LastSuccess, Waiting: ex.Waiting}
		if ex.LastError != "" {
			a.Expansion.Error = text.Outside(src.Clean(a.Name, ex.LastError), maxOutside*4)
		}
	}
	a.PlanHistory = planChanges(src.Plans.of(a.Name), nil, now)
	return an
}

// BuildSeries is the status of one series, its API and its endpoint and
// window: a look-up, not a pass over every series (states not counted).
// False when the configuration in force has no such series.
func (h *Handler) BuildSeries(api, key string) (Status, bool) {
	src := h.src
	now := src.Now()
	cfg := src.Config()
	st := Status{Version: Version, Generated: now.UTC(), Exporter: src.Version, ConfigFile: cfg.File, Demo: src.Demo,
		MetricsPath: src.MetricsPath, States: map[string]int{}, Findings: []string{}, Endpoints: []Endpoint{}}
	v, s, ok := src.Engines.SeriesView(api, key)
	if !ok {
		return st, false
	}
	d := h.derive(cfg, map[string]published.API{api: v})
	st.Findings = d.findings
	allot := src.Engines.Plans()[api]
	a := API{Name: api, Title: apiTitles[api], Pauses: []Pause{}, KeyPlan: "unknown", Refusals: "unknown"}
	an := apiLine(&a, src, v, allot, now)
	state := stateOf(s, an)
	st.APIs = []API{a}
	st.Endpoints = []Endpoint{d.endpointOf(v.API, s, allot, src.Engines.PublicationDelay)}
	st.Series = SeriesPage{Filter: Filter{API: api, Key: key}, Total: len(v.API.Tuples), Matched: 1, Limit: 1,
		Items: []Series{seriesOf(src, api, s, state, an, true)}}
	return st, true
}

// keeps says whether the filter keeps a series.
func (f Filter) keeps(api, state string, t *config.Tuple) bool {
	return (f.API == "" || f.API == api) && (f.State == "" || f.State == state) &&
		(f.Endpoint == "" || strings.Contains(t.Path, f.Endpoint)) && (f.Key == "" || f.Key == t.Key)
}

// describe fills the configuration in force of an API, masked.
func describe(a *API, sec *config.API, clean func(api, text string) string) {
	a.Configured, a.Series = true, len(sec.Tuples)
	if sec.URL != nil {
		a.URL = clean(a.Name, upstream.ShownURL(sec.URL))
	}
	a.Auth, a.Credential = sec.Auth, sec.CredentialSource()
	a.TimeoutSeconds, a.Concurrency = sec.Timeout.Seconds(), sec.Concurrency
	a.RateLimit, a.DailyBudget, a.MaxTuples = sec.RateLimit, sec.DailyBudget, sec.MaxTuples
	a.MaxStaleness, a.RevalidateEvery = sec.MaxStaleness.Seconds(), sec.Revalidate.Seconds()
	for _, e := range sec.Metrics {
		a.Entries = append(a.Entries, Entry{Key: e.Key, Path: e.Path, Line: e.Line})
	}
	for _, p := range sec.Patterns {
		pt := Pattern{Paths: p.Paths, Tuples: p.Tuples, Cut: p.Cut}
		for _, l := range p.Left {
			pt.Left = append(pt.Left, outside(l))
		}
		if p.Entry != nil {
			pt.Entry, pt.Pattern = p.Entry.Key, p.Entry.Path
		}
		if p.Err != nil {
			pt.Error = text.Outside(clean(a.Name, p.Err.Error()), maxOutside*4)
		}
		a.Patterns = append(a.Patterns, pt)
	}
}

// apiState fills what an API's client says now (calls, pauses, holds).
func apiState(a *API, up *upstream.Client, allot budget.Allotment, now time.Time) apiNow {
	an := apiNow{now: now, factor: allot.Factors()}
	if up == nil {
		return an
	}
	if b := up.Budget(); b != nil {
		a.CallsToday, a.CallsTodayHere, a.Limit = b.Used(now), b.Own(now), b.Limit(now)
		day := b.DayStart(now) // the budget's day: the cluster's in a cluster
		if elapsed := now.Sub(day); elapsed > 10*time.Minute {
			a.Pace = float64(a.CallsTodayHere) * float64(24*time.Hour) / float64(elapsed)
		}
		switch saved := b.Saved(now); {
		case a.Limit > 0 && a.CallsToday >= a.Limit:
			an.spent, an.resume = true, day.Add(24*time.Hour)
			a.Hold = "daily_budget spent: " + plural(a.CallsToday, "call") + " of " + plural(a.Limit, "call") +
				" today; calls resume at " + an.resume.Format(time.RFC3339)
		case a.Limit > 0 && saved.Paced && saved.Tokens < 1:
			// The budget paces the day's calls (a bucket refilled at
			// limit/86400 a second): a call due now waits for a token.
			wait := time.Duration((1 - saved.Tokens) * 86400 / float64(a.Limit) * float64(time.Second))
			an.spent, an.resume = true, now.Add(wait).Truncate(time.Second)
			a.Hold = "daily_budget paces the calls over the day: the next call goes at " + an.resume.UTC().Format(time.RFC3339)
		}
	}
	if p := up.Plan(); p != nil {
		a.KeyPlan = fmt.Sprintf("%s: %d paths, rate limit %s", p.Name, len(p.Paths), p.RateLimit)
	}
	for _, p := range up.Pauses() {
		lane := "key-free"
		if p.Keyed {
			lane, an.pausedKeyed = "keyed", pause{p.Until, p.By}
		} else {
			an.paused = pause{p.Until, p.By}
		}
		a.Pauses = append(a.Pauses, Pause{Lane: lane, By: p.By, Until: p.Until.UTC(), Credential: p.Credential})
	}
	return an
}

// seriesOf is one series' line; plans adds what each plan meant for it.
func seriesOf(src Source, api string, s published.Series, state string, an apiNow, plans bool) Series {
	t := s.Tuple
	path := outside(t.Path)
	out := Series{API: api, Key: t.Key, Path: path, Endpoint: path, Window: t.Window, State: state, Served: s.Served,
		Deprec: s.Deprecated, Labels: map[string]string{}}
	for i, n := range t.LabelNames() {
		if i < len(t.LabelValues) {
			out.Labels[n] = outside(t.LabelValues[i])
		}
	}
	if t.Entry != nil {
		out.Endpoint = t.Entry.Path
	}
	out.Request = t.Path
	if q := upstream.ShownQuery(t.Query().URL()); q != "" {
		out.Request += "?" + q
	}
	out.Request = outside(src.Clean(api, out.Request))
	out.Values = valuesOf(s.Samples)
	out.Points, out.Changed = pointsOf(s.Points)
	out.Due = s.Due.UTC() // the zero time stays zero
	if !s.Newest.IsZero() {
		out.Newest = s.Newest.UTC()
		end := s.Newest.Add(s.Spacing)
		out.Age = an.now.Sub(end).Seconds()
	}
	out.Spacing, out.Earliest = s.Spacing.Seconds(), s.Earliest.Seconds()
	next, why := nextOf(s, state, an)
	out.Next, out.Why = next.UTC(), why
	if !s.OK && s.Attempted || s.Refused {
		out.Failing = s.FailingSince.UTC()
		out.Error = s.LastError // masked by the engine, upstream's rule
	}
	if state == StateRateHeld {
		out.HeldUntil = an.wait.Until.UTC()
	}
	out.Answers = answersOf(s.Answers)
	if src.Peer != nil {
		out.Owner = outside(src.Engines.Owner(s.Unit))
		if out.Owner != src.Peer.Name() && state != StatePaused && state != StateHeld {
			out.Why += "; owned by " + out.Owner + ": this member calls only when its row does not come"
		}
	}
	if plans {
		out.PlanHistory = planChanges(src.Plans.of(api), t, an.now)
	}
	return out
}

// endpoints groups an API's series by endpoint (as configured) and
// window.
func endpoints(sec *config.API, series []published.Series, allot budget.Allotment, delays map[published.EndpointWindow]time.Duration, f budget.APIForecast) []Endpoint {
	idx := map[groupKey]int{}
	var out []Endpoint
	for _, s := range series {
		t := s.Tuple
		k := keyOf(t)
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, Endpoint{API: sec.Name, Path: k.path, Window: t.Window, OneRowIn: 1})
		}
		e := &out[i]
		e.Series++
		if d, ok := delays[published.EndpointWindow{API: sec.Name, Endpoint: t.Path, Window: t.Window}]; ok {
			v := d.Seconds()
			if e.PublicationDelay == nil || v > *e.PublicationDelay {
				e.PublicationDelay = &v
			}
		}
		if s.Spacing > 0 {
			e.OneRowIn = max(e.OneRowIn, allot.Factor(t.Window, s.Spacing))
		}
	}
	for _, en := range f.Entries {
		for _, w := range en.Windows {
			if i, ok := idx[groupKey{en.Path, w.Window}]; ok {
				out[i].CallsPerDay += w.CallsPerDay
				out[i].PlannedPerDay += w.CallsPerDay / allot.Factor(w.Window, w.Every)
			}
		}
	}
	return out
}

// answersOf are a series' last outcomes, newest first.
func answersOf(in []published.Answer) []Answer {
	out := make([]Answer, 0, len(in))
	for i := len(in) - 1; i >= 0; i-- {
		a := in[i]
		o := Answer{At: a.At.Time(), Outcome: a.Outcome.String(), Code: a.Code, HeldBy: a.HeldBy.String(), By: a.By.String(),
			Samples: int(a.Samples), Fields: int(a.Fields), Note: a.Note, Until: a.Until().UTC()}
		if a.Outcome != published.AnswerHeld && a.By != published.ByPeer {
			d := a.Span.Seconds()
			o.Duration = &d
		}
		if a.Newest != 0 {
			o.Newest = a.Newest.Time()
		}
		if sh := a.Shape; sh != nil {
			o.Rows, o.TimeKey, o.CountedBy, o.LabelsFrom, o.Expected = sh.Rows, sh.TimeKey, sh.CountedBy, sh.LabelsFrom, sh.Expected
		}
		out = append(out, o)
	}
	return out
}

// clusterOf says the members' health, the units each owns and those this
// member called for their owners.
func clusterOf(src Source, views map[string]published.API, now time.Time) *Cluster {
	self := src.Peer.Name()
	c := &Cluster{Self: self, PeerTimeout: src.Peer.PeerTimeout().Seconds(), Settled: src.Peer.Ready(),
		ClockOffset: src.Peer.ClockOffset().Seconds(), Members: []Member{}, Fallbacks: []Fallback{}}
	type unit struct{ api, name string }
	owned := map[string]int{}
	fallbacks := map[unit]int{} // index in c.Fallbacks
	seen := map[unit]bool{}
	for _, name := range config.APINames {
		for _, s := range views[name].Series {
			u := unit{name, s.Unit}
			owner := ""
			if !seen[u] {
				seen[u] = true
				owner = src.Engines.Owner(s.Unit)
				owned[owner]++
			}
			n := len(s.Answers)
			if n == 0 || s.Answers[n-1].By != published.ByFallback {
				continue
			}
			at := s.Answers[n-1].At.Time()
			if i, ok := fallbacks[u]; ok {
				if at.After(c.Fallbacks[i].At) {
					c.Fallbacks[i].At = at
				}
				continue
			}
			if owner == "" {
				owner = src.Engines.Owner(s.Unit)
			}
			fallbacks[u] = len(c.Fallbacks)
			c.Fallbacks = append(c.Fallbacks, Fallback{API: name, Endpoint: outside(s.Tuple.Path), Window: s.Tuple.Window, Owner: outside(owner), At: at})
		}
	}
	for _, h := range src.Peer.Health() {
		m := Member{Name: outside(h.Name), Address: outside(h.Address), Self: h.Self, Serving: h.Serving, Units: owned[h.Name],
			ClockOffset: h.Offset.Seconds(), Failed: h.Failed.UTC()}
		if h.Serving {
			c.Serving++
		}
		if !h.Heard.IsZero() {
			age := max(now.Sub(h.Heard), 0).Seconds()
			same := h.SameConfig
			m.HeartbeatAge, m.SameConfig = &age, &same
		}
		for _, f := range c.Fallbacks {
			if f.Owner == m.Name {
				m.Fallbacks++
			}
		}
		c.Members = append(c.Members, m)
	}
	slices.SortFunc(c.Members, func(a, b Member) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(c.Fallbacks, func(a, b Fallback) int { return b.At.Compare(a.At) })
	return c
}

// plural is "1 call", "2 calls", "2 entries"; "series" stays.
func plural(n int, noun string) string {
	switch {
	case n == 1 || strings.HasSuffix(noun, "s"):
		return fmt.Sprintf("%d %s", n, noun)
	case strings.HasSuffix(noun, "y"):
		return fmt.Sprintf("%d %sies", n, noun[:len(noun)-1])
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
