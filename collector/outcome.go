package collector

import (
	"errors"
	"strconv"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// An outcome is what one refresh came to. Package upstream counts what it
// saw on the wire (requests, status codes, the API's error words, quota
// headers) as it happens; judge turns what came back into the tuple's
// outcome, and count adds, once, the codes of api_errors_total the
// answer itself earned: decode, no_data, bad_value, family_conflict,
// future_row, fields_over.
type outcome struct {
	// err is what the tuple fails with: the wire's, or the answer's
	// (nil: its values are served).
	err      error
	d        *decode.Answer
	values   []sampleOf
	problems []string
	counts   map[string]int
}

// decodeError is an answer that could not be read: not counted yet.
type decodeError struct{ msg string }

func (e *decodeError) Error() string { return e.msg }

// judge reads a refresh's result into its outcome; the caller holds the
// engine's lock (the families are the configuration's in force).
func (c *apiCollector) judge(up *upstream.Client, t *config.Tuple, d *decode.Answer, err error) outcome {
	o := outcome{err: err, d: d, counts: map[string]int{}}
	var de *decodeError
	switch {
	case errors.As(err, &de):
		o.fail(up, "decode", de.msg)
		return o
	case err != nil:
		return o // counted on the wire
	}
	var conflicts []string
	o.values, conflicts = c.fams.build(t, d.Samples)
	o.problems = append(append(o.problems, d.Problems...), conflicts...)
	switch {
	case len(o.values) == 0 && len(o.problems) > 0:
		// Rows were there, their values were not numbers or could not
		// become series (a family another tuple owns): say so.
		msg := o.problems[0]
		if n := len(o.problems); n > 1 {
			msg += " (and " + strconv.Itoa(n-1) + " more)"
		}
		code := "bad_value"
		if len(d.Problems) == 0 {
			// Every value was good: they are another series' family (a
			// field renamed onto a name another concept has).
			code = "family_conflict"
		}
		o.fail(up, code, msg)
	case len(o.values) == 0 && d.Future > 0:
		o.fail(up, "future_row", futureRows(d))
	case len(o.values) == 0:
		o.fail(up, "no_data", "the answer holds no value for any field")
	default:
		// Served, and what was left out of it counted.
		o.counts["bad_value"] += len(o.problems)
		o.counts["future_row"] += d.Future
	}
	o.counts["fields_over"] += d.FieldsDropped
	return o
}

// fail makes the outcome a failure of the answer's own.
func (o *outcome) fail(up *upstream.Client, code, msg string) {
	o.err = &upstream.Error{Code: code, Message: up.Clean(msg)}
	o.counts[code]++
}

// count adds the outcome's codes to api_errors_total, once.
func (o outcome) count(up *upstream.Client) {
	for code, n := range o.counts {
		if n > 0 {
			up.CountErrors(code, n)
		}
	}
}
