package config

import (
	"errors"
	"testing"

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
