// Command onchain_exporter exports on-chain and market data, equity
// price-to-book bands and analyst consensus from paid APIs as Prometheus
// metrics, calling each upstream series about once per new data row.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/prometheus/exporter-toolkit/web/kingpinflag"
	slgk "github.com/tjhop/slog-gokit"

	"github.com/onchain-exporter/onchain_exporter/cluster"
	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/demo"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/page"
	"github.com/onchain-exporter/onchain_exporter/persist"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

const exporterName = "onchain_exporter"

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fillVersion(debug.ReadBuildInfo())
	app := kingpin.New(exporterName, "Prometheus exporter for on-chain, equity indicator and analyst consensus APIs.")
	app.UsageWriter(stdout)
	app.ErrorWriter(stderr)
	// --help and --version end run() with this code, not the process.
	terminated := -1
	app.Terminate(func(code int) { terminated = code })
	var (
		configFile     = app.Flag("config.file", "Configuration file.").Default("onchain.yml").String()
		configCheck    = app.Flag("config.check", "Load and validate the configuration without calling upstream (\"all\" and consensus asset names are resolved at start), print OK, the findings (paths and parameter names outside the built-in catalog that nearly match one in it, as warnings) and the forecast of upstream calls per day, or the errors, and exit.").Bool()
		checkWithLists = app.Flag("config.check.upstream", "With --config.check (implied): also read each listing endpoint the configuration's APIs have, once (data discovery, /api/indicators and /api/equities, /assets), and the data API key's plan, and check every path, parameter name and value against them, every data tuple against the plan, and show what each path pattern selects and costs.").Bool()
		demoMode       = app.Flag("demo", "Serve the embedded demo: a fake upstream in process and a config covering every endpoint.").Bool()
		metricsPath    = app.Flag("web.telemetry-path", "Path under which to expose metrics.").Default("/metrics").String()
		timeoutOffset  = app.Flag("scrape.timeout-offset", "Time kept free of the Prometheus scrape timeout for encoding and transfer.").Default("500ms").Duration()
		defaultTimeout = app.Flag("scrape.default-timeout", "Scrape deadline when Prometheus sends no X-Prometheus-Scrape-Timeout-Seconds.").Default("10s").Duration()
		logLevel       = app.Flag("log.level", "Only log messages with the given severity or above: debug, info, warn, error.").Default("info").Enum("debug", "info", "warn", "error")
		logFormat      = app.Flag("log.format", "Output format of log messages: logfmt, json.").Default("logfmt").Enum("logfmt", "json")
		storageSet     bool
		storagePath    = app.Flag("storage.path", "Directory where each tuple's last values and schedule, learned publication delays, pauses and listing answers are kept across restarts. Empty keeps nothing; --demo keeps nothing unless this is given.").Default(defaultStoragePath).IsSetByUser(&storageSet).String()
		webFlags       = kingpinflag.AddFlags(app, ":9799")
		clusterCfg     = cluster.AddFlags(app) // --cluster.*: replicas that share their calls
	)
	app.Version(version.Print(exporterName))
	app.HelpFlag.Short('h')
	fake := addFakeCommand(app)         // `onchain_exporter fake`: cmd_fake.go
	backfill := addBackfillCommand(app) // `onchain_exporter backfill`: cmd_backfill.go
	if _, err := app.Parse(args); err != nil {
		fmt.Fprintf(stderr, "%s: %v (try --help)\n", exporterName, err)
		return 2
	}
	if terminated >= 0 {
		return terminated
	}
	if !validMetricsPath(*metricsPath) {
		fmt.Fprintf(stderr, "%s: --web.telemetry-path must be a path starting with /, without spaces, braces, ? or #, and not one of the exporter's own, got %q (try --help)\n", exporterName, *metricsPath)
		return 2
	}
	if err := clusterCfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "%s: %v (try --help)\n", exporterName, err)
		return 2
	}
	if backfill.chosen {
		return backfill.run(globalFlags{configFile: *configFile, storagePath: *storagePath, logLevel: *logLevel, logFormat: *logFormat, demo: *demoMode}, stdout, stderr)
	}
	logger, slogger := newLoggers(stderr, *logLevel, *logFormat)
	if fake.chosen {
		return fake.run(logger, stdout)
	}
	if os.Getenv("GOGC") == "" {
		// Mostly idle between scrapes, the exporter trades a little CPU
		// for a smaller heap (BENCHMARKS.md); GOGC in the environment wins.
		debug.SetGCPercent(50)
	}
	// Set on a clean shutdown; logged after every deferred close.
	stopped := false
	defer func() {
		if stopped {
			level.Info(logger).Log("msg", "stopped")
		}
	}()

	f := &flags{configFile: *configFile, configCheck: *configCheck, checkWithLists: *checkWithLists, demoMode: *demoMode,
		metricsPath: *metricsPath, timeoutOffset: *timeoutOffset, defaultTimeout: *defaultTimeout,
		storageSet: storageSet, storagePath: *storagePath, cluster: clusterCfg}
	s, code := setUp(f, logger, stdout, stderr)
	defer s.close()
	if code >= 0 {
		return code
	}
	s.metricsPath = *metricsPath
	if code = serve(s, webFlags, slogger); code == 0 {
		stopped = true
	}
	return code
}

