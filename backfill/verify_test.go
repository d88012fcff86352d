package backfill

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
)

// queryAPI serves /api/v1/query over what a receiver kept, for the
// queries the read-back sends: each is parsed with Prometheus' own PromQL
// parser, so that one Prometheus would refuse fails here too. hide
// answers the first queries with nothing, as a target that shows a new
// series to queries some seconds after acknowledging it. With late set,
// a sample not in known (what the target held before) is left out of
// the first late answers that would hold it, as a loaded target shows
// the samples new to it some time after those it held already.
type queryAPI struct {
	t       *testing.T
	rv      *receiver
	mu      sync.Mutex
	queries int
	hide    int
	late    int
	known   map[string][]point
	asked   map[string]int // by series and sample time, with late
	held    int            // samples left out, with late
}

// snapshot sets known to what the receiver holds now.
func (qa *queryAPI) snapshot() {
	qa.rv.mu.Lock()
	defer qa.rv.mu.Unlock()
	qa.known = map[string][]point{}
	for k, pts := range qa.rv.series {
		qa.known[k] = slices.Clone(pts)
	}
}

// visible says whether a sample shows in this answer (qa.mu held).
func (qa *queryAPI) visible(key string, p point) bool {
	if qa.late == 0 || slices.Contains(qa.known[key], p) {
		return true
	}
	id := key + "@" + strconv.FormatInt(p.ms, 10)
	qa.asked[id]++
	if qa.asked[id] <= qa.late {
		qa.held++
		return false
	}
	return true
}

