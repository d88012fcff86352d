package decode

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// A listing endpoint (/analyst-views, /calls) may answer counts per stance
// ({"stance": "bullish", "count": 12}) or the items, one row per analyst
// ({"handle": "...", "direction": "bullish"}); both give the same series.

// stanceFields name a stance in payloads seen in the wild: a label of one
// of these names no row carries is read from the one other the rows carry.
var stanceFields = []string{"stance", "direction", "view", "sentiment", "position", "side", "signal", "bias", "outlook"}

// vocabularies are closed sets of stance words: when every item has a
// word of one set, the words no item has count 0.
var vocabularies = [][]string{{"bullish", "bearish", "neutral"}, {"long", "short"}, {"buy", "hold", "sell"}}

// labelSources returns the row field each label field is read from and,
// for the log, those read from a field of another name. Pinned labels
// (labels:) are read as named.
func labelSources(rows []row, t *config.Tuple, pinned bool) ([]string, string) {
	src := slices.Clone(t.LabelFields())
	if pinned {
		return src, ""
	}
	var from []string
	for i, l := range src {
		if !slices.Contains(stanceFields, l) || slices.ContainsFunc(rows, func(r row) bool { _, ok := r.obj[l]; return ok }) {
			continue
		}
		var found []string
		for _, f := range stanceFields {
			if f != l && !slices.Contains(src, f) && slices.ContainsFunc(rows, func(r row) bool { _, ok := r.obj[f].(string); return ok }) {
				found = append(found, f)
			}
		}
		if len(found) == 1 {
			src[i] = found[0]
			from = append(from, l+"="+found[0])
		}
	}
	return src, strings.Join(from, ",")
}

// countItems turns items into counts: when the tuple's value is a count
// (countField), no row carries any of its fields (not even null) and rows
// carry the label fields as words, the rows become one per combination of
// words, counting its items, at the newest item's time. Rows without the
// words are reported, not counted. It returns the label fields counted
// by, "" when the rows are left as they are.
func countItems(rows []row, t *config.Tuple, labelsFrom []string) ([]row, string, []string) {
	field := countField(t)
	if len(labelsFrom) == 0 || field == "" || len(rows) == 0 {
		return rows, "", nil
	}
	if slices.ContainsFunc(rows, func(r row) bool { return holdsField(r.obj, t.Fields) }) {
		return rows, "", nil
	}
	counts := map[string]int{}
	words := map[string][]string{}
	var newest time.Time
	missing := 0
	for _, r := range rows {
		vals := make([]string, len(labelsFrom))
		for i, f := range labelsFrom {
			vals[i], _ = r.obj[f].(string)
		}
		if slices.Contains(vals, "") {
			missing++
			continue
		}
		g := strings.Join(vals, "\xff")
		counts[g]++
		words[g] = vals
		if r.time.After(newest) {
			newest = r.time
		}
	}
	if len(counts) == 0 {
		return rows, "", nil
	}
	if len(labelsFrom) == 1 {
		fillVocabulary(counts, words)
	}
	out := make([]row, 0, len(counts))
	for _, g := range slices.Sorted(maps.Keys(counts)) {
		obj := map[string]any{field: json.Number(strconv.Itoa(counts[g]))}
		for i, f := range labelsFrom {
			obj[f] = words[g][i]
		}
		out = append(out, row{obj: obj, time: newest})
	}
	var problems []string
	if missing > 0 {
		verb := "items have no %s and were not counted"
		if missing == 1 {
			verb = "items has no %s and was not counted" // "1 of 3 items has"
		}
		problems = append(problems, fmt.Sprintf("%d of %d "+verb, missing, len(rows), strings.Join(labelsFrom, ", ")))
	}
	return out, strings.Join(labelsFrom, ","), problems
}

// fillVocabulary counts 0 for the words of a vocabulary no item has.
func fillVocabulary(counts map[string]int, words map[string][]string) {
	for _, vocab := range vocabularies {
		all := true
		for g := range counts {
			all = all && slices.Contains(vocab, g)
		}
		if !all {
			continue
		}
		for _, w := range vocab {
			if _, ok := counts[w]; !ok {
				counts[w] = 0
				words[w] = []string{w}
			}
		}
		return
	}
}

// countField is the field of the tuple that holds a count: "count", or its
// only field.
func countField(t *config.Tuple) string {
	if _, ok := t.Fields["count"]; ok {
		return "count"
	}
	if len(t.Fields) == 1 {
		for name, f := range t.Fields {
			if f.KeyLabel == "" {
				return name
			}
		}
	}
	return ""
}

// paginated says, for the log, whether the answer around counted items
// holds only a page of them (a total above them, a next page); "" when
// nothing says so.
func paginated(root map[string]any, items int) string {
	if root == nil {
		return ""
	}
	for _, k := range []string{"total", "total_count", "totalCount", "count"} {
		if v, ok := root[k]; ok {
			if n, err := strconv.ParseFloat(LabelValue(v), 64); err == nil && n > float64(items) {
				return fmt.Sprintf("the answer lists %d of %g items (%s): the counts are of this page only", items, n, k)
			}
		}
	}
	for _, k := range []string{"next", "next_page", "nextPage", "next_cursor", "has_more", "hasMore"} {
		if s, _ := root[k].(string); s != "" || root[k] == true {
			return fmt.Sprintf("the answer has a next page (%s): the counts are of this page only", k)
		}
	}
	return ""
}