// flags are the exporter's own flags, as setUp reads them.
type flags struct {
	configFile                            string
	configCheck, checkWithLists, demoMode bool
	metricsPath                           string
	timeoutOffset, defaultTimeout         time.Duration
	storageSet                            bool
	storagePath                           string
	cluster                               *cluster.Config
}

// setup is what setUp started, for serve, and what closes it.
type setup struct {
	logger      log.Logger
	reg         *prometheus.Registry
	exp         *collector.Exporter
	expander    *expand.Expander
	landing     *landingPage
	safe        *config.SafeConfig
	demo        *demo.Demo
	metricsPath string
	closers     []func()
}

// onClose has close run fn, after whatever was registered later.
func (s *setup) onClose(fn func()) { s.closers = append(s.closers, fn) }

// close closes what setUp started, last started first.
func (s *setup) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

// setUp builds what the exporter serves from the flags: the configuration
// (expanded through the upstream's lists), the clients, the storage, the
// cluster, the collectors and the operator's page. What it started is
// closed by s.close, last started first closed; a code of -1 says serve,
// any other that run ends with it (a check, or an error logged).
func setUp(f *flags, logger log.Logger, stdout, stderr io.Writer) (s *setup, code int) {
	s = &setup{}
	parse, d, err := configSource(f.configFile, f.demoMode, logger)
	if err != nil {
		level.Error(logger).Log("msg", "cannot start the demo", "err", err)
		return s, 1
	}
	if d != nil {
		s.onClose(d.Close)
	}
	cfg, err := parse()
	hint := ""
	if errors.Is(err, fs.ErrNotExist) && !f.demoMode {
		hint = missingConfigHint(f.configFile)
	}
	if f.configCheck || f.checkWithLists {
		return s, checkConfig(stdout, stderr, cfg, err, hint, f.checkWithLists, logger, f.storagePath) // check.go
	}
	if err != nil {
		kv := []any{"msg", "cannot load the configuration", "err", err}
		if hint != "" {
			kv = append(kv, "hint", hint)
		}
		level.Error(logger).Log(kv...)
		return s, 1
	}
	// "all" and consensus asset names are resolved through the upstream
	// here, on every reload and daily; --config.check above stays offline.
	// An upstream that is down or slow fails nothing: what needs no list
	// is served at once, the rest waits for the expander's retries. Only
	// an error of the file is fatal.
	reg := prometheus.NewRegistry()
	// One client per API for the life of the process, shared by
	// expansion and scrapes: its limits hold whoever calls.
	clients := upstream.NewPool(reg, time.Now, logger)
	s.onClose(clients.Close)
	// What the last run learned: a restart serves it at once and calls
	// upstream only for what is due.
	if f.demoMode && !f.storageSet {
		// The demo's upstream is new at every start (a new address):
		// nothing kept would apply.
		f.storagePath = ""
	}
	f.storagePath = resolveStoragePath(f.storagePath, f.storageSet, logger) // storagedir.go: data/ of earlier versions
	store, err := persist.Open(f.storagePath, cfg, logger)
	if err != nil {
		level.Error(logger).Log("msg", "cannot use the storage directory", "err", err)
		return s, 1
	}
	s.onClose(func() { store.Close() }) // after the collectors' last save (registered later, run earlier)
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
	expander := expand.New(logger, expand.Options{Clients: clients, Store: store})
	var exp *collector.Exporter
	plans := page.NewPlanHistory() // for the operator's page (landing.go)
	expander.OnPlanChanged(func(api string) {
		if c := clients.Current(api); c != nil {
			plans.Note(api, c.Plan(), time.Now())
		}
		if exp != nil {
			exp.PlanChanged(api)
		}
	})
	// The digest the cluster compares is the file's, before its lists
	// expand it (clusterconfig.go); a reload's, once it loaded.
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
		return s, 1
	}

	reg.MustRegister(versioncollector.NewCollector(exporterName), collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), expander)
	// Cluster mode (off without --cluster.listen-address: peer is nil, a
	// cluster of one): replicas share their upstream calls and each serves
	// every series.
	if f.storagePath != "" {
		// A member restarted with its storage keeps its name, so that
		// the others do not count its calls of the day twice.
		f.cluster.NameFile = filepath.Join(f.storagePath, "cluster-member-name")
	}
	peer, err := cluster.Create(*f.cluster, log.With(logger, "component", "cluster"), reg)
	if err != nil {
		level.Error(logger).Log("msg", "cannot start the cluster", "err", err)
		return s, 1
	}
	sharePlans(peer, expander)
	inCluster(peer, clients, logger)
	runs(peer, fileDigest)
	exp, err = collector.New(cfg, logger, reg, collector.Options{DefaultTimeout: f.defaultTimeout, TimeoutOffset: f.timeoutOffset, Clients: clients, Store: keeper, Peer: peer})
	if err != nil {
		level.Error(logger).Log("msg", "cannot start the collectors", "err", err)
		return s, 1
	}
	s.onClose(exp.Close)
	if peer != nil {
		// Leave after the collectors close (registered later, run
		// earlier): the others take this member's units at once.
		s.onClose(func() {
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
	landing := newLanding(f.metricsPath, f.demoMode, exp, peer, expander, clients, plans)
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
	s.logger, s.reg, s.exp, s.expander, s.landing, s.safe, s.demo = logger, reg, exp, expander, landing, safe, d
	level.Info(logger).Log("msg", "starting "+exporterName, "version", version.Info(), "config", cfg.File, "tuples", len(cfg.Tuples))

	return s, -1
}

// serve answers /metrics, the page, reloads and signals until shutdown.
// Reloads and background expansion end before it returns, so that none
// lands after the collectors' last save (setup.close).
func serve(s *setup, webFlags *web.FlagConfig, slogger *slog.Logger) int {
	logger := s.logger
	ctx, cancel := context.WithCancel(context.Background()) // cancelled at shutdown
	defer cancel()
	mux := http.NewServeMux()
	mux.Handle(s.metricsPath, promhttp.InstrumentMetricHandler(s.reg, s.exp))
	mux.HandleFunc("/-/healthy", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "Healthy") })
	mux.HandleFunc("/-/ready", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "Ready") })
	reloads := make(chan chan error)
	mux.HandleFunc("/-/reload", reloadHandler(reloads, ctx.Done()))
	if s.demo != nil {
		mux.Handle("/-/demo/fault", demo.FaultHandler(s.demo.Fake))
	}
	if s.metricsPath != "/" {
		mux.Handle("/", s.landing)
	}

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)
	// Reloads and background expansion end before the collectors close
	// (deferred above), so that none lands after the final save.
	var background sync.WaitGroup
	background.Add(2)
	go func() { defer background.Done(); reloadLoop(ctx, logger, s.safe, reloads) }()
	go func() { defer background.Done(); s.expander.Maintain(ctx, expand.Refresh, s.safe.Refine) }()
	defer func() { cancel(); background.Wait() }()
	// The server's own messages (a TLS handshake refused, say) go through
	// the project's logger too: one time key, one format.
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(slogger.Handler(), slog.LevelWarn)}
	shutdownDone := make(chan struct{})
	go func() {
		defer close(shutdownDone)
		select {
		case s := <-signals:
			level.Info(logger).Log("msg", "shutting down", "signal", s)
		case <-ctx.Done():
			return
		}
		cancel()
		shutdown, cancelShutdown := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancelShutdown()
		if err := srv.Shutdown(shutdown); err != nil {
			level.Warn(logger).Log("msg", "requests still running at shutdown were cut off", "err", err)
		}
	}()
	if err := web.ListenAndServe(srv, webFlags, slogger); err != nil && !errors.Is(err, http.ErrServerClosed) {
		level.Error(logger).Log("msg", "cannot serve", "err", err)
		return 1
	}
	// Shutdown, when a signal started it, returns once the requests in
	// flight are answered.
	cancel()
	<-shutdownDone
	return 0
}

