package upstream

import (
	"net/http"
	"testing"
	"time"
)

// The provider's clock is the median of the last answers' Date: a few
// answers from an edge whose clock is off, or a cached answer with an
// old Date, do not move it; a Date that does not parse is ignored.
func TestClockOffsetFromTheAnswersDate(t *testing.T) {
	var d dateClock
	if _, ok := d.offset(); ok {
		t.Fatal("an offset before any answer")
	}
	provider := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	here := provider.Add(-3 * time.Hour) // this member's clock is 3 h behind
	answer := func(date string) http.Header { return http.Header{"Date": {date}} }
	for i := range 12 {
		at := provider.Add(time.Duration(i) * time.Second)
		d.observe(answer(at.Format(http.TimeFormat)), here.Add(time.Duration(i)*time.Second))
	}
	d.observe(answer(provider.Add(-48*time.Hour).Format(http.TimeFormat)), here) // a cached answer
	d.observe(answer(provider.Add(time.Hour).Format(http.TimeFormat)), here)     // an edge whose clock is off
	d.observe(answer("yesterday, about noon"), here)
	for range dateSamples {
		d.observe(answer(time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC).Format(http.TimeFormat)), here) // garbage, however often
	}
	d.observe(http.Header{}, here)
	off, ok := d.offset()
	if !ok || (off+3*time.Hour).Abs() > time.Second {
		t.Errorf("offset %s (%v), want about -3h", off, ok)
	}
	// The ring keeps the last answers: the clock set right shows within
	// a ring's worth of answers.
	for i := range dateSamples {
		at := provider.Add(time.Minute + time.Duration(i)*time.Second)
		d.observe(answer(at.Format(http.TimeFormat)), at)
	}
	if off, _ := d.offset(); off.Abs() > time.Second {
		t.Errorf("offset %s after the clock was set right, want about 0", off)
	}
}
