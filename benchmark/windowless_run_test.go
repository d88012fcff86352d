package benchmark

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/collector"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool/simclock"
)

// The windowless run: the realistic first file of docs/fake.md against
// the fake upstream for a few simulated days, two replicas scraping, in
// the timed payload and in the timeless one (fakeapi.Options.Timeless).
// It counts the calls of every tuple, and for each series of the
// Indicator and Analyst Consensus APIs (which have no window) the excess
// staleness of each change of its answer: from the moment the fake first
// served the new version (fakeapi.Server.Revisions) to the first scrape
// that served it.

// WindowlessOptions are one run.
type WindowlessOptions struct {
	Timeless bool
	// Days of simulated time from Start (zero: windowlessStart).
	Days  int
	Start time.Time
	// Replicas scrape every Interval each, offset evenly within it.
	Replicas int
	Interval time.Duration
	// SteadyFrom, when set, is the day (from 0) from which the table
	// also shows the cost and freshness of what was learned.
	SteadyFrom int
}

// windowlessStart is a Tuesday, off every window boundary: three days
// from it are three trading days of the band.
var windowlessStart = time.Date(2026, 11, 24, 0, 3, 7, 0, time.UTC)

// Windowless is the outcome of a run.
type Windowless struct {
	WindowlessOptions
	Tuples []*TupleCalls
	// Other counts, per API, calls that are no tuple's (discovery).
	Other   map[string]int64
	Scrapes int
}

// TupleCalls is one tuple's cost and, for a windowless series, its
// freshness.
type TupleCalls struct {
	API, Entry, Series string
	// Calls in each 24 hours of the run.
	Days []int64
	// Windowless series only: the revisions of the answer (the one served
	// at the start, then every change), and per change the time from its
	// publication to the first scrape that served it (negative: never
	// served).
	Windowless bool
	Revisions  []fakeapi.Revision
	Served     []time.Duration
	// Cadence is the shortest time between two revisions: a day for
	// both APIs of the fake (a trading day for the band).
	Cadence time.Duration
}

// realisticFile reads the realistic first file from docs/fake.md: the
// YAML block after its "A realistic first file" heading.
func realisticFile() (string, error) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "fake.md"))
	if err != nil {
		return "", err
	}
	_, rest, ok := bytes.Cut(b, []byte("## A realistic first file"))
	if !ok {
		return "", fmt.Errorf("docs/fake.md has no \"A realistic first file\" section")
	}
	_, rest, ok = bytes.Cut(rest, []byte("```yaml\n"))
	if !ok {
		return "", fmt.Errorf("docs/fake.md: no yaml block in \"A realistic first file\"")
	}
	yml, _, ok := bytes.Cut(rest, []byte("```"))
	if !ok {
		return "", fmt.Errorf("docs/fake.md: the yaml block does not end")
	}
	return string(yml), nil
}

// pathCounter counts the requests of each series on their way to the
// fake: by path and query, without what varies between the refreshes
// of one series (requestKey).
type pathCounter struct {
	next http.Handler
	mu   sync.Mutex
	n    map[string]int64
}

func (c *pathCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := requestKey(r.URL.Path, r.URL.Query())
	c.mu.Lock()
	c.n[key]++
	c.mu.Unlock()
	c.next.ServeHTTP(w, r)
}

// take returns the counts so far and starts again from zero.
func (c *pathCounter) take() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int64{}
	return n
}

// varying are the query parameters that do not tell two series apart.
var varying = []string{"limit", "order", "from", "to", "format", "api_key"}

// requestKey names the series a request asks for.
func requestKey(path string, q url.Values) string {
	q = maps.Clone(q)
	for _, k := range varying {
		q.Del(k)
	}
	return path + "?" + q.Encode()
}

// fakeMounts is where the fake mounts each API.
var fakeMounts = map[string]string{"data": "", "indicator": "/indicator", "consensus": "/consensus"}

// entryOf finds the configuration tuple a counted series comes from: its
// path, and every parameter the tuple sends with the value it sends, or
// "all", which the exporter resolves at start.
func entryOf(cfg *config.Config, key string) (*config.Tuple, url.Values) {
	path, query, _ := strings.Cut(key, "?")
	q, _ := url.ParseQuery(query)
	for _, t := range cfg.Tuples {
		if fakeMounts[t.API]+t.Path != path {
			continue
		}
		match := true
		for k, v := range t.Query().All() {
			if !slices.Contains(varying, k) && v != config.All && q.Get(k) != v {
				match = false
			}
		}
		if match {
			return t, q
		}
	}
	return nil, q
}

// windowlessSeries is what a scrape shows of one windowless series.
type windowlessSeries struct {
	label    string // the label that tells it apart: equity="..." or asset="..."
	headline string // the family of Revision.Value
	families []string
}

