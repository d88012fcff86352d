package config

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// SafeConfig holds the configuration in force and swaps it on reload. A
// file that fails to load leaves the old configuration in force. SIGHUP and
// POST /-/reload both go through Reload.
type SafeConfig struct {
	mu     sync.Mutex
	c      *Config
	load   func() (*Config, error)
	apply  func(*Config) error
	ok     prometheus.Gauge
	okTime prometheus.Gauge
}

// NewSafeConfig registers the reload metrics; load reads the file, apply
// puts a loaded configuration in force.
func NewSafeConfig(reg prometheus.Registerer, load func() (*Config, error), apply func(*Config) error) *SafeConfig {
	s := &SafeConfig{
		load:  load,
		apply: apply,
		ok: prometheus.NewGauge(prometheus.GaugeOpts{Name: "onchain_exporter_config_last_reload_successful",
			Help: "1 when the last configuration load succeeded, else 0."}),
		okTime: prometheus.NewGauge(prometheus.GaugeOpts{Name: "onchain_exporter_config_last_reload_success_timestamp_seconds",
			Help: "When the configuration was last loaded successfully, as a Unix time."}),
	}
	reg.MustRegister(s.ok, s.okTime)
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
	s.c = c
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
	s.c = c
	s.ok.Set(1)
	s.okTime.Set(float64(time.Now().UnixNano()) / 1e9)
}

// Get returns the configuration in force.
func (s *SafeConfig) Get() *Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.c
}
