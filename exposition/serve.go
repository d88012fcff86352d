package exposition

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/onchain-exporter/onchain_exporter/internal/text"
)

// Collector is one collector of /metrics (an API's refresh engine), named
// as collect[] selects it; Collect waits for no upstream call.
type Collector interface {
	Name() string
	Collect(ctx context.Context) (samples []Sample, fresh bool)
}

// Handler serves /metrics: the collectors collect[] selects (all by
// default), gathered in parallel within the scrape timeout, and the
// exporter's own registry.
type Handler struct {
	Collectors func() []Collector // in force, read at every scrape
	// Known are the names collect[] may give (others are a 400).
	Known []string
	// Own is gathered after the collectors, which update some of it.
	Own prometheus.Gatherer
	// DefaultTimeout bounds a scrape that sends no timeout header;
	// TimeoutOffset is kept free of the one it sends.
	DefaultTimeout, TimeoutOffset time.Duration
	Logger                        log.Logger
}

// Each collector's duration and success in a scrape.
var (
	collectorDuration = NewFamily("onchain_exporter_scrape_collector_duration_seconds",
		"Duration of this scrape's collection per collector, in seconds.", dto.MetricType_GAUGE, []string{"collector"})
	collectorSuccess = NewFamily("onchain_exporter_scrape_collector_success",
		"1 when every tuple of the collector was served fresh in this scrape, 0 when some came from a failed or unfinished refresh.", dto.MetricType_GAUGE, []string{"collector"})
)

// ServeHTTP serves one scrape.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	timeout := h.DefaultTimeout
	if v := r.Header.Get("X-Prometheus-Scrape-Timeout-Seconds"); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
			timeout = max(time.Duration(s*float64(time.Second))-h.TimeoutOffset, 100*time.Millisecond)
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	selected, err := h.selected(r.URL.Query()["collect[]"])
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	samples := h.collect(ctx, selected)
	own, err := h.Own.Gather()
	if err != nil {
		level.Error(h.Logger).Log("msg", "gathering the exporter's own metrics", "err", err)
	}
	if err := Write(w, r, samples, own); err != nil {
		level.Debug(h.Logger).Log("msg", "writing the exposition", "err", err)
	}
}

// selected are the collectors in force that names select (none: all).
func (h *Handler) selected(names []string) ([]Collector, error) {
	all := h.Collectors()
	if len(names) == 0 {
		return all, nil
	}
	want := map[string]bool{}
	for _, n := range names {
		if !slices.Contains(h.Known, n) {
			return nil, fmt.Errorf("collect[]=%q: unknown collector (known: %s)", text.Clip(n, 64, "…"), strings.Join(h.Known, ", "))
		}
		want[n] = true
	}
	var out []Collector
	for _, c := range all {
		if want[c.Name()] {
			out = append(out, c)
		}
	}
	return out, nil
}

// collect runs the collectors in parallel within ctx, adding each one's
// duration and success.
func (h *Handler) collect(ctx context.Context, cs []Collector) []Sample {
	results := make([][]Sample, len(cs))
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			samples, fresh := c.Collect(ctx)
			success := 0.0
			if fresh {
				success = 1
			}
			if smp, err := collectorDuration.Sample(time.Since(start).Seconds(), c.Name()); err == nil {
				samples = append(samples, smp)
			}
			if smp, err := collectorSuccess.Sample(success, c.Name()); err == nil {
				samples = append(samples, smp)
			}
			results[i] = samples
		}()
	}
	wg.Wait()
	return slices.Concat(results...)
}