func (qa *queryAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/api/v1/query" || r.Header.Get("X-Scope-OrgID") != "tenant-1" {
		qa.t.Errorf("query %s %s, X-Scope-OrgID %q", r.Method, r.URL.Path, r.Header.Get("X-Scope-OrgID"))
	}
	sec, err := strconv.ParseFloat(r.FormValue("time"), 64)
	if err != nil {
		http.Error(w, `{"status":"error","error":"bad time"}`, http.StatusBadRequest)
		return
	}
	ms := int64(sec*1000 + 0.5)
	if r.FormValue("query") == "vector(1)" { // the probe before the run
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[%g,"1"]}]}}`, sec)
		return
	}
	expr, err := parser.NewParser(parser.Options{}).ParseExpr(r.FormValue("query"))
	if err != nil {
		qa.t.Errorf("the read-back's query is not PromQL: %v\n%s", err, r.FormValue("query"))
		http.Error(w, `{"status":"error","error":"bad query"}`, http.StatusBadRequest)
		return
	}
	qa.mu.Lock()
	defer qa.mu.Unlock()
	qa.queries++
	hidden := qa.queries <= qa.hide
	if qa.asked == nil {
		qa.asked = map[string]int{}
	}
	type result struct {
		Metric map[string]string `json:"metric"`
		Values [][2]any          `json:"values"`
	}
	results := []result{}
	ms2, ok := expr.(*parser.MatrixSelector)
	if !ok {
		qa.t.Errorf("the read-back's query is not a range selector: %s", expr)
		return
	}
	vs := ms2.VectorSelector.(*parser.VectorSelector)
	qa.rv.mu.Lock()
	for key, pts := range qa.rv.series {
		l, err := parseLabels(key)
		if err != nil {
			qa.t.Fatal(err)
		}
		all := true
		for _, m := range vs.LabelMatchers {
			all = all && m.Matches(l[m.Name])
		}
		if !all || hidden {
			continue
		}
		var values [][2]any
		for _, p := range pts {
			if p.ms > ms-int64(ms2.Range/time.Millisecond) && p.ms <= ms && qa.visible(key, p) {
				values = append(values, [2]any{float64(p.ms) / 1000, strconv.FormatFloat(p.v, 'g', -1, 64)})
			}
		}
		if len(values) > 0 {
			results = append(results, result{l, values})
		}
	}
	qa.rv.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": "matrix", "result": results}})
}

// newStore is a remote-write receiver and its query API on one address.
func newStore(t *testing.T, keepFrom time.Time) (*receiver, *queryAPI, string) {
	return newStoreQuery(t, keepFrom, nil)
}

// newStoreQuery is newStore whose query API is q (nil: a queryAPI).
func newStoreQuery(t *testing.T, keepFrom time.Time, q http.Handler) (*receiver, *queryAPI, string) {
	rv := &receiver{t: t, series: map[string][]point{}, keepFrom: keepFrom.UnixMilli(), merge: true}
	qa := &queryAPI{t: t, rv: rv}
	if q == nil {
		q = qa
	}
	mux := http.NewServeMux()
	mux.Handle("/api/v1/write", rv)
	mux.Handle("/api/v1/query", q)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return rv, qa, srv.URL
}

// checkedOptions are those of a run that reads back through base's
// query API, asking for a sample not found until wait has passed. A
// sample that is there is found on the first try, so a short wait
// changes only how soon what is missing is reported.
func checkedOptions(t *testing.T, e *env, base string, wait time.Duration) Options {
	o := remoteOptions(t, e, base+"/api/v1/write", 1000)
	o.RemoteWrite.QueryURL = QueryURLFor(o.RemoteWrite.URL)
	o.RemoteWrite.ReadBackWait = wait
	o.RemoteWrite.checkTimes = &[2]time.Duration{0, 10 * time.Millisecond}
	return o
}

// TestReadBackFindsWhatTheTargetDropped: a target that acknowledges and
// drops what is older than its retention (VictoriaMetrics with its
// default month) has every tuple with older rows left unrecorded, named
// with the sample it lacks and the fix; run again once the retention
// is raised, those tuples are sent again and the history is whole.
func TestReadBackFindsWhatTheTargetDropped(t *testing.T) {
	e := newEnv(t, mixedConfig, nil)
	rv, _, base := newStore(t, now.AddDate(0, 0, -1))
	o := checkedOptions(t, e, base, 300*time.Millisecond)
	sum, err := Run(context.Background(), e.cfg, e.pool, o)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Complete || sum.Written+sum.Failed != 6 || sum.Failed < 4 || sum.Dropped < sum.Failed {
		t.Fatalf("a target keeping the last day: %+v", sum)
	}
	if n := e.logs.Count("acknowledged samples it does not hold", "its oldest sample, at", "retention"); n != sum.Failed {
		t.Errorf("%d warnings for %d tuples:\n%s", n, sum.Failed, e.logs.String())
	}
	written := sum.Written

	rv.mu.Lock()
	rv.keepFrom = 0
	rv.mu.Unlock()
	sum = e.run(o)
	if !sum.Complete || sum.Already != written || sum.Written != 6-written || sum.Dropped != 0 {
		t.Errorf("run again with the retention raised: %+v", sum)
	}
	file := e.options(3)
	file.Output = e.dir + "/whole.om"
	file.ProgressFile = file.Output + ".progress.json"
	e.run(file)
	for key, pts := range parseOM(t, file.Output).series {
		if got := rv.series[key]; len(got) == 0 || got[0] != pts[0] {
			t.Errorf("%s: the target's oldest sample %v, the history's %v", key, got[:min(len(got), 1)], pts[0])
		}
	}
}

// TestReadBackWaitsForANewSeries: a target that shows new series to
// queries only after a while has them found on a later try: nothing is
// reported dropped.
func TestReadBackWaitsForANewSeries(t *testing.T) {
	e := newEnv(t, mixedConfig, nil)
	_, qa, base := newStore(t, time.Time{})
	qa.hide = 20
	sum := e.run(checkedOptions(t, e, base, 30*time.Second))
	if !sum.Complete || sum.Written != 6 || sum.Dropped != 0 || qa.queries <= qa.hide {
		t.Errorf("%+v after %d queries", sum, qa.queries)
	}
}

// TestReadBackWaitsForLateSamples: run again once the target keeps the
// whole history, a series' newest sample (held since the first run)
// shows at once while its oldest, new to the target, shows only on the
// fourth query that asks for it, as VictoriaMetrics shows them under
// load. Each is asked again until found: nothing is reported dropped,
// and every tuple is recorded as written.
func TestReadBackWaitsForLateSamples(t *testing.T) {
	e := newEnv(t, mixedConfig, nil)
	rv, qa, base := newStore(t, now.AddDate(0, 0, -1))
	sum := e.run(checkedOptions(t, e, base, 300*time.Millisecond))
	if sum.Complete || sum.Failed < 4 || sum.Dropped < sum.Failed {
		t.Fatalf("a target keeping the last day: %+v", sum)
	}
	written := sum.Written
	rv.mu.Lock()
	rv.keepFrom = 0
	rv.mu.Unlock()
	qa.snapshot()
	qa.late = 3

	sum = e.run(checkedOptions(t, e, base, time.Minute))
	if !sum.Complete || sum.Written != 6-written || sum.Dropped != 0 || sum.Failed != 0 {
		t.Errorf("samples shown late: %+v\n%s", sum, e.logs.String())
	}
	qa.mu.Lock()
	defer qa.mu.Unlock()
	if qa.held < sum.Written {
		t.Errorf("%d samples held back for %d tuples: the target did not show them late", qa.held, sum.Written)
	}
}

// TestReadBackWithoutQueryAPI: a query API that cannot be read ends the
// checks with one warning, and what the target acknowledged is recorded.
func TestReadBackWithoutQueryAPI(t *testing.T) {
	e := newEnv(t, mixedConfig, nil)
	rv, _, base := newStoreQuery(t, time.Time{}, http.NotFoundHandler())
	sum := e.run(checkedOptions(t, e, base, 30*time.Second))
	if !sum.Complete || sum.Written != 6 || len(rv.series) < 20 {
		t.Errorf("%+v", sum)
	}
	if n := e.logs.Count("query API cannot be read", "HTTP 404"); n != 1 {
		t.Errorf("%d warnings:\n%s", n, e.logs.String())
	}
}

func TestQueryURLFor(t *testing.T) {
	for write, want := range map[string]string{
		"http://prometheus:9090/api/v1/write":                   "http://prometheus:9090/api/v1/query",
		"https://u:p@vm.example/api/v1/write?extra_label=a":     "https://u:p@vm.example/api/v1/query",
		"http://mimir:8080/api/v1/push":                         "http://mimir:8080/prometheus/api/v1/query",
		"http://gateway/tenant/api/v1/write":                    "http://gateway/tenant/api/v1/query",
		"http://thanos-receive:19291/api/v1/receive":            "",
		"http://vminsert:8480/insert/0/prometheus/api/v1/write": "",
		"http://example/other":                                  "",
	} {
		if got := QueryURLFor(write); got != want {
			t.Errorf("%s: %q, want %q", write, got, want)
		}
	}
}
