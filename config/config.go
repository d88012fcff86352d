package config

import (
	"net/url"
	"strings"
	"time"

	promconfig "github.com/prometheus/common/config"

	"github.com/onchain-exporter/onchain_exporter/plan"
)

// Namespace is the program's name: the namespace of every family the
// exporter makes about itself (onchain_exporter_...; the data's families
// start onchain_), its User-Agent, its page's title and its clusters'
// label prefix.
const Namespace = "onchain_exporter"

// API names, as they appear in YAML sections and in the api label.
const (
	APIData      = "data"
	APIIndicator = "indicator"
	APIConsensus = "consensus"
)

// APINames lists the APIs in the order they are collected and documented.
var APINames = []string{APIData, APIIndicator, APIConsensus}

// Config is a loaded, validated configuration.
type Config struct {
	File string
	// APIs holds the configured sections by API name; absent sections are
	// not in the map.
	APIs map[string]*API
	// Tuples is every upstream series of every API, in file order.
	Tuples []*Tuple
	// TupleLabelNames are the label names of the per-tuple families
	// (onchain_data_timestamp_seconds, onchain_exporter_query_success...):
	// api, endpoint, asset, window and every parameter label of the file.
	TupleLabelNames []string
}

// API is one upstream API section (data:, indicator:, consensus:).
type API struct {
	Name        string
	URL         *url.URL
	TokenEnv    string
	TokenFile   string
	Auth        string // header | query
	Timeout     time.Duration
	Concurrency int
	// RateLimit is the most requests per minute sent to this API; 0 means
	// no limit of our own. At most MaxRateLimit.
	RateLimit float64
	// DailyBudget is the most upstream calls of this API per UTC day,
	// every call counted (refreshes, retries, listing); 0 means no budget
	// of our own. At most MaxDailyBudget.
	DailyBudget int
	// RateLimitSet and DailyBudgetSet say the file sets rate_limit and
	// daily_budget; where it does not, the key's plan gives them
	// (budget.WithPlanLimits), and LimitsFromPlan names that plan.
	RateLimitSet, DailyBudgetSet bool
	LimitsFromPlan               string
	// Plan is the key's plan the configuration was resolved with (data
	// API only; nil when none is known): the forecast and the budget's
	// plan leave out the tuples it refuses, which are not called.
	Plan *plan.Plan
	// MaxStaleness is how long a series keeps its last good value while
	// its refreshes fail; after that it disappears from /metrics.
	MaxStaleness time.Duration
	// Revalidate, when set, re-fetches a series at least this often even
	// when no new row is due, to pick up revised data.
	Revalidate time.Duration
	MaxTuples  int
	Metrics    []*Entry
	Tuples     []*Tuple
	// HTTPClient holds the section's tls_config and proxy keys, read the
	// way Prometheus reads them (httpclient.go). Only its TLS and proxy
	// settings are ever set: the credential is token_env/token_file.
	HTTPClient promconfig.HTTPClientConfig
	// Patterns says what each pattern entry expanded to, in file order
	// (ResolveWith); none before expansion.
	Patterns  []*PatternResult
	patternOf map[*Entry]*PatternResult

	token Secret
	// source names where the credential comes from, for messages: the
	// environment variable or the file (its path as read).
	source string
	// unread is why token_env or token_file gave no credential; expand
	// reports it when an entry of the section needs the key.
	unread *problem
	line   int // of the section's key
	// credentialKey says that the file sets token_env or token_file, read
	// or not: a broken one is reported once, not again as missing.
	credentialKey bool
}

// noMaxTuples stands for a max_tuples already reported as wrong.
const noMaxTuples = -1

// Token returns the credential read from token_env or token_file; it is
// empty for a section whose entries need no key and whose credential is
// not set.
func (a *API) Token() Secret { return a.token }

// CredentialSource names where the credential is read from ("environment
// variable ONCHAIN_DATA_TOKEN", "file /run/secrets/key"), never its value;
// "" when the section sets neither token_env nor token_file.
func (a *API) CredentialSource() string { return a.source }

// CredentialHint says how to have a refused credential replaced, in a way
// that works: a token_file is read again at every reload, while a
// token_env variable is read from the process's environment, which no
// reload changes, so a new value there takes a restart.
func (a *API) CredentialHint() string {
	const reload = "POST /-/reload or send SIGHUP"
	switch {
	case a.TokenFile != "":
		return "write the new key to " + a.source + " (read again at every reload), or fix the plan upstream, then " +
			reload + ": a reload lifts the pause"
	case a.TokenEnv != "":
		return "a reload reads " + a.source + " unchanged (a running process's environment never changes): " +
			"restart the exporter with the new key in " + a.TokenEnv + ", or put the key in a file named by token_file " +
			"(read again at every reload) and " + reload + "; a plan fixed upstream needs only the reload"
	}
	return "no credential is set: put the key in a file named by token_file (read at every reload) and " + reload
}

