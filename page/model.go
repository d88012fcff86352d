package page

import "time"

// Status is the page's model, and the JSON of /api/v1/status.
type Status struct {
	Version     int       `json:"version"`
	Generated   time.Time `json:"generated"`
	Exporter    string    `json:"exporter"`
	ConfigFile  string    `json:"config_file"`
	Demo        bool      `json:"demo"`
	MetricsPath string    `json:"metrics_path"`
	// Findings are the configuration's probable typos.
	Findings         []string       `json:"findings"`
	APIs             []API          `json:"apis"`
	Endpoints        []Endpoint     `json:"endpoints"`
	EndpointsMatched int            `json:"endpoints_matched"` // the JSON lists 1000
	Cluster          *Cluster       `json:"cluster"`           // null alone
	States           map[string]int `json:"states"`            // series per state, all series
	Series           SeriesPage     `json:"series"`
}

// API is one API's line.
type API struct {
	Name       string `json:"name"`
	Title      string `json:"title"`
	Configured bool   `json:"configured"`
	Series     int    `json:"series"`
	// The configuration in force: where the credential is read from,
	// never its value.
	URL             string    `json:"url,omitempty"`
	Auth            string    `json:"auth,omitempty"`
	Credential      string    `json:"credential,omitempty"`
	TimeoutSeconds  float64   `json:"timeout_seconds,omitempty"`
	Concurrency     int       `json:"concurrency,omitempty"`
	RateLimit       float64   `json:"rate_limit_per_minute"` // 0: none
	DailyBudget     int       `json:"daily_budget"`          // 0: none
	MaxStaleness    float64   `json:"max_staleness_seconds,omitempty"`
	RevalidateEvery float64   `json:"revalidate_seconds,omitempty"`
	MaxTuples       int       `json:"max_tuples,omitempty"`
	Entries         []Entry   `json:"entries,omitempty"` // the first 1000 in the JSON
	EntriesTotal    int       `json:"entries_total"`
	Patterns        []Pattern `json:"patterns,omitempty"`
	EntriesHidden   int       `json:"-"`                // entries the HTML leaves out
	CallsToday      int       `json:"calls_today"`      // onchain_exporter_daily_calls_used
	CallsTodayHere  int       `json:"calls_today_here"` // onchain_exporter_daily_calls_used_here
	Limit           int       `json:"limit_today"`      // onchain_exporter_daily_budget_calls; 0: none
	Pace            float64   `json:"pace_calls_per_day"`
	Forecast        float64   `json:"forecast_calls_per_day"` // natural cost, listing included
	Planned         float64   `json:"planned_calls_per_day"`
	PlanLine        string    `json:"plan_line"`
	Hold            string    `json:"hold,omitempty"`
	// Fill is the first fill, null when none runs; Waiting what the API's
	// due series wait for, null when nothing holds them but the plan.
	Fill      *Fill     `json:"fill"`
	Waiting   *Waiting  `json:"waiting"`
	Pauses    []Pause   `json:"pauses"`
	Expansion Expansion `json:"expansion"`
	// KeyPlan and Refusals are what the key's plan allows and the series
	// it refuses, "unknown" until read (only the data API's is).
	KeyPlan  string `json:"key_plan"`
	Refusals string `json:"refusals"`
	Refused  int    `json:"refused_series"`
	// PlanHistory is the key's plan as it changed, oldest first.
	PlanHistory []PlanChange `json:"plan_history"`
}

// PlanChange is one change of the key's plan in force.
type PlanChange struct {
	At      time.Time `json:"at"`      // when it was put in force
	Plan    string    `json:"plan"`    // its name, "none" when no plan is in force
	Summary string    `json:"summary"` // what it allows, in a line
	Changed []string  `json:"changed"` // what differs from the one before
	// ForSeries says what it meant for one series: only in its own view.
	ForSeries string `json:"for_series,omitempty"`
}

// Fill is how far the first fill of an API's series is (docs/budget.md).
type Fill struct {
	Series    int       `json:"series"`
	Asked     int       `json:"asked"` // asked once already
	Since     time.Time `json:"since"`
	PerMinute float64   `json:"calls_per_minute"` // 0: not known yet
	Done      time.Time `json:"done_at,omitzero"` // at that rate
	Line      string    `json:"line"`             // "filling: N of M series, ..."
}

