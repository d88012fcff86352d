package fakeapi

import (
	"strconv"
	"time"
)

// Delay is when the rows of a series are published, measured from the
// close of the interval a row covers: the row of [s, s+W) becomes visible
// at s+W+delay, so a zero delay publishes it as its interval closes (the
// moment the next interval starts). A block row has no interval: its delay
// runs from its block time. A negative delay shows a row before its
// interval closes: -W shows each row as its interval starts, as a live
// upstream whose newest row is still filling would.
//
// The delay of each row is fixed by the series and the row time alone, so
// a row's visibility time can be computed ahead (Server.VisibleAt). Rows
// are published in order: a row whose own delay would make it visible
// before an earlier row waits for that row.
type Delay struct {
	// Base is the delay of every row (of the rows before DropAt when
	// DropAt is set).
	Base time.Duration
	// Jitter spreads each row's delay over [1-Jitter, 1+Jitter] times its
	// base, uniformly, by a hash of the series and the row time. 0.5 is
	// ±50 %. It is held to [0, 1].
	Jitter float64
	// DropAt, when set, changes the base delay to After for the rows
	// whose interval closes (block rows: whose block time is) at or after
	// it: a publisher that becomes faster, or slower, during a run.
	DropAt time.Time
	After  time.Duration
}

// jitter is the Jitter fraction held to [0, 1].
func (d Delay) jitter() float64 { return min(max(d.Jitter, 0), 1) }

// of is the delay of the row closing at closes; seed identifies the series.
func (d Delay) of(seed uint64, closes time.Time) time.Duration {
	base := d.Base
	if !d.DropAt.IsZero() && !closes.Before(d.DropAt) {
		base = d.After
	}
	j := d.jitter()
	if j == 0 || base == 0 {
		return base
	}
	u := unit(mix(seed ^ uint64(closes.UnixNano())))
	return time.Duration(float64(base) * (1 + j*(2*u-1)))
}

// bounds are the smallest and largest delay any row can have.
func (d Delay) bounds() (lo, hi time.Duration) {
	bases := []time.Duration{d.Base}
	if !d.DropAt.IsZero() {
		bases = append(bases, d.After)
	}
	j := d.jitter()
	lo, hi = d.Base, d.Base
	for _, b := range bases {
		for _, f := range []float64{1 - j, 1 + j} {
			v := time.Duration(float64(b) * f)
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	return lo, hi
}

// closes is the moment the row starting at row is complete: the end of its
// interval, or the block time for block rows.
func (tl timeline) closes(row time.Time) time.Time {
	if tl.window == "block" {
		return row
	}
	return row.Add(tl.step)
}

// published is when the row starting at row would appear on its own
// delay, ignoring the rows before it.
func (tl timeline) published(row time.Time) time.Time {
	c := tl.closes(row)
	return c.Add(tl.delay.of(tl.seed, c))
}

// visibleAt is when the row starting at row (a row start) is first
// served: when it and every earlier row are published. Rows more than the
// spread of delays before it are published before it anyway.
func (tl timeline) visibleAt(row time.Time) time.Time {
	lo, hi := tl.delay.bounds()
	v := tl.published(row)
	for r := row.Add(-tl.step); r.After(row.Add(lo - hi)); r = r.Add(-tl.step) {
		if p := tl.published(r); p.After(v) {
			v = p
		}
	}
	return v
}

// latest is the start of the newest row visible at now. Rows up to
// floor(now - close offset - longest delay) are visible whatever their
// jitter; past floor(now - offset - shortest delay) none is; in between
// the first row not yet published ends the visible run.
func (tl timeline) latest(now time.Time) time.Time {
	offset := tl.step
	if tl.window == "block" {
		offset = 0
	}
	lo, hi := tl.delay.bounds()
	last := floorTo(now.Add(-offset-lo), tl.step)
	r := floorTo(now.Add(-offset-hi), tl.step)
	for ; r.Before(last); r = r.Add(tl.step) {
		if tl.published(r.Add(tl.step)).After(now) {
			return r
		}
	}
	return last
}

// NewestVisible is the start of the newest row of the series (path,
// window, asset) that the server shows at time at. asset may be "" for v1
// paths, whose path names it. It is zero for windows without rows.
func (s *Server) NewestVisible(path, window, asset string, at time.Time) time.Time {
	tl := s.seriesTimeline(path, window, seriesAsset(path, asset))
	if tl.step <= 0 {
		return time.Time{}
	}
	return tl.latest(at)
}

// VisibleAt is when the row of the series (path, window, asset) starting
// at row is first shown; row is a row start (an interval start, or a
// block time). It is zero for windows without rows.
func (s *Server) VisibleAt(path, window, asset string, row time.Time) time.Time {
	tl := s.seriesTimeline(path, window, seriesAsset(path, asset))
	if tl.step <= 0 {
		return time.Time{}
	}
	return tl.visibleAt(row)
}

// RowStep is the spacing of the rows of the series: the window's length,
// or the block interval of its asset.
func (s *Server) RowStep(path, window, asset string) time.Duration {
	return s.seriesTimeline(path, window, seriesAsset(path, asset)).step
}

// String renders the delay for tables and messages: "7m0s", "7m0s±50%",
// "7m0s→42s at 2026-11-21T00:00:00Z".
func (d Delay) String() string {
	s := d.Base.String()
	if !d.DropAt.IsZero() {
		s += "→" + d.After.String() + " at " + d.DropAt.Format(time.RFC3339)
	}
	if j := d.jitter(); j > 0 {
		s += "±" + strconv.Itoa(int(j*100+0.5)) + "%"
	}
	return s
}