// Defaults of an API section.
const (
	DefaultTimeout      = 10 * time.Second
	DefaultConcurrency  = 4
	DefaultMaxStaleness = time.Hour
	DefaultMaxTuples    = 1000
	DefaultLimit        = 5
	// DefaultWindowlessLimit is the rows asked of an Indicator or Analyst
	// Consensus series that has rows: two weeks of trading days, so that
	// the schedule sees from the first answer which weekdays have none.
	DefaultWindowlessLimit = 10
)

// Entry is one item of a section's metrics list, before expansion.
type Entry struct {
	// Key names the entry in messages (data.metrics[2]); Line is its line.
	Key      string
	Line     int
	Path     string
	Windows  []string
	CacheTTL time.Duration
	// Fields, when set, selects and renames row fields; nil exports every
	// numeric field.
	Fields map[string]*Field
	// MaxFields bounds the numeric fields without a catalog entry that a
	// row adds as families (max_fields, entry.go); 0 is the default.
	MaxFields int
	// Rows, TimeKey and LabelFields describe the payload of APIs whose
	// shape is not fixed by the specification (dotted JSON paths).
	Rows        string
	TimeKey     string
	LabelFields []string
	// Params are the request parameters in file order, each a list.
	Params []Param
	// Pattern, when the path holds * or {a,b}, selects the paths of
	// discovery it matches but for those Exclude matches (pattern.go);
	// WindowChoice (coarsest, finest, all) chooses their windows among
	// those allowed, and Coarsen lets the budget poll them less often
	// than their windows. Nil for a path named.
	Pattern      *Pattern
	Exclude      []*Pattern
	WindowChoice string
	Coarsen      bool
	// Origin is the pattern entry an entry was expanded from; nil for
	// an entry of the file.
	Origin *Entry

	lines  map[string]int  // line of each key
	broken bool            // read with errors: checked, not served
	failed map[string]bool // keys refused while reading
}

// KeyLine returns the line of one of the entry's keys, or the entry's own.
func (e *Entry) KeyLine(key string) int {
	if n, ok := e.lines[key]; ok {
		return n
	}
	return e.Line
}

// takesAnyway says whether parameter name is not judged by a list of an
// endpoint's parameters: limit (checked on its own) or a placeholder of
// the entry's path ({asset}).
func (e *Entry) takesAnyway(name string) bool {
	return name == "limit" || strings.Contains(e.Path, "{"+name+"}")
}

// Param is one request parameter of an entry with its listed values.
type Param struct {
	Name   string
	Values []string
	Line   int
	// Labels holds the label value of a value whose series is labelled
	// otherwise than the value sent upstream: a consensus asset is sent as
	// the API's key (bitcoin) and labelled with its ticker (btc), the
	// value the data API labels it with. Values missing here label as sent.
	Labels map[string]string
}

// Field describes how one row field becomes a metric family.
type Field struct {
	Name string // family name without the onchain_ prefix
	Help string
	Type string // gauge | counter
	// Scale multiplies the value (0.01 turns a percent into a ratio).
	Scale float64
	// Labels are constant labels added to the series (kind="mint").
	Labels map[string]string
	// KeyLabel, for a field whose value is an object of numbers, names the
	// label that carries each key (multiple="1.5").
	KeyLabel string
	// Unit is the family's unit in OpenMetrics (seconds, bytes, ratio,
	// usd), "" where none is known; the family's name ends in _<unit>.
	Unit string `json:",omitempty"`
	// Source is the row field a family outside the tuple's fields comes
	// from (Tuple.DerivedField); "" for the fields a tuple lists.
	Source string `json:",omitempty"`
}

// Secret is a credential. It never prints.
type Secret string

func (s Secret) String() string { return "<secret>" }

// MarshalText keeps a Secret out of any encoding.
func (s Secret) MarshalText() ([]byte, error) { return []byte("<secret>"), nil }

// GoString keeps a Secret out of %#v.
func (s Secret) GoString() string { return `"<secret>"` }

// MaxRateLimit is the largest rate_limit, in requests a minute (about
// 1 700 a second), from the file or the key's plan (a plan that allows
// more is held to it): the limiter keeps the send time of each request of
// its window, so a larger one would cost memory for a limit no upstream gives.
const MaxRateLimit = 100_000

// MaxDailyBudget is the largest daily_budget, in calls a day, whether the
// file or the key's plan sets it: past it the number is a mistake, not a
// plan.
const MaxDailyBudget = 100_000_000