// validMetricsPath says whether the path can be served beside the
// exporter's own paths and linked: http.ServeMux panics on a pattern it
// cannot parse or that another one takes, so a scratch mux is asked.
func validMetricsPath(p string) (ok bool) {
	if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, " \t\r\n?#") {
		return false
	}
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	mux := http.NewServeMux()
	for _, own := range []string{"/-/healthy", "/-/ready", "/-/reload", "/-/demo/fault", p} {
		mux.Handle(own, http.NotFoundHandler())
	}
	return true
}

// configSource is where the configuration is read from: the file, or with
// --demo the embedded demo against a fake upstream started here (the
// caller closes it).
func configSource(file string, demoMode bool, logger log.Logger) (func() (*config.Config, error), *demo.Demo, error) {
	if !demoMode {
		return func() (*config.Config, error) { return config.Load(file) }, nil, nil
	}
	d, err := demo.Start(logger)
	if err != nil {
		return nil, nil, err
	}
	return func() (*config.Config, error) {
		return config.Parse("demo.yml (embedded)", demo.YAML(d.URL), demo.Getenv)
	}, d, nil
}

// missingConfigHint says what to do when the configuration file does not
// exist, as it does not on a first run.
func missingConfigHint(file string) string {
	return fmt.Sprintf("no configuration file: to try the exporter without a real upstream, run it with --demo; "+
		"to configure it, copy examples/config.yml to %s, set ONCHAIN_DATA_TOKEN and edit its metrics", file)
}

