package config

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// SafeConfig holds the configuration in force and swaps it on reload
// (SIGHUP and POST /-/reload both call Reload); a file that fails to load
// leaves the old one in force. It owns the reload's metrics and those of
// the findings in force. A reload or a refinement holds mu while it loads,
// expands (which may call the upstreams' lists) and applies, so that a
// refinement never undoes a reload; Get takes no lock: a scrape or a page
// never waits for a reload.
type SafeConfig struct {
	mu       sync.Mutex // one change at a time
	c        atomic.Pointer[Config]
	load     func() (*Config, error)
	apply    func(*Config) error
	ok       prometheus.Gauge
	okTime   prometheus.Gauge
	findings *prometheus.GaugeVec
}

// NewSafeConfig registers the reload metrics; load reads the file, apply
// puts a loaded configuration in force.
func NewSafeConfig(reg prometheus.Registerer, load func() (*Config, error), apply func(*Config) error) *SafeConfig {
	s := &SafeConfig{
		load:  load,
		apply: apply,
		ok: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "config_last_reload_successful",
			Help: "1 when the last configuration load succeeded, else 0."}),
		okTime: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "config_last_reload_success_timestamp_seconds",
			Help: "When the configuration was last loaded successfully, as a Unix time."}),
		findings: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "config_findings",
			Help: "Findings of the configuration in force, by kind: paths and parameter names outside the built-in catalog that nearly match one in it, probably typos, asked for as written (the landing page lists them)."},
			[]string{"kind"}),
	}
	for _, k := range FindingKinds {
		s.findings.WithLabelValues(k).Set(0)
	}
	reg.MustRegister(s.ok, s.okTime, s.findings)
	return s
}

// Reload loads and applies the configuration; on error the old one stays.
func (s *SafeConfig) Reload() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.load()
	if err == nil {
		err = s.apply(c)
	}
	if err != nil {
		s.ok.Set(0)
		return err
	}
	s.setLocked(c)
	return nil
}

// Refine puts in force what derive makes of the configuration last
// loaded (a background expansion completing or refreshing it), under the
// lock of Reload so that it never undoes a reload. derive returning nil
// changes nothing. The reload metrics stay: the file was not read again.
func (s *SafeConfig) Refine(derive func() (*Config, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := derive()
	if err != nil || c == nil {
		return err
	}
	if err := s.apply(c); err != nil {
		return err
	}
	s.inForce(c)
	return nil
}

// Loaded records a configuration put in force without Reload (the first
// one, at start).
func (s *SafeConfig) Loaded(c *Config) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setLocked(c)
}

func (s *SafeConfig) setLocked(c *Config) {
	s.inForce(c)
	s.ok.Set(1)
	s.okTime.Set(float64(time.Now().UnixNano()) / 1e9)
}

// Get returns the configuration in force, without waiting for a change
// under way.
func (s *SafeConfig) Get() *Config { return s.c.Load() }

// inForce records c as the configuration in force, and counts its
// findings.
func (s *SafeConfig) inForce(c *Config) {
	s.c.Store(c)
	n := map[string]int{}
	for _, f := range c.Findings() {
		n[f.Kind]++
	}
	for _, k := range FindingKinds {
		s.findings.WithLabelValues(k).Set(float64(n[k]))
	}
}
