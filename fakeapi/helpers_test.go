package fakeapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/testtool/simclock"
)

// t0 is the default test time: a Sunday, mid-morning UTC.
var t0 = time.Date(2026, 11, 22, 10, 17, 30, 0, time.UTC)

func newClock(t time.Time) *simclock.Clock { return simclock.New(t) }

func newTestServer(o Options) (*Server, *simclock.Clock) {
	c := newClock(t0)
	o.Now = c.Now
	return New(o), c
}

// get serves one GET through the handler; hdr is name, value pairs.
func get(t *testing.T, s http.Handler, target string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, r)
	return rec
}

// httpRecorder serves r through h.
func httpRecorder(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

func bytesBuffer(b []byte) *bytes.Buffer { return bytes.NewBuffer(b) }

// decode parses a JSON body with numbers kept as json.Number.
func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, b)
	}
	return m
}

// envelope is a decoded data API answer.
type envelope struct {
	code    int
	message string
	window  string
	rows    []map[string]any
	result  map[string]any
}

func parseEnvelope(t *testing.T, rec *httptest.ResponseRecorder) envelope {
	t.Helper()
	m := decode(t, rec.Body.Bytes())
	st, ok := m["status"].(map[string]any)
	if !ok {
		t.Fatalf("no status object: %s", rec.Body)
	}
	res, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result object: %s", rec.Body)
	}
	code, _ := st["code"].(json.Number).Int64()
	e := envelope{code: int(code), message: st["message"].(string), result: res}
	e.window, _ = res["window"].(string)
	if data, ok := res["data"].([]any); ok {
		for _, r := range data {
			e.rows = append(e.rows, r.(map[string]any))
		}
	}
	return e
}

// rowsOf fetches a data API path that must answer 200.
func rowsOf(t *testing.T, s http.Handler, target string) envelope {
	t.Helper()
	rec := get(t, s, target)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d %s", target, rec.Code, rec.Body)
	}
	e := parseEnvelope(t, rec)
	if e.code != 200 {
		t.Fatalf("GET %s: status.code %d", target, e.code)
	}
	return e
}

func num(t *testing.T, v any) float64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%v (%T) is not a JSON number", v, v)
	}
	f, err := n.Float64()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// rowTime reads the time key of a data row.
func rowTime(t *testing.T, row map[string]any) time.Time {
	t.Helper()
	for _, k := range []string{"datetime", "date"} {
		if v, ok := row[k].(string); ok {
			for _, layout := range []string{time.DateTime, time.DateOnly} {
				if tm, err := time.Parse(layout, v); err == nil {
					return tm
				}
			}
			t.Fatalf("bad time %q", v)
		}
	}
	t.Fatalf("row without time key: %v", row)
	return time.Time{}
}
