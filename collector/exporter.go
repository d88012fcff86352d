package collector

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/onchain-exporter/onchain_exporter/budget"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/schedule"
	"github.com/onchain-exporter/onchain_exporter/state"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// Options tune an Exporter; the zero value is the production default.
type Options struct {
	// Now is the clock (tests and benchmarks simulate time with it).
	Now func() time.Time
	// DefaultTimeout bounds a scrape that does not send
	// X-Prometheus-Scrape-Timeout-Seconds.
	DefaultTimeout time.Duration
	// TimeoutOffset is kept free of the Prometheus scrape timeout for
	// encoding and transfer.
	TimeoutOffset time.Duration
	// Clients are the upstream clients, one per API, shared with the
	// expand.Expander so that limits hold across expansion and scrapes; nil
	// builds a pool of the Exporter's own, registered in its registry.
	Clients *upstream.Pool
	// Store keeps the tuples' caches and schedules, learned delays,
	// pauses and listing answers across restarts; nil keeps nothing.
	Store *state.Store
	// SaveInterval is how often a changed state is written to Store
	// (5 s by default); Close writes it too.
	SaveInterval time.Duration
	// IdleAfter is how long after the last scrape the refresh engine
	// stops calling upstream (DefaultIdleAfter, or three times the gap
	// between scrapes if longer).
	IdleAfter time.Duration

	// manual is set by a clock of the caller's own (Now): the caller
	// moves time, so no refresh runs in the background; Step, or a
	// scrape, runs the refreshes due.
	manual bool
}

// Exporter serves /metrics for a configuration and keeps every tuple's
// cache across scrapes and reloads.
type Exporter struct {
	logger  log.Logger
	opts    Options
	reg     *prometheus.Registry
	m       *selfMetrics
	bm      *budget.Metrics
	clients *upstream.Pool

	mu   sync.RWMutex
	cfg  *config.Config
	apis []*apiCollector
	// delays are the publication delays learned per API; they outlive
	// reloads.
	delays map[string]*schedule.Book

	collectorDuration, collectorSuccess *family
	// lastScrape and scrapeGap carry each API's demand over reloads.
	lastScrape map[string]time.Time
	scrapeGap  map[string]time.Duration

	stopSave, saveDone chan struct{}
}

// New builds an Exporter whose own metrics are registered in reg; /metrics
// serves reg and the data of cfg.
func New(cfg *config.Config, logger log.Logger, reg *prometheus.Registry, opts ...Options) (*Exporter, error) {
	e := &Exporter{logger: logger, reg: reg, m: newSelfMetrics(reg), bm: budget.NewMetrics(reg)}
	if len(opts) > 0 {
		e.opts = opts[0]
	}
	if e.opts.Now == nil {
		e.opts.Now = time.Now
	} else {
		e.opts.manual = true
	}
	if e.opts.IdleAfter <= 0 {
		e.opts.IdleAfter = DefaultIdleAfter
	}
	e.lastScrape, e.scrapeGap = map[string]time.Time{}, map[string]time.Duration{}
	e.clients = e.opts.Clients
	if e.clients == nil {
		e.clients = upstream.NewPool(reg, e.opts.Now, logger)
	}
	if e.opts.DefaultTimeout <= 0 {
		e.opts.DefaultTimeout = 10 * time.Second
	}
	if e.opts.TimeoutOffset <= 0 {
		e.opts.TimeoutOffset = 500 * time.Millisecond
	}
	e.collectorDuration = newFamily(namespace+"_scrape_collector_duration_seconds",
		"Duration of this scrape's collection per collector, in seconds.", dto.MetricType_GAUGE, []string{"collector"})
	e.collectorSuccess = newFamily(namespace+"_scrape_collector_success",
		"1 when every tuple of the collector was served fresh in this scrape, 0 when some came from a failed or unfinished refresh.", dto.MetricType_GAUGE, []string{"collector"})
	if err := e.ApplyConfig(cfg); err != nil {
		return nil, err
	}
	if e.opts.Store != nil {
		if e.opts.SaveInterval <= 0 {
			e.opts.SaveInterval = 5 * time.Second
		}
		e.stopSave, e.saveDone = make(chan struct{}), make(chan struct{})
		go e.saveLoop(e.opts.SaveInterval, e.stopSave, e.saveDone)
	}
	return e, nil
}

