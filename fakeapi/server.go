package fakeapi

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onchain-exporter/onchain_exporter/internal/text"
)

// Clock is an injectable time source; nil means time.Now.
type Clock func() time.Time

// Options configure a Server. The zero value serves every API without
// authentication, with real time and the default publication lags.
type Options struct {
	Now Clock
	// DataToken is the bearer token (or api_key) the data API accepts,
	// a key on the premium plan; "" with no DataKeys means no
	// authentication is required, and every request reads as premium.
	DataToken string
	// DataKeys are further data API keys and their plan: the plan
	// /v1/my/discovery/endpoints describes to the key, and what a data
	// call of the key may read (403 forbidden otherwise). A key given
	// here and as DataToken takes the plan given here.
	DataKeys map[string]Tier
	// IndicatorToken is the bearer key of the Indicator API's value
	// endpoints; "" means no authentication is required.
	IndicatorToken string
	// IndicatorLowPlanToken is a key that exists but whose plan is below
	// Pro: it is rejected with 401 plan_required.
	IndicatorLowPlanToken string
	// Dialect is the shape of the Indicator and Analyst Consensus answers
	// (DialectA, the default, or DialectB); the data API has one shape.
	Dialect Dialect
	// Timeless drops, in either dialect, every member of an Indicator or
	// Analyst Consensus answer that dates it or its rows ("date",
	// "timestamp", "updated_at", "as_of"): the same numbers, changing at
	// the same times, with nothing that says when. Errors are unchanged.
	Timeless bool
	// ConsensusKeys maps Analyst Consensus API keys to their plan ("free",
	// "pro", "premium", "enterprise"). nil means keyed endpoints need no
	// key, and any key sent is accepted as an enterprise key.
	ConsensusKeys map[string]string
	// RawAccessKeys are consensus keys with raw access
	// (source_text=statement).
	RawAccessKeys []string
	// Latency is added to every response; a cancelled request stops waiting.
	Latency time.Duration
	// PublishLag overrides, per window, the delay after an interval closes
	// before its row appears. Windows not listed keep their default.
	PublishLag map[string]time.Duration
	// Publish replaces, per window, the whole publication model: a
	// constant, jittered or changing delay (see Delay). It takes
	// precedence over PublishLag and the defaults for the windows listed.
	Publish map[string]Delay
	// ExtraPaths are data-API paths /v1/{asset}/{category}/{metric}, of
	// an asset the fake knows, served besides the modelled ones with a
	// generic field ("value"; reserve, netflow, inflow and outflow get
	// the fields of their kind) and listed by discovery: for a benchmark
	// that needs many distinct series. Others are ignored. Any path the
	// fake does not serve is answered 404.
	ExtraPaths []string
	// PlanAnswer is how /v1/my/discovery/endpoints answers: the
	// current dialect (the zero value), the older one, or a failure.
	PlanAnswer PlanAnswer
	// Catalog is the set of endpoints the data API serves and lists:
	// CatalogSmall (the default) or CatalogFull. ExtraPaths come on top.
	Catalog Catalog
}

// Server is the fake upstream; it implements http.Handler.
type Server struct {
	opts   Options
	now    Clock
	delays map[string]Delay
	// extra holds the endpoints of Options.ExtraPaths, listed by
	// discovery in extraPaths' order.
	extra      map[string]*endpoint
	extraPaths []string

	// calls counts the requests of each API (apis); the map is not
	// changed after New.
	calls map[string]*atomic.Int64
	// refused counts the data calls answered 403 by the key's plan.
	refused atomic.Int64

	// access guards keys, opts.Catalog and opts.PlanAnswer, which
	// SetDataKey, SetCatalog and SetPlanAnswer change while the server
	// runs.
	access sync.RWMutex
	// keys maps each data API key to its plan; nil means no
	// authentication (dataKeys).
	keys map[string]Tier

	mu sync.Mutex
	// pathCalls counts the requests of each path the fake serves; an
	// unknown path is counted in its API's total only, so that the
	// memory of a long run does not grow with the paths it is asked.
	pathCalls    map[string]int64
	faults       map[string]Fault
	consensusErr string
	dataMinute   int64
	dataMinuteN  int
	buckets      map[string]*rateBucket
}

// New returns a Server configured by o.
func New(o Options) *Server {
	s := &Server{
		opts:      o,
		now:       o.Now,
		delays:    map[string]Delay{},
		pathCalls: map[string]int64{},
		faults:    map[string]Fault{},
		buckets:   map[string]*rateBucket{},
		keys:      dataKeys(o),
		calls:     map[string]*atomic.Int64{},
	}
	if s.now == nil {
		s.now = time.Now
	}
	for _, lags := range []map[string]time.Duration{defaultLags, o.PublishLag} {
		for w, d := range lags {
			s.delays[w] = Delay{Base: d}
		}
	}
	for w, d := range o.Publish {
		s.delays[w] = d
	}
	for _, a := range apis {
		s.calls[a] = &atomic.Int64{}
	}
	s.opts.ConsensusKeys, s.opts.RawAccessKeys = maps.Clone(o.ConsensusKeys), slices.Clone(o.RawAccessKeys)
	s.extra = map[string]*endpoint{}
	for _, p := range o.ExtraPaths {
		if _, _, served := s.lookupEndpoint(p); served {
			continue
		}
		if ep := genericOf(p); ep != nil {
			s.extra[p] = ep
			s.extraPaths = append(s.extraPaths, p)
		}
	}
	s.opts.PublishLag, s.opts.Publish, s.opts.ExtraPaths, s.opts.DataKeys = nil, nil, nil, nil
	return s
}

