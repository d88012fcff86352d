// Package app is the exporter's process as a value tests and other
// programs run in process: New sets it up from Options, Start serves it,
// Reload puts the file in force again and Stop ends it. Package main
// parses the command line into Options and handles the signals.
package app

import (
	"cmp"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/common/version"

	"github.com/onchain-exporter/onchain_exporter/cluster"
	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/demo"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/internal/clock"
	"github.com/onchain-exporter/onchain_exporter/page"
	"github.com/onchain-exporter/onchain_exporter/persist"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// App is a running exporter: New built it, Start serves it, Stop ends it.
type App struct {
	opts     Options
	logger   log.Logger
	slogger  *slog.Logger
	reg      *prometheus.Registry
	exp      *collector.Exporter
	expander *expand.Expander
	landing  *page.Handler
	safe     *config.SafeConfig
	demo     *demo.Demo
	closers  []func()

	// Set by Start.
	srv        *http.Server
	ctx        context.Context // cancelled by Stop
	cancel     context.CancelFunc
	reloads    chan chan error
	background sync.WaitGroup // the reload loop and background expansion
	served     chan error     // what serving ended with
	serving    chan struct{}  // closed when serving ended
	addr       string
	stopOnce   sync.Once
}

// onClose has close run fn, after whatever was registered later.
func (a *App) onClose(fn func()) { a.closers = append(a.closers, fn) }

// close closes what New started, last started first.
func (a *App) close() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
	a.closers = nil
}

// ErrSetUp is what New returns when it could not set up the exporter; it
// logged why.
var ErrSetUp = errors.New("the exporter could not be set up (logged)")

// New sets up what the exporter serves from o. It logs what went wrong
// and returns ErrSetUp, having closed what it started.
func New(o Options) (*App, error) {
	o.Logger = cmp.Or(o.Logger, log.NewNopLogger())
	o.Slogger = cmp.Or(o.Slogger, slog.New(slog.DiscardHandler))
	o.Web = cmp.Or(o.Web, DefaultOptions().Web)
	o.Clock = cmp.Or(o.Clock, clock.Real)
	a := &App{opts: o, logger: o.Logger, slogger: o.Slogger}
	if err := a.setUp(); err != nil {
		a.close()
		return nil, err
	}
	return a, nil
}

