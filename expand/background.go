package expand

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// State is how the expansion of one API's entries stands.
type State struct {
	// OK: the last expansion read (or reused) every list of the API and
	// the configuration took it; LastSuccess is when that last happened.
	OK          bool
	LastSuccess time.Time
	LastError   string // why the last expansion failed; "" when it did not
	Waiting     int    // entries left out until their lists are read
}

// State returns the expansion state of every API with entries to
// expand, by name.
func (x *Expander) State() map[string]State {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := make(map[string]State, len(x.state))
	for api, st := range x.state {
		out[api] = *st
	}
	return out
}

// commit records an expansion that returned a configuration: its source,
// what it produced, and per API whether its lists were read and (blamed)
// the configuration errors that keep its entries out.
func (x *Expander) commit(src, out *config.Config, r *resolution, blamed map[string]error, background bool) {
	now := x.now()
	x.mu.Lock()
	defer func() {
		x.mu.Unlock()
		select {
		case x.changed <- struct{}{}:
		default:
		}
	}()
	x.source, x.digest = src, digest(out)
	next := make(map[string]*State, len(r.needs))
	failing := false
	for api := range r.needs {
		st := &State{}
		if prev := x.state[api]; prev != nil {
			*st = *prev
		}
		st.Waiting = r.waitingIn(api)
		next[api] = st
		if err := blamed[api]; err != nil {
			failing = true
			if x.record(api, st, now, err) {
				level.Error(x.logger).Log("msg", "the configuration does not fit the upstream's lists; its entries stay out until the file is fixed and reloaded",
					"api", api, "entries_waiting", st.Waiting, "err", st.LastError)
			}
			continue
		}
		err := r.listErr(api)
		failing = failing || err != nil
		if x.record(api, st, now, err) {
			level.Warn(x.logger).Log("msg", "expansion through the upstream's lists failed; retrying in the background",
				"api", api, "entries_waiting", st.Waiting, "err", st.LastError)
		}
	}
	x.state = next
	switch {
	case !failing:
		x.failures = 0
	case background || x.failures == 0:
		x.failures++
	}
	x.cutShort = failing && r.ctx.Err() != nil
}

// record sets the outcome of one expansion of an API; true when it failed
// for another reason than last time (worth a log line).
func (x *Expander) record(api string, st *State, now time.Time, err error) bool {
	if err == nil {
		if !st.OK && st.LastError != "" {
			level.Info(x.logger).Log("msg", "expansion through the upstream's lists succeeds again", "api", api)
		}
		st.OK, st.LastSuccess, st.LastError = true, now, ""
		return false
	}
	msg := x.clients.Clean(api, strings.ReplaceAll(err.Error(), "\n", "; "))
	changed := msg != st.LastError
	st.OK, st.LastError = false, msg
	return changed
}

// blame tells which APIs a configuration error concerns, resolving each
// alone; every API when none fails alone.
func (r *resolution) blame(cfg *config.Config, err error) map[string]error {
	blamed := map[string]error{}
	for api := range r.needs {
		alone := &config.Config{File: cfg.File, APIs: map[string]*config.API{api: cfg.APIs[api]}}
		if _, e := alone.Resolve(r.resolve); e != nil {
			blamed[api] = e
		}
	}
	if len(blamed) == 0 {
		for api := range r.needs {
			blamed[api] = err
		}
	}
	return blamed
}