// ApplyConfig switches to a new configuration. Tuples that survive keep
// their cached values and schedule; an API whose section is unchanged keeps
// its client, with its limits and pauses.
func (e *Exporter) ApplyConfig(cfg *config.Config) error {
	fams := newFamilies()
	tf := newTupleFamilies(cfg.TupleLabelNames)
	e.mu.Lock()
	defer e.mu.Unlock()
	old := map[string]*tupleState{}
	for _, c := range e.apis {
		c.close()
		c.mu.Lock()
		e.lastScrape[c.api.Name], e.scrapeGap[c.api.Name] = c.lastScrape, c.scrapeGap
		c.mu.Unlock()
		for _, st := range c.states {
			old[st.tuple.Key] = st
		}
	}
	e.apis = nil
	e.m.pubDelay.Reset() // set again below for the tuples of cfg
	e.m.excess.Reset()
	forecast := map[string]budget.APIForecast{}
	for _, f := range budget.Forecast(cfg).APIs {
		forecast[f.API] = f
	}
	for _, name := range config.APINames {
		a := cfg.APIs[name]
		if a == nil {
			e.bm.Forget(name)
			e.m.tuples.DeleteLabelValues(name)
			e.clients.Drop(name)
			continue
		}
		ctx, cancel := context.WithCancel(context.Background())
		logger := log.With(e.logger, "api", name)
		up := e.clients.Client(a)
		if e.cfg != nil {
			// A reload: the user may have fixed a rejected key upstream.
			up.Reloaded()
		}
		e.opts.Store.RestorePauses(up) // at the first start only
		if f, ok := forecast[name]; ok {
			e.bm.SetForecast(f)
			e.bm.SetPlan(name, f.Plan)
			if f.Plan.Cut() {
				level.Warn(logger).Log("msg", "the configuration costs more than daily_budget; polling is coarsened", "plan", f.Plan.Summary(3))
			}
		}
		saved := e.opts.Store.Take(a, up.Account())
		if e.delays == nil {
			e.delays = map[string]*schedule.Book{}
		}
		if e.delays[name] == nil {
			e.delays[name] = schedule.NewBook(nil)
		}
		if saved != nil {
			e.delays[name].Restore(saved.Delays)
			if saved.Budget != nil && up.Budget() != nil {
				if err := up.Budget().Restore(*saved.Budget, e.opts.Now()); err != nil {
					level.Debug(logger).Log("msg", "the day's call count saved is not today's; counting from zero", "err", err)
				}
			}
		}
		c := &apiCollector{
			api: a, sched: &apiSchedule{revalidate: a.Revalidate, book: e.delays[name], factor: forecast[name].Plan.WindowFactors()}, fams: fams, tf: tf, m: e.m, bm: e.bm,
			now: e.opts.Now, logger: logger, ctx: ctx, cancel: cancel,
			up: up, manual: e.opts.manual, idleAfter: e.opts.IdleAfter, filled: make(chan struct{}),
		}
		members, ids := map[string]int{}, map[string]bool{}
		for _, t := range a.Tuples {
			if t.CacheTTL == 0 {
				members[delayKey(t)]++
				ids[t.Key] = true
			}
		}
		e.delays[name].SetMembers(members, ids)
		for _, t := range a.Tuples {
			st := &tupleState{tuple: t}
			if prev := old[t.Key]; prev != nil {
				st.Tuple, st.deprecatedLog = prev.Tuple, prev.deprecatedLog
				if !prev.OK {
					st.Next = time.Time{} // a new credential may fix it: try at once
				}
			} else if s, ok := saved.Tuple(t, e.opts.Now()); ok {
				st.Tuple = s // as the last run left it, back-off included
			}
			if !st.rebuild(fams) {
				st.Next = time.Time{}
				level.Debug(logger).Log("msg", "cached values dropped: the tuple's labels changed", "endpoint", t.Path)
			}
			st.buildInfo(tf)
			if st.LastAttempt.IsZero() && st.values == nil {
				st.first = true // the first scrape waits for it, within its deadline
				c.unfilled++
			}
			c.states = append(c.states, st)
			if w := config.WindowDuration(t.Window); w > 0 && t.CacheTTL == 0 {
				// Present from the start: the first guess until rows
				// teach better, and an empty histogram.
				e.m.pubDelay.WithLabelValues(name, t.Path, t.Window).Set(e.delays[name].Publication(delayKey(t), w).Seconds())
				e.m.rowDelay.WithLabelValues(name, t.Window)
				e.m.excess.WithLabelValues(name, t.Window)
			}
		}
		e.m.tuples.WithLabelValues(name).Set(float64(len(a.Tuples)))
		if c.unfilled == 0 {
			close(c.filled)
		}
		// Demand carries over a reload: scrapes kept coming.
		c.lastScrape, c.scrapeGap = e.lastScrape[name], e.scrapeGap[name]
		c.start()
		e.apis = append(e.apis, c)
	}
	e.cfg = cfg
	return nil
}

