package config

import (
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// gaugeValue reads one gauge of reg by name.
func gaugeValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && mf.GetType() == dto.MetricType_GAUGE {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no gauge %s", name)
	return 0
}

// Refine puts a derived configuration in force without counting as a
// reload: a failed reload stays visible, and nil changes nothing.
func TestRefineIsNoReload(t *testing.T) {
	first, derived := &Config{File: "first"}, &Config{File: "derived"}
	var applied []*Config
	reg := prometheus.NewRegistry()
	s := NewSafeConfig(reg, func() (*Config, error) { return nil, errors.New("bad file") }, func(c *Config) error {
		applied = append(applied, c)
		return nil
	})
	s.Loaded(first)
	okTime := gaugeValue(t, reg, "onchain_exporter_config_last_reload_success_timestamp_seconds")
	if err := s.Reload(); err == nil {
		t.Fatal("the reload of a bad file succeeded")
	}

	if err := s.Refine(func() (*Config, error) { return nil, nil }); err != nil || len(applied) != 0 || s.Get() != first {
		t.Errorf("derive returning nil: err %v, applied %d, in force %s", err, len(applied), s.Get().File)
	}
	if err := s.Refine(func() (*Config, error) { return nil, errors.New("no fit") }); err == nil || len(applied) != 0 {
		t.Errorf("derive failing: err %v, applied %d", err, len(applied))
	}
	if err := s.Refine(func() (*Config, error) { return derived, nil }); err != nil || len(applied) != 1 || s.Get() != derived {
		t.Errorf("derive succeeding: err %v, applied %d, in force %s", err, len(applied), s.Get().File)
	}
	if ok := gaugeValue(t, reg, "onchain_exporter_config_last_reload_successful"); ok != 0 {
		t.Errorf("reload_successful = %v after a refinement; the failed reload must stay visible", ok)
	}
	if got := gaugeValue(t, reg, "onchain_exporter_config_last_reload_success_timestamp_seconds"); got != okTime {
		t.Errorf("the reload success time moved from %v to %v without a reload", okTime, got)
	}
}

// A reload that takes its time (an expansion calling the upstreams'
// lists) never holds a reader of the configuration in force: Get answers
// the old one at once, and the new one once the reload applied it.
func TestGetDoesNotWaitForAReload(t *testing.T) {
	old, next := &Config{File: "old.yml"}, &Config{File: "new.yml"}
	loading, release := make(chan struct{}), make(chan struct{})
	s := NewSafeConfig(prometheus.NewRegistry(), func() (*Config, error) {
		close(loading)
		<-release
		return next, nil
	}, func(*Config) error { return nil })
	s.Loaded(old)
	done := make(chan error)
	go func() { done <- s.Reload() }()
	<-loading
	got := make(chan *Config)
	go func() { got <- s.Get() }()
	select {
	case c := <-got:
		if c != old {
			t.Errorf("during the reload Get = %s, want the old configuration", c.File)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Get waited for the reload under way")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if c := s.Get(); c != next {
		t.Errorf("after the reload Get = %s, want the new configuration", c.File)
	}
}