// newLoggers builds the project's go-kit logger and, for libraries that
// take *slog.Logger, a bridge that writes through the same go-kit logger.
func newLoggers(w io.Writer, lvl, format string) (log.Logger, *slog.Logger) {
	base := log.NewLogfmtLogger(log.NewSyncWriter(w))
	if format == "json" {
		base = log.NewJSONLogger(log.NewSyncWriter(w))
	}
	filtered := level.NewFilter(base, level.Allow(level.ParseDefault(lvl, level.InfoValue())))
	stamped := log.With(filtered, "ts", log.DefaultTimestampUTC)
	logger := log.With(stamped, "caller", log.DefaultCaller)
	var sl slog.Level
	_ = sl.UnmarshalText([]byte(lvl))
	// The bridge adds its own caller key, and the record's time as "time":
	// give it the logger with our ts but without our caller, and records
	// without a time, so that every line has one time key, ts.
	slogger := slog.New(untimed{slgk.NewGoKitHandler(stamped, sl)})
	return logger, slogger
}

// untimed passes slog records on without their time.
type untimed struct{ slog.Handler }

func (h untimed) Handle(ctx context.Context, r slog.Record) error {
	r.Time = time.Time{}
	return h.Handler.Handle(ctx, r)
}

func (h untimed) WithAttrs(attrs []slog.Attr) slog.Handler {
	return untimed{h.Handler.WithAttrs(attrs)}
}

func (h untimed) WithGroup(name string) slog.Handler { return untimed{h.Handler.WithGroup(name)} }
