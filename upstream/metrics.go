package upstream

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"

	"github.com/prometheus/client_golang/prometheus"
)

const namespace = config.Namespace

// Metrics are the families of upstream calls, registered once per
// registry; they live across reloads.
type Metrics struct {
	dates           dateClock // the upstreams' clock, from every answer's Date
	requests        *prometheus.CounterVec
	requestDuration *prometheus.HistogramVec
	apiErrors       *prometheus.CounterVec
	held            *prometheus.CounterVec
	rateLimit       *prometheus.GaugeVec
	rateRemaining   *prometheus.GaugeVec
	rateReset       *prometheus.GaugeVec
	dailyLimit      *prometheus.GaugeVec
	dailyUsed       *prometheus.GaugeVec
	apiPaused       *prometheus.GaugeVec
	planInfo        *prometheus.GaugeVec
	planLimit       *prometheus.GaugeVec

	quotaMu sync.Mutex
	quota   map[string]*quotaWindow

	saidMu sync.Mutex
	said   map[string]bool // log lines said once (first)
}

// NewMetrics registers the families of upstream calls in reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	api := []string{"api"}
	m := &Metrics{
		quota: map[string]*quotaWindow{}, said: map[string]bool{},
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "upstream_requests_total",
			Help: "Requests sent to an upstream API (retries and listing calls included), by configured endpoint (the path as written in the file, or the listing path) and HTTP status code (error: no answer; other: a status outside the standard ones)."}, []string{"api", "endpoint", "code"}),
		requestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: "upstream_request_duration_seconds",
			Help: "Duration of upstream requests, in seconds.", Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30}}, api),
		apiErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "api_errors_total",
			Help: "Failed upstream calls, by the upstream's error word or code when the exporter knows it (else http_<status>, or other), or timeout, transport, decode, no_data, bad_value. A call rate_limit or daily_budget holds back is not a failure (calls_held_back_total)."}, []string{"api", "code"}),
		held: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "calls_held_back_total",
			Help: "Calls not sent because a limit of the exporter's own had no turn for them (limit: rate_limit, daily_budget): the tuple waits for the turn and keeps its value; nothing failed."}, []string{"api", "limit"}),
		rateLimit: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "ratelimit_limit",
			Help: "Requests allowed per minute, from the last X-RateLimit-Limit header."}, api),
		rateRemaining: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "ratelimit_remaining",
			Help: "Requests remaining in the current rate-limit window, from the last X-RateLimit-Remaining header."}, api),
		rateReset: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "ratelimit_reset_timestamp_seconds",
			Help: "When the rate-limit window resets, from the last X-RateLimit-Reset header, as a Unix time."}, api),
		dailyLimit: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "daily_quota_limit",
			Help: "Requests allowed per day, from the last X-Daily-Limit header."}, api),
		dailyUsed: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "daily_quota_used",
			Help: "Requests used today, from the last X-Daily-Used header."}, api),
		apiPaused: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "api_paused",
			Help: "1 while calls to the API are paused (bad credential, rate limit, daily quota), with the error code that paused them; 0 without a code while they are not."}, []string{"api", "code"}),
		planInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "plan_info",
			Help: "1 for the plan the API's key has, as the upstream last said (/v1/my/discovery/endpoints); absent while none is known."}, []string{"api", "plan"}),
		planLimit: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "plan_request_limit",
			Help: "Requests the key's plan allows per window (day, hour, minute), as the upstream last said; absent while none is known."}, []string{"api", "window"}),
	}
	reg.MustRegister(m.requests, m.requestDuration, m.apiErrors, m.held, m.rateLimit, m.rateRemaining, m.rateReset,
		m.dailyLimit, m.dailyUsed, m.apiPaused, m.planInfo, m.planLimit)
	return m
}

// quotaWindow is what the headers said within one rate-limit window and
// one day of one API.
type quotaWindow struct {
	window    string
	remaining float64
	day       string
	used      float64
}

// Sane ranges of the quota headers: past them a value is no quota the
// upstream means, and exported it would fire alerts or hide real ones.
const (
	maxCount      = 1e9
	maxResetShift = 24 * time.Hour
)