// digest identifies the tuples of a configuration and their labels: two
// expansions of one source with equal digests put the same in force.
func digest(c *config.Config) string {
	h := sha256.New()
	for _, name := range config.APINames {
		if a := c.APIs[name]; a != nil {
			// The plan's limits and the plan itself change it too.
			fmt.Fprintf(h, "%s %v %d\x01", name, a.RateLimit, a.DailyBudget)
			if a.Plan != nil {
				b, _ := json.Marshal(a.Plan)
				h.Write(b)
			}
		}
	}
	for _, t := range c.Tuples {
		h.Write([]byte(t.Key + "\x00" + strings.Join(t.TupleLabelValues, "\x00") + "\x00" + strings.Join(t.LabelValues, "\x00") + "\x01"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Maintain keeps the expansion of the configuration in force complete and
// current until ctx ends: while some API's lists fail it expands again
// after a back-off, and every `every` from fresh lists. Each expansion
// starts from the configuration last loaded (not the file) and goes
// through refine (SafeConfig.Refine, under the reload lock, so that a
// retry never undoes a reload), which puts it in force unless derive
// returns nil.
func (x *Expander) Maintain(ctx context.Context, every time.Duration, refine func(derive func() (*config.Config, error)) error) {
	refreshAt := time.Now().Add(every)
	wait := x.plan(refreshAt)
	for {
		timer := time.NewTimer(wait)
		needed := false
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-x.changed: // an expansion (a reload's, or this loop's) changed the plan
		case <-x.clients.Refusals(): // the key's plan may have changed
			needed = x.planAgain(ctx) // patterns expand by the plan
		case <-timer.C:
			x.mu.Lock()
			retry := x.failures > 0
			needed = x.source != nil && len(x.state) > 0
			x.mu.Unlock()
			if !retry {
				x.cache.renew() // a refresh asks for fresh lists
				refreshAt = time.Now().Add(every)
			}
		}
		timer.Stop()
		if needed {
			err := refine(func() (*config.Config, error) { return x.reexpand(ctx) })
			if err != nil && ctx.Err() == nil { // only the file can be wrong
				level.Error(x.logger).Log("msg", "background expansion not put in force", "err", err)
			}
		}
		wait = x.plan(refreshAt)
	}
}

// reexpand expands the configuration last loaded again; nil when that
// puts in force what already is.
func (x *Expander) reexpand(ctx context.Context) (*config.Config, error) {
	x.mu.Lock()
	src, before := x.source, x.digest
	x.mu.Unlock()
	if src == nil {
		return nil, nil
	}
	out, err := x.expand(ctx, src, true)
	if err != nil || digest(out) == before || ctx.Err() != nil { // stopping: calls were cut, not failed
		return nil, err
	}
	return out, nil
}

// plan returns how long Maintain waits for its next expansion: a back-off
// while lists fail (none after one cut short by its budget: they may only
// be slow), else the time left to the refresh.
func (x *Expander) plan(refreshAt time.Time) time.Duration {
	x.mu.Lock()
	defer x.mu.Unlock()
	switch {
	case x.failures > 0 && x.cutShort:
		return 0
	case x.failures > 0:
		return x.backoff(x.failures)
	}
	return max(time.Until(refreshAt), 0)
}

// backoff is the wait before retry n (from 1): retryMin doubling up to
// retryMax, drawn between half and all of it so that replicas do not
// call in step.
func (x *Expander) backoff(n int) time.Duration {
	d := x.retryMax
	if n <= 16 {
		d = min(x.retryMin<<(n-1), x.retryMax)
	}
	return d/2 + rand.N(d/2+1)
}

const namespace = config.Namespace

var (
	expansionSuccessDesc = prometheus.NewDesc(namespace+"_expansion_success",
		"1 when the last expansion of the API's entries read every listing endpoint they need (all, consensus assets), else 0.",
		[]string{"api"}, nil)
	expansionLastSuccessDesc = prometheus.NewDesc(namespace+"_expansion_last_success_timestamp_seconds",
		"When the API's entries were last expanded from its listing endpoints, as a Unix time.", []string{"api"}, nil)
	expansionWaitingDesc = prometheus.NewDesc(namespace+"_expansion_entries_waiting",
		"Entries left out of the configuration in force: their listing endpoint has not answered yet, or its answer shows them wrong.", []string{"api"}, nil)
)

// Describe and Collect make the Expander the collector of its own state.
func (x *Expander) Describe(ch chan<- *prometheus.Desc) {
	ch <- expansionSuccessDesc
	ch <- expansionLastSuccessDesc
	ch <- expansionWaitingDesc
	ch <- patternTuplesDesc
	ch <- patternCutDesc
}

func (x *Expander) Collect(ch chan<- prometheus.Metric) {
	for api, st := range x.State() {
		ok := 0.0
		if st.OK {
			ok = 1
		}
		ch <- prometheus.MustNewConstMetric(expansionSuccessDesc, prometheus.GaugeValue, ok, api)
		if !st.LastSuccess.IsZero() {
			ch <- prometheus.MustNewConstMetric(expansionLastSuccessDesc, prometheus.GaugeValue, float64(st.LastSuccess.UnixNano())/1e9, api)
		}
		ch <- prometheus.MustNewConstMetric(expansionWaitingDesc, prometheus.GaugeValue, float64(st.Waiting), api)
	}
	x.collectPatterns(ch)
}