func (a *App) setUp() error {
	o, logger := &a.opts, a.logger
	parse, d, err := demo.Source(o.ConfigFile, o.Demo, logger)
	if err != nil {
		level.Error(logger).Log("msg", "cannot start the demo", "err", err)
		return ErrSetUp
	}
	if d != nil {
		a.onClose(d.Close)
	}
	cfg, err := parse()
	if err != nil {
		kv := []any{"msg", "cannot load the configuration", "err", err}
		if errors.Is(err, fs.ErrNotExist) && !o.Demo {
			kv = append(kv, "hint", demo.MissingConfigHint(o.ConfigFile))
		}
		level.Error(logger).Log(kv...)
		return ErrSetUp
	}
	reg := prometheus.NewRegistry()
	// One client per API for the process's life, shared by expansion and
	// scrapes: its limits hold whoever calls.
	clients := upstream.NewPool(reg, o.Clock.Now, logger)
	a.onClose(clients.Close)
	if o.Demo && !o.StorageSet {
		o.StoragePath = "" // the demo's upstream is new at every start: nothing kept would apply
	}
	o.StoragePath = resolveStoragePath(o.StoragePath, o.StorageSet, logger) // storagedir.go: data/ of earlier versions
	store, err := persist.Open(o.StoragePath, cfg, logger)
	if err != nil {
		level.Error(logger).Log("msg", "cannot use the storage directory", "err", err)
		return ErrSetUp
	}
	a.onClose(func() { store.Close() }) // after the collectors' last save (registered later, run earlier)
	// Each client the pool puts in force reserves its calls on disk before
	// making them, and takes its saved pauses.
	var keeper collector.Keeper
	if store != nil {
		clients.OnClient(store.Keep)
		keeper = store
	}
	// The expander reads the key's plan with the lists; a change of it has
	// the engine ask its held series again.
	expander := expand.New(logger, expand.Options{Clients: clients, Store: store, Now: o.Clock.Now})
	var exp *collector.Exporter
	plans := page.NewPlanHistory()
	expander.OnPlanChanged(func(api string) {
		if c := clients.Current(api); c != nil {
			plans.Note(api, c.Plan(), o.Clock.Now())
		}
		if exp != nil {
			exp.PlanChanged(api)
		}
	})
	// The cluster compares the file's digest, before its lists expand it.
	fileDigest := configDigest(cfg)
	load := func() (*config.Config, error) {
		c, err := parse()
		if err != nil {
			return nil, err
		}
		out, err := expander.Expand(context.Background(), c)
		if err == nil {
			fileDigest = configDigest(c)
		}
		return out, err
	}
	start, cancelStart := context.WithTimeout(context.Background(), expand.StartBudget)
	// An upstream that is down, or a list that does not fit the file,
	// keeps the entries that need it waiting; only the file's errors stop
	// the exporter.
	cfg, err = expander.Start(start, cfg)
	cancelStart()
	if err != nil {
		level.Error(logger).Log("msg", "cannot load the configuration", "err", err)
		return ErrSetUp
	}

	reg.MustRegister(versioncollector.NewCollector(Name), collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), expander)
	// Without a cluster listen address peer is nil: alone.
	var cc cluster.Config
	if o.Cluster != nil {
		cc = *o.Cluster
	}
	cc.Reference = clients.ClockOffset // the cluster's clock is the provider's
	if o.StoragePath != "" {
		// A member restarted keeps its name: the others do not count its
		// calls of the day twice.
		cc.NameFile = filepath.Join(o.StoragePath, "cluster-member-name")
	}
	peer, err := cluster.Create(cc, log.With(logger, "component", "cluster"), reg)
	if err != nil {
		level.Error(logger).Log("msg", "cannot start the cluster", "err", err)
		return ErrSetUp
	}
	inCluster(peer, clients, logger)
	peer.SetConfigDigest(fileDigest)
	exp, err = collector.New(cfg, logger, reg, collector.Options{Clock: o.Clock, DefaultTimeout: o.DefaultTimeout, TimeoutOffset: o.TimeoutOffset, Clients: clients, Store: keeper, Peer: peer})
	if err != nil {
		level.Error(logger).Log("msg", "cannot start the collectors", "err", err)
		return ErrSetUp
	}
	a.onClose(exp.Close)
	if c := clients.Current(config.APIData); c != nil && c.Plan() != nil {
		// Series saved as refused were refused under the last run's plan:
		// the plan read now decides.
		exp.PlanChanged(config.APIData)
	}
	if peer != nil {
		// Leave after the collectors close: the others take its units at once.
		a.onClose(func() {
			if err := peer.Leave(5 * time.Second); err != nil {
				level.Warn(logger).Log("msg", "leaving the cluster", "err", err)
			}
		})
		// /metrics and the probes answer while the join's full state comes;
		// the engines call nothing meanwhile (Peer.Joining).
		peer.JoinInBackground(context.Background())
		go peer.Settle(context.Background())
	}
	// The operator's page (package page), on the configuration in force.
	var shown atomic.Pointer[config.Config]
	shown.Store(cfg)
	landing := page.NewHandler(page.Source{Version: version.Info(), MetricsPath: o.MetricsPath, Demo: o.Demo,
		Config: shown.Load, Engines: exp, Peer: peer, Expansion: expander.State, Clean: clients.Clean,
		Plans: plans, Now: o.Clock.Now})
	apply := func(c *config.Config) error {
		if err := exp.ApplyConfig(c); err != nil {
			return err
		}
		shown.Store(c)
		peer.SetConfigDigest(fileDigest)
		return nil
	}
	safe := config.NewSafeConfig(reg, load, apply)
	safe.Loaded(cfg)
	a.reg, a.exp, a.expander, a.landing, a.safe, a.demo = reg, exp, expander, landing, safe, d
	level.Info(logger).Log("msg", "starting "+Name, "version", version.Info(), "config", cfg.File, "tuples", len(cfg.Tuples))
	return nil
}
