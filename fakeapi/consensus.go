package fakeapi

import (
	"cmp"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Analyst Consensus API limits.
const (
	keyFreeLimit   = 30  // requests per minute per IP without a key
	freeDailyLimit = 100 // requests per UTC day on the free plan
	forcedRetry    = 2   // retry_after of a forced RATE_LIMIT_EXCEEDED
)

var planLimits = map[string]int{"free": 10, "pro": 60, "premium": 300, "enterprise": 1000}

// premiumPlans can read the per-analyst endpoints.
var premiumPlans = []string{"premium", "enterprise"}

const (
	consensusSite = "https://consensus.example.com"
	contactEmail  = "data-partnerships@consensus.example.com"
)

// errorKinds maps each error code to its HTTP status and message; its
// legacy wording ("error") is the code in lower case with spaces.
var errorKinds = map[string]struct {
	status  int
	message string
}{
	"API_KEY_REQUIRED":     {401, "This endpoint needs an API key: send it in the X-API-Key header or the api_key query parameter."},
	"INVALID_API_KEY":      {401, "The API key is unknown, inactive or expired, or its subscription is not active. Do not retry with the same key."},
	"PLAN_REQUIRED":        {401, "The plan of this key cannot read this endpoint; required_plans lists the plans that can."},
	"RAW_ACCESS_REQUIRED":  {403, "source_text=statement needs raw access on the key. Drop it to get the excerpt."},
	"DAILY_LIMIT_EXCEEDED": {429, "The Free plan's daily quota is used up; it resets at 00:00 UTC."},
	"RATE_LIMIT_EXCEEDED":  {429, "Too many requests this minute. Wait retry_after seconds."},
	"INVALID_PARAMETER":    {400, "A query parameter is malformed or outside the accepted values; param names it."},
	"UNKNOWN_ASSET":        {400, "The asset is not registered; resolve it through /assets."},
	"ANALYST_NOT_FOUND":    {404, "No tracked analyst matches; pick a handle from /analysts/top."},
	"ANALYST_NOT_ELIGIBLE": {404, "The analyst is excluded from the stance pipeline."},
	"NO_DATA":              {404, "No rows for this analyst and asset in the range."},
	"SERVICE_UNAVAILABLE":  {503, "The upstream list is unavailable. Retry after a few seconds with the same request."},
	"INTERNAL_ERROR":       {500, "Server fault. Retry once after a few seconds."},
	"NOT_FOUND":            {404, "No such endpoint."},
	"METHOD_NOT_ALLOWED":   {405, "Only GET is served."},
}

// apiError is one Analyst Consensus error answer.
type apiError struct {
	Code          string
	Param         string
	Plan          string
	RequiredPlans []string
	Limit, Used   int
	RetryAfter    int
}

// ident is who a consensus request counts against.
type ident struct {
	key    string
	plan   string // "" without a key
	bucket string
	limit  int // per minute
	daily  bool
}

// rateBucket holds the allowance used by one key or IP.
type rateBucket struct {
	minute int64
	n      int
	day    int64
	dayN   int
}

func clientIP(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

// identify resolves the key of a request; an unknown key yields
// INVALID_API_KEY and the request's IP identity.
func (s *Server) identify(r *http.Request) (ident, *apiError) {
	ipID := ident{bucket: "ip:" + clientIP(r), limit: keyFreeLimit}
	key := cmp.Or(r.Header.Get("X-API-Key"), r.URL.Query().Get("api_key"))
	if key == "" {
		return ipID, nil
	}
	plan := "enterprise"
	if s.opts.ConsensusKeys != nil {
		p, ok := s.opts.ConsensusKeys[key]
		if !ok {
			return ipID, &apiError{Code: "INVALID_API_KEY"}
		}
		plan = p
	}
	limit, ok := planLimits[plan]
	if !ok {
		limit = planLimits["free"]
	}
	return ident{key: key, plan: plan, bucket: "key:" + key, limit: limit, daily: plan == "free"}, nil
}

// rate checks, and when consume is set uses, one request of id's
// allowance, and states what is left in w's headers. A refused request
// uses nothing.
func (s *Server) rate(w http.ResponseWriter, id ident, now time.Time, consume bool) *apiError {
	minute, day := floorDiv(now.Unix(), 60), floorDiv(now.Unix(), 86400)
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.buckets[id.bucket]
	if b == nil {
		b = &rateBucket{}
		if consume {
			s.buckets[id.bucket] = b
		}
	}
	if b.minute != minute {
		b.minute, b.n = minute, 0
	}
	if b.day != day {
		b.day, b.dayN = day, 0
	}
	var err *apiError
	switch {
	case !consume:
	case id.daily && b.dayN >= freeDailyLimit:
		err = &apiError{Code: "DAILY_LIMIT_EXCEEDED", Limit: freeDailyLimit, Used: b.dayN}
	case b.n >= id.limit:
		err = &apiError{Code: "RATE_LIMIT_EXCEEDED", RetryAfter: secondsUntil(now, time.Minute)}
	default:
		b.n++
		if id.daily {
			b.dayN++
		}
	}
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(id.limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(max(id.limit-b.n, 0)))
	if id.daily {
		h.Set("X-Daily-Limit", strconv.Itoa(freeDailyLimit))
		h.Set("X-Daily-Used", strconv.Itoa(b.dayN))
	}
	return err
}

// secondsUntil is the whole seconds, at least 1, until the next multiple
// of d.
func secondsUntil(now time.Time, d time.Duration) int {
	next := floorTo(now, d).Add(d)
	return max(int((next.Sub(now)+time.Second-1)/time.Second), 1)
}

// writeConsensusError answers with the error object of e.
func writeConsensusError(w http.ResponseWriter, now time.Time, e *apiError) {
	status, body := consensusErrorBody(w, now, e)
	writeJSON(w, status, body)
}

// consensusErrorBody builds the error object of e and its HTTP status, and
// sets the Retry-After header of the 429 codes.
func consensusErrorBody(w http.ResponseWriter, now time.Time, e *apiError) (int, obj) {
	kind, ok := errorKinds[e.Code]
	if !ok {
		kind.status = http.StatusInternalServerError
		kind.message = "Error " + e.Code + "."
	}
	body := obj{
		{"error", strings.ToLower(strings.ReplaceAll(e.Code, "_", " "))},
		{"code", e.Code},
		{"message", kind.message},
		{"docs_url", consensusSite + "/docs/errors#" + strings.ToLower(e.Code)},
	}
	if e.Param != "" {
		body.add("param", e.Param)
	}
	upgrade := func() {
		body.add("upgrade_url", consensusSite+"/pricing")
		body.add("upgradeUrl", consensusSite+"/pricing")
	}
	switch e.Code {
	case "PLAN_REQUIRED":
		plan, req := cmp.Or(e.Plan, "free"), e.RequiredPlans
		if req == nil {
			req = premiumPlans
		}
		body.add("plan", plan)
		body.add("required_plans", req)
		upgrade()
		body.add("contact_url", consensusSite+"/contact")
	case "RAW_ACCESS_REQUIRED":
		body.add("contact_url", consensusSite+"/contact")
		body.add("contact_email", contactEmail)
	case "DAILY_LIMIT_EXCEEDED":
		body.add("limit", e.Limit)
		body.add("used", e.Used)
		upgrade()
		w.Header().Set("Retry-After", strconv.Itoa(secondsUntil(now, 24*time.Hour)))
	case "RATE_LIMIT_EXCEEDED":
		retry := max(e.RetryAfter, 1)
		body.add("retry_after", retry)
		upgrade()
		w.Header().Set("Retry-After", strconv.Itoa(retry))
	}
	return kind.status, body
}

// forcedError is the error SetConsensusError asked for, with the fields
// its code carries.
func forcedError(code string, id ident) *apiError {
	e := &apiError{Code: code}
	switch code {
	case "RATE_LIMIT_EXCEEDED":
		e.RetryAfter = forcedRetry
	case "DAILY_LIMIT_EXCEEDED":
		e.Limit, e.Used = freeDailyLimit, freeDailyLimit
	case "PLAN_REQUIRED":
		e.Plan = id.plan
	case "INVALID_PARAMETER", "UNKNOWN_ASSET":
		e.Param = "asset"
	}
	return e
}

// consensusRoute is a matched Analyst Consensus path.
type consensusRoute struct {
	name    string
	handle  string
	keyed   bool
	premium bool
	params  []string // accepted besides api_key and source_text
}

func matchConsensus(path string, q url.Values) (consensusRoute, bool) {
	p := strings.TrimPrefix(path, "/consensus")
	switch p {
	case "/assets":
		return consensusRoute{name: "assets", params: []string{"q"}}, true
	case "/analysts/top":
		return consensusRoute{name: "top", params: []string{"asset", "limit"}}, true
	case "/analyst-views":
		return consensusRoute{name: "views", params: []string{"asset"}}, true
	case "/calls":
		return consensusRoute{name: "calls", params: []string{"asset"}}, true
	case "/consensus":
		return consensusRoute{name: "consensus", keyed: q.Has("days"), params: []string{"asset", "days"}}, true
	}
	rest, ok := strings.CutPrefix(p, "/analysts/")
	if !ok {
		return consensusRoute{}, false
	}
	parts := strings.Split(rest, "/")
	switch {
	case len(parts) == 1 && parts[0] != "":
		return consensusRoute{name: "analyst", handle: parts[0], keyed: true, premium: true}, true
	case len(parts) == 2 && parts[0] != "" && parts[1] == "calls":
		return consensusRoute{name: "analystCalls", handle: parts[0], keyed: true, premium: true, params: []string{"asset", "days"}}, true
	}
	return consensusRoute{}, false
}

// serveConsensus serves the Analyst Consensus API.
func (s *Server) serveConsensus(w http.ResponseWriter, r *http.Request) {
	now := s.now()
	id, keyErr := s.identify(r)
	fail := func(e *apiError) { writeConsensusError(w, now, e) }
	s.mu.Lock()
	forced := s.consensusErr
	s.mu.Unlock()
	if forced != "" {
		s.rate(w, id, now, false)
		if forced == "RATE_LIMIT_EXCEEDED" {
			w.Header().Set("X-RateLimit-Remaining", "0")
		}
		if forced == "DAILY_LIMIT_EXCEEDED" {
			w.Header().Set("X-Daily-Limit", strconv.Itoa(freeDailyLimit))
			w.Header().Set("X-Daily-Used", strconv.Itoa(freeDailyLimit))
		}
		fail(forcedError(forced, id))
		return
	}
	q := r.URL.Query()
	rt, ok := matchConsensus(r.URL.Path, q)
	early := keyErr
	switch {
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		early = &apiError{Code: "METHOD_NOT_ALLOWED"}
	case !ok:
		early = &apiError{Code: "NOT_FOUND"}
	case keyErr == nil && rt.keyed && id.key == "" && s.opts.ConsensusKeys != nil:
		early = &apiError{Code: "API_KEY_REQUIRED"}
	}
	if early != nil {
		s.rate(w, id, now, false)
		fail(early)
		return
	}
	if err := s.rate(w, id, now, true); err != nil {
		fail(err)
		return
	}
	if rt.premium && s.opts.ConsensusKeys != nil && !slices.Contains(premiumPlans, id.plan) {
		fail(&apiError{Code: "PLAN_REQUIRED", Plan: id.plan, RequiredPlans: premiumPlans})
		return
	}
	for _, name := range slices.Sorted(maps.Keys(q)) {
		if name != "api_key" && name != "source_text" && !slices.Contains(rt.params, name) {
			fail(&apiError{Code: "INVALID_PARAMETER", Param: echoed(name)})
			return
		}
	}
	raw := false
	if q.Has("source_text") {
		switch q.Get("source_text") {
		case "statement":
			if !slices.Contains(s.opts.RawAccessKeys, id.key) {
				fail(&apiError{Code: "RAW_ACCESS_REQUIRED"})
				return
			}
			raw = true
		case "excerpt":
		default:
			fail(&apiError{Code: "INVALID_PARAMETER", Param: "source_text"})
			return
		}
	}
	payload, e := consensusPayload(rt, q, now, raw)
	if e != nil {
		fail(e)
		return
	}
	writeJSON(w, http.StatusOK, s.answer(s.consensusShape(rt, q, payload)))
}
