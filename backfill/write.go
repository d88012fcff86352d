package backfill

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-kit/log/level"
)

// Writing one fetched series: its samples to the sink, oldest first, then
// the record of it in the progress file, at once or, for a remote-write
// target that is read back (verify.go), once it was found there.

// write writes one fetched series and records it.
func (r *runner) write(oc *outcome) error {
	defer r.done.Add(1)
	t := oc.t
	kv := []any{"api", t.API, "endpoint", t.Path, "query", t.Query().Encode()}
	if oc.err != nil {
		var te *tupleError
		switch {
		case errors.As(oc.err, &te) && te.kind == refused:
			r.sum.Refused++
			level.Warn(r.o.Logger).Log(append(kv, "msg", "the upstream refuses this series; it is skipped", "err", te.err)...)
		case errors.As(oc.err, &te) && te.kind == notTried:
			r.sum.NotTried++
			level.Debug(r.o.Logger).Log(append(kv, "msg", "series left for a later run", "err", te.err)...)
		case errors.Is(oc.err, context.Canceled):
			r.sum.NotTried++
		default:
			r.sum.Failed++
			level.Warn(r.o.Logger).Log(append(kv, "msg", "series not written; run again to retry it", "err", oc.err)...)
		}
		return nil
	}
	if ps := firstProblems(oc.ts.problems, 3); len(ps) > 0 {
		level.Warn(r.o.Logger).Log(append(kv, "msg", "some values of the series' rows were skipped", "problems", fmt.Sprint(ps))...)
	}
	var samples int64
	lastMs := r.o.To.UnixMilli()
	refusedBefore := r.sink.refused()
	var points []checkPoint // each series' oldest and newest sample
	for i, def := range oc.ts.defs {
		var first, last, n int64
		err := r.sink.series(def, func(add func(int64, float64) error) error {
			count := func(ms int64, v float64) error {
				if n == 0 {
					first = ms
				}
				samples, n, last = samples+1, n+1, ms
				return add(ms, v)
			}
			return replay(oc.sp, i, r.o.Step, oc.spacing, lastMs, count)
		})
		if err != nil {
			return fmt.Errorf("writing %s: %w", def.text, err)
		}
		if n > 0 {
			points = append(points, checkPoint{idx: i, ms: last, newest: true})
		}
		if n > 1 {
			points = append(points, checkPoint{idx: i, ms: first})
		}
	}
	sizes, err := r.sink.commit()
	if err != nil {
		return err
	}
	if n := r.sink.refused() - refusedBefore; n > 0 {
		// Not recorded: a run after the target is fixed sends it again.
		r.sum.Failed++
		level.Warn(r.o.Logger).Log(append(kv, "msg", "the target refused some series of this tuple; it is not recorded as written, so that the next run sends it again", "refused_series", n)...)
		return nil
	}
	record := func() {
		// Each family's HELP, type and claim, the lengths of the
		// OpenMetrics parts, and the series as written.
		fams := r.prog.file.Families
		for _, def := range oc.ts.defs {
			rec := familyRecord{Help: def.fam.Help, Type: def.fam.Type, Size: fams[def.fam.Name].Size}
			if def.claim != nil {
				rec.Owner, rec.Labels = t.LabelGroup(), def.claim
			}
			fams[def.fam.Name] = rec
		}
		for name, n := range sizes {
			f := fams[name]
			f.Size = n
			fams[name] = f
		}
		oc.rec.Samples = samples
		r.prog.file.Series[t.Key] = oc.rec
		r.prog.dirty = true
		r.sum.Written++
		r.sum.Rows += int64(oc.rec.Rows)
		r.sum.Samples += samples
		r.rows.Add(int64(oc.rec.Rows))
		level.Debug(r.o.Logger).Log(append(kv, "msg", "series written", "rows", oc.rec.Rows, "samples", samples, "calls", oc.rec.Calls)...)
	}
	if r.ver != nil {
		r.ver.add(&pendingCheck{defs: oc.ts.defs, points: points, record: record, dropped: func(missing []string, series int) {
			r.sum.Failed++
			r.sum.Dropped += series
			shown := missing[:min(len(missing), 3)]
			level.Warn(r.o.Logger).Log(append(kv, "msg", "the target acknowledged samples it does not hold; the tuple is not recorded as written, so that a run after the target is fixed sends it again",
				"series_dropped", series, "missing", strings.Join(shown, "; "), "hint", droppedHint)...)
		}})
	} else {
		record()
	}
	r.saveBudgets()
	return r.prog.save(r.o.Now(), false)
}

// droppedHint says what usually makes a target drop what it acknowledged.
const droppedHint = "samples older than the target's retention are dropped (VictoriaMetrics answers 204 and keeps none; its -retentionPeriod is 1 month by default): raise the retention beyond --from and run again; docs/history.md says what each target needs"

// replay hands one series of a spool to add: each sample, or with a step
// the row's value every step until the next row's time, the last one
// until its spacing ends or lastMs.
func replay(sp *spool, idx int, step, spacing time.Duration, lastMs int64, add func(int64, float64) error) error {
	if step <= 0 {
		return sp.replay(idx, add)
	}
	st := step.Milliseconds()
	fill := func(from int64, v float64, until int64) error {
		for ms := from; ms < until; ms += st {
			if err := add(ms, v); err != nil {
				return err
			}
		}
		return nil
	}
	var prevMs int64
	var prev float64
	have := false
	err := sp.replay(idx, func(ms int64, v float64) error {
		if have {
			if err := fill(prevMs, prev, ms); err != nil {
				return err
			}
		}
		prevMs, prev, have = ms, v, true
		return nil
	})
	if err != nil || !have {
		return err
	}
	return fill(prevMs, prev, min(prevMs+max(spacing.Milliseconds(), 1), lastMs+1))
}
