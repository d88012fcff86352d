package expand

import (
	"context"
	"errors"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/budget"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/plan"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

const (
	// listReuse absorbs bursts of reloads without calling the lists again.
	listReuse = time.Hour
	// Refresh is how often a configuration that depends on upstream
	// lists is expanded from fresh lists, for new assets and the like.
	Refresh = 24 * time.Hour
	// StartBudget bounds the expansion at start: what needs no list is
	// served within it, and Maintain completes the rest.
	StartBudget = 750 * time.Millisecond
)

// Expander resolves what a configuration leaves to the upstream APIs:
// "all" on a data-API parameter (discovery), equity: all (/api/equities)
// and Analyst Consensus assets by name, ticker or alias (/assets), sent
// as the asset's key and labelled with its lowercase ticker, as the data
// API labels it. It calls through the API's one client (upstream.Pool).
// An answer is reused for listReuse (one the last run saved, up to
// Refresh), and the last good one stands in when a call fails.
//
// An upstream that is down never fails an expansion: the entries whose
// lists cannot be read wait, and Maintain retries until they are in.
type Expander struct {
	logger             log.Logger
	now                func() time.Time
	clients            *upstream.Pool
	retryMin, retryMax time.Duration                // the back-off while lists fail
	changed            chan struct{}                // wakes Maintain after every expansion
	store              Store                        // nil keeps nothing
	plans              func(*config.API) *plan.Plan // Options.Plan
	once               bool                         // Options.Once
	patterns           []patternState               // of the last expansion, guarded by mu
	cache              *Cache                       // the Store's when there is one

	mu sync.Mutex
	// logged holds what each log line keyed by newly last said: the same
	// again (on a reload) is logged at debug only.
	logged map[logKey]string
	// source is the configuration, as loaded, last expanded without
	// error; digest identifies what that expansion produced.
	source *config.Config
	digest string
	// state is per API with entries to expand. failures counts Maintain's
	// expansions in a row in which some API failed (a start's or
	// reload's counts only when it starts a run); cutShort says the last
	// one failed within a budget.
	state    map[string]*State
	failures int
	cutShort bool
	// planSaid is what the last plan read came to, per API (said once);
	// planReadAt when it was last read; planChanged hears of a change of
	// the plan in force (plan.go).
	planSaid    map[string]string
	planReadAt  time.Time
	planLast    plan.Outcome
	planChanged func(api string)
}

// Options tune an Expander; the zero value calls through clients of its
// own and keeps nothing across restarts.
type Options struct {
	Now func() time.Time
	// Clients are shared with the collector.Exporter, so that limits hold
	// across expansion and scrapes; nil builds a pool of its own.
	Clients *upstream.Pool
	// Store (a persist.Store) keeps listing answers across restarts in
	// its Cache; nil keeps nothing.
	Store Store
	// Plan gives the plan of an API's key, nil when none is known; nil
	// takes the plan in force on the API's client (plan.go).
	Plan func(*config.API) *plan.Plan
	// Once says the configuration is expanded once (--config.check): a
	// successful expansion lets go of the listing answers and their
	// memory as soon as it has read them.
	Once bool
}

// New returns an Expander tuned by opts.
func New(logger log.Logger, opts ...Options) *Expander {
	x := &Expander{logger: logger, now: time.Now, logged: map[logKey]string{},
		retryMin: 5 * time.Second, retryMax: time.Minute, changed: make(chan struct{}, 1),
		state: map[string]*State{}, planSaid: map[string]string{}}
	if len(opts) > 0 {
		if opts[0].Now != nil {
			x.now = opts[0].Now
		}
		x.clients, x.store, x.plans, x.once = opts[0].Clients, opts[0].Store, opts[0].Plan, opts[0].Once
	}
	if x.clients == nil {
		x.clients = upstream.NewPool(prometheus.NewRegistry(), x.now, logger)
	}
	if x.plans == nil {
		x.plans = func(a *config.API) *plan.Plan {
			c, release := x.clients.Candidate(a)
			defer release()
			return c.Plan()
		}
	}
	if x.store != nil {
		x.cache = x.store.Cache()
	}
	if x.cache == nil {
		x.cache = NewCache()
	}
	return x
}

// expandable says whether a parameter is resolved through upstream.
func expandable(api string, p config.Param) bool {
	return p.HasAll() || (api == config.APIConsensus && p.Name == "asset")
}

// Expand returns cfg resolved through the upstream's lists, tuples rebuilt
// and max_tuples checked again; cfg itself when there is nothing to
// resolve. An entry whose list was never read is left out until Maintain
// reads it: the error is always one of the configuration, never of the
// upstream.
func (x *Expander) Expand(ctx context.Context, cfg *config.Config) (*config.Config, error) {
	return x.expand(ctx, cfg, false)
}

// Start is Expand at start: a list that shows the file wrong for an API
// keeps that API's expanded entries out, said at error level and retried
// in the background, while the others go in. Only an error of the file
// itself fails it.
func (x *Expander) Start(ctx context.Context, cfg *config.Config) (*config.Config, error) {
	return x.expand(ctx, cfg, true)
}

// expand is Expand; background (Maintain, or Start) makes a configuration
// error the expansion's failure to report, not a reload's.
func (x *Expander) expand(ctx context.Context, cfg *config.Config, background bool) (*config.Config, error) {
	// The plan is read after the lists: a key it shows rejected pauses the
	// API, and the lists' own answers say more.
	reuse := listReuse
	if !background {
		reuse = 0 // a reload: the user may have changed the plan
	}
	r := &resolution{x: x, ctx: ctx}
	if !r.plan(cfg) {
		read, _ := x.refreshPlan(ctx, cfg.APIs[config.APIData], reuse)
		r.planUnread(cfg.APIs[config.APIData], read)
		out := x.planLimits(cfg)
		x.notePatterns(out)
		x.commit(cfg, out, r, nil, background)
		return out, nil
	}
	r.fetchAll()
	read, _ := x.refreshPlan(ctx, cfg.APIs[config.APIData], reuse)
	r.planUnread(cfg.APIs[config.APIData], read)
	in := r.withoutWaiting(cfg)
	out, err := in.ResolveWith(r.resolve, r.match)
	var blamed map[string]error
	if err != nil {
		if !background {
			return nil, err
		}
		// The lists show the file wrong: the entries of the API at fault
		// wait for a fixed file, the others go in.
		blamed = r.blame(in, err)
		for e, api := range r.entryAPI {
			r.waiting[e] = r.waiting[e] || blamed[api] != nil
		}
		if out, err = r.withoutWaiting(cfg).ResolveWith(r.resolve, r.match); err != nil {
			return nil, err
		}
	}
	var listing config.Listing
	if a := cfg.APIs[config.APIData]; a != nil {
		listing = r.discovery(a)
		if out, blamed, err = r.unlisted(cfg, out, listing, background, blamed); err != nil {
			return nil, err
		}
	}
	x.warnUnlisted(out, listing)
	if x.once {
		r.letGo()
	}
	for _, name := range config.APINames {
		if a := out.APIs[name]; a != nil && r.touched[name] {
			level.Info(x.logger).Log("msg", "configuration expanded through the upstream's lists", "api", name, "tuples", len(a.Tuples), "max_tuples", a.MaxTuples)
		}
	}
	out = x.planLimits(out)
	if a := out.APIs[config.APIData]; a != nil {
		if errs := budget.PatternsOverBudget(out.File, a); len(errs) > 0 {
			if !background {
				return nil, errors.Join(errs...)
			}
			for _, err := range errs {
				if x.firstWarning("over budget " + err.Error()) {
					level.Error(x.logger).Log("msg", "pattern over the daily budget: its series are polled less often than their rows", "err", err)
				}
			}
		}
	}
	x.notePatterns(out)
	x.commit(cfg, out, r, blamed, background)
	return out, nil
}

// resolution is one expansion: the lists each entry needs, each read once.
type resolution struct {
	x   *Expander
	ctx context.Context
	// needs maps an API to the keys of the lists its entries need.
	needs      map[string][]string
	entryLists map[*config.Entry][]string
	entryAPI   map[*config.Entry]string
	requests   map[string]listRequest
	lists      map[string]listResult
	waiting    map[*config.Entry]bool
	touched    map[string]bool
	sorted     map[string][]pathRow // byPath
}

// letGo drops the listing answers this expansion read, here and in the
// Cache (Options.Once), and returns their memory to the system at once,
// so that the forecast that follows grows the heap from what is kept.
func (r *resolution) letGo() {
	for k, l := range r.lists {
		l.rows = nil
		r.lists[k] = l
	}
	r.sorted = nil
	for _, req := range r.requests {
		r.x.cache.drop(req.api, req.path)
	}
	debug.FreeOSMemory()
}

func listKey(a *config.API, path string) string { return a.Name + " " + a.URL.String() + path }

// plan records the lists the configuration needs; false when it leaves
// nothing to the upstream.
func (r *resolution) plan(cfg *config.Config) bool {
	left := false
	r.needs, r.entryLists, r.requests = map[string][]string{}, map[*config.Entry][]string{}, map[string]listRequest{}
	r.entryAPI, r.lists, r.waiting, r.touched = map[*config.Entry]string{}, map[string]listResult{}, map[*config.Entry]bool{}, map[string]bool{}
	for _, name := range config.APINames {
		a := cfg.APIs[name]
		if a == nil {
			continue
		}
		for _, e := range a.Metrics {
			left = left || e.Pattern != nil || slices.ContainsFunc(e.Params, func(p config.Param) bool { return expandable(a.Name, p) })
			for _, l := range a.EntryLists(e) {
				key := listKey(a, l.Path)
				r.entryAPI[e] = name
				if !slices.Contains(r.entryLists[e], key) {
					r.entryLists[e] = append(r.entryLists[e], key)
				}
				if _, seen := r.requests[key]; !seen {
					r.requests[key] = listRequest{api: a, path: l.Path, keyed: l.Keyed}
					r.needs[name] = append(r.needs[name], key)
				}
			}
		}
	}
	// A data-API path outside the catalog is checked against discovery
	// (warnUnlisted); no entry waits for that list, and its failure is no
	// expansion failure.
	if a := cfg.APIs[config.APIData]; a != nil {
		for _, t := range a.Tuples {
			if t.Endpoint != nil {
				continue
			}
			path := config.DataDiscovery(t.Path)
			if key := listKey(a, path); r.requests[key].path == "" {
				r.requests[key] = listRequest{api: a, path: path, keyed: true}
				left = true
			}
		}
	}
	return left
}

// listErr joins the errors of the API's lists that failed.
func (r *resolution) listErr(api string) error {
	var errs []error
	for _, k := range r.needs[api] {
		if err := r.lists[k].err; err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// waitingIn counts the API's entries left out.
func (r *resolution) waitingIn(api string) int {
	n := 0
	for e, waits := range r.waiting {
		if waits && r.entryAPI[e] == api {
			n++
		}
	}
	return n
}

// withoutWaiting returns cfg without the entries whose lists could not be
// read; cfg itself when none waits.
func (r *resolution) withoutWaiting(cfg *config.Config) *config.Config {
	if len(r.waiting) == 0 {
		return cfg
	}
	out := &config.Config{File: cfg.File, APIs: make(map[string]*config.API, len(cfg.APIs))}
	for name, a := range cfg.APIs {
		na := *a
		na.Metrics = slices.DeleteFunc(slices.Clone(a.Metrics), func(e *config.Entry) bool { return r.waiting[e] })
		out.APIs[name] = &na
	}
	return out
}
