package fakeapi

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// planPath is where the data API describes the plan of the key that asks.
const planPath = "/v1/my/discovery/endpoints"

// statics are the paths every key may read whatever its plan: the lists
// and each asset's entity list (status).
var statics = []string{"/v1/discovery/endpoints", "/v2/discovery/endpoints", planPath,
	"/v1/btc/status/entity-list", "/v1/eth/status/entity-list", "/v1/xrp/status/entity-list", "/v1/trx/status/entity-list"}

// entityTypes are the types of entity an asset's entity list takes
// (type, required): exchanges of every asset, miners of btc.
func entityTypes(path string) []string {
	if path == "/v1/btc/status/entity-list" {
		return []string{"exchange", "miner"}
	}
	return []string{"exchange"}
}

// entityList answers /v1/{asset}/status/entity-list?type=...: the
// exchanges or miners the flow paths take, in the data envelope; 400
// without a type it knows.
func entityList(path string, q url.Values) (obj, int) {
	typ := q.Get("type")
	if unknownParam(q, []string{"type"}) != "" || !slices.Contains(entityTypes(path), typ) {
		return nil, http.StatusBadRequest
	}
	names := without(flowExchanges, "all_exchange")
	if typ == "miner" {
		names = without(miners, "all_miner")
	}
	rows := make([]obj, 0, len(names))
	for _, n := range names {
		row := obj{{"symbol", n}, {"name", entityName(n)}, {"type", typ}}
		if typ == "exchange" {
			market := "spot"
			if slices.Contains(exchanges, n) {
				market = "derivative"
			}
			row.add("market_type", market)
		}
		rows = append(rows, row)
	}
	return obj{{"status", statusObj(http.StatusOK, "success")}, {"result", obj{{"data", rows}}}}, http.StatusOK
}

