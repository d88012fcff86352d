package backfill

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang/snappy"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/prompb"
)

// receiver is a remote-write endpoint on 127.0.0.1 that decodes what it
// is sent, and answers as refuse says.
type receiver struct {
	t      *testing.T
	mu     sync.Mutex
	series map[string][]point // by name{labels}, labels sorted
	reqs   int
	// refuse answers a request, or returns 0 to take it.
	refuse func(req *prompb.WriteRequest, n int) (int, string)
	// keepFrom: samples older are acknowledged and not kept, as a
	// target drops what is older than its retention.
	keepFrom int64
	// merge takes samples sent again by a later run: each request's are
	// in time order, and merged into what is kept.
	merge bool
	// probes counts the empty requests (CheckTarget's), which neither
	// count in reqs nor go through refuse.
	probes int
}

func (rv *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for h, want := range map[string]string{"Content-Encoding": "snappy", "Content-Type": "application/x-protobuf",
		"X-Prometheus-Remote-Write-Version": "0.1.0", "X-Scope-OrgID": "tenant-1"} {
		if got := r.Header.Get(h); got != want {
			rv.t.Errorf("header %s: %q, want %q", h, got, want)
		}
	}
	compressed, _ := io.ReadAll(r.Body)
	data, err := snappy.Decode(nil, compressed)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req prompb.WriteRequest
	if err := req.Unmarshal(data); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rv.mu.Lock()
	defer rv.mu.Unlock()
	if len(req.Timeseries) == 0 {
		rv.probes++
		w.WriteHeader(http.StatusNoContent)
		return
	}
	rv.reqs++
	if rv.refuse != nil {
		if code, msg := rv.refuse(&req, rv.reqs); code != 0 {
			w.Header().Set("Retry-After", "0")
			http.Error(w, msg, code)
			return
		}
	}
	for _, ts := range req.Timeseries {
		if !sort.SliceIsSorted(ts.Labels, func(i, j int) bool { return ts.Labels[i].Name < ts.Labels[j].Name }) {
			rv.t.Errorf("labels not sorted: %v", ts.Labels)
		}
		key := promText(ts.Labels)
		pts := rv.series[key]
		if rv.merge {
			rv.series[key] = mergePoints(rv.t, key, pts, ts.Samples, rv.keepFrom)
			continue
		}
		for _, s := range ts.Samples {
			if s.Timestamp < rv.keepFrom {
				continue
			}
			if n := len(pts); n > 0 && pts[n-1].ms >= s.Timestamp {
				rv.t.Errorf("%s: sample at %d sent after one at %d", key, s.Timestamp, pts[n-1].ms)
			}
			pts = append(pts, point{s.Timestamp, s.Value})
		}
		rv.series[key] = pts
	}
}