func windowlessSeriesOf(t *config.Tuple) (windowlessSeries, bool) {
	switch t.API {
	case "indicator":
		return windowlessSeries{`equity="` + t.Label("equity") + `"`, "onchain_equity_close_price", []string{"onchain_equity_"}}, true
	case "consensus":
		return windowlessSeries{`asset="` + t.Label("asset") + `"`, "onchain_consensus_score", []string{"onchain_consensus_", "onchain_analyst_"}}, true
	}
	return windowlessSeries{}, false
}

// read returns the headline value a scrape served for the series and the
// text of all its data lines.
func (s windowlessSeries) read(body []byte) (float64, bool, string) {
	var all strings.Builder
	var v float64
	ok := false
	for line := range bytes.Lines(body) {
		if line[0] == '#' || !bytes.Contains(line, []byte(s.label)) {
			continue
		}
		for _, f := range s.families {
			if bytes.HasPrefix(line, []byte(f)) {
				all.Write(line)
			}
		}
		if rest, found := bytes.CutPrefix(line, []byte(s.headline+"{")); found {
			if i := bytes.LastIndexByte(rest, ' '); i > 0 {
				x, err := strconv.ParseFloat(string(bytes.TrimSpace(rest[i:])), 64)
				v, ok = x, err == nil
			}
		}
	}
	return v, ok, all.String()
}

var servedDay = regexp.MustCompile(`^onchain_data_timestamp_seconds\{[^}]*\} (\S+)`)

// servedTime is the row time a scrape served for the series, if any.
func (s windowlessSeries) servedTime(body []byte, api string) (time.Time, bool) {
	for line := range bytes.Lines(body) {
		if !bytes.HasPrefix(line, []byte(servedFamily+"{")) || !bytes.Contains(line, []byte(`api="`+api+`"`)) || !bytes.Contains(line, []byte(s.label)) {
			continue
		}
		if m := servedDay.FindSubmatch(line); m != nil {
			x, err := strconv.ParseFloat(string(m[1]), 64)
			return time.Unix(int64(x), 0).UTC(), err == nil
		}
	}
	return time.Time{}, false
}

// windowlessTrack follows one windowless series through a run.
type windowlessTrack struct {
	tuple   *TupleCalls
	cfg     *config.Tuple
	series  windowlessSeries
	target  string
	timed   bool   // the answers carry their rows' times
	current int    // index of the revision served; -1 before any
	text    string // the data lines last served
}