// entityName is a display name of an entity symbol: gate_io is "Gate Io".
func entityName(symbol string) string {
	words := strings.Split(symbol, "_")
	for i, w := range words {
		words[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(words, " ")
}

// PlanAnswer is how /v1/my/discovery/endpoints answers.
type PlanAnswer struct {
	// Nested serves the older dialect of the answer: each metric's
	// windows one level down, under "window", beside a "limit" (the
	// rows a call may ask for).
	Nested bool
	// Status, when set, answers every plan request of a known key with
	// this HTTP status and the data API's error envelope instead of the
	// plan: 404 as an upstream without the endpoint, 403 or 500 as the
	// provider's own client reads as the basic plan. Data calls are not
	// affected.
	Status int
	// Token and Window, when Token is set, are the request allowance the
	// answer states ("token" requests a "window": day, hour, minute or
	// second) instead of the tier's: a test of what the exporter makes
	// of a small allowance of each kind.
	Token  int
	Window string
}

// ParsePlanAnswer reads how the plan endpoint answers: "current" (or "")
// the plan in the current dialect, "nested" in the older one, or an
// error status: 400, 401, 403, 404, 405, 429, 500 or 503.
func ParsePlanAnswer(s string) (PlanAnswer, error) {
	switch s = strings.ToLower(strings.TrimSpace(s)); s {
	case "", "current":
		return PlanAnswer{}, nil
	case "nested":
		return PlanAnswer{Nested: true}, nil
	}
	if code, err := strconv.Atoi(s); err == nil && code >= 400 && statusWords[code] != "" {
		return PlanAnswer{Status: code}, nil
	}
	return PlanAnswer{}, fmt.Errorf("unknown plan answer %q (current, nested, or an error status such as 404, 403 or 500)", s)
}

// SetPlanAnswer changes how the plan endpoint answers from now on.
func (s *Server) SetPlanAnswer(a PlanAnswer) {
	s.access.Lock()
	s.opts.PlanAnswer = a
	s.access.Unlock()
}

// servePlan answers a plan request of a key on plan p.
func (s *Server) servePlan(w http.ResponseWriter, p Tier) {
	s.access.RLock()
	mode := s.opts.PlanAnswer
	s.access.RUnlock()
	if mode.Status != 0 && mode.Status != http.StatusOK {
		writeEnvelopeError(w, mode.Status)
		return
	}
	answer := s.planAnswer(p, mode.Nested)
	if mode.Token != 0 {
		answer[len(answer)-1] = kv{"apiRateLimit", obj{{"token", mode.Token}, {"window", mode.Window}}}
	}
	writeJSON(w, http.StatusOK, answer)
}

// dataKeys builds the key table of Options: DataToken on the premium
// plan, then DataKeys. nil when neither is set: no authentication, and
// every request reads as premium.
func dataKeys(o Options) map[string]Tier {
	if o.DataToken == "" && len(o.DataKeys) == 0 {
		return nil
	}
	keys := make(map[string]Tier, len(o.DataKeys)+1)
	if o.DataToken != "" {
		keys[o.DataToken] = TierPremium
	}
	maps.Copy(keys, o.DataKeys)
	return keys
}

// SetDataKey gives the data API key its plan from now on: a new key, or
// a known one that changes plan (an upgrade, a downgrade), as a test of
// what follows a plan change needs. A server that required no key
// requires one from now on: this one or those added after it.
func (s *Server) SetDataKey(key string, p Tier) {
	s.access.Lock()
	defer s.access.Unlock()
	keys := make(map[string]Tier, len(s.keys)+1)
	maps.Copy(keys, s.keys)
	keys[key] = p
	s.keys = keys
}

// keyPlan is the plan of the key a data API request carries, as a
// bearer token or the api_key parameter; ok is false for a request
// without a known key.
func (s *Server) keyPlan(r *http.Request) (p Tier, ok bool) {
	s.access.RLock()
	keys := s.keys
	s.access.RUnlock()
	if keys == nil {
		return TierPremium, true
	}
	if scheme, tok, found := strings.Cut(r.Header.Get("Authorization"), " "); found && strings.EqualFold(scheme, "Bearer") {
		if p, ok = keys[strings.TrimSpace(tok)]; ok {
			return p, true
		}
	}
	if k := r.URL.Query().Get("api_key"); k != "" {
		p, ok = keys[k]
	}
	return p, ok
}

// planAnswer describes plan p over the v1 endpoints served: its name,
// each asset → category → metric with the windows it may read and how
// far back (nested: under "window", beside "limit"), the statics, and its
// rate limit.
func (s *Server) planAnswer(p Tier, nested bool) obj {
	type category struct {
		name    string
		metrics obj
	}
	var assetOrder []string
	byAsset := map[string][]*category{}
	for _, ep := range s.listed(false) {
		asset, cat, metric := v1Parts(ep.path)
		gs := p.grants(ep)
		if len(gs) == 0 {
			continue
		}
		windows := make(obj, 0, len(gs))
		for _, g := range gs {
			windows.add(g.window, g.depth.String())
		}
		cats, seen := byAsset[asset]
		if !seen {
			assetOrder = append(assetOrder, asset)
		}
		i := slices.IndexFunc(cats, func(c *category) bool { return c.name == cat })
		if i < 0 {
			cats = append(cats, &category{name: cat})
			i = len(cats) - 1
		}
		if nested {
			cats[i].metrics.add(metric, obj{{"window", windows}, {"limit", ep.maxLimit}})
		} else {
			cats[i].metrics.add(metric, windows)
		}
		byAsset[asset] = cats
	}
	assets := make(obj, 0, len(assetOrder)+1)
	for _, a := range assetOrder {
		cats := make(obj, 0, len(byAsset[a]))
		for _, c := range byAsset[a] {
			cats.add(c.name, c.metrics)
		}
		assets.add(a, cats)
	}
	assets.add("statics", statics)
	rl := rateLimits[p]
	return obj{
		{"plan", obj{{"name", strings.ToUpper(p.String())}}},
		{"apiEndpoint", assets},
		{"apiRateLimit", obj{{"token", rl.token}, {"window", rl.window}}},
	}
}
