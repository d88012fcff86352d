package backfill

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/prometheus/common/version"
	"github.com/prometheus/prometheus/model/labels"
)

// A remote-write target acknowledges what it then drops: VictoriaMetrics
// answers 204 to samples older than its retention and keeps none of
// them. So, where the target's Prometheus query API can be reached
// (Prometheus, VictoriaMetrics, Mimir, Thanos and Cortex serve
// /api/v1/query), a tuple sent is recorded as written only once the
// oldest and the newest sample of each of its series are read back. One
// query per tuple and sample time asks for all its series at once, as
// raw samples:
//
//	{__name__=~"a|b",asset="btc",kind=~"|burn",window="day"}[1ms]
//
// (VictoriaMetrics 1.79 answers count_over_time over a resent old day
// with nothing while the raw samples show.)
// A target makes samples searchable some time after acknowledging them
// (VictoriaMetrics, Prometheus' head and Mimir's ingesters; about 4 s
// for VictoriaMetrics 1.79 when idle, longer under load), and not
// always all of a tuple's at once: a series whose newest sample an
// earlier run wrote shows it at once and its oldest, new, later. So a
// tuple is first checked checkSettle after it was sent; a sample not
// found is asked again after checkEvery, then twice as long each time
// up to checkEveryMax, until the read-back wait (RemoteWrite.ReadBackWait,
// DefaultReadBackWait) has passed since the tuple was sent, and only a
// sample still missing then counts as dropped. A query API that cannot
// be reached or answers other than success ends the checks of the run,
// with one warning: the tuples are recorded as the acknowledgements say.

// QueryURLFor is the query API of a remote-write URL where the target is
// known by its path: /api/v1/write (Prometheus, VictoriaMetrics single
// node) becomes /api/v1/query on the same host, and /api/v1/push (Mimir,
// Cortex) /prometheus/api/v1/query. "" where it cannot be told: Thanos
// Receive's query API is Thanos Query's, elsewhere, and VictoriaMetrics
// cluster's /insert/ is vmselect's /select/, on another port.
func QueryURLFor(writeURL string) string {
	u, err := url.Parse(writeURL)
	if err != nil || strings.Contains(u.Path, "/insert/") {
		return ""
	}
	switch {
	case strings.HasSuffix(u.Path, "/api/v1/write"):
		u.Path = strings.TrimSuffix(u.Path, "/api/v1/write") + "/api/v1/query"
	case strings.HasSuffix(u.Path, "/api/v1/push"):
		u.Path = strings.TrimSuffix(u.Path, "/api/v1/push") + "/prometheus/api/v1/query"
	default:
		return ""
	}
	u.RawQuery, u.Fragment = "", ""
	return u.String()
}

// Check timings: the first check of a tuple, the first wait before a
// sample not found is asked again, and the longest such wait.
const (
	checkSettle   = time.Second
	checkEvery    = time.Second
	checkEveryMax = 8 * time.Second
)

// DefaultReadBackWait is how long after a tuple was sent a sample not
// found yet is still asked for: VictoriaMetrics shows one in about 4 s
// when idle; a minute covers a loaded target, and a target that dropped
// what it acknowledged is told a minute after the tuple was sent.
const DefaultReadBackWait = time.Minute

// checkPoint is a sample to read back: series idx of a tuple at ms.
type checkPoint struct {
	idx    int
	ms     int64
	newest bool
}

// pendingCheck is a tuple sent and acknowledged, not yet read back.
type pendingCheck struct {
	defs   []*seriesDef
	points []checkPoint
	sent   time.Time
	next   time.Time
	// wait is the wait before the next try of the points not found.
	wait time.Duration
	// record records the tuple as written; dropped says what the
	// target does not hold.
	record  func()
	dropped func(missing []string, series int)
}

// verifier reads back what a remote-write target acknowledged.
type verifier struct {
	ctx      context.Context
	rw       *RemoteWrite
	logger   log.Logger
	redacted string
	now      func() time.Time
	settle   time.Duration
	grace    time.Duration // the read-back wait
	every    time.Duration

	pending []*pendingCheck
	off     bool // the query API failed: no more checks this run
}

