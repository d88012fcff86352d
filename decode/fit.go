package decode

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/internal/text"
)

// What an answer for a tuple can give, checked where samples come from
// outside the decoder (a peer's row, a state file: collector.admit); the
// inverse of newSample.

// MaxRows is the most items an answer's arrays are read with: the
// exporter asks for a few rows (limit).
const MaxRows = 1000

// Fit says why samples are not what an answer for t can give, or nil:
// each field, by its family name, one the file lists or (all fields) one
// the naming rule gives, at most max_fields of those, with the labels its
// field and the tuple give. Each sample then takes the file's field (its
// help, type, scale), not the one sent.
func Fit(t *config.Tuple, samples []Sample) error {
	// Fields of one family name differ by their constant labels.
	byName := make(map[string][]*config.Field, len(t.Fields))
	for _, f := range t.Fields {
		byName[f.Name] = append(byName[f.Name], f)
	}
	derived := map[string]bool{}
	for i := range samples {
		x := &samples[i]
		if x.Field == nil {
			return fmt.Errorf("sample %d has no field", i)
		}
		candidates := byName[x.Field.Name]
		if candidates == nil && t.AllNumeric {
			if g := t.DerivedField(source(x.Field)); g.Name == x.Field.Name {
				candidates = []*config.Field{g}
				derived[g.Name] = true
			}
		}
		err := fmt.Errorf("field %q is not one the file asks of this tuple", text.Clip(x.Field.Name, 64, "…"))
		for _, g := range candidates {
			if err = fitLabels(t, g, x); err == nil {
				x.Field = g
				break
			}
			err = fmt.Errorf("field %q: %w", g.Name, err)
		}
		if err != nil {
			return err
		}
	}
	if n, most := len(derived), t.Entry.FieldLimit(); n > most {
		return fmt.Errorf("%d fields outside the catalog, beyond max_fields=%d", n, most)
	}
	return nil
}

// fitLabels says why a sample's labels are not those its field and tuple
// give (newSample), or nil.
func fitLabels(t *config.Tuple, f *config.Field, x *Sample) error {
	names := labelNames(t, f, len(x.ExtraNames()))
	if !slices.Equal(x.ExtraNames(), names) || len(x.ExtraValues()) != len(names) {
		return fmt.Errorf("labels %q are not %q", text.Clip(strings.Join(x.ExtraNames(), ","), 128, "…"), strings.Join(names, ","))
	}
	n := len(t.LabelFields())
	for i, k := range names[n : n+len(f.Labels)] {
		if v := x.ExtraValues()[n+i]; v != f.Labels[k] {
			return fmt.Errorf("label %s is %q, not %q", k, text.Clip(v, 64, "…"), f.Labels[k])
		}
	}
	return nil
}

// labelNames are the label names of a sample of f with n labels: the
// tuple's label fields, f's constant labels by name, and its key label
// when n says there is one.
func labelNames(t *config.Tuple, f *config.Field, n int) []string {
	names := append(slices.Clone(t.LabelFields()), slices.Sorted(maps.Keys(f.Labels))...)
	if f.KeyLabel != "" && n == len(names)+1 {
		names = append(names, f.KeyLabel)
	}
	return names
}

// MaxKeys bounds the keys of a field whose value is an object of numbers
// (a key label).
const MaxKeys = 1000

// MaxSamples is the most samples an answer for t gives: its fields and
// max_fields more (all fields), times the series a label tells apart
// (limit, at most MaxRows), times MaxKeys for a keyed field.
func MaxSamples(t *config.Tuple) int {
	fields, keyed := len(t.Fields), false
	for _, f := range t.Fields {
		keyed = keyed || f.KeyLabel != ""
	}
	if t.AllNumeric {
		fields += t.Entry.FieldLimit()
	}
	groups := 1
	if len(t.LabelFields()) > 0 {
		groups = MaxRows
		if n, err := strconv.Atoi(t.Query().Get("limit")); err == nil && n > 0 {
			groups = min(n, MaxRows)
		}
	}
	if keyed {
		groups *= MaxKeys
	}
	return max(fields, 1) * groups
}

// Wire is a sample as cluster members send it: the key of its field in
// the tuple's fields (or, D, the answer's name of a field outside the
// catalog), its label values and value. The field itself is the
// receiver's own (both have the file), so a row stays small.
type Wire struct {
	F string   `json:"f"`
	D bool     `json:"d,omitempty"`
	L []string `json:"l,omitempty"`
	V float64  `json:"v"`
}

// ToWire is a tuple's samples as a member sends them.
func ToWire(t *config.Tuple, samples []Sample) []Wire {
	out := make([]Wire, 0, len(samples))
	for _, x := range samples {
		w := Wire{L: x.ExtraValues(), V: x.Value}
		for k, f := range t.Fields {
			if f == x.Field {
				w.F = k
			}
		}
		if w.F == "" && x.Field != nil {
			w.F, w.D = source(x.Field), true
		}
		out = append(out, w)
	}
	return out
}

// Refit gives a state file's samples of fields outside the tuple's own
// those fields as named today, or says which is named otherwise now (the
// entry is then not taken). Fields the tuple lists are left as they are:
// the tuple's digest holds them.
func Refit(t *config.Tuple, samples []Sample) error {
	for i := range samples {
		x := &samples[i]
		if x.Field == nil || x.Field.Source == "" && !strings.HasPrefix(x.Field.Help, "Field ") {
			continue
		}
		if !t.AllNumeric {
			return fmt.Errorf("field %q is not one the file asks of this tuple", text.Clip(x.Field.Name, 64, "…"))
		}
		g := t.DerivedField(source(x.Field))
		if g.Name != x.Field.Name {
			return fmt.Errorf("field %s is named %s now, not %s", text.Clip(source(x.Field), 64, "…"), g.Name, text.Clip(x.Field.Name, 64, "…"))
		}
		x.Field = g
	}
	return nil
}

// source is the row field a family outside the tuple's fields comes from:
// its Source, or in an older state file the field its HELP names
// ("Field <field> of ...").
func source(f *config.Field) string {
	if f.Source != "" {
		return f.Source
	}
	raw, _, _ := strings.Cut(strings.TrimPrefix(f.Help, "Field "), " of ")
	return raw
}

// FromWire is the samples a member sent for t, each field the file's
// own; false when one names no field of t. Their labels are checked by
// Fit.
func FromWire(t *config.Tuple, ws []Wire) ([]Sample, bool) {
	out := make([]Sample, 0, len(ws))
	for _, w := range ws {
		f := t.Fields[w.F]
		if w.D && t.AllNumeric {
			f = t.DerivedField(w.F)
		}
		if f == nil {
			return nil, false
		}
		out = append(out, Sample{Field: f, Extra: ExtraOf(labelNames(t, f, len(w.L)), w.L), Value: w.V})
	}
	return out, true
}

// Fields counts the distinct fields of samples.
func Fields(samples []Sample) int {
	seen := map[*config.Field]bool{}
	for _, s := range samples {
		seen[s.Field] = true
	}
	return len(seen)
}
