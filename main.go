// Command onchain_exporter exports on-chain and market data, equity
// price-to-book bands and analyst consensus from paid APIs as Prometheus
// metrics, calling each upstream series about once per new data row.
//
// This file is the command line: the flags, the logger, the signals and
// the dispatch to the subcommands. The process is package app,
// --config.check package check, `backfill` package backfill's Command and
// `fake` package demo's.
package main

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/alecthomas/kingpin/v2"
	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web/kingpinflag"

	"github.com/onchain-exporter/onchain_exporter/app"
	"github.com/onchain-exporter/onchain_exporter/backfill"
	"github.com/onchain-exporter/onchain_exporter/check"
	"github.com/onchain-exporter/onchain_exporter/cluster"
	"github.com/onchain-exporter/onchain_exporter/demo"
)

// sourceVersion is the VERSION file: the one place the version is
// written. A release is tagged v<VERSION> (the release workflow and a
// test check it), and goreleaser sets the version from that tag.
//
//go:embed VERSION
var sourceVersion string

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	bi, ok := debug.ReadBuildInfo()
	app.FillVersion(sourceVersion, bi, ok)
	a := kingpin.New(app.Name, "Prometheus exporter for on-chain, equity indicator and analyst consensus APIs.")
	a.UsageWriter(stdout)
	a.ErrorWriter(stderr)
	// --help and --version end run() with this code, not the process.
	terminated := -1
	a.Terminate(func(code int) { terminated = code })
	// The flags in the order --help lists them.
	o := app.DefaultOptions()
	a.Flag("config.file", "Configuration file.").Default(o.ConfigFile).StringVar(&o.ConfigFile)
	configCheck := a.Flag("config.check", "Load and validate the configuration without calling upstream (\"all\" and consensus asset names are resolved at start), print OK, the findings (paths and parameter names outside the built-in catalog that nearly match one in it, as warnings) and the forecast of upstream calls per day, or the errors, and exit.").Bool()
	checkWithLists := a.Flag("config.check.upstream", "With --config.check (implied): also read each listing endpoint the configuration's APIs have, once (data discovery, /api/indicators and /api/equities, /assets), and the data API key's plan, and check every path, parameter name and value against them, every data tuple against the plan, and show what each path pattern selects and costs.").Bool()
	a.Flag("demo", "Serve the embedded demo: a fake upstream in process and a config covering every endpoint.").BoolVar(&o.Demo)
	a.Flag("web.telemetry-path", "Path under which to expose metrics.").Default(o.MetricsPath).StringVar(&o.MetricsPath)
	a.Flag("scrape.timeout-offset", "Time kept free of the Prometheus scrape timeout for encoding and transfer.").Default("500ms").DurationVar(&o.TimeoutOffset)
	a.Flag("scrape.default-timeout", "Scrape deadline when Prometheus sends no X-Prometheus-Scrape-Timeout-Seconds.").Default("10s").DurationVar(&o.DefaultTimeout)
	logLevel := a.Flag("log.level", "Only log messages with the given severity or above: debug, info, warn, error.").Default("info").Enum("debug", "info", "warn", "error")
	logFormat := a.Flag("log.format", "Output format of log messages: logfmt, json.").Default("logfmt").Enum("logfmt", "json")
	a.Flag("storage.path", "Directory where each tuple's last values and schedule, learned publication delays, pauses and listing answers are kept across restarts. Empty keeps nothing; --demo keeps nothing unless this is given.").Default(app.DefaultStoragePath).IsSetByUser(&o.StorageSet).StringVar(&o.StoragePath)
	o.Web = kingpinflag.AddFlags(a, app.DefaultListenAddress)
	o.Cluster = cluster.AddFlags(a) // --cluster.*: replicas that share their calls
	a.Version(version.Print(app.Name))
	a.HelpFlag.Short('h')
	a.Command("exporter", "Run the exporter (the default command: the flags above are its own).").Default()
	fake := demo.AddCommand(a)
	bf := backfill.AddCommand(a)
	if _, err := a.Parse(args); err != nil {
		fmt.Fprintf(stderr, "%s: %v (try --help)\n", app.Name, err)
		return 2
	}
	if terminated >= 0 {
		return terminated
	}
	if !app.ValidMetricsPath(o.MetricsPath) {
		fmt.Fprintf(stderr, "%s: --web.telemetry-path must be a path starting with /, without spaces, braces, ? or #, and not one of the exporter's own, got %q (try --help)\n", app.Name, o.MetricsPath)
		return 2
	}
	if err := o.Cluster.Validate(); err != nil {
		fmt.Fprintf(stderr, "%s: %v (try --help)\n", app.Name, err)
		return 2
	}
	if bf.Chosen() {
		ctx, stop := interrupted()
		defer stop()
		return bf.Run(ctx, backfill.Globals{ConfigFile: o.ConfigFile, StoragePath: o.StoragePath, Demo: o.Demo,
			NewLogger: func(w io.Writer) log.Logger { l, _ := app.NewLoggers(w, *logLevel, *logFormat); return l }}, stdout, stderr)
	}
	o.Logger, o.Slogger = app.NewLoggers(stderr, *logLevel, *logFormat)
	if fake.Chosen() {
		ctx, stop := interrupted()
		defer stop()
		return fake.Run(ctx, o.Logger, stdout)
	}
	if *configCheck || *checkWithLists {
		return check.Run(stdout, stderr, check.Options{ConfigFile: o.ConfigFile, Demo: o.Demo, Upstream: *checkWithLists,
			StoragePath: o.StoragePath, Logger: o.Logger})
	}
	if os.Getenv("GOGC") == "" {
		// Mostly idle between scrapes, the exporter trades a little CPU
		// for a smaller heap (BENCHMARKS.md); GOGC in the environment wins.
		debug.SetGCPercent(50)
	}
	return serve(o)
}

// interrupted is done at SIGINT or SIGTERM: the subcommands end then.
func interrupted() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// serve runs the exporter until SIGINT or SIGTERM; SIGHUP reloads its
// configuration file.
func serve(o app.Options) int {
	logger := o.Logger
	x, err := app.New(o)
	if err != nil {
		return 1
	}
	// Signals are heard once the exporter is set up, as they were.
	term := make(chan os.Signal, 1)
	signal.Notify(term, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(term)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	if err := x.Start(); err != nil {
		level.Error(logger).Log("msg", "cannot serve", "err", err)
		x.Stop()
		return 1
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-hup:
				_ = x.Reload() // logged by the reload loop
			case <-done:
				return
			}
		}
	}()
	select {
	case s := <-term:
		level.Info(logger).Log("msg", "shutting down", "signal", s)
	case err := <-x.Done():
		level.Error(logger).Log("msg", "cannot serve", "err", err)
		x.Stop()
		return 1
	}
	x.Stop()
	// Logged after everything the exporter started has closed.
	level.Info(logger).Log("msg", "stopped")
	return 0
}
