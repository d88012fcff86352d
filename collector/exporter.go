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
	// Clock is the time the engines run on (clock.Real by default); tests
	// move a simulated one and call Settle.
	Clock clock.Clock
	// DefaultTimeout bounds a scrape that sends no timeout header;
	// TimeoutOffset is kept free of the one it sends.
	DefaultTimeout time.Duration
	TimeoutOffset  time.Duration
	// Clients are the upstream clients, shared with the expand.Expander so
	// that limits hold across expansion and scrapes; nil: the Exporter's own.
	Clients *upstream.Pool
	// Store keeps what was learned across restarts; nil keeps nothing.
	Store Keeper
	// SaveInterval is how often the state is saved to Store (5 s).
	SaveInterval time.Duration
	// IdleAfter is how long after the last scrape the engines stop
	// calling upstream (DefaultIdleAfter, or three scrape gaps if longer).
	IdleAfter time.Duration
	// Peer is the cluster to share calls with (nil: alone). New registers
	// the rows with it: call Peer.Join after New.
	Peer *cluster.Peer
}

// Exporter serves /metrics for a configuration: one refresh engine per
// API (apiCollector), living as long as its API is configured.
type Exporter struct {
	logger  log.Logger
	opts    Options
	now     func() time.Time
	reg     *prometheus.Registry
	m       *selfMetrics
	bm      *budget.Metrics
	clients *upstream.Pool

	saveMu sync.Mutex // serialises saves
	// applyMu serialises ApplyConfig and Close; scrapes never take it.
	applyMu sync.Mutex
	cfg     *config.Config
	closed  bool
	engines map[string]*apiCollector
	delays  map[string]*schedule.Book // learned per API, across reloads
	gauges  map[gaugeKey]bool         // the label sets set for the configuration in force
	leaving sync.WaitGroup            // engines a reload removed, closing
	plans   atomic.Pointer[map[string]budget.Allotment]
	// served is the engines in force, in the configuration's order,
	// swapped whole by ApplyConfig.
	served atomic.Pointer[[]*apiCollector]
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
		e.stopWatch, e.watchDone = background(e.watchMembers)
	}
	if e.opts.Store != nil {
		if e.opts.SaveInterval <= 0 {
			e.opts.SaveInterval = 5 * time.Second
		}
		e.stopSave, e.saveDone = background(e.saveLoop)
	}
	return e, nil
}

// background runs fn until stop is closed; done is closed when it returns.
func background(fn func(stop <-chan struct{})) (stop, done chan struct{}) {
	stop, done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		fn(stop)
	}()
	return stop, done
}

// Plans returns the daily budget's allotment in force for each configured
// API, as the log says it at start and reload.
func (e *Exporter) Plans() map[string]budget.Allotment {
	if p := e.plans.Load(); p != nil {
		return *p
	}
	return nil
}

// apiForecast is the forecast of the API name of cfg, with the spacing
// each series without a window showed, in its engine c (nil at start) or
// its saved entry.
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
// engine with it (reconcile), not by rebuilding; a client is replaced
// only when its settings change. A reload never stalls a scrape. A
// configuration equal to the one in force changes nothing.
func (e *Exporter) ApplyConfig(cfg *config.Config) error {
	e.applyMu.Lock()
	defer e.applyMu.Unlock()
	if e.closed {
		return errors.New("the exporter is closed")
	}
	if e.cfg != nil && reflect.DeepEqual(e.cfg, cfg) {
		// The user may have fixed a rejected key upstream.
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
				// Present from the start: the first guess, an empty histogram.
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
	for _, bg := range [][2]chan struct{}{{e.stopSave, e.saveDone}, {e.stopWatch, e.watchDone}} {
		if bg[0] != nil {
			close(bg[0])
			<-bg[1]
		}
	}
	e.stopSave, e.stopWatch = nil, nil
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
// time: a driver of a simulated clock calls it after moving the clock.
func (e *Exporter) Settle() {
	for _, c := range *e.served.Load() {
		c.settle()
	}
}

// ServeHTTP serves one scrape (exposition.Handler).
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

// logAllotment logs an API's allotment, cut or not; nothing without a
// daily_budget.
func logAllotment(logger log.Logger, p budget.Allotment) {
	switch {
	case p.Cut():
		level.Warn(logger).Log("msg", "the configuration costs more than daily_budget; polling is coarsened", "plan", p.Summary(3))
	case p.Budget > 0:
		level.Info(logger).Log("msg", "the configuration fits daily_budget", "plan", p.Summary(3))
	}
}
