package schedule

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestInstantJSONIsTimeJSON: an Instant writes what a time.Time in UTC
// writes and reads what it reads, the zero time and omitzero included,
// so that a state file reads the same to a version that keeps time.Time.
func TestInstantJSONIsTimeJSON(t *testing.T) {
	for _, tm := range []time.Time{
		{},
		time.Date(2026, 11, 20, 13, 34, 56, 0, time.UTC),
		time.Date(2026, 11, 20, 13, 34, 56, 123456789, time.UTC),
		time.Date(1970, 1, 1, 0, 0, 1, 0, time.UTC),
		time.Date(2200, 12, 31, 23, 0, 0, 0, time.UTC),
	} {
		want, _ := json.Marshal(tm)
		got, err := json.Marshal(InstantOf(tm))
		if err != nil || string(got) != string(want) {
			t.Errorf("%v written as %s (%v), want %s", tm, got, err, want)
		}
		var i Instant
		if err := json.Unmarshal(want, &i); err != nil || !i.Time().Equal(tm) || i.IsZero() != tm.IsZero() {
			t.Errorf("%s read as %v (%v), want %v", want, i, err, tm)
		}
	}
	type s struct {
		T Instant `json:"t,omitzero"`
	}
	if b, _ := json.Marshal(s{}); string(b) != "{}" {
		t.Errorf("omitzero wrote %s", b)
	}
	// A time of another zone is the same instant; null leaves it.
	var v s
	if err := json.Unmarshal([]byte(`{"t":"2026-11-20T15:34:56+02:00"}`), &v); err != nil || !v.T.Time().Equal(time.Date(2026, 11, 20, 13, 34, 56, 0, time.UTC)) {
		t.Errorf("an offset read as %v (%v)", v.T, err)
	}
	if err := json.Unmarshal([]byte(`{"t":null}`), &v); err != nil || v.T.IsZero() {
		t.Errorf("null read as %v (%v), want the time left", v.T, err)
	}
	if err := json.Unmarshal([]byte(`{"t":"not a time"}`), &v); err == nil {
		t.Error("not a time was read")
	}
}

// TestInstantFar: times an Instant does not hold read as the nearest it
// holds, which CheckInstant refuses and ForgetFar forgets.
func TestInstantFar(t *testing.T) {
	now := time.Date(2026, 11, 20, 13, 34, 56, 0, time.UTC)
	for _, tc := range []struct {
		in, problem string
	}{
		{`"9999-12-31T23:00:00Z"`, "newest is past the year 2262"},
		{`"0100-01-01T00:00:00Z"`, "newest is before 1970"},
		{`"1900-01-01T00:00:00Z"`, "newest 1900-01-01T00:00:00Z is before 1970"},
	} {
		var i Instant
		if err := json.Unmarshal([]byte(tc.in), &i); err != nil {
			t.Fatal(err)
		}
		if err := CheckInstant("newest", i, now, time.Hour); err == nil || !strings.HasPrefix(err.Error(), tc.problem) {
			t.Errorf("%s: %v, want %q", tc.in, err, tc.problem)
		}
	}
	far, near := InstantOf(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)), InstantOf(now)
	ForgetFar(&far, &near)
	if !far.IsZero() || !near.Time().Equal(now) {
		t.Errorf("ForgetFar left %v and %v, want none and %v", far, near, now)
	}
	if err := CheckInstant("newest", near, now, time.Hour); err != nil {
		t.Error(err)
	}
}
