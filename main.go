// Command onchain_exporter exports on-chain and market data, equity
// price-to-book bands and analyst consensus from paid APIs as Prometheus
// metrics, calling each upstream series about once per new data row.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
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

	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/demo"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

const exporterName = "onchain_exporter"

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	app := kingpin.New(exporterName, "Prometheus exporter for on-chain, equity indicator and analyst consensus APIs.")
	app.UsageWriter(stdout)
	app.ErrorWriter(stderr)
	var (
		configFile     = app.Flag("config.file", "Configuration file.").Default("onchain.yml").String()
		configCheck    = app.Flag("config.check", "Load and validate the configuration without calling upstream (\"all\" and consensus asset names are resolved at start), print OK or the errors, and exit.").Bool()
		demoMode       = app.Flag("demo", "Serve the embedded demo: a fake upstream in process and a config covering every endpoint.").Bool()
		metricsPath    = app.Flag("web.telemetry-path", "Path under which to expose metrics.").Default("/metrics").String()
		timeoutOffset  = app.Flag("scrape.timeout-offset", "Time kept free of the Prometheus scrape timeout for encoding and transfer.").Default("500ms").Duration()
		defaultTimeout = app.Flag("scrape.default-timeout", "Scrape deadline when Prometheus sends no X-Prometheus-Scrape-Timeout-Seconds.").Default("10s").Duration()
		logLevel       = app.Flag("log.level", "Only log messages with the given severity or above: debug, info, warn, error.").Default("info").String()
		logFormat      = app.Flag("log.format", "Output format of log messages: logfmt, json.").Default("logfmt").String()
		storagePath    = app.Flag("storage.path", "Directory where each tuple's last values and schedule, learned publication delays, pauses and listing answers are kept across restarts. Empty keeps nothing.").Default("data/").String()
		webFlags       = kingpinflag.AddFlags(app, ":9799")
	)
	app.Version(version.Print(exporterName))
	app.HelpFlag.Short('h')
	if _, err := app.Parse(args); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", exporterName, err)
		return 2
	}
	if err := oneOf("log.level", *logLevel, "debug", "info", "warn", "error"); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", exporterName, err)
		return 2
	}
	if err := oneOf("log.format", *logFormat, "logfmt", "json"); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", exporterName, err)
		return 2
	}
	logger, slogger := newLoggers(stderr, *logLevel, *logFormat)
	if os.Getenv("GOGC") == "" {
		// Mostly idle between scrapes, the exporter trades a little CPU
		// for a smaller heap (BENCHMARKS.md); GOGC in the environment wins.
		debug.SetGCPercent(50)
	}

	var d *demo.Demo
	parse := func() (*config.Config, error) { return config.Load(*configFile) }
	if *demoMode {
		var err error
		if d, err = demo.Start(logger); err != nil {
			level.Error(logger).Log("msg", "cannot start the demo", "err", err)
			return 1
		}
		defer d.Close()
		parse = func() (*config.Config, error) {
			return config.Parse("demo.yml (embedded)", demo.YAML(d.URL), demo.Getenv)
		}
	}
	cfg, err := parse()
	if *configCheck {
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		fmt.Fprintf(stdout, "OK: %s: %d tuples\n", cfg.File, len(cfg.Tuples))
		return 0
	}
	if err != nil {
		level.Error(logger).Log("msg", "cannot load the configuration", "err", err)
		return 1
	}
	// "all" and consensus asset names are resolved through the upstream
	// here, on every reload and daily; --config.check above stays offline.
	reg := prometheus.NewRegistry()
	// One client per API for the life of the process, shared by
	// expansion and scrapes: its limits hold whoever calls.
	clients := upstream.NewPool(reg, time.Now, logger)
	defer clients.Close()
	// What the last run learned: a restart serves it at once and calls
	// upstream only for what is due.
	store := collector.OpenStore(*storagePath, logger)
	expander := collector.NewExpander(logger, collector.Options{Clients: clients, Store: store})
	load := func() (*config.Config, error) {
		c, err := parse()
		if err != nil {
			return nil, err
		}
		return expander.Expand(context.Background(), c)
	}
	if cfg, err = expander.Expand(context.Background(), cfg); err != nil {
		level.Error(logger).Log("msg", "cannot expand the configuration through the upstream APIs", "err", err)
		return 1
	}

	reg.MustRegister(versioncollector.NewCollector(exporterName), collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	exp, err := collector.New(cfg, logger, reg, collector.Options{DefaultTimeout: *defaultTimeout, TimeoutOffset: *timeoutOffset, Clients: clients, Store: store})
	if err != nil {
		level.Error(logger).Log("msg", "cannot start the collectors", "err", err)
		return 1
	}
	defer exp.Close()
	safe := config.NewSafeConfig(reg, load, exp.ApplyConfig)
	safe.Loaded(cfg)
	level.Info(logger).Log("msg", "starting "+exporterName, "version", version.Info(), "config", cfg.File, "tuples", len(cfg.Tuples))

	mux := http.NewServeMux()
	mux.Handle(*metricsPath, promhttp.InstrumentMetricHandler(reg, exp))
	mux.HandleFunc("/-/healthy", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "Healthy") })
	mux.HandleFunc("/-/ready", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "Ready") })
	reloads := make(chan chan error)
	mux.HandleFunc("/-/reload", reloadHandler(reloads))
	if d != nil {
		mux.Handle("/-/demo/fault", demo.FaultHandler(d.Fake))
	}
	if *metricsPath != "/" {
		landing, err := web.NewLandingPage(landingConfig(*metricsPath, *demoMode))
		if err != nil {
			level.Error(logger).Log("msg", "cannot build the landing page", "err", err)
			return 1
		}
		mux.Handle("/", landing)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go reloadLoop(ctx, logger, safe, reloads)
	go expander.Refresh(ctx, collector.DiscoveryRefresh, safe.Reload)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := web.ListenAndServe(srv, webFlags, slogger); err != nil && !errors.Is(err, http.ErrServerClosed) {
		level.Error(logger).Log("msg", "cannot serve", "err", err)
		return 1
	}
	return 0
}

// oneOf checks a flag's value against its allowed values.
func oneOf(flag, value string, allowed ...string) error {
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	return fmt.Errorf("--%s: must be one of %s, got %q", flag, strings.Join(allowed, ", "), value)
}

// newLoggers builds the project's go-kit logger and, for libraries that
// take *slog.Logger, a bridge that writes through the same go-kit logger.
func newLoggers(w io.Writer, lvl, format string) (log.Logger, *slog.Logger) {
	base := log.NewLogfmtLogger(log.NewSyncWriter(w))
	if format == "json" {
		base = log.NewJSONLogger(log.NewSyncWriter(w))
	}
	filtered := level.NewFilter(base, level.Allow(level.ParseDefault(lvl, level.InfoValue())))
	logger := log.With(filtered, "ts", log.DefaultTimestampUTC, "caller", log.DefaultCaller)
	var sl slog.Level
	_ = sl.UnmarshalText([]byte(lvl))
	// The bridge adds its own time and caller keys: give it the logger
	// without ours.
	slogger := slog.New(slgk.NewGoKitHandler(filtered, sl))
	return logger, slogger
}
