// Package app is the exporter's process, as a value tests and other
// programs run in process: New sets up what it serves from Options (the
// configuration expanded through the upstream's lists, the clients, the
// storage directory, the cluster, the collectors and the operator's page),
// Start serves it, Reload puts the file in force again and Stop ends it.
// Package main parses the command line into Options, handles the signals
// and runs the subcommands; --config.check is package check's, before any
// App is built.
package app

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync"
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
	landing  *landingPage
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

// New sets up what the exporter serves from o: the configuration
// (expanded through the upstream's lists), the clients, the storage, the
// cluster, the collectors and the operator's page. It logs what went
// wrong and returns ErrSetUp, having closed what it started.
func New(o Options) (*App, error) {
	if o.Logger == nil {
		o.Logger = log.NewNopLogger()
	}
	if o.Slogger == nil {
		o.Slogger = slog.New(slog.DiscardHandler)
	}
	if o.Web == nil {
		o.Web = DefaultOptions().Web
	}
	if o.Clock == nil {
		o.Clock = clock.Real
	}
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
	// "all" and consensus asset names are resolved through the upstream
	// here, on every reload and daily; --config.check stays offline.
	// An upstream that is down or slow fails nothing: what needs no list
	// is served at once, the rest waits for the expander's retries. Only
	// an error of the file is fatal.
	reg := prometheus.NewRegistry()
	// One client per API for the life of the process, shared by
	// expansion and scrapes: its limits hold whoever calls.
	clients := upstream.NewPool(reg, o.Clock.Now, logger)
	a.onClose(clients.Close)
	// What the last run learned: a restart serves it at once and calls
	// upstream only for what is due.
	if o.Demo && !o.StorageSet {
		// The demo's upstream is new at every start (a new address):
		// nothing kept would apply.
		o.StoragePath = ""
	}
	o.StoragePath = resolveStoragePath(o.StoragePath, o.StorageSet, logger) // storagedir.go: data/ of earlier versions
	store, err := persist.Open(o.StoragePath, cfg, logger)
	if err != nil {
		level.Error(logger).Log("msg", "cannot use the storage directory", "err", err)
		return ErrSetUp
	}
	a.onClose(func() { store.Close() }) // after the collectors' last save (registered later, run earlier)
	// A call is counted on disk before it is made: each client the pool
	// puts in force (listing calls of the start, the engines, a reload's
	// new account) reserves its calls in the state directory and takes
	// its saved pauses.
	var keeper collector.Keeper
	if store != nil {
		clients.OnClient(store.Keep)
		keeper = store
	}
	// The data API key's plan is read by the expander, with the lists,
	// and put in force on the API's client; a change of it has the
	// engine ask its held series again.
	expander := expand.New(logger, expand.Options{Clients: clients, Store: store, Now: o.Clock.Now})
	var exp *collector.Exporter
	plans := page.NewPlanHistory() // for the operator's page (landing.go)
	expander.OnPlanChanged(func(api string) {
		if c := clients.Current(api); c != nil {
			plans.Note(api, c.Plan(), o.Clock.Now())
		}
		if exp != nil {
			exp.PlanChanged(api)
		}
	})
	// The digest the cluster compares is the file's, before its lists
	// expand it (cluster.go); a reload's, once it loaded.
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
	// An upstream list that does not fit the file (a delisted asset, an
	// "all" past max_tuples) keeps that API's expanded entries waiting;
	// it never stops the exporter.
	cfg, err = expander.Start(start, cfg)
	cancelStart()
	if err != nil {
		level.Error(logger).Log("msg", "cannot load the configuration", "err", err)
		return ErrSetUp
	}

	reg.MustRegister(versioncollector.NewCollector(Name), collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), expander)
	// Cluster mode (off without a listen address: peer is nil, a cluster
	// of one): replicas share their upstream calls and each serves every
	// series.
	var cc cluster.Config
	if o.Cluster != nil {
		cc = *o.Cluster
	}
	// The cluster's clock is the provider's, as this member's answers
	// measured it.
	cc.Reference = clients.ClockOffset
	if o.StoragePath != "" {
		// A member restarted with its storage keeps its name, so that
		// the others do not count its calls of the day twice.
		cc.NameFile = filepath.Join(o.StoragePath, "cluster-member-name")
	}
	peer, err := cluster.Create(cc, log.With(logger, "component", "cluster"), reg)
	if err != nil {
		level.Error(logger).Log("msg", "cannot start the cluster", "err", err)
		return ErrSetUp
	}
	inCluster(peer, clients, logger)
	runs(peer, fileDigest)
	exp, err = collector.New(cfg, logger, reg, collector.Options{Clock: o.Clock, DefaultTimeout: o.DefaultTimeout, TimeoutOffset: o.TimeoutOffset, Clients: clients, Store: keeper, Peer: peer})
	if err != nil {
		level.Error(logger).Log("msg", "cannot start the collectors", "err", err)
		return ErrSetUp
	}
	a.onClose(exp.Close)
	if c := clients.Current(config.APIData); c != nil && c.Plan() != nil {
		// The series the last run saved as refused by the plan were
		// refused under the plan it read; the plan read now decides:
		// asked again, what it still refuses is held without a call.
		exp.PlanChanged(config.APIData)
	}
	if peer != nil {
		// Leave after the collectors close (registered later, run
		// earlier): the others take this member's units at once.
		a.onClose(func() {
			if err := peer.Leave(5 * time.Second); err != nil {
				level.Warn(logger).Log("msg", "leaving the cluster", "err", err)
			}
		})
		// Joined in the background: /metrics and the probes answer
		// while the others' full state comes, and the engines call
		// nothing meanwhile (Peer.Joining).
		peer.JoinInBackground(context.Background())
		// Settling only logs and sets onchain_exporter_cluster_settled:
		// the rows come by the join's push/pull meanwhile, and scrapes
		// are served from the start.
		go peer.Settle(context.Background())
	}
	// The operator's page (landing.go): the configuration in force, and
	// per API, endpoint and series what the exporter published.
	landing := newLanding(o.MetricsPath, o.Demo, exp, peer, expander, clients, plans, o.Clock.Now)
	landing.Store(cfg)
	apply := func(c *config.Config) error {
		if err := exp.ApplyConfig(c); err != nil {
			return err
		}
		landing.Store(c)
		runs(peer, fileDigest)
		return nil
	}
	safe := config.NewSafeConfig(reg, load, apply)
	safe.Loaded(cfg)
	a.reg, a.exp, a.expander, a.landing, a.safe, a.demo = reg, exp, expander, landing, safe, d
	level.Info(logger).Log("msg", "starting "+Name, "version", version.Info(), "config", cfg.File, "tuples", len(cfg.Tuples))
	return nil
}