// API names used by Calls and SetFault.
const (
	apiData      = "data"
	apiIndicator = "indicator"
	apiConsensus = "consensus"
)

var apis = []string{apiData, apiIndicator, apiConsensus}

// apiOf tells which API a URL path belongs to.
func apiOf(path string) string {
	switch {
	case path == "/indicator" || strings.HasPrefix(path, "/indicator/"):
		return apiIndicator
	case path == "/consensus" || strings.HasPrefix(path, "/consensus/"):
		return apiConsensus
	}
	return apiData
}

// ServeHTTP counts the request, adds the configured latency, applies the
// fault of its API if one matches and otherwise serves the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	api := apiOf(r.URL.Path)
	s.count(api, r.URL.Path)
	// The time the answer is sent, on the fake's clock, as a server
	// says it.
	w.Header().Set("Date", s.now().UTC().Format(http.TimeFormat))
	if api == apiData {
		s.dataRateHeaders(w)
	}
	if s.opts.Latency > 0 && !sleepCtx(r.Context(), s.opts.Latency) {
		return
	}
	if f, ok := s.faultFor(api, r.URL.Path); ok {
		s.serveFault(w, r, api, f)
		return
	}
	s.serveAPI(w, r, api)
}

func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request, api string) {
	switch api {
	case apiIndicator:
		s.serveIndicator(w, r)
	case apiConsensus:
		s.serveConsensus(w, r)
	default:
		s.serveData(w, r)
	}
}

func (s *Server) count(api, path string) {
	s.calls[api].Add(1)
	if !s.serves(api, path) {
		return
	}
	s.mu.Lock()
	s.pathCalls[path]++
	s.mu.Unlock()
}

// serves says whether the fake serves a path of an API: a bounded set of
// paths, whatever it is asked.
func (s *Server) serves(api, path string) bool {
	switch api {
	case apiIndicator:
		return indicatorServes(strings.TrimPrefix(path, "/indicator"))
	case apiConsensus:
		rt, ok := matchConsensus(path, nil)
		return ok && (rt.handle == "" || rt.handle == ineligibleAnalyst || slices.Contains(analysts, rt.handle))
	}
	if slices.Contains(statics, path) {
		return true
	}
	_, _, ok := s.lookupEndpoint(path)
	return ok
}

// echoed is a value of the request as an error answer may quote it: at
// most maxEcho bytes, cut on a character boundary, so that an answer
// never grows with what it is sent.
func echoed(v string) string {
	const maxEcho = 64
	return text.Clip(v, maxEcho, "...")
}

// Calls returns the number of requests served for api ("data",
// "indicator" or "consensus"), errors and faults included.
func (s *Server) Calls(api string) int64 {
	if c := s.calls[api]; c != nil {
		return c.Load()
	}
	return 0
}

// CallsFor returns the number of requests whose URL path equals path, a
// path the fake serves; 0 for any other.
func (s *Server) CallsFor(path string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pathCalls[path]
}

// Refused returns the number of data calls answered 403 forbidden
// because the key's plan does not cover them (a metric, a window, rows
// older than its history).
func (s *Server) Refused() int64 { return s.refused.Load() }

// ResetCalls sets every call counter back to zero, Refused's too.
// Rate-limit state is kept.
func (s *Server) ResetCalls() {
	s.refused.Store(0)
	for _, c := range s.calls {
		c.Store(0)
	}
	s.mu.Lock()
	s.pathCalls = map[string]int64{}
	s.mu.Unlock()
}

// SetFault replaces the fault of api ("data", "indicator", "consensus", or
// "" for all three). A fault of kind FaultNone clears it.
func (s *Server) SetFault(api string, f Fault) {
	list := []string{api}
	if api == "" {
		list = apis
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range list {
		if f.Kind == FaultNone {
			delete(s.faults, a)
		} else {
			s.faults[a] = f
		}
	}
}

// ClearFaults removes every fault.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	s.faults = map[string]Fault{}
	s.mu.Unlock()
}

// SetConsensusError makes every Analyst Consensus request answer with the
// error code given (for example "RATE_LIMIT_EXCEEDED"); "" clears it.
func (s *Server) SetConsensusError(code string) {
	s.mu.Lock()
	s.consensusErr = code
	s.mu.Unlock()
}

func (s *Server) faultFor(api, path string) (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.faults[api]
	if !ok || f.Kind == FaultNone || !strings.HasPrefix(path, f.PathPrefix) {
		return Fault{}, false
	}
	return f, true
}

// dataRateHeaders counts a data API request against the current clock
// minute and reports the (never enforced) allowance.
func (s *Server) dataRateHeaders(w http.ResponseWriter) {
	const limit = 600
	now := s.now()
	minute := floorDiv(now.Unix(), 60)
	s.mu.Lock()
	if s.dataMinute != minute {
		s.dataMinute, s.dataMinuteN = minute, 0
	}
	s.dataMinuteN++
	remaining := max(limit-s.dataMinuteN, 0)
	s.mu.Unlock()
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
	h.Set("X-RateLimit-Reset", strconv.FormatInt((minute+1)*60, 10))
}

// sleepCtx waits d or until ctx ends; it reports whether d elapsed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
