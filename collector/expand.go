package collector

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// Listing endpoints read by expansion, and how long an answer is reused.
const (
	dataDiscoveryV1 = "/v1/discovery/endpoints"
	dataDiscoveryV2 = "/v2/discovery/endpoints"
	indicatorList   = "/api/equities"
	consensusAssets = "/assets"

	// listReuse absorbs repeated loads (reloads come in bursts) without
	// calling the lists again.
	listReuse = time.Hour
	// DiscoveryRefresh is how often a configuration that depends on
	// upstream lists is loaded again, to pick up new assets, exchanges,
	// tokens and equities.
	DiscoveryRefresh = 24 * time.Hour
)

// Expander resolves what a configuration leaves to the upstream APIs:
// "all" on a data-API parameter (through the v1 and v2 discovery
// endpoints), equity: all of the Indicator API (/api/equities), and
// Analyst Consensus asset names and tickers (/assets), which become the
// canonical key so that "Bitcoin" and "btc" are one series. Its calls take
// the API's one client (upstream.Pool) like every other call. An answer is reused for listReuse,
// and the last good one stands in when a later call fails.
type Expander struct {
	logger  log.Logger
	now     func() time.Time
	clients *upstream.Pool
	store   *Store // keeps listing answers across restarts

	mu      sync.Mutex
	cache   map[string]cachedList
	gen     int  // bumped by Refresh: answers of older generations are fetched again
	refresh bool // the last configuration expanded depends on lists
	// logged holds what each parameter last resolved to: the same result
	// again (on a reload) is logged at debug only.
	logged map[string]string
}

type cachedList struct {
	rows []map[string]any
	at   time.Time
	gen  int
}

// NewExpander returns an Expander; opts supplies the clock and the
// clients it shares with the Exporter.
func NewExpander(logger log.Logger, opts ...Options) *Expander {
	x := &Expander{logger: logger, now: time.Now, cache: map[string]cachedList{}, logged: map[string]string{}}
	if len(opts) > 0 {
		if opts[0].Now != nil {
			x.now = opts[0].Now
		}
		x.clients, x.store = opts[0].Clients, opts[0].Store
	}
	if x.clients == nil {
		x.clients = upstream.NewPool(prometheus.NewRegistry(), x.now, logger)
	}
	return x
}

// expandable says whether a parameter is resolved through upstream.
func expandable(api string, p config.Param) bool {
	return p.HasAll() || (api == config.APIConsensus && p.Name == "asset")
}

// Expand returns cfg with every "all" replaced by the upstream's list and
// consensus assets by their canonical key, tuples rebuilt and max_tuples
// checked again; cfg itself when there is nothing to resolve. Errors name
// file, line and parameter.
func (x *Expander) Expand(ctx context.Context, cfg *config.Config) (*config.Config, error) {
	needed := false
	for _, a := range cfg.APIs {
		for _, e := range a.Metrics {
			for _, p := range e.Params {
				needed = needed || expandable(a.Name, p)
			}
		}
	}
	x.mu.Lock()
	x.refresh = needed
	x.mu.Unlock()
	if !needed {
		return cfg, nil
	}
	r := &resolution{x: x, ctx: ctx, lists: map[string][]map[string]any{}}
	out, err := cfg.Resolve(r.resolve)
	if err != nil {
		return nil, err
	}
	for _, name := range config.APINames {
		if a := out.APIs[name]; a != nil && r.touched[name] {
			level.Info(x.logger).Log("msg", "configuration expanded through the upstream's lists", "api", name, "tuples", len(a.Tuples), "max_tuples", a.MaxTuples)
		}
	}
	return out, nil
}

// Refresh loads the configuration again every interval while the one last
// expanded depends on upstream lists, asking for fresh lists. A failed
// refresh leaves the configuration in force, as any failed reload does.
func (x *Expander) Refresh(ctx context.Context, every time.Duration, reload func() error) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		x.mu.Lock()
		needed := x.refresh
		if needed {
			x.gen++
		}
		x.mu.Unlock()
		if !needed {
			continue
		}
		if err := reload(); err != nil {
			level.Warn(x.logger).Log("msg", "refresh of the upstream's lists failed; the configuration in force stays", "err", err)
			continue
		}
		level.Info(x.logger).Log("msg", "configuration refreshed from the upstream's lists")
	}
}