// RunWindowless runs the realistic first file against the fake, both on
// one simulated clock.
func RunWindowless(o WindowlessOptions) (*Windowless, error) {
	yml, err := realisticFile()
	if err != nil {
		return nil, err
	}
	start := windowlessStart
	if !o.Start.IsZero() {
		start = o.Start
	}
	end := start.Add(time.Duration(o.Days) * day)
	clock := simclock.New(start)
	fake := fakeapi.New(fakeapi.Options{Now: clock.Now, DataToken: "bench", IndicatorToken: "bench",
		ConsensusKeys: map[string]string{"bench": "premium"}, Timeless: o.Timeless})
	counter := &pathCounter{next: fake, n: map[string]int64{}}
	srv := httptest.NewServer(counter)
	defer srv.Close()
	// As main does: "all" and asset names resolved through the APIs'
	// lists (their calls are counted as no tuple's), then the engine.
	cfg, err := config.Parse("fake.md.yml", []byte(strings.ReplaceAll(yml, "http://127.0.0.1:9800", srv.URL)), func(string) string { return "bench" })
	if err != nil {
		return nil, err
	}
	if cfg, err = expand.New(log.NewNopLogger(), expand.Options{Now: clock.Now}).Start(context.Background(), cfg); err != nil {
		return nil, err
	}
	exp, err := collector.New(cfg, log.NewNopLogger(), prometheus.NewRegistry(), collector.Options{Clock: clock})
	if err != nil {
		return nil, err
	}
	defer exp.Close()

	w := &Windowless{WindowlessOptions: o, Other: map[string]int64{}}
	byKey := map[string]*TupleCalls{}
	var tracks []*windowlessTrack
	for _, t := range cfg.Tuples {
		s, ok := windowlessSeriesOf(t)
		if !ok {
			continue
		}
		tc := &TupleCalls{API: t.API, Entry: t.Entry.Path, Series: tupleName(t.Path, t.Query().URL()), Days: []int64{0}}
		byKey[requestKey(fakeMounts[t.API]+t.Path, t.Query().URL())] = tc
		target := fakeMounts[t.API] + t.Path
		if a := t.Params.Get("asset"); a != "" {
			target += "?asset=" + url.QueryEscape(a)
		}
		revs, err := fake.Revisions(target, start, end)
		if err != nil {
			return nil, err
		}
		tc.Windowless, tc.Revisions = true, revs
		tc.Served = make([]time.Duration, len(revs)-1)
		for i := range tc.Served {
			tc.Served[i] = -1
		}
		for i := 1; i < len(revs); i++ {
			if gap := revs[i].At.Sub(revs[i-1].At); tc.Cadence == 0 || gap < tc.Cadence {
				tc.Cadence = gap
			}
		}
		tracks = append(tracks, &windowlessTrack{tuple: tc, cfg: t, series: s, target: target, timed: !o.Timeless, current: -1})
	}

	days := 1
	countDay := func() {
		for key, n := range counter.take() {
			tc := byKey[key]
			if tc == nil {
				t, q := entryOf(cfg, key)
				if t == nil {
					api := "data"
					for a, p := range fakeMounts {
						if p != "" && strings.HasPrefix(key, p+"/") {
							api = a
						}
					}
					w.Other[api] += n
					continue
				}
				path, _, _ := strings.Cut(key, "?")
				tc = &TupleCalls{API: t.API, Entry: t.Entry.Path, Series: tupleName(strings.TrimPrefix(path, fakeMounts[t.API]), q)}
				byKey[key] = tc
			}
			for len(tc.Days) < days {
				tc.Days = append(tc.Days, 0)
			}
			tc.Days[days-1] += n
		}
	}
	newDay := func() { days++ }
	offset := o.Interval / time.Duration(max(o.Replicas, 1))
	dayEnd := start.Add(day)
	for at := start; at.Before(end); at = at.Add(offset) {
		if !at.Before(dayEnd) {
			// The calls of the 24 hours that end, without those due at
			// their end (they are the next day's).
			runUntil(clock, exp, dayEnd.Add(-time.Millisecond))
			countDay()
			newDay()
			dayEnd = dayEnd.Add(day)
		}
		runUntil(clock, exp, at)
		body, err := scrapeText(exp)
		if err != nil {
			return nil, fmt.Errorf("scrape at %s: %w", at, err)
		}
		w.Scrapes++
		for _, tr := range tracks {
			if err := tr.observe(body, at); err != nil {
				return nil, err
			}
		}
	}
	runUntil(clock, exp, end.Add(-time.Millisecond))
	countDay()
	for _, tc := range byKey {
		for len(tc.Days) < days {
			tc.Days = append(tc.Days, 0)
		}
		w.Tuples = append(w.Tuples, tc)
	}
	order := map[string]int{"data": 0, "indicator": 1, "consensus": 2}
	slices.SortFunc(w.Tuples, func(a, b *TupleCalls) int {
		if c := order[a.API] - order[b.API]; c != 0 {
			return c
		}
		if c := strings.Compare(a.Entry, b.Entry); c != 0 {
			return c
		}
		return strings.Compare(a.Series, b.Series)
	})
	return w, nil
}

// observe reads what a scrape at `at` served of the track's series and
// notes the first serving of each revision.
func (tr *windowlessTrack) observe(body []byte, at time.Time) error {
	v, ok, text := tr.series.read(body)
	if !ok {
		return nil // nothing served yet
	}
	revs := tr.tuple.Revisions
	next := tr.current
	if rowTime, has := tr.series.servedTime(body, tr.cfg.API); tr.timed && has {
		// Timed: the served row's day names the revision.
		next = slices.IndexFunc(revs, func(r fakeapi.Revision) bool { return r.Day.Equal(rowTime) })
		if next < 0 {
			return fmt.Errorf("%s at %s: served the row of %s, which is no revision of the run", tr.target, at, rowTime)
		}
	} else if tr.current < 0 || v != revs[tr.current].Value || text != tr.text {
		// Timeless: the newest revision published by now with the
		// headline value served, not older than the one served before.
		next = -1
		for j := len(revs) - 1; j >= max(tr.current, 0); j-- {
			if !revs[j].At.After(at) && revs[j].Value == v {
				next = j
				break
			}
		}
		if next < 0 {
			return fmt.Errorf("%s at %s: served %v, no revision published by then has it", tr.target, at, v)
		}
	}
	if next > 0 && revs[next].At.After(at) {
		return fmt.Errorf("%s at %s: served the revision of %s before the fake published it (%s)", tr.target, at, revs[next].Day, revs[next].At)
	}
	for k := max(tr.current+1, 1); k <= next; k++ {
		tr.tuple.Served[k-1] = at.Sub(revs[k].At)
	}
	tr.current = max(tr.current, next)
	tr.text = text
	return nil
}

// tupleName names a series by what tells it apart: the values of its
// query (window last) and, for a path without a parameter that varies,
// the path's last variable segment (an equity).
func tupleName(path string, q url.Values) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(q)) {
		if k != "window" && !slices.Contains(varying, k) {
			parts = append(parts, q.Get(k))
		}
	}
	if len(parts) == 0 && strings.HasPrefix(path, "/api/equities/") {
		parts = append(parts, strings.Split(path, "/")[3])
	}
	if w := q.Get("window"); w != "" {
		parts = append(parts, w)
	}
	return strings.Join(parts, " ")
}