// observeHeaders copies the quota headers into gauges. Answers to
// concurrent requests arrive in any order, so within one window (the same
// X-RateLimit-Reset, else the same clock minute) the lowest remaining
// count wins, and within one UTC day the highest count used. A value out
// of its sane range is not exported but told to ignored, as is a
// Retry-After that is neither seconds nor a date.
func (m *Metrics) observeHeaders(api string, h http.Header, now time.Time, ignored func(header, value string)) {
	num := func(header string, lo, hi float64) (float64, bool) {
		f, present, ok := headerNumber(h, header, lo, hi)
		if present && !ok {
			ignored(header, h.Get(header))
		}
		return f, ok
	}
	m.dates.observe(h, now)
	if v := h.Get("Retry-After"); v != "" && !validRetryAfter(v) {
		ignored("Retry-After", v)
	}
	if f, ok := num("X-RateLimit-Limit", 0, maxCount); ok {
		m.rateLimit.WithLabelValues(api).Set(f)
	}
	window := now.UTC().Truncate(time.Minute).Format(time.RFC3339)
	unix := float64(now.Unix())
	if f, ok := num("X-RateLimit-Reset", unix-maxResetShift.Seconds(), unix+maxResetShift.Seconds()); ok {
		m.rateReset.WithLabelValues(api).Set(f)
		window = strconv.FormatFloat(f, 'f', -1, 64)
	}
	if f, ok := num("X-Daily-Limit", 0, maxCount); ok {
		m.dailyLimit.WithLabelValues(api).Set(f)
	}
	day := now.UTC().Format(time.DateOnly)
	m.quotaMu.Lock()
	defer m.quotaMu.Unlock()
	q := m.quota[api]
	if q == nil {
		q = &quotaWindow{}
		m.quota[api] = q
	}
	if f, ok := num("X-RateLimit-Remaining", 0, maxCount); ok {
		if q.window != window || f < q.remaining {
			q.window, q.remaining = window, f
		}
		m.rateRemaining.WithLabelValues(api).Set(q.remaining)
	}
	if f, ok := num("X-Daily-Used", 0, maxCount); ok {
		if q.day != day || f > q.used {
			q.day, q.used = day, f
		}
		m.dailyUsed.WithLabelValues(api).Set(q.used)
	}
}

// headerNumber reads a numeric header: present says it was sent, ok that
// it is a number within [lo, hi].
func headerNumber(h http.Header, header string, lo, hi float64) (f float64, present, ok bool) {
	v := h.Get(header)
	if v == "" {
		return 0, false, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(f) || f < lo || f > hi {
		return 0, true, false
	}
	return f, true, true
}

// validRetryAfter says whether a Retry-After is seconds or an HTTP date.
func validRetryAfter(v string) bool {
	if s, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
		return s >= 0
	}
	_, err := http.ParseTime(v)
	return err == nil
}

// first says whether key is seen for the first time (a log line said
// once per process).
func (m *Metrics) first(key string) bool {
	m.saidMu.Lock()
	defer m.saidMu.Unlock()
	if m.said[key] {
		return false
	}
	m.said[key] = true
	return true
}

// knownErrorCodes are the codes of api_errors_total that exist at 0 from
// the start (the bundled rules and dashboards read them), so that rate()
// works from the first error and alerts need no "or vector(0)".
var knownErrorCodes = []string{"timeout", "transport", "decode",
	"unauthorized", "forbidden", "too_many_requests", "future_row"}

// consensusErrorCodes are the Analyst Consensus API's codes the rules read.
var consensusErrorCodes = []string{"API_KEY_REQUIRED", "INVALID_API_KEY", "PLAN_REQUIRED", "RATE_LIMIT_EXCEEDED", "DAILY_LIMIT_EXCEEDED"}

// initErrors creates an API's known error and held-back series at 0.
func (m *Metrics) initErrors(api string) {
	for _, l := range []string{HeldByRateLimit, HeldByDailyBudget} {
		m.held.WithLabelValues(api, l)
	}
	for _, c := range knownErrorCodes {
		m.apiErrors.WithLabelValues(api, c)
	}
	if api == config.APIConsensus {
		for _, c := range consensusErrorCodes {
			m.apiErrors.WithLabelValues(api, c)
		}
	}
}
