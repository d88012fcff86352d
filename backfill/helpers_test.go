package backfill

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// now is the simulated time of the tests' fake upstream.
var now = time.Date(2026, 11, 20, 12, 34, 56, 0, time.UTC)

// env is a fake upstream and a configuration against it.
type env struct {
	t    *testing.T
	fake *fakeapi.Server
	url  string // the fake's address
	cfg  *config.Config
	pool *upstream.Pool
	logs *testtool.LogBuffer
	dir  string
}

// newEnv serves the fake through handler wrap (nil: as it is) and loads
// yml, where {{URL}} is the fake's address.
func newEnv(t *testing.T, yml string, wrap func(http.Handler) http.Handler) *env {
	t.Helper()
	var wraps []func(http.Handler) http.Handler
	if wrap != nil {
		wraps = append(wraps, wrap)
	}
	up := testtool.StartFake(t, fakeapi.Options{Now: func() time.Time { return now }}, wraps...)
	e := &env{t: t, fake: up.Fake, url: up.Srv.URL, cfg: up.Config(t, yml), logs: &testtool.LogBuffer{}, dir: t.TempDir()}
	e.pool = upstream.NewPool(prometheus.NewRegistry(), func() time.Time { return now }, log.NewNopLogger())
	t.Cleanup(e.pool.Close)
	return e
}

// dataConfig is a configuration of the data API's entries alone.
func dataConfig(entries string) string { return testtool.DataSection + entries }

// eventsEntry is a series longer than the largest limit in 100 days:
// 14 400 rows of 10 minutes.
const eventsEntry = `    - path: /v2/network/events-count
      asset: usdt
      window: 10min
`

// counted is a handler wrapper that counts the requests in calls and
// hands each, with its number (from 1), to before, then serves it.
func counted(calls *atomic.Int64, before func(n int64, r *http.Request)) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			before(calls.Add(1), r)
			h.ServeHTTP(w, r)
		})
	}
}

// options are those of a run to an OpenMetrics file in the test's
// directory, from days before now to now.
func (e *env) options(days int) Options {
	out := filepath.Join(e.dir, "out.om")
	return Options{From: now.AddDate(0, 0, -days).Truncate(24 * time.Hour), To: now, ToSet: true, Output: out,
		ProgressFile: out + ".progress.json", Labels: []Label{{"job", "onchain"}, {"instance", "host:9799"}},
		Logger: log.NewLogfmtLogger(e.logs), Now: func() time.Time { return now }, TempDir: e.dir}
}

func (e *env) run(o Options) *Summary {
	e.t.Helper()
	sum, err := Run(context.Background(), e.cfg, e.pool, o)
	if err != nil {
		e.t.Fatalf("run: %v\nlogs:\n%s", err, e.logs.String())
	}
	return sum
}

// point is one sample.
type point struct {
	ms int64
	v  float64
}

// parsed is an OpenMetrics file read back with Prometheus' own parser,
// checked for what the format and promtool require: one block per family,
// each series' samples together and in time order, a timestamp on every
// sample, and # EOF at the end.
type parsed struct {
	series map[string][]point // by labels.String(), __name__ included
	types  map[string]string  // family name -> type
	order  []string           // families in the order written
}

func parseOM(t *testing.T, path string) *parsed {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(b), "# EOF\n") {
		t.Fatalf("%s does not end in # EOF", path)
	}
	p := textparse.NewOpenMetricsParser(b, labels.NewSymbolTable())
	out := &parsed{series: map[string][]point{}, types: map[string]string{}}
	family := ""
	done := map[string]bool{} // series whose block of samples ended
	last := ""
	for {
		entry, err := p.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		switch entry {
		case textparse.EntryType:
			name, typ := p.Type()
			if _, seen := out.types[string(name)]; seen {
				t.Fatalf("family %s is written twice", name)
			}
			family = string(name)
			out.types[family] = string(typ)
			out.order = append(out.order, family)
		case textparse.EntrySeries:
			var l labels.Labels
			p.Labels(&l)
			_, ts, v := p.Series()
			if ts == nil {
				t.Fatalf("%s has no timestamp", l)
			}
			name := l.Get("__name__")
			if name != family && name != family+"_total" {
				t.Fatalf("%s is written under family %s", l, family)
			}
			key := l.String()
			if key != last {
				if done[key] {
					t.Fatalf("the samples of %s are not together", key)
				}
				done[last] = true
				last = key
			}
			pts := out.series[key]
			if n := len(pts); n > 0 && pts[n-1].ms >= *ts {
				t.Fatalf("%s: sample at %d after one at %d", key, *ts, pts[n-1].ms)
			}
			out.series[key] = append(pts, point{*ts, v})
		}
	}
	return out
}

// find returns the one series of family carrying every label of want.
func (p *parsed) find(t *testing.T, family string, want map[string]string) []point {
	t.Helper()
	var found []string
	for key := range p.series {
		l, err := parseLabels(key)
		if err != nil {
			t.Fatal(err)
		}
		ok := l["__name__"] == family
		for k, v := range want {
			ok = ok && l[k] == v
		}
		if ok {
			found = append(found, key)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d series of %s with %v, want 1: %v", len(found), family, want, found)
	}
	return p.series[found[0]]
}

// parseLabels reads labels.String() back.
func parseLabels(s string) (map[string]string, error) {
	m := map[string]string{}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}")
	for s != "" {
		name, rest, ok := strings.Cut(s, `="`)
		if !ok {
			return nil, fmt.Errorf("bad labels %q", s)
		}
		var value strings.Builder
		i := 0
		for ; i < len(rest) && rest[i] != '"'; i++ {
			if rest[i] == '\\' {
				i++
			}
			value.WriteByte(rest[i])
		}
		m[strings.TrimSpace(name)] = value.String()
		s = strings.TrimPrefix(strings.TrimPrefix(rest[i+1:], ","), " ")
	}
	return m, nil
}

// upstreamRows asks the fake directly, without the exporter's client or
// decoder, for the rows of a data series between from and to, and
// returns field -> row time -> value.
func (e *env) upstreamRows(path string, q map[string]string, fields ...string) map[string]map[time.Time]float64 {
	e.t.Helper()
	qv := url.Values{}
	for k, v := range q {
		qv.Set(k, v)
	}
	var body struct {
		Result struct {
			Data []map[string]any `json:"data"`
		} `json:"result"`
	}
	testtool.FetchJSON(e.t, e.url+path+"?"+qv.Encode(), &body)
	out := map[string]map[time.Time]float64{}
	for _, row := range body.Result.Data {
		var at time.Time
		for _, layout := range []string{time.DateOnly, time.DateTime} {
			for _, k := range []string{"date", "datetime"} {
				if s, ok := row[k].(string); ok {
					if tm, err := time.Parse(layout, s); err == nil {
						at = tm
					}
				}
			}
		}
		if at.IsZero() {
			e.t.Fatalf("row without a time: %v", row)
		}
		for _, f := range fields {
			if v, ok := row[f].(float64); ok {
				if out[f] == nil {
					out[f] = map[time.Time]float64{}
				}
				out[f][at] = v
			}
		}
	}
	return out
}

// sortedTimes are the keys of m, oldest first.
func sortedTimes(m map[time.Time]float64) []time.Time {
	out := make([]time.Time, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return out
}
