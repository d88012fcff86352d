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

// How long a listing answer is reused (the endpoints are config's:
// config.API.Lists).
const (
	// listReuse absorbs repeated loads (reloads come in bursts) without
	// calling the lists again.
	listReuse = time.Hour
	// Refresh is how often a configuration that depends on upstream
	// lists is expanded again from fresh lists, to pick up new assets,
	// exchanges, tokens and equities.
	Refresh = 24 * time.Hour
	// StartBudget bounds the expansion at start: the exporter serves what
	// needs no list within it, and Maintain completes the rest.
	StartBudget = 750 * time.Millisecond
)

// Expander resolves what a configuration leaves to the upstream APIs:
// "all" on a data-API parameter (through the v1 and v2 discovery
// endpoints), equity: all of the Indicator API (/api/equities), and
// Analyst Consensus asset names, tickers and aliases (/assets), which are
// sent as the asset's key and labelled with its lowercase ticker, so that
// "Bitcoin" and "btc" are one series labelled like the data API's. Its
// calls take the API's one client (upstream.Pool) like every other call.
// An answer is reused for listReuse (one the last run saved, up to
// Refresh), and the last good one stands in when a later call fails; the
// answers are held in a Cache, the Store's when there is one.
//
// An upstream that is down or answers badly never fails an expansion:
// the entries whose lists cannot be read wait, the rest is served, and
// Maintain (background.go) retries until they are in.
type Expander struct {
	logger  log.Logger
	now     func() time.Time
	clients *upstream.Pool
	// retryMin and retryMax bound the back-off of retries while lists
	// fail (background.go).
	retryMin, retryMax time.Duration
	// changed wakes Maintain after every expansion, to plan again.
	changed chan struct{}
	store   Store // keeps listing answers and pauses across restarts; nil keeps nothing
	// warned holds the warnings about lists already logged (firstWarning).
	warned map[string]bool
	// plans gives the plan of an API's key, nil when none is known
	// (Options.Plan); pattern entries expand by it.
	plans func(*config.API) *plan.Plan
	// once: Options.Once.
	once bool
	// patterns is what the pattern entries of the last expansion came
	// to (pattern.go), guarded by mu.
	patterns []patternState

	// cache holds the listing answers: the Store's when there is one.
	cache *Cache

	mu sync.Mutex
	// logged holds what each parameter last resolved to: the same result
	// again (on a reload) is logged at debug only.
	logged map[string]string
	// source is the configuration, as loaded, that was last expanded
	// without error; digest identifies what that expansion produced.
	source *config.Config
	digest string
	// state is per API with entries to expand. failures counts Maintain's
	// expansions in a row in which some API failed (a failed expansion of
	// a start or reload counts only when it starts a run of failures);
	// cutShort says the last one failed within a budget (StartBudget).
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
	// Now is the clock (tests simulate time with it).
	Now func() time.Time
	// Clients are the upstream clients, one per API, shared with the
	// collector.Exporter so that limits hold across expansion and
	// scrapes; nil builds a pool of the Expander's own.
	Clients *upstream.Pool
	// Store keeps listing answers across restarts
	// (a persist.Store): the Expander reads and fills its Cache. Nil
	// keeps nothing; the Expander then has a Cache of its own.
	Store Store
	// Plan gives the plan of an API's key as last read, nil when none is
	// known: pattern entries expand from discovery and it together. Nil
	// takes the plan in force on the API's client (which the Expander
	// reads and puts there, plan.go).
	Plan func(*config.API) *plan.Plan
	// Once says the configuration is expanded once (--config.check): an
	// expansion that succeeds lets go of the listing answers, in its Cache
	// too, as soon as it has read them, and of their memory, before it
	// forecasts the calls of what they selected. One that fails keeps
	// them for another.
	Once bool
}

// New returns an Expander; opts supplies the clock, the clients it
// shares with the collector.Exporter and the Store.
func New(logger log.Logger, opts ...Options) *Expander {
	x := &Expander{logger: logger, now: time.Now, logged: map[string]string{},
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

// Expand returns cfg with every "all" replaced by the upstream's list and
// consensus assets by their key (labelled with the ticker), tuples rebuilt
// and max_tuples checked again; cfg itself when there is nothing to
// resolve. An entry whose list cannot be read, and was never read before,
// is left out until a later expansion (Maintain) reads it: the error
// returned is always one of the configuration, with file, line and
// parameter, never one of the upstream.
func (x *Expander) Expand(ctx context.Context, cfg *config.Config) (*config.Config, error) {
	return x.expand(ctx, cfg, false)
}

// Start is Expand at start: a list that shows the file wrong for an API
// (an asset it does not know, an "all" past max_tuples) keeps that API's
// expanded entries out, says why at error level and is retried in the
// background, while the other APIs' entries go in. Only an error of the
// file itself fails it.
func (x *Expander) Start(ctx context.Context, cfg *config.Config) (*config.Config, error) {
	return x.expand(ctx, cfg, true)
}

// expand is Expand; background says Maintain asks, for the configuration
// already in force, so that a configuration error is the expansion's
// failure to report, not a reload's.
func (x *Expander) expand(ctx context.Context, cfg *config.Config, background bool) (*config.Config, error) {
	// The key's plan is read after the lists: a key it shows rejected
	// pauses the API, and the lists' own answers say more.
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
		// The lists now show the file wrong (an asset they do not know,
		// "all" past max_tuples): the entries of the API at fault wait
		// for a fixed file, the others go in.
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
	// needs maps an API to the keys of the lists its entries need, and
	// entryLists an entry to its lists.
	needs      map[string][]string
	entryLists map[*config.Entry][]string
	entryAPI   map[*config.Entry]string
	requests   map[string]listRequest
	lists      map[string]listResult
	waiting    map[*config.Entry]bool
	touched    map[string]bool
	// sorted holds the discovery lists' items by path, once sorted
	// (byPath).
	sorted map[string][]pathRow
}

// letGo drops the listing answers this expansion read, here and in the
// Cache (Options.Once): what they selected is resolved. It collects them
// and returns their memory to the system at once: the heap then grows
// from what is kept, not from what it held with them (the forecast that
// follows adds some 30 MB for 85 000 paths).
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
	r.entryAPI, r.lists, r.waiting = map[*config.Entry]string{}, map[string]listResult{}, map[*config.Entry]bool{}
	for _, name := range config.APINames {
		a := cfg.APIs[name]
		if a == nil {
			continue
		}
		for _, e := range a.Metrics {
			if e.Pattern != nil || slices.ContainsFunc(e.Params, func(p config.Param) bool { return expandable(a.Name, p) }) {
				left = true
			}
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
	// A data-API path outside the built-in catalog is checked against
	// discovery (warnUnlisted): its parameters are the user's word only.
	// The list is read for the warning; no entry waits for it, and its
	// failure is no expansion failure.
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