// resolution is one Expand: one upstream per API, each list read once.
type resolution struct {
	x       *Expander
	ctx     context.Context
	lists   map[string][]map[string]any
	touched map[string]bool
}

func (r *resolution) resolve(a *config.API, e *config.Entry, p config.Param) ([]string, error) {
	if !expandable(a.Name, p) {
		return p.Values, nil
	}
	var found []string
	var err error
	switch {
	case a.Name == config.APIData:
		found, err = r.dataValues(a, e, p)
	case a.Name == config.APIIndicator && p.Name == "equity":
		found, err = r.equities(a)
	case a.Name == config.APIConsensus && p.Name == "asset":
		return r.assets(a, e, p)
	default:
		return nil, fmt.Errorf("%q cannot be expanded: the %s API lists values for %s only", config.All, a.Name, map[string]string{
			config.APIIndicator: "equity", config.APIConsensus: "asset"}[a.Name])
	}
	if err != nil {
		return nil, fmt.Errorf("cannot expand %q: %w", config.All, err)
	}
	var out []string
	for _, v := range p.Values {
		if v == config.All {
			out = append(out, found...)
		} else {
			out = append(out, v)
		}
	}
	r.logExpanded(a, e, p, out)
	return out, nil
}

func (r *resolution) logExpanded(a *config.API, e *config.Entry, p config.Param, values []string) {
	key, joined := a.Name+" "+e.Key+"."+p.Name, strings.Join(values, ",")
	r.x.mu.Lock()
	same := r.x.logged[key] == joined
	r.x.logged[key] = joined
	r.x.mu.Unlock()
	l := level.Debug(r.x.logger)
	if !same {
		l = level.Info(r.x.logger)
		if r.touched == nil {
			r.touched = map[string]bool{}
		}
		r.touched[a.Name] = true
	}
	shown := values
	if len(shown) > 20 {
		shown = append(shown[:20:20], "...")
	}
	l.Log("msg", "parameter resolved through the upstream", "api", a.Name, "entry", e.Key,
		"param", p.Name, "listed", strings.Join(p.Values, ","), "count", len(values), "values", strings.Join(shown, ","))
}

// list reads the rows of a listing endpoint: reused while recent, fetched
// through the API's upstream otherwise, the last good answer when that
// fails.
func (r *resolution) list(a *config.API, path string, keyed bool) ([]map[string]any, error) {
	key := a.Name + " " + a.URL.String() + path
	if rows, ok := r.lists[key]; ok {
		return rows, nil
	}
	x := r.x
	x.mu.Lock()
	c, cached := x.cache[key]
	if !cached {
		if rows, at, ok := x.store.recallList(a, path); ok {
			c, cached = cachedList{rows: rows, at: at, gen: x.gen}, true
			x.cache[key] = c
		}
	}
	fresh := cached && c.gen == x.gen && x.now().Sub(c.at) < listReuse
	gen := x.gen
	x.mu.Unlock()
	if fresh {
		r.lists[key] = c.rows
		return c.rows, nil
	}
	rows, err := r.fetch(a, path, keyed)
	if err != nil {
		if !cached {
			return nil, err
		}
		level.Warn(x.logger).Log("msg", "listing endpoint failed; using its last good answer", "api", a.Name, "path", path,
			"age", x.now().Sub(c.at).Round(time.Second), "err", err)
		rows = c.rows
	} else {
		x.mu.Lock()
		x.cache[key] = cachedList{rows: rows, at: x.now(), gen: gen}
		x.mu.Unlock()
		x.store.rememberList(a, path, rows, x.now())
	}
	r.lists[key] = rows
	return rows, nil
}

func (r *resolution) fetch(a *config.API, path string, keyed bool) ([]map[string]any, error) {
	c := r.x.clients.Client(a)
	r.x.store.restorePauses(c)
	return c.List(r.ctx, path, nil, keyed)
}