func newVerifier(ctx context.Context, rw *RemoteWrite, logger log.Logger) *verifier {
	v := &verifier{ctx: ctx, rw: rw, logger: logger, now: time.Now,
		settle: checkSettle, grace: rw.ReadBackWait, every: checkEvery}
	if v.grace <= 0 {
		v.grace = DefaultReadBackWait
	}
	if rw.checkTimes != nil {
		v.settle, v.every = rw.checkTimes[0], rw.checkTimes[1]
	}
	v.redacted = rw.QueryURL
	if u, err := url.Parse(rw.QueryURL); err == nil {
		v.redacted = u.Redacted()
	}
	return v
}

// add holds a tuple until it is read back; with the checks off it is
// recorded at once.
func (v *verifier) add(p *pendingCheck) {
	if v.off {
		p.record()
		return
	}
	p.sent = v.now()
	p.next = p.sent.Add(v.settle)
	p.wait = v.every
	v.pending = append(v.pending, p)
}

// due is when the next check is due; zero when none waits.
func (v *verifier) due() time.Time {
	var at time.Time
	for _, p := range v.pending {
		if at.IsZero() || p.next.Before(at) {
			at = p.next
		}
	}
	return at
}

// check reads back every tuple whose check is due. The points found are
// not asked for again; those not found are, with a back-off, until the
// read-back wait has passed since the tuple was sent.
func (v *verifier) check() {
	now := v.now()
	kept := v.pending[:0]
	for _, p := range v.pending {
		if v.off {
			p.record()
			continue
		}
		if p.next.After(now) {
			kept = append(kept, p)
			continue
		}
		missing, err := v.read(p)
		switch {
		case v.ctx.Err() != nil:
			// Interrupted: left unrecorded, the next run sends it again.
			kept = append(kept, p)
		case err != nil:
			v.off = true
			level.Warn(v.logger).Log("msg", "the target's query API cannot be read: what it keeps is not checked in this run; the series it acknowledged are recorded as written",
				"query_url", v.redacted, "err", err)
			p.record()
		case len(missing) == 0:
			p.record()
		default:
			p.points = missing
			// Asked at the end of the wait, not only before it: what
			// shows by then is not dropped.
			at := v.now()
			if end := p.sent.Add(v.grace); at.Before(end) {
				if p.next = at.Add(p.wait); p.next.After(end) {
					p.next = end
				}
				p.wait = min(2*p.wait, checkEveryMax)
				kept = append(kept, p)
				continue
			}
			what, series := v.describe(p)
			p.dropped(what, series)
		}
	}
	v.pending = kept
}

// drain checks until no tuple waits, or the context ends.
func (v *verifier) drain() {
	for len(v.pending) > 0 && v.ctx.Err() == nil {
		if d := v.due().Sub(v.now()); d > 0 {
			if sleepCtx(v.ctx, d) != nil {
				return // left unrecorded: the next run sends them again
			}
		}
		v.check()
	}
}

// read asks for the points of a tuple and returns those not found.
func (v *verifier) read(p *pendingCheck) ([]checkPoint, error) {
	byTime := map[int64][]checkPoint{}
	var times []int64
	for _, pt := range p.points {
		if _, ok := byTime[pt.ms]; !ok {
			times = append(times, pt.ms)
		}
		byTime[pt.ms] = append(byTime[pt.ms], pt)
	}
	var missing []checkPoint
	for _, ms := range times {
		found, err := v.query(p.defs, byTime[ms], ms)
		if err != nil {
			return nil, err
		}
		for _, pt := range byTime[ms] {
			if !found[pt.idx] {
				missing = append(missing, pt)
			}
		}
	}
	return missing, nil
}

// describe says which samples of a tuple were not found, and of how many
// series.
func (v *verifier) describe(p *pendingCheck) (missing []string, series int) {
	seen := map[int]bool{}
	for _, pt := range p.points {
		if !seen[pt.idx] {
			seen[pt.idx] = true
			series++
		}
		which := "oldest"
		if pt.newest {
			which = "newest"
		}
		missing = append(missing, fmt.Sprintf("%s: its %s sample, at %s", p.defs[pt.idx].text, which, msTime(pt.ms)))
	}
	return missing, series
}

