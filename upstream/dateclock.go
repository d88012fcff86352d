package upstream

import (
	"net/http"
	"slices"
	"sync"
	"time"
)

// The provider's clock, from every answer's Date (RFC 9110 §6.6.1, whole
// seconds). A cluster takes it as its clock (cluster.Config.Reference):
// two members that disagree cannot tell which is wrong, the provider's
// answers can, and no peer can move them.

// dateSamples is how many answers' Date the offset is the median of, so
// that a few from an edge whose clock is off, or cached ones, do not move
// it.
const dateSamples = 15

// maxDateOffset bounds what an answer's Date may say of this member's
// clock: a day off is still measured; years away is garbage.
const maxDateOffset = 7 * 24 * time.Hour

// dateClock keeps the offsets of the last answers.
type dateClock struct {
	mu      sync.Mutex
	offsets []time.Duration // ring of the last dateSamples
	next    int
}

// observe notes the Date of an answer received at now (this member's
// clock), if it parses.
func (d *dateClock) observe(h http.Header, now time.Time) {
	v := h.Get("Date")
	if v == "" {
		return
	}
	sent, err := http.ParseTime(v)
	if err != nil {
		return
	}
	// Date is truncated to the second: the middle of its second.
	off := now.Sub(sent.Add(500 * time.Millisecond))
	if off.Abs() > maxDateOffset {
		return // a proxy's or a broken edge's date, not a clock
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.offsets) < dateSamples {
		d.offsets = append(d.offsets, off)
		return
	}
	d.offsets[d.next] = off
	d.next = (d.next + 1) % dateSamples
}

// offset is this member's clock less the provider's, the median of the
// last answers; false before any answer carried a Date.
func (d *dateClock) offset() (time.Duration, bool) {
	d.mu.Lock()
	s := slices.Clone(d.offsets)
	d.mu.Unlock()
	if len(s) == 0 {
		return 0, false
	}
	slices.Sort(s)
	return s[len(s)/2], true
}

// ClockOffset is this member's clock less the upstreams' (network time
// included: well under a second); false until an answer carried a Date.
func (p *Pool) ClockOffset() (time.Duration, bool) { return p.m.dates.offset() }
