package page

import (
	"net/http"
	"net/http/httptest"
	"net/url"
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