// query asks whether each series of pts has a sample at ms: one raw
// range selector covers them all, and the series answered are matched
// to them by their labels (it may answer others too).
func (v *verifier) query(defs []*seriesDef, pts []checkPoint, ms int64) (map[int]bool, error) {
	want := map[string]int{}
	sel := make([]*seriesDef, 0, len(pts))
	for _, pt := range pts {
		want[labelsKey(defs[pt.idx].name, defs[pt.idx].labels)] = pt.idx
		sel = append(sel, defs[pt.idx])
	}
	// nocache=1: VictoriaMetrics would answer from its response cache,
	// kept across restarts, what it answered before the samples came;
	// Prometheus and the others ignore it.
	form := url.Values{"query": {selector(sel) + "[1ms]"}, "time": {strconv.FormatFloat(float64(ms)/1000, 'f', 3, 64)}, "nocache": {"1"}}
	ans, err := v.ask(form, "matrix")
	if err != nil {
		return nil, err
	}
	found := map[int]bool{}
	for _, r := range ans.Data.Result {
		name := r.Metric["__name__"]
		delete(r.Metric, "__name__")
		ls := make([]Label, 0, len(r.Metric))
		for k, val := range r.Metric {
			ls = append(ls, Label{k, val})
		}
		if idx, ok := want[labelsKey(name, ls)]; ok && len(r.Values) > 0 {
			found[idx] = true
		}
	}
	return found, nil
}

// queryAnswer is an answer of the query API.
type queryAnswer struct {
	Status string `json:"status"`
	Data   struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Values [][2]any          `json:"values"`
		} `json:"result"`
	} `json:"data"`
}

// ask sends one query to the query API, with the remote write's
// credentials and headers; an answer other than success of resultType
// is an error naming the API (redacted) and what it said.
func (v *verifier) ask(form url.Values, resultType string) (*queryAnswer, error) {
	ctx, cancel := context.WithTimeout(v.ctx, v.rw.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, v.rw.QueryURL, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	for k, val := range v.rw.Headers {
		req.Header.Set(k, val)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", version.ComponentUserAgent(config.Namespace))
	resp, err := v.rw.Client.Do(req)
	if err != nil {
		return nil, redactURL(err, v.rw.QueryURL, v.redacted)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, err
	}
	var ans queryAnswer
	if err := json.Unmarshal(body, &ans); err != nil || resp.StatusCode != http.StatusOK || ans.Status != "success" || ans.Data.ResultType != resultType {
		text := strings.TrimSpace(string(body[:min(len(body), 300)]))
		return nil, fmt.Errorf("HTTP %d from %s: %s", resp.StatusCode, v.redacted, text)
	}
	return &ans, nil
}

// labelsKey identifies a series by its name and labels, those with an
// empty value left out (a target keeps none).
func labelsKey(name string, ls []Label) string {
	m := map[string]string{"__name__": name}
	for _, l := range ls {
		if l.Value != "" {
			m[l.Name] = l.Value
		}
	}
	return labels.FromMap(m).String()
}

// selector is a PromQL selector of the series defs: every label any of
// them has is matched against the values they have ("" for those without
// it), so that it selects them and few others.
func selector(defs []*seriesDef) string {
	values := map[string][]string{}
	add := func(name, value string) {
		if !slices.Contains(values[name], value) {
			values[name] = append(values[name], value)
		}
	}
	for _, d := range defs {
		add("__name__", d.name)
		for _, l := range d.labels {
			add(l.Name, l.Value)
		}
	}
	for _, d := range defs {
		for name := range values {
			if name != "__name__" && !slices.ContainsFunc(d.labels, func(l Label) bool { return l.Name == name }) {
				add(name, "")
			}
		}
	}
	names := slices.Sorted(maps.Keys(values))
	var b strings.Builder
	b.WriteByte('{')
	for i, name := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		vs := values[name]
		if len(vs) == 1 {
			b.WriteString(name + "=" + strconv.Quote(vs[0]))
			continue
		}
		quoted := make([]string, len(vs))
		for j, v := range vs {
			quoted[j] = regexp.QuoteMeta(v)
		}
		slices.Sort(quoted)
		b.WriteString(name + "=~" + strconv.Quote(strings.Join(quoted, "|")))
	}
	b.WriteByte('}')
	return b.String()
}
