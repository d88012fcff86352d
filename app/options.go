package app

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/onchain-exporter/onchain_exporter/cluster"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/internal/clock"
)

// Name is the exporter's name, as its version line and build_info say it.
const Name = config.Namespace

// Options are the flags the exporter is run with, as package main parses
// them.
type Options struct {
	// ConfigFile is the configuration file (--config.file).
	ConfigFile string
	// Demo serves the embedded demo's fake upstream and configuration
	// (--demo).
	Demo bool
	// MetricsPath is where the metrics are served (--web.telemetry-path);
	// ValidMetricsPath says which paths can be.
	MetricsPath string
	// TimeoutOffset is kept free of the Prometheus scrape timeout for
	// encoding and transfer; DefaultTimeout is the scrape deadline when
	// Prometheus sends none (--scrape.*).
	TimeoutOffset, DefaultTimeout time.Duration
	// StoragePath is the directory of what survives a restart, "" for
	// none (--storage.path); StorageSet says the user gave it.
	StoragePath string
	StorageSet  bool
	// Web is exporter-toolkit's --web.* flags.
	Web *web.FlagConfig
	// Cluster is the cluster mode (--cluster.*); nil or without a listen
	// address, the exporter runs alone.
	Cluster *cluster.Config
	// Logger is the exporter's logger; Slogger the same for the libraries
	// that take a *slog.Logger (NewLoggers builds both).
	Logger  log.Logger
	Slogger *slog.Logger
	// Clock is the time the exporter plans, counts and learns on (nil:
	// the real one); tests move a simulated one and call App.Settle. A
	// cluster's gossip and probes keep the real one.
	Clock clock.Clock
}

// DefaultStoragePath is --storage.path's default, named for the exporter:
// data/, the earlier default, is Prometheus' and Alertmanager's too.
const DefaultStoragePath = "onchain_exporter_data/"

// DefaultListenAddress is --web.listen-address's default.
const DefaultListenAddress = ":9799"

// DefaultOptions are the flags' defaults, alone, logging nothing.
func DefaultOptions() Options {
	addrs, systemd, webConfig := []string{DefaultListenAddress}, false, ""
	return Options{ConfigFile: "onchain.yml", MetricsPath: "/metrics", TimeoutOffset: 500 * time.Millisecond,
		DefaultTimeout: 10 * time.Second, StoragePath: DefaultStoragePath,
		Web: &web.FlagConfig{WebListenAddresses: &addrs, WebSystemdSocket: &systemd, WebConfigFile: &webConfig}}
}

// ValidMetricsPath says whether the path can be served beside the
// exporter's own paths: a scratch http.ServeMux panics on one it cannot.
func ValidMetricsPath(p string) (ok bool) {
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