// Close stops every refresh under way and saves the state.
func (e *Exporter) Close() {
	if e.stopSave != nil {
		close(e.stopSave)
		<-e.saveDone
		e.stopSave = nil
	}
	if e.opts.Store != nil {
		e.opts.Store.LockSaves() // before e.mu, as in Save
		defer e.opts.Store.UnlockSaves()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, c := range e.apis {
		c.close()
	}
	if e.opts.Store != nil {
		e.saveLocked()
	}
	e.apis = nil
	if e.opts.Clients == nil {
		e.clients.Close() // the Exporter's own
	}
}

// Step runs, on the caller's clock (Options.Now), every refresh due now
// and returns when the next is due (zero: none planned). Tests and
// benchmarks that simulate time call it as they move the clock, so that
// rows are fetched when the plan says, not at the next scrape.
func (e *Exporter) Step() time.Time {
	e.mu.RLock()
	apis := e.apis
	e.mu.RUnlock()
	var next time.Time
	for _, c := range apis {
		if at := c.step(e.opts.Now()); !at.IsZero() && (next.IsZero() || at.Before(next)) {
			next = at
		}
	}
	return next
}

// ServeHTTP serves one scrape: the exporter's own metrics and the data of
// the collectors chosen by collect[] (all by default), within the scrape
// timeout Prometheus announces.
func (e *Exporter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	timeout := e.opts.DefaultTimeout
	if v := r.Header.Get("X-Prometheus-Scrape-Timeout-Seconds"); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
			timeout = time.Duration(s*float64(time.Second)) - e.opts.TimeoutOffset
			timeout = max(timeout, 100*time.Millisecond)
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()

	e.mu.RLock()
	apis := e.apis
	e.mu.RUnlock()
	selected, err := selectCollectors(apis, r.URL.Query()["collect[]"])
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	samples := e.collect(ctx, selected)
	// Gathered after the data: collecting updated the exporter's own
	// counters (cache hits, stale values).
	own, err := e.reg.Gather()
	if err != nil {
		level.Error(e.logger).Log("msg", "gathering the exporter's own metrics", "err", err)
	}
	if err := writeExposition(w, r, samples, own); err != nil {
		level.Debug(e.logger).Log("msg", "writing the exposition", "err", err)
	}
}

func selectCollectors(apis []*apiCollector, names []string) ([]*apiCollector, error) {
	if len(names) == 0 {
		return apis, nil
	}
	want := map[string]bool{}
	for _, n := range names {
		known := false
		for _, a := range config.APINames {
			known = known || a == n
		}
		if !known {
			return nil, fmt.Errorf("collect[]=%q: unknown collector (known: %s)", n, strings.Join(config.APINames, ", "))
		}
		want[n] = true
	}
	var out []*apiCollector
	for _, c := range apis {
		if want[c.api.Name] {
			out = append(out, c)
		}
	}
	return out, nil
}

// collect runs the chosen collectors in parallel, each within the
// request's deadline, and returns their series with the per-collector
// duration and success.
func (e *Exporter) collect(ctx context.Context, apis []*apiCollector) []sampleOf {
	results := make([][]sampleOf, len(apis))
	var wg sync.WaitGroup
	for i, c := range apis {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			samples, fresh := c.collect(ctx)
			success := 0.0
			if fresh {
				success = 1
			}
			if smp, err := e.collectorDuration.sample(time.Since(start).Seconds(), c.api.Name); err == nil {
				samples = append(samples, smp)
			}
			if smp, err := e.collectorSuccess.sample(success, c.api.Name); err == nil {
				samples = append(samples, smp)
			}
			results[i] = samples
		}()
	}
	wg.Wait()
	n := 0
	for _, r := range results {
		n += len(r)
	}
	all := make([]sampleOf, 0, n)
	for _, r := range results {
		all = append(all, r...)
	}
	return all
}
