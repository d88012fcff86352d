package plan

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// bigAnswer writes a plan answer of n paths, close to size bytes: 100
// assets, 20 categories each, the rest metrics, their names padded so that
// the answer comes to size; windows and depths vary as a real plan's do.
// With older, the metrics nest their windows under "window" beside a limit.
// It returns the answer and what it lists: path → window → depth, as
// written.
func bigAnswer(n, size int, older bool) ([]byte, map[string]map[string]string) {
	const assets, cats = 100, 20
	perCat := (n + assets*cats - 1) / (assets * cats)
	sets := []map[string]string{
		{"day": "P0D"}, {"day": "P3Y", "hour": "P1Y"}, {"day": "P1Y"}, {"hour": "P7D"}, {"day": "P3Y"},
		{"day": "P1Y", "hour": "P7D", "block": "P7D"}, {"day": "P3Y", "hour": "P1Y", "10min": "P30D", "min": "P7D"},
	}
	want := map[string]map[string]string{}
	pad := 0
	for range 2 { // the second pass with the padding the first one measured
		var b bytes.Buffer
		b.WriteString(`{"plan":{"name":"CUSTOM"},"apiEndpoint":{`)
		k := 0
		for a := range assets {
			if a > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"asset%02d":{`, a)
			for c := range cats {
				if c > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `"cat%02d":{`, c)
				for m := 0; m < perCat && k < n; m++ {
					if m > 0 {
						b.WriteByte(',')
					}
					name := fmt.Sprintf("m%0*d", 3+pad, m)
					ws := sets[k%len(sets)]
					want[fmt.Sprintf("/v1/asset%02d/cat%02d/%s", a, c, name)] = ws
					fmt.Fprintf(&b, `%q:{`, name)
					if older {
						b.WriteString(`"window":{`)
					}
					i := 0
					for _, w := range []string{"block", "min", "10min", "hour", "day"} {
						if d, ok := ws[w]; ok {
							if i > 0 {
								b.WriteByte(',')
							}
							fmt.Fprintf(&b, `%q:%q`, w, d)
							i++
						}
					}
					if older {
						b.WriteString(`},"limit":1000`)
					}
					b.WriteByte('}')
					k++
				}
				b.WriteByte('}')
			}
			b.WriteByte('}')
		}
		b.WriteString(`,"statics":["/v1/discovery/endpoints","/v1/btc/status/entity-list"]},"apiRateLimit":{"token":6000,"window":"minute"}}`)
		if pad == 0 && b.Len() < size {
			pad = (size - b.Len()) / n
			clear(want)
			continue
		}
		return b.Bytes(), want
	}
	panic("unreachable")
}

// heapInUse is the heap in use after two collections.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// BenchmarkParseAtTheCap: a plan answer of 200 000 paths, just under 8 MB,
// parsed: the heap the plan holds once parsed and collected, and the most
// the heap held while parsing (sampled every 200 µs), above what it held
// before, in MB; on Linux the same of the resident memory (the peak from
// VmHWM, reset before the parse; after the parse with the freed memory
// returned), as far as the process's own allocations show in it.
func BenchmarkParseAtTheCap(b *testing.B) {
	body, _ := bigAnswer(200_000, 7_990_000, false)
	if len(body) > 7_990_000 || len(body) < 7_500_000 {
		b.Fatalf("the answer at the cap is %d bytes", len(body))
	}
	b.SetBytes(int64(len(body)))
	var kept, peak, rssKept, rssPeak float64
	for b.Loop() {
		base := heapInUse()
		debug.FreeOSMemory()
		rss0 := procStatus("VmRSS")
		os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // VmHWM from here
		var most atomic.Uint64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			var m runtime.MemStats
			for {
				select {
				case <-stop:
					return
				case <-time.After(200 * time.Microsecond):
				}
				runtime.ReadMemStats(&m)
				if m.HeapInuse > most.Load() {
					most.Store(m.HeapInuse)
				}
			}
		})
		p, err := Parse(body)
		close(stop)
		wg.Wait()
		if err != nil {
			b.Fatal(err)
		}
		hwm := procStatus("VmHWM")
		after := heapInUse()
		debug.FreeOSMemory()
		rss := procStatus("VmRSS")
		runtime.KeepAlive(p)
		if rss0 > 0 {
			rssKept = max(rssKept, float64(rss-rss0))
			rssPeak = max(rssPeak, float64(hwm-rss0))
		}
		kept = max(kept, float64(after)-float64(base))
		peak = max(peak, float64(most.Load())-float64(base))
		if len(p.Paths) != 200_000 {
			b.Fatalf("%d paths", len(p.Paths))
		}
	}
	b.ReportMetric(float64(len(body))/1e6, "answer-MB")
	b.ReportMetric(kept/1e6, "kept-MB")
	b.ReportMetric(peak/1e6, "peak-MB")
	if rssKept > 0 {
		b.ReportMetric(rssKept/1e6, "rss-kept-MB")
		b.ReportMetric(rssPeak/1e6, "rss-peak-MB")
	}
}

// procStatus reads a field of /proc/self/status in bytes; 0 where there
// is none.
func procStatus(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// TestParseAnswersAsTheAnswerSays: on a generated plan, in both dialects,
// every question a plan answers (Covers, Listed, PathsListed, WindowsOf,
// Depth, Check and its Refusal, Earliest) is answered as a reference read
// straight from what the generator wrote; the plan written back and read
// again is Equal.
func TestParseAnswersAsTheAnswerSays(t *testing.T) {
	now := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	for _, older := range []bool{false, true} {
		body, want := bigAnswer(3_000, 0, older)
		p, err := Parse(body)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Paths) != len(want) || p.Name != "CUSTOM" || p.RateLimit != (RateLimit{6000, "minute"}) || len(p.Notes) != 0 {
			t.Fatalf("older %v: %d paths, name %q, rate %v, notes %q", older, len(p.Paths), p.Name, p.RateLimit, p.Notes)
		}
		if !slices.Equal(p.PathsListed(), slices.Sorted(maps.Keys(want))) {
			t.Fatalf("older %v: the paths listed differ", older)
		}
		depth := func(path, w string) (Duration, bool) {
			s, ok := want[path][cmp.Or(w, DefaultWindow)]
			if !ok {
				return Duration{}, false
			}
			d, err := ParseDuration(s)
			if err != nil {
				t.Fatal(err)
			}
			return d, true
		}
		asked := 0
		for path := range want {
			for _, q := range []string{path, path + "x", strings.Replace(path, "/v1/", "/v2/", 1)} {
				_, listed := want[q]
				if p.Listed(q) != listed || p.Covers(q) != strings.HasPrefix(q, "/v1/") {
					t.Fatalf("%s: listed %v, covered %v", q, p.Listed(q), p.Covers(q))
				}
				if got, ws := p.WindowsOf(q), slices.Sorted(maps.Keys(want[q])); !slices.Equal(got, ws) {
					t.Fatalf("%s: windows %v, want %v", q, got, ws)
				}
				for _, w := range []string{"", "block", "min", "10min", "hour", "day", "week"} {
					d, ok := depth(q, w)
					if gd, gok := p.Depth(q, w); gd != d || gok != ok {
						t.Fatalf("%s at %q: depth %v %v, want %v %v", q, w, gd, gok, d, ok)
					}
					for _, from := range []time.Time{{}, now.AddDate(0, -3, 0), now.AddDate(-2, 0, 0), now.AddDate(-10, 0, 0)} {
						asked++
						var ref *Refusal
						switch {
						case !listed && strings.HasPrefix(q, "/v1/"):
							ref = &Refusal{Plan: "CUSTOM", Path: q, Window: cmp.Or(w, DefaultWindow), Reason: NotListed}
						case !listed:
						case !ok:
							ref = &Refusal{Plan: "CUSTOM", Path: q, Window: cmp.Or(w, DefaultWindow), Reason: WindowNotAllowed, Allowed: slices.Sorted(maps.Keys(want[q]))}
						case !from.IsZero() && !d.Unlimited() && from.Before(d.Earliest(now)):
							ref = &Refusal{Plan: "CUSTOM", Path: q, Window: cmp.Or(w, DefaultWindow), Reason: HistoryTooDeep, Depth: d, From: from}
						}
						if got := p.Check(q, w, from, now); !reflect.DeepEqual(got, ref) {
							t.Fatalf("%s at %q from %s: %+v, want %+v", q, w, from, got, ref)
						}
					}
					e, eok := p.Earliest(q, w, now)
					switch {
					case !strings.HasPrefix(q, "/v1/"):
						ok, d = true, Duration{}
					}
					if eok != ok || (ok && !e.Equal(d.Earliest(now))) {
						t.Fatalf("%s at %q: earliest %s %v", q, w, e, eok)
					}
				}
			}
		}
		out, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		q, err := Parse(out)
		if err != nil || !q.Equal(p) {
			t.Fatalf("older %v: written back and read again: %v, equal %v", older, err, err == nil && q.Equal(p))
		}
		t.Logf("older %v: %d paths, %d questions asked", older, len(want), asked)
	}
}
