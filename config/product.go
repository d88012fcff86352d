package config

import (
	"fmt"
	"math"
	"strings"
)

// MaxMaxTuples is the most max_tuples may be set to. A tuple costs a few
// KiB in memory and one upstream call per new row; past this a file is
// refused rather than expanded.
const MaxMaxTuples = 100_000

// An entry is the cartesian product of its windows and parameter lists.
// Its size is counted before anything is built (combinations), and the
// tuples are built one at a time (eachTuple), so that max_tuples bounds
// the memory and time of expansion: nine aliased lists of 30 values are
// 30⁹ tuples, a 300-byte file that no machine could expand.

// windowsOf are the windows an entry's tuples are built for.
func (e *Entry) windowsOf(api string) []string {
	switch {
	case len(e.Windows) > 0:
		return e.Windows
	case api == APIData:
		return []string{"day"} // the data API's default window
	}
	return []string{""}
}

// combinations is how many tuples the entry lists, at most math.MaxInt.
func (e *Entry) combinations(api string) int {
	n := len(e.windowsOf(api))
	for _, p := range e.Params {
		n = mulSat(n, len(p.Values))
	}
	return n
}

// factors shows what an entry's count is the product of, for a message:
// "a 30 × b 30 × window 2"; "" when a single list makes it.
func (e *Entry) factors(api string) string {
	var parts []string
	if w := len(e.windowsOf(api)); w > 1 {
		parts = append(parts, fmt.Sprintf("window %d", w))
	}
	for _, p := range e.Params {
		if len(p.Values) > 1 {
			parts = append(parts, fmt.Sprintf("%s %d", p.Name, len(p.Values)))
		}
	}
	if len(parts) < 2 {
		return ""
	}
	const shown = 10
	if len(parts) > shown {
		parts = append(parts[:shown], "…")
	}
	return " (" + strings.Join(parts, " × ") + ")"
}

func mulSat(a, b int) int {
	if a == 0 || b == 0 {
		return 0
	}
	if a > math.MaxInt/b {
		return math.MaxInt
	}
	return a * b
}

func addSat(a, b int) int {
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

// countText is a count for a message; a saturated one is a lower bound.
func countText(n int) string {
	if n == math.MaxInt {
		return fmt.Sprintf("more than %d", math.MaxInt-1)
	}
	return fmt.Sprint(n)
}

// sharedParams bounds the combinations whose parameters the windows of an
// entry share: the most max_tuples lets a section keep.
const sharedParams = 100_000

// eachTuple builds an entry's tuples one at a time, window by window and
// then through its lists (the last varying fastest), until yield returns
// false. A combination refused by its checks is reported and skipped.
func (l *errorList) eachTuple(a *API, e *Entry, yield func(*Tuple) bool) {
	for _, p := range e.Params {
		if len(p.Values) == 0 {
			return
		}
	}
	at := make([]int, len(e.Params))
	// The tuples of one combination at each window share its parameters
	// (nothing changes a tuple's Params once built), up to sharedParams
	// combinations.
	var shared []Values
	for _, w := range e.windowsOf(a.Name) {
		clear(at)
		for k := 0; ; k++ {
			var params Values
			if k < len(shared) {
				params = shared[k]
			} else {
				var b valuesBuilder
				for i, p := range e.Params {
					b.set(p.Name, p.Values[at[i]])
				}
				params = b.values()
				if k == len(shared) && k < sharedParams {
					shared = append(shared, params)
				}
			}
			if t := l.tuple(a, e, w, params); t != nil && !yield(t) {
				return
			}
			i := len(at) - 1
			for ; i >= 0; i-- {
				if at[i]++; at[i] < len(e.Params[i].Values) {
					break
				}
				at[i] = 0
			}
			if i < 0 {
				break
			}
		}
	}
}

// tupleBudget holds one API's expansion to max_tuples. A file (dedupe
// off) may not list a series twice, so its entries' combinations are its
// tuples: the entry that takes them past max_tuples is reported and
// nothing past it is built. A configuration resolved through the lists
// (dedupe on) may ("all" beside a listed value): its tuples are counted as
// built, those past max_tuples counted, not kept. As the file fitted
// max_tuples, past 2 × max_tuples combinations (plus dedupeSlack, so that
// small caps still get an exact count) the list cannot fit: building stops.
type tupleBudget struct {
	l      *errorList
	api    *API
	limit  int
	report bool // false when max_tuples itself was refused
	// planned counts the combinations of the entries built; checked
	// those of entries read with errors, built for their checks only.
	planned, checked int
	// kept counts distinct tuples; largest is the most combinations of
	// one entry, a lower bound of the count when building stopped early.
	kept, largest int
	over, cut     bool
}

// dedupeSlack is what a resolved configuration may list beyond twice its
// max_tuples before its count stops being exact.
const dedupeSlack = 4096

func (l *errorList) budget(a *API) *tupleBudget {
	b := &tupleBudget{l: l, api: a, limit: a.MaxTuples, report: true}
	if a.MaxTuples == noMaxTuples {
		// Reported already; the file's entries are still checked, to a
		// bound.
		b.limit, b.report = DefaultMaxTuples, false
	}
	return b
}

// admit says whether to build an entry's tuples; false with over set
// means that no later entry of the API is to be built either.
func (b *tupleBudget) admit(e *Entry) bool {
	n := e.combinations(b.api.Name)
	switch {
	case b.over:
		return false
	case e.broken:
		// Its tuples are checked, not served: within a bound of its own.
		if b.checked = addSat(b.checked, n); b.checked > b.limit {
			return false
		}
		return true
	case b.l.dedupe:
		b.largest = max(b.largest, n)
		if b.planned = addSat(b.planned, n); b.planned > 2*b.limit+dedupeSlack {
			b.over, b.cut = true, true
			return false
		}
		return true
	case n > b.limit:
		b.refuse(e, "expands to %s series%s, more than max_tuples (%d)", countText(n), e.factors(b.api.Name), b.limit)
		return false
	}
	if b.planned = addSat(b.planned, n); b.planned > b.limit {
		b.refuse(e, "with this entry the metrics list expands to %s series, more than max_tuples (%d)", countText(b.planned), b.limit)
		return false
	}
	return true
}

func (b *tupleBudget) refuse(e *Entry, format string, args ...any) {
	b.over = true
	if b.report {
		b.l.addAt(e.Line, e.Key, format, args...)
	}
}

// keep counts a new distinct tuple and says whether it is kept.
func (b *tupleBudget) keep() bool {
	b.kept++
	if b.kept > b.limit {
		b.over = true
	}
	return b.kept <= b.limit
}

// more says whether to go on building the entry's tuples.
func (b *tupleBudget) more() bool { return !b.over || (b.l.dedupe && !b.cut) }

// done reports a resolved configuration past max_tuples, with its count.
func (b *tupleBudget) done() {
	if !b.l.dedupe || !b.over || !b.report {
		return
	}
	count := countText(b.kept)
	if b.cut {
		count = "at least " + countText(max(b.kept, b.largest))
	}
	b.l.addAt(b.api.line, join(b.api.Name, "max_tuples"), "the metrics list expands to %s series, more than max_tuples (%d)", count, b.limit)
}
