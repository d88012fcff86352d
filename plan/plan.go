package plan

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Plan is what a key's plan on the data API allows.
type Plan struct {
	// Name is the plan's name as the provider spells it, upper case:
	// BASIC, ADVANCED, PROFESSIONAL, PREMIUM, CUSTOM.
	Name string
	// Paths maps each /v1/{asset}/{category}/{metric} path the plan
	// lists to the windows it may be read at.
	Paths map[string]Windows
	// Statics are the paths always allowed: lists, status, metadata.
	Statics []string
	// RateLimit is the plan's request allowance.
	RateLimit RateLimit
	// Notes say what the answer held that was skipped (a key that is not
	// a duration is not among them: the provider says to ignore those).
	Notes []string
}

// Windows maps a window (day, hour, block, ...) to how far back the plan
// reads it. A parsed plan's paths with the same windows share one
// Windows: read it, never change it.
type Windows map[string]Duration

// RateLimit is a plan's request allowance: Token requests per Window.
type RateLimit struct {
	Token  int
	Window string
}

// rateWindows are the windows a rate limit is given per.
var rateWindows = map[string]time.Duration{
	"second": time.Second, "minute": time.Minute, "min": time.Minute, "hour": time.Hour,
	"day": 24 * time.Hour, "week": 7 * 24 * time.Hour, "month": 30 * 24 * time.Hour,
}

// Period is the length of the rate limit's window; 0 when the plan gave
// none or one this package does not know.
func (r RateLimit) Period() time.Duration { return rateWindows[r.Window] }

// Known says whether the plan gave a rate limit this package can spend.
func (r RateLimit) Known() bool { return r.Token > 0 && r.Period() > 0 }

// String says the allowance the way the plan gives it: "1000 per hour".
func (r RateLimit) String() string {
	if r.Token <= 0 || r.Window == "" {
		return "none given"
	}
	return fmt.Sprintf("%d per %s", r.Token, r.Window)
}

// DefaultWindow is the window the data API reads when a call names none.
const DefaultWindow = "day"

// Covers says whether the plan speaks of a path: a data-API path of the
// shape /v1/{asset}/{category}/{metric}, or one of its statics. Of other
// paths (v2, the discovery) the plan says nothing.
func (p *Plan) Covers(path string) bool {
	if slices.Contains(p.Statics, path) {
		return true
	}
	rest, ok := strings.CutPrefix(path, "/v1/")
	if !ok {
		return false
	}
	segs := strings.Split(rest, "/")
	return len(segs) == 3 && segs[0] != "my" && segs[0] != "discovery" && !slices.Contains(segs, "")
}

// Listed says whether the plan allows a path at some window, or always
// (a static).
func (p *Plan) Listed(path string) bool {
	_, ok := p.Paths[path]
	return ok || slices.Contains(p.Statics, path)
}

// WindowsOf are the windows the plan allows a path at, sorted by name;
// none for a static or a path it does not list.
func (p *Plan) WindowsOf(path string) []string { return slices.Sorted(maps.Keys(p.Paths[path])) }

// Depth is how far back the plan reads a path at a window; ok is false
// when it does not allow that window there. A static, and a path listed
// with no window, read without limit.
func (p *Plan) Depth(path, window string) (d Duration, ok bool) {
	window = cmp.Or(window, DefaultWindow)
	if w, listed := p.Paths[path]; listed {
		d, ok = w[window]
		return d, ok || len(w) == 0
	}
	return Duration{}, slices.Contains(p.Statics, path)
}

// Reason is why a plan refuses a tuple.
type Reason int

// The reasons a plan refuses a tuple.
const (
	// NotListed: the plan does not list the path.
	NotListed Reason = iota + 1
	// WindowNotAllowed: the plan lists the path at other windows.
	WindowNotAllowed
	// HistoryTooDeep: the tuple reads further back than the plan's depth.
	HistoryTooDeep
)

// Refusal says why a plan does not allow a tuple, in the plan's words.
type Refusal struct {
	Plan   string
	Path   string
	Window string
	Reason Reason
	// Allowed are the windows the plan reads the path at (WindowNotAllowed).
	Allowed []string
	// Depth and From: the plan's depth and the start asked (HistoryTooDeep).
	Depth Duration
	From  time.Time
}

// Error says the refusal the way a user reads it: "your plan
// (PROFESSIONAL) reads /v1/btc/market-indicator/mvrv at day only".
func (r *Refusal) Error() string {
	who := "your plan"
	if r.Plan != "" {
		who += " (" + r.Plan + ")"
	}
	switch r.Reason {
	case WindowNotAllowed:
		return fmt.Sprintf("%s reads %s at %s only, not at %s", who, r.Path, and(r.Allowed), r.Window)
	case HistoryTooDeep:
		return fmt.Sprintf("%s reads the history of %s at %s back to %s only, not from %s",
			who, r.Path, r.Window, r.Depth, r.From.UTC().Format(time.DateOnly))
	}
	return fmt.Sprintf("%s does not include %s", who, r.Path)
}

// and joins words as a sentence does: "day", "day and hour", "block, day and hour".
func and(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// Check says whether the plan allows reading path at window from the time
// from (the zero time: only recent rows, no history asked), as of now: nil
// when it does, or when the plan does not speak of the path (Covers), else
// the Refusal. An empty window is the data API's default, day.
func (p *Plan) Check(path, window string, from, now time.Time) *Refusal {
	if !p.Covers(path) || slices.Contains(p.Statics, path) {
		return nil
	}
	window = cmp.Or(window, DefaultWindow)
	switch d, ok := p.Depth(path, window); {
	case !ok && !p.Listed(path):
		return &Refusal{Plan: p.Name, Path: path, Window: window, Reason: NotListed}
	case !ok:
		return &Refusal{Plan: p.Name, Path: path, Window: window, Reason: WindowNotAllowed, Allowed: p.WindowsOf(path)}
	case !from.IsZero() && !d.Unlimited() && from.Before(d.Earliest(now)):
		return &Refusal{Plan: p.Name, Path: path, Window: window, Reason: HistoryTooDeep, Depth: d, From: from}
	}
	return nil
}

// Earliest is the oldest time the plan reads path at window from, as of
// now: the zero time when it reads the whole history (or does not speak
// of the path); ok is false when it does not allow the pair at all.
func (p *Plan) Earliest(path, window string, now time.Time) (t time.Time, ok bool) {
	if !p.Covers(path) {
		return time.Time{}, true
	}
	d, ok := p.Depth(path, window)
	if !ok {
		return time.Time{}, false
	}
	return d.Earliest(now), true
}

// Equal says whether two plans allow the same: a plan read again that
// says the same changes nothing.
func (p *Plan) Equal(q *Plan) bool {
	if p == nil || q == nil {
		return p == q
	}
	return p.Name == q.Name && p.RateLimit == q.RateLimit && slices.Equal(p.Statics, q.Statics) &&
		maps.EqualFunc(p.Paths, q.Paths, func(a, b Windows) bool { return maps.Equal(a, b) })
}
