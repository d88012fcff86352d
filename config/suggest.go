package config

import (
	"fmt"
	"strings"
)

// Suggestions for mistyped keys. Section, field and top-level keys form
// closed sets, so any unknown one is an error and a suggestion only helps.
// An entry's unknown keys are request parameters, an open set: there a key
// is refused as a typo only when it is close to an entry key by the same
// rule (see nearKey), so that a real parameter is rarely caught, and one
// that is can always be sent through params:.

// entryKeys are the keys of a metrics entry that are not request
// parameters.
var entryKeys = []string{"path", "window", "cache_ttl", "fields", "rows", "time_key", "labels", "params", "exclude", "coarsen"}

// sectionKeys are the keys of an API section.
var sectionKeys = append([]string{"url", "token_env", "token_file", "auth", "timeout", "concurrency", "rate_limit",
	"daily_budget", "max_staleness", "revalidate", "max_tuples", "metrics"}, httpClientKeys...)

// fieldKeys are the keys of one item of fields:.
var fieldKeys = []string{"name", "help", "type", "scale", "labels", "key_label"}

// nearKey returns the known key that key is probably a typo of, or "".
// The rule, also in docs/configuration.md: key has at least minLen characters and is
// one edit (an insertion, a deletion, a substitution or two adjacent
// letters swapped) from a known key, or two edits when it has 8 characters
// or more. Two edits turn too many short words into known keys: "page"
// into "path", "levels" into "labels", "retries" into "metrics". Ties go
// to the first in known.
func nearKey(key string, known []string, minLen int) string {
	if len(key) < minLen {
		return ""
	}
	maxDist := 1
	if len(key) >= 8 {
		maxDist = 2
	}
	best, bestDist := "", maxDist+1
	for _, k := range known {
		if len(k) > len(key)+maxDist || len(key) > len(k)+maxDist {
			continue // at least that many insertions or deletions apart
		}
		if d := editDistance(key, k); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// NearName returns the name of known that name is probably a typo of, by
// nearKey's rule from 3 characters on, or "": what checks against the
// upstream's lists suggest.
func NearName(name string, known []string) string { return nearKey(name, known, 3) }

// entryTypo returns the entry key that a parameter name is probably a
// typo of, or "": parameter names of three letters or fewer are never
// taken for typos.
func entryTypo(name string) string { return nearKey(name, entryKeys, 4) }

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and transpositions of adjacent
// bytes each count one. Keys are ASCII (nameRE), so bytes are
// letters.
func editDistance(a, b string) int {
	// d[i][j] is the distance between a[:i] and b[:j]; three rows
	// suffice for the transposition step.
	var rows [3][24]int // on the stack for keys of up to 23 bytes
	var prev2, prev, cur []int
	if n := len(b) + 1; n <= len(rows[0]) {
		prev2, prev, cur = rows[0][:n], rows[1][:n], rows[2][:n]
	} else {
		prev2, prev, cur = make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	}
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// didYouMean is what a message adds for a suggestion s: nothing when
// there is none.
func didYouMean(s string) string {
	if s == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", s)
}

// unknownKeyMessage is the message for a key outside a closed set.
func unknownKeyMessage(key string, known []string) string {
	if s := nearKey(key, known, 3); s != "" {
		return "unknown key" + didYouMean(s)
	}
	return "unknown key (expected one of " + strings.Join(known, ", ") + ")"
}

// catalogParams lists the parameters the built-in catalog accepts for an
// entry's path: those of every endpoint of the API the path may stand for,
// a {name} segment on either side matching any segment.
func catalogParams(api, path string) []string {
	segs := strings.Split(path, "/")
	var out []string
	for _, ep := range Endpoints {
		if ep.API != api {
			continue
		}
		t := strings.Split(ep.Template, "/")
		if len(t) != len(segs) {
			continue
		}
		fits := true
		for i := range t {
			if t[i] != segs[i] && !strings.HasPrefix(t[i], "{") && !strings.HasPrefix(segs[i], "{") {
				fits = false
				break
			}
		}
		if fits {
			out = append(out, ep.Params...)
		}
	}
	return out
}