// Waiting is what an API's due series wait for; not a failure.
type Waiting struct {
	Limit string    `json:"limit"` // rate_limit, daily_budget
	Until time.Time `json:"until"` // when the next turn frees
	Due   int       `json:"due"`   // series due and not started
}

// Entry is one metrics entry of the configuration.
type Entry struct {
	Key  string `json:"key"`
	Path string `json:"path"`
	Line int    `json:"line"`
}

// Pattern is what one pattern entry expanded to.
type Pattern struct {
	Entry   string   `json:"entry"`
	Pattern string   `json:"pattern"`
	Paths   int      `json:"paths"`
	Tuples  int      `json:"tuples"`
	Cut     int      `json:"cut_by_max_tuples"`
	Left    []string `json:"left_out,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// Pause is a pause of an API's calls in force.
type Pause struct {
	Lane       string    `json:"lane"` // keyed or key-free
	By         string    `json:"by"`
	Until      time.Time `json:"until"`
	Credential bool      `json:"credential"`
}

// Expansion is how an API's lists stand.
type Expansion struct {
	Lists   bool      `json:"lists"` // the API's entries are resolved through lists
	OK      bool      `json:"ok"`
	Read    time.Time `json:"read,omitzero"`
	Error   string    `json:"error,omitempty"`
	Waiting int       `json:"entries_waiting"`
}

// Endpoint is one endpoint and window of an API, whose publication delay
// is learned.
type Endpoint struct {
	API    string `json:"api"`
	Path   string `json:"endpoint"` // as configured (forecast_calls_per_day's endpoint)
	Window string `json:"window"`
	Series int    `json:"series"`
	// PublicationDelay is the largest publication_delay_seconds of its
	// paths; null where none is learned.
	PublicationDelay *float64 `json:"publication_delay_seconds"`
	OneRowIn         float64  `json:"one_row_in"` // 1: every row
	CallsPerDay      float64  `json:"calls_per_day"`
	PlannedPerDay    float64  `json:"planned_calls_per_day"`
}

// Cluster is the cluster's members, their health and what each owns.
type Cluster struct {
	Self        string  `json:"self"`
	Settled     bool    `json:"settled"` // the join has settled
	ClockOffset float64 `json:"clock_offset_seconds"`
	// Members are the live members, this one included, and the failed
	// ones still asked to rejoin (version 2; version 1 listed only those
	// that serve).
	Members     []Member `json:"members"`
	Serving     int      `json:"serving"` // onchain_exporter_cluster_members
	PeerTimeout float64  `json:"peer_timeout_seconds"`
	// Fallbacks are the units whose last call this member made for an
	// owner whose row did not come.
	Fallbacks []Fallback `json:"fallbacks"`
}

// Member is one member and its health as this member sees it.
type Member struct {
	Name    string `json:"name"`
	Address string `json:"address"`
	Self    bool   `json:"self"`
	// Serving: units are owned among it (live, heard lately, same file).
	Serving bool `json:"serving"`
	Units   int  `json:"units_owned"`
	// HeartbeatAge is since its last heartbeat; null for itself, or unheard.
	HeartbeatAge *float64 `json:"heartbeat_age_seconds"`
	// ClockOffset is its clock less this member's; SameConfig: its last
	// heartbeat carried this member's configuration digest.
	ClockOffset float64   `json:"clock_offset_seconds"`
	SameConfig  *bool     `json:"same_config"`
	Failed      time.Time `json:"failed_since,omitzero"` // it failed or left
	Fallbacks   int       `json:"fallback_units"`        // units of its that this member called for it lately
}

// Fallback is a unit this member called for its owner.
type Fallback struct {
	API      string    `json:"api"`
	Endpoint string    `json:"endpoint"`
	Window   string    `json:"window"`
	Owner    string    `json:"owner"`
	At       time.Time `json:"at"` // the last such call
}

// SeriesPage is one page of the series that match the filters.
type SeriesPage struct {
	Filter  Filter `json:"filter"`
	Total   int    `json:"total"`   // every series
	Matched int    `json:"matched"` // those the filter keeps
	Offset  int    `json:"offset"`
	Limit   int    `json:"limit"`
	// Sort is the order of the items (SortKeys; "": the configuration's).
	Sort  string   `json:"sort"`
	Items []Series `json:"items"`
}

// Filter selects series: an empty field keeps all.
type Filter struct {
	API      string `json:"api,omitempty"`
	State    string `json:"state,omitempty"`
	Endpoint string `json:"endpoint,omitempty"` // a substring of the path
	Key      string `json:"key,omitempty"`      // one series
}

// Series is one series' line.
type Series struct {
	API      string            `json:"api"`
	Key      string            `json:"key"`
	Path     string            `json:"path"`
	Endpoint string            `json:"endpoint"` // as configured: Status.Endpoints' path
	Request  string            `json:"request"`  // path and query as sent, credentials masked
	Window   string            `json:"window"`
	Labels   map[string]string `json:"labels"`
	State    string            `json:"state"`
	Served   bool              `json:"served"` // its values are on /metrics
	Newest   time.Time         `json:"newest_row,omitzero"`
	Age      float64           `json:"age_seconds,omitempty"` // of the newest row's end
	Spacing  float64           `json:"spacing_seconds,omitempty"`
	Next     time.Time         `json:"next_call,omitzero"`
	Why      string            `json:"why"`
	Error    string            `json:"last_error,omitempty"`
	Failing  time.Time         `json:"failing_since,omitzero"`
	Owner    string            `json:"owner,omitempty"` // cluster member that owns it
	Deprec   bool              `json:"deprecated,omitempty"`
	Earliest float64           `json:"rows_out_after_seconds,omitempty"`
	// HeldUntil is when rate_limit has a turn again (StateRateHeld).
	HeldUntil time.Time `json:"held_until,omitzero"`
	// Values are its values served (or last served), the first the
	// chart's; Points the rows they came from, oldest first; Changed the
	// row its first value changed at, as far as they tell; Due when its
	// next row is due at the latest (row_due_timestamp_seconds).
	Values  []Value   `json:"values"`
	Points  []Point   `json:"points"`
	Changed time.Time `json:"value_changed_row,omitzero"`
	Due     time.Time `json:"row_due,omitzero"`
	// Answers are its last outcomes, newest first.
	Answers []Answer `json:"answers"`
	// PlanHistory is its API's plan history, what each meant for it: only
	// in its own view.
	PlanHistory []PlanChange `json:"plan_history,omitempty"`
}

// Answer is one outcome of a series' refresh.
type Answer struct {
	At       time.Time `json:"at"`                  // when the call was sent
	Duration *float64  `json:"duration_seconds"`    // null: not known (a peer's call) or not sent
	Outcome  string    `json:"outcome"`             // ok, error, refused, held
	Code     string    `json:"code,omitempty"`      // api_errors_total's code
	HeldBy   string    `json:"held_by,omitempty"`   // rate_limit, daily_budget
	Until    time.Time `json:"held_until,omitzero"` // when that limit has a turn again
	By       string    `json:"by"`                  // this member, fallback, peer
	// The answer's shape as decode found it (rows "": none read).
	Rows       string    `json:"rows_at,omitempty"`
	TimeKey    string    `json:"time_key,omitempty"`
	CountedBy  string    `json:"counted_by,omitempty"`
	LabelsFrom string    `json:"labels_from,omitempty"`
	Expected   bool      `json:"shape_expected"`
	Samples    int       `json:"samples"`
	Fields     int       `json:"fields"`
	Newest     time.Time `json:"newest_row,omitzero"`
	Note       string    `json:"note,omitempty"`
}

// Value is one value a series serves, the labels it adds to the series'
// own, and its family's unit and HELP.
type Value struct {
	Family string            `json:"family"`
	Labels map[string]string `json:"labels,omitempty"`
	Value  float64           `json:"value"`
	Unit   string            `json:"unit"`
	Help   string            `json:"help"`
}

// Point is one row of a series: its time and its first value.
type Point struct {
	At    time.Time `json:"row_time"`
	Value float64   `json:"value"`
}
