package decode

import (
	"testing"
	"time"
)

const hourNetflowYAML = `
data:
  url: http://127.0.0.1:1
  token_env: T
  metrics:
    - path: /v1/btc/exchange-flows/netflow
      exchange: binance
      window: hour
`

// One row dated 9999-12-31 23:00 (issue 26) is not taken as the newest:
// LatestAt serves the newest row within one spacing of now, plans from
// it (Newest, Interval), and reports the future row for the engine to
// count as future_row. Read without a now, every row is trusted.
func TestLatestAtLeavesFutureRowsOut(t *testing.T) {
	tp := tupleFor(t, hourNetflowYAML)
	now := time.Date(2026, 11, 20, 12, 34, 56, 0, time.UTC)
	body := []byte(`{"status":{"code":200,"message":"success"},"result":{"window":"hour","data":[
		{"datetime":"9999-12-31 23:00:00","netflow_total":999},
		{"datetime":"2026-11-20 21:00:00","netflow_total":21},
		{"datetime":"2026-11-20 13:00:00","netflow_total":13},
		{"datetime":"2026-11-20 12:00:00","netflow_total":12},
		{"datetime":"2026-11-20 11:00:00","netflow_total":11}]}}`)
	root, err := Parse(body, 1000)
	if err != nil {
		t.Fatal(err)
	}
	d, err := LatestAt(root, tp, "result.data", now)
	if err != nil {
		t.Fatal(err)
	}
	// 13:00 is within an hour of 12:34:56; 21:00 (a local time written
	// as UTC) and 9999 are not.
	want13 := time.Date(2026, 11, 20, 13, 0, 0, 0, time.UTC)
	if got := values(d); got["exchange_netflow{}"] != 13 || !d.Newest.Equal(want13) || !d.RowTime.Equal(want13) || d.Interval != time.Hour {
		t.Errorf("served %v, newest %s, row time %s, spacing %s", got, d.Newest, d.RowTime, d.Interval)
	}
	if d.Future != 2 || !d.FutureAt.Equal(time.Date(9999, 12, 31, 23, 0, 0, 0, time.UTC)) {
		t.Errorf("Future %d, FutureAt %s; want 2 and 9999-12-31T23:00:00Z", d.Future, d.FutureAt)
	}
	old, err := LatestAt(root, tp, "result.data", time.Time{})
	if err != nil || old.Future != 0 || old.Newest.Year() != 9999 {
		t.Errorf("read without a now: %v, future %d, newest %s; want every row trusted", err, old.Future, old.Newest)
	}

	// Only future rows: no value, nothing to plan from, the rows counted.
	only := []byte(`{"status":{"code":200,"message":"success"},"result":{"window":"hour","data":[{"datetime":"9999-12-31 23:00:00","netflow_total":999}]}}`)
	root, _ = Parse(only, 1000)
	d, err = LatestAt(root, tp, "result.data", now)
	if err != nil || len(d.Samples) != 0 || !d.Newest.IsZero() || d.Future != 1 {
		t.Errorf("future rows only: %v, %d samples, newest %s, future %d", err, len(d.Samples), d.Newest, d.Future)
	}
}

// The tolerance is one row spacing, or DefaultFutureTolerance without a
// window.
func TestFutureTolerance(t *testing.T) {
	if got := FutureTolerance(tupleFor(t, hourNetflowYAML)); got != time.Hour {
		t.Errorf("hour rows: %s", got)
	}
	windowless := tupleFor(t, hourNetflowYAML)
	windowless.Window = ""
	if got := FutureTolerance(windowless); got != DefaultFutureTolerance {
		t.Errorf("no window: %s", got)
	}
}