// mergePoints merges the samples of one request, in time order, into
// pts, leaving out those before keepFrom.
func mergePoints(t *testing.T, key string, pts []point, samples []prompb.Sample, keepFrom int64) []point {
	byMs := map[int64]float64{}
	for _, p := range pts {
		byMs[p.ms] = p.v
	}
	for i, s := range samples {
		if i > 0 && s.Timestamp <= samples[i-1].Timestamp {
			t.Errorf("%s: sample at %d sent after one at %d", key, s.Timestamp, samples[i-1].Timestamp)
		}
		if s.Timestamp >= keepFrom {
			byMs[s.Timestamp] = s.Value
		}
	}
	out := make([]point, 0, len(byMs))
	for ms, v := range byMs {
		out = append(out, point{ms, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ms < out[j].ms })
	return out
}

// promText is labels.String() of a series' labels, as parseOM keys them.
func promText(ls []prompb.Label) string {
	m := model.LabelSet{}
	for _, l := range ls {
		m[model.LabelName(l.Name)] = model.LabelValue(l.Value)
	}
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, string(n))
	}
	sort.Strings(names)
	var parts []string
	for _, n := range names {
		parts = append(parts, n+`="`+strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(string(m[model.LabelName(n)]))+`"`)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func newReceiver(t *testing.T, refuse func(*prompb.WriteRequest, int) (int, string)) (*receiver, string) {
	rv := &receiver{t: t, series: map[string][]point{}, refuse: refuse}
	srv := httptest.NewServer(rv)
	t.Cleanup(srv.Close)
	return rv, srv.URL + "/api/v1/write"
}

func remoteOptions(t *testing.T, e *env, url string, batch int) Options {
	t.Helper()
	c := DefaultRemoteWriteConfig()
	c.URL = url
	c.Headers = map[string]string{"X-Scope-OrgID": "tenant-1"}
	c.QueueConfig.MaxSamplesPerSend = batch
	c.QueueConfig.MinBackoff = model.Duration(time.Millisecond)
	c.QueueConfig.MaxBackoff = model.Duration(5 * time.Millisecond)
	rw, err := c.Build()
	if err != nil {
		t.Fatal(err)
	}
	o := e.options(3)
	o.Output, o.RemoteWrite = "", rw
	o.ProgressFile = e.dir + "/rw.progress.json"
	return o
}

// TestRemoteWriteSendsWhatTheFileHolds: the samples sent by remote write,
// in batches, are exactly those of the OpenMetrics file of the same run,
// each series in time order, labels sorted, with the protocol's headers.
func TestRemoteWriteSendsWhatTheFileHolds(t *testing.T) {
	e := newEnv(t, mixedConfig, nil)
	file := e.options(3)
	e.run(file)
	want := parseOM(t, file.Output).series

	rv, url := newReceiver(t, nil)
	sum := e.run(remoteOptions(t, e, url, 100))
	if !sum.Complete || sum.Written != 6 {
		t.Fatalf("summary %+v", sum)
	}
	if len(rv.series) != len(want) {
		t.Errorf("%d series sent, the file holds %d", len(rv.series), len(want))
	}
	for key, pts := range want {
		got := rv.series[key]
		if len(got) != len(pts) {
			t.Errorf("%s: %d samples sent, %d in the file", key, len(got), len(pts))
			continue
		}
		for i := range pts {
			if got[i] != pts[i] {
				t.Errorf("%s: sample %d sent %+v, in the file %+v", key, i, got[i], pts[i])
				break
			}
		}
	}
	if total := int(sum.Samples); rv.reqs < total/100 {
		t.Errorf("%d requests for %d samples in batches of 100", rv.reqs, total)
	}
}

// TestRemoteWriteRetriesAndRefusals: 503 and 429 are sent again; a 400
// for one series is not: that series is named with the target's reason
// and counted, and every other series is kept.
func TestRemoteWriteRetriesAndRefusals(t *testing.T) {
	e := newEnv(t, mixedConfig, nil)
	refuse := func(req *prompb.WriteRequest, n int) (int, string) {
		switch n {
		case 1:
			return http.StatusServiceUnavailable, "try later"
		case 2:
			return http.StatusTooManyRequests, "slow down"
		}
		for _, ts := range req.Timeseries {
			for _, l := range ts.Labels {
				if l.Name == "__name__" && l.Value == "onchain_supply_new" {
					return http.StatusBadRequest, "out of bounds"
				}
			}
		}
		return 0, ""
	}
	rv, url := newReceiver(t, refuse)
	o := remoteOptions(t, e, url, 1000)
	sum, err := Run(context.Background(), e.cfg, e.pool, o)
	if err != nil {
		t.Fatal(err)
	}
	// The tuples with a refused series are not recorded: the next run
	// sends them again.
	if sum.Written != 3 || sum.Failed != 3 || sum.Complete || sum.RefusedSamples == 0 {
		t.Fatalf("summary %+v", sum)
	}
	for key := range rv.series {
		if strings.Contains(key, "onchain_supply_new") {
			t.Errorf("%s was taken", key)
		}
	}
	if n := e.logs.Count("refused samples", `series="onchain_supply_new{`, "out of bounds", "out_of_order_time_window"); n != 3 {
		t.Errorf("%d warnings naming the refused series, reason and fix, want 3 (day, hour, block):\n%s", n, e.logs.String())
	}
	if len(rv.series) < 20 {
		t.Errorf("only %d series taken", len(rv.series))
	}
}

// TestRemoteWriteStopsWhenEverythingIsRefused: a target that refuses
// every series ends the run with the reason and the fix, and the series
// are not recorded as written.
func TestRemoteWriteStopsWhenEverythingIsRefused(t *testing.T) {
	e := newEnv(t, mixedConfig, nil)
	_, url := newReceiver(t, func(*prompb.WriteRequest, int) (int, string) { return http.StatusBadRequest, "out of bounds" })
	o := remoteOptions(t, e, url, 1000)
	sum, err := Run(context.Background(), e.cfg, e.pool, o)
	if err == nil || !strings.Contains(err.Error(), "refused 10 series in a row") || !strings.Contains(err.Error(), "out_of_order_time_window") {
		t.Fatalf("got %v", err)
	}
	if sum.Complete || sum.Written >= 6 {
		t.Errorf("summary %+v", sum)
	}
}
