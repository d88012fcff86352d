package collector

import (
	"errors"
	"net/http"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/budget"
	"github.com/onchain-exporter/onchain_exporter/cluster"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/exposition"
	"github.com/onchain-exporter/onchain_exporter/internal/clock"
	"github.com/onchain-exporter/onchain_exporter/plan"
	"github.com/onchain-exporter/onchain_exporter/schedule"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// Options tune an Exporter; the zero value is the production default.
type Options struct {
	// Clock is the time the engines run on: clock.Real by default. Tests
	// and benchmarks give a simulated clock (simclock.Clock), move it, and
	// call Settle to let the engines catch up: the same loop as in
	// production, on another clock.
	Clock clock.Clock
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
	// pauses and the day's count across restarts (package persist);
	// nil keeps nothing.
	Store Keeper
	// SaveInterval is how often a changed state is written to Store
	// (5 s by default); Close writes it too.
	SaveInterval time.Duration
	// IdleAfter is how long after the last scrape the refresh engine
	// stops calling upstream (DefaultIdleAfter, or three times the gap
	// between scrapes if longer).
	IdleAfter time.Duration
	// Peer is the cluster this exporter shares its calls with (nil:
	// alone). New registers the rows with it: call Peer.Join after New.
	Peer *cluster.Peer
}

// Exporter serves /metrics for a configuration: one refresh engine per
// API (apiCollector), which lives as long as its API is configured and
// keeps every tuple's cache across scrapes and reloads.
type Exporter struct {
	logger  log.Logger
	opts    Options
	now     func() time.Time
	reg     *prometheus.Registry
	m       *selfMetrics
	bm      *budget.Metrics
	clients *upstream.Pool

	// saveMu serialises saves.
	saveMu sync.Mutex
	// applyMu serialises ApplyConfig and Close; scrapes never take it.
	applyMu sync.Mutex
	cfg     *config.Config
	closed  bool
	engines map[string]*apiCollector
	// delays are the publication delays learned per API; they outlive
	// reloads.
	delays map[string]*schedule.Book
	// gauges are the label sets of the per-endpoint and per-window
	// gauges set for the configuration in force.
	gauges map[gaugeKey]bool
	// leaving counts engines of APIs a reload removed, closing in the
	// background.
	leaving sync.WaitGroup

	// plans are the daily budget's plans in force per API, as the
	// landing page shows them (Plans).
	plans atomic.Pointer[map[string]budget.Allotment]

	// served is the engines in force, in the configuration's order:
	// what scrapes and saves read, swapped whole by ApplyConfig.
	served atomic.Pointer[[]*apiCollector]

	// scrape serves /metrics from the engines in force (package
	// exposition).
	scrape *exposition.Handler

	// peer, rows and cm: the cluster (cluster.go); nil alone.
	peer *cluster.Peer
	rows *cluster.Channel
	cm   *cluster.RowMetrics

	stopSave, saveDone, stopWatch, watchDone chan struct{}
}

// gaugeKey is one label set of publication_delay_seconds (endpoint set) or
// of row_delay_seconds and excess_staleness_seconds (endpoint empty).
type gaugeKey struct{ api, endpoint, window string }

// New builds an Exporter whose own metrics are registered in reg; /metrics
// serves reg and the data of cfg.
func New(cfg *config.Config, logger log.Logger, reg *prometheus.Registry, opts ...Options) (*Exporter, error) {
	e := &Exporter{logger: logger, reg: reg, m: newSelfMetrics(reg), bm: budget.NewMetrics(reg),
		engines: map[string]*apiCollector{}, delays: map[string]*schedule.Book{}, gauges: map[gaugeKey]bool{}}
	if len(opts) > 0 {
		e.opts = opts[0]
	}
	if e.opts.Clock == nil {
		e.opts.Clock = clock.Real
	}
	e.now = e.opts.Clock.Now
	if e.opts.IdleAfter <= 0 {
		e.opts.IdleAfter = DefaultIdleAfter
	}
	e.clients = e.opts.Clients
	if e.clients == nil {
		e.clients = upstream.NewPool(reg, e.now, logger)
		if e.opts.Store != nil {
			e.clients.OnClient(e.opts.Store.Keep)
		}
	}
	if e.opts.DefaultTimeout <= 0 {
		e.opts.DefaultTimeout = 10 * time.Second
	}
	if e.opts.TimeoutOffset <= 0 {
		e.opts.TimeoutOffset = 500 * time.Millisecond
	}
	e.scrape = &exposition.Handler{Collectors: e.collectors, Known: config.APINames, Own: reg,
		DefaultTimeout: e.opts.DefaultTimeout, TimeoutOffset: e.opts.TimeoutOffset, Logger: logger}
	e.served.Store(&[]*apiCollector{})
	if e.peer = e.opts.Peer; e.peer != nil {
		e.cm = cluster.NewRowMetrics(reg)
		e.rows = e.peer.AddState(stateKey, replicated{e})
	}
	if err := e.ApplyConfig(cfg); err != nil {
		return nil, err
	}
	if e.peer != nil {
		e.stopWatch, e.watchDone = make(chan struct{}), make(chan struct{})
		go func() {
			defer close(e.watchDone)
			e.watchMembers(e.stopWatch)
		}()
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

// Plans returns the daily budget's allotment in force for each configured
// API: what the log line at start and reload says, counted with the
// cadence learned of the series without a window.
func (e *Exporter) Plans() map[string]budget.Allotment {
	if p := e.plans.Load(); p != nil {
		return *p
	}
	return nil
}

// apiForecast is the forecast of the API name of cfg, with the spacing
// each series without a window showed: in its engine c (nil at the first
// start), else in the state file's entry saved for it.
func apiForecast(cfg *config.Config, name string, c *apiCollector, saved *Saved) budget.APIForecast {
	running := map[string]time.Duration{}
	if c != nil {
		c.mu.Lock()
		for _, st := range c.states {
			if d := cadence(&st.Tuple).Spacing(); st.tuple.Window == "" && d > 0 {
				running[st.tuple.Key] = d
			}
		}
		c.mu.Unlock()
	}
	learned := func(t *config.Tuple) time.Duration {
		if d, ok := running[t.Key]; ok {
			return d
		}
		if saved != nil {
			if s, ok := saved.Tuples[t.Key]; ok {
				return cadence(&s).Spacing()
			}
		}
		return 0
	}
	return budget.ForecastAPI(cfg.APIs[name], learned)
}

// ApplyConfig puts a configuration in force by reconciling each API's
// engine with it, not by rebuilding: tuples the new configuration keeps
// keep their values, plan, learned delays and any refresh in flight;
// removed tuples leave (a refresh under way ends without a trace); new
// ones are queued. An API's client is replaced only when its settings
// change (package upstream's Pool), its limits, budget and pauses carried
// over. No lock a scrape takes is held, and nothing waits for a call: a
// reload never stalls a scrape. A configuration equal to the one in force
// changes nothing.
func (e *Exporter) ApplyConfig(cfg *config.Config) error {
	e.applyMu.Lock()
	defer e.applyMu.Unlock()
	if e.closed {
		return errors.New("the exporter is closed")
	}
	if e.cfg != nil && reflect.DeepEqual(e.cfg, cfg) {
		// Nothing changed but what a reload always means: the user may
		// have fixed a rejected key upstream.
		for _, c := range *e.served.Load() {
			c.reloaded()
		}
		if p := e.plans.Load(); p != nil {
			for _, name := range config.APINames {
				if plan, ok := (*p)[name]; ok {
					logAllotment(log.With(e.logger, "api", name), plan)
				}
			}
		}
		return nil
	}
	reload := e.cfg != nil
	fams := exposition.NewFamilies()
	tf := newTupleFamilies(cfg.TupleLabelNames)
	plans := map[string]budget.Allotment{}
	gauges := map[gaugeKey]bool{}
	var served []*apiCollector
	for _, name := range config.APINames {
		a := cfg.APIs[name]
		if a == nil {
			if c := e.engines[name]; c != nil {
				delete(e.engines, name)
				e.leaving.Add(1)
				go func() {
					defer e.leaving.Done()
					c.close()
					e.clients.Drop(name)
				}()
			}
			e.bm.Forget(name)
			e.m.tuples.DeleteLabelValues(name)
			continue
		}
		logger := log.With(e.logger, "api", name)
		up := e.clients.Client(a) // its budget and pauses kept by the pool's hook (OnClient)
		if reload {
			// A reload: the user may have fixed a rejected key upstream.
			up.Reloaded()
		}
		var saved *Saved
		if e.opts.Store != nil {
			saved = e.opts.Store.Take(a, up.Account(), e.now())
		}
		// The forecast and the plan count what the series without a
		// window showed (running, or in the state file), not the
		// default cadence of a series never seen.
		f := apiForecast(cfg, name, e.engines[name], saved)
		plans[name] = f.Allotment
		e.bm.SetForecast(f)
		e.bm.SetAllotment(name, f.Allotment)
		logAllotment(logger, f.Allotment)
		book := e.delays[name]
		if book == nil {
			book = schedule.NewBook(nil)
			e.delays[name] = book
		}
		var savedTuples map[string]Tuple
		if saved != nil {
			savedTuples = saved.Tuples
			book.Restore(saved.Delays)
			if saved.Budget != nil && up.Budget() != nil {
				if err := up.Budget().Restore(*saved.Budget, e.now()); err != nil {
					level.Debug(logger).Log("msg", "the day's call count saved is not today's; counting from zero", "err", err)
				}
			}
		}
		members, ids := map[string]int{}, map[string]bool{}
		for _, t := range a.Tuples {
			if t.CacheTTL == 0 {
				members[delayKey(t)]++
				ids[t.Key] = true
			}
		}
		book.SetMembers(members, ids)
		c := e.engines[name]
		if c == nil {
			c = newAPICollector(name, e, logger)
			e.engines[name] = c
			c.start()
		}
		c.reconcile(engineConfig{api: a, up: up, fams: fams, tf: tf,
			sched: &apiSchedule{revalidate: a.Revalidate, maxStaleness: a.MaxStaleness, book: book, factor: f.Allotment.Factors()},
			saved: savedTuples, reload: reload,
		})
		for _, t := range a.Tuples {
			if w := plan.WindowDuration(t.Window); w > 0 && t.CacheTTL == 0 {
				// Present from the start: the first guess until rows
				// teach better, and an empty histogram.
				k := gaugeKey{name, t.Path, t.Window}
				if !gauges[k] {
					gauges[k] = true
					e.m.pubDelay.Set(name, t.Path, t.Window, max(book.Publication(delayKey(t), w), 0))
				}
				if k := (gaugeKey{api: name, window: t.Window}); !gauges[k] {
					gauges[k] = true
					e.m.rowDelay.WithLabelValues(name, t.Window)
					e.m.excess.WithLabelValues(name, t.Window)
				}
			}
		}
		e.m.tuples.WithLabelValues(name).Set(float64(len(a.Tuples)))
		served = append(served, c)
	}
	for k := range e.gauges {
		if gauges[k] {
			continue
		}
		if k.endpoint != "" {
			e.m.pubDelay.Delete(k.api, k.endpoint, k.window)
		} else {
			e.m.rowDelay.DeleteLabelValues(k.api, k.window)
			e.m.excess.DeleteLabelValues(k.api, k.window)
		}
	}
	e.gauges = gauges
	e.served.Store(&served)
	e.plans.Store(&plans)
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
	if e.stopWatch != nil {
		close(e.stopWatch)
		<-e.watchDone
		e.stopWatch = nil
	}
	e.applyMu.Lock()
	if e.closed {
		e.applyMu.Unlock()
		return
	}
	e.closed = true
	e.applyMu.Unlock()
	for _, c := range *e.served.Load() {
		c.close()
	}
	e.leaving.Wait()
	e.Save()
	if e.opts.Clients == nil {
		e.clients.Close() // the Exporter's own
	}
}

// Settle waits until every engine has done what is due at its clock's
// time: every wake handled, no refresh under way. It starts nothing. A
// driver of a simulated clock calls it after it moves the clock, so that
// what is due at the new time is done before it looks.
func (e *Exporter) Settle() {
	for _, c := range *e.served.Load() {
		c.settle()
	}
}

// ServeHTTP serves one scrape (exposition.Handler): the exporter's own
// metrics and the data of the engines chosen by collect[] (all by
// default), each read from what it published, within the scrape timeout
// Prometheus announces.
func (e *Exporter) ServeHTTP(w http.ResponseWriter, r *http.Request) { e.scrape.ServeHTTP(w, r) }

// collectors are the engines in force, as /metrics reads them.
func (e *Exporter) collectors() []exposition.Collector {
	served := *e.served.Load()
	out := make([]exposition.Collector, len(served))
	for i, c := range served {
		out[i] = c
	}
	return out
}

// logAllotment names the budget's allotment of an API: at start and on every
// reload one line, cut or not (docs/budget.md); none without a
// daily_budget.
func logAllotment(logger log.Logger, p budget.Allotment) {
	switch {
	case p.Cut():
		level.Warn(logger).Log("msg", "the configuration costs more than daily_budget; polling is coarsened", "plan", p.Summary(3))
	case p.Budget > 0:
		level.Info(logger).Log("msg", "the configuration fits daily_budget", "plan", p.Summary(3))
	}
}
