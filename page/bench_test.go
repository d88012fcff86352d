package page

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

// BenchmarkPage10000 renders the page, a filtered page and the JSON of an
// exporter of 10 000 series (5 000 paths at day and hour), filled.
func BenchmarkPage10000(b *testing.B) {
	r := newRig(b, fakeapi.Options{ExtraPaths: manyPaths(5000)}, func(url string) string {
		return manyConfig(url, manyPaths(5000), "")
	})
	h := NewHandler(r.src)
	for _, c := range []struct{ name, target string }{
		{"index", "/"},
		{"filtered", "/?api=data&state=fresh&endpoint=metric-04&offset=100"},
		{"json", "/api/v1/status"},
		{"series", "/series?api=data&key=" + url.QueryEscape(r.exp.View()[0].Series[9999].Tuple.Key)},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, c.target, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("%s: HTTP %d: %s", c.target, rec.Code, rec.Body.String())
				}
			}
		})
	}
}

// BenchmarkPage100000DuringTheFill renders the page, the JSON and one
// series' view of an exporter of 100 000 series (50 000 paths at day and
// hour) while its first fill runs: rate_limit 1000 a minute has asked
// the first thousand, the rest wait for their turns.
func BenchmarkPage100000DuringTheFill(b *testing.B) {
	paths := manyPaths(50_000)
	r := newRig(b, fakeapi.Options{ExtraPaths: paths}, func(url string) string {
		// One entry whose placeholder lists the 50 000 paths' last
		// segments: an entry a path would pass the 1 MiB a file may be.
		var y strings.Builder
		fmt.Fprintf(&y, "data:\n  url: %s\n  token_env: T\n  concurrency: 16\n  max_tuples: 100000\n  rate_limit: 1000\n  metrics:\n", url)
		y.WriteString("    - path: /v1/btc/bench-data/{metric}\n      window: [day, hour]\n      metric: [")
		for i, p := range paths {
			if i > 0 {
				y.WriteString(",")
			}
			y.WriteString(p[len("/v1/btc/bench-data/"):])
		}
		y.WriteString("]\n")
		return y.String()
	})
	h := NewHandler(r.src)
	last := r.exp.View()[0].Series[99_999].Tuple.Key
	for _, c := range []struct{ name, target string }{
		{"index", "/"},
		{"filtered", "/?api=data&state=fresh&endpoint=metric-04&offset=100"},
		{"json", "/api/v1/status"},
		{"json-page", "/api/v1/status?state=waiting+for+first+call&per_page=100&page=300"},
		{"series", "/series?api=data&key=" + url.QueryEscape(last)},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, c.target, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("%s: HTTP %d: %s", c.target, rec.Code, rec.Body.String())
				}
				b.ReportMetric(float64(rec.Body.Len()), "bytes/answer")
			}
		})
	}
}
