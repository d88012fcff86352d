package backfill

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// closedAddr is an address on 127.0.0.1 where nothing listens: a
// connection to it is refused.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestUnreachableUpstreamStopsTheRun: an upstream whose connections are
// refused, or cut before any answer, has its API's calls stopped after a
// few tries, as a rejected credential has: the run ends with an error
// that names the API's URL, and every series not tried is left for a
// later run. (Before, each series was tried four times, one after the
// other: 24 calls and more for these 6 series.)
func TestUnreachableUpstreamStopsTheRun(t *testing.T) {
	t.Run("refused", func(t *testing.T) {
		e := newEnv(t, mixedConfig, nil)
		addr := closedAddr(t)
		for _, a := range e.cfg.APIs {
			a.URL.Host = addr
			a.URL.User = nil
		}
		sum, err := Run(context.Background(), e.cfg, e.pool, e.options(3))
		if err == nil || !strings.Contains(err.Error(), "the data API's upstream http://"+addr+" cannot be reached") ||
			!strings.Contains(err.Error(), "the indicator API's upstream http://"+addr+"/indicator cannot be reached") ||
			!strings.Contains(err.Error(), "connection refused") {
			t.Fatalf("got %v", err)
		}
		// Each API stops at its fourth failure; a call already under
		// way for the API's other series at that moment ends too.
		if sum.Written != 0 || sum.Complete || sum.Calls > 2*(maxBelowHTTPInARow+DefaultConcurrency) || sum.NotTried+sum.Failed != 6 {
			t.Errorf("%+v", sum)
		}
	})
	t.Run("cut", func(t *testing.T) {
		var calls atomic.Int64
		e := newEnv(t, mixedConfig, func(http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					conn.Close()
				}
			})
		})
		sum, err := Run(context.Background(), e.cfg, e.pool, e.options(3))
		if err == nil || !strings.Contains(err.Error(), "the data API's upstream "+e.url+" cannot be reached") ||
			!strings.Contains(err.Error(), "4 calls in a row failed before any answer") {
			t.Fatalf("got %v", err)
		}
		if strings.Contains(err.Error(), "api_key") || strings.Contains(err.Error()+e.logs.String(), testtool.DataToken) {
			t.Errorf("a credential is shown:\n%v\n%s", err, e.logs.String())
		}
		// The client sends each call at most twice (its own retry).
		if n := calls.Load(); n > 2*2*(maxBelowHTTPInARow+DefaultConcurrency) || sum.Written != 0 {
			t.Errorf("%d requests on the wire, %+v", n, sum)
		}
	})
}

// TestUnreachableCountsOnlyInARow: calls cut now and then, with answers
// between them, do not stop the run: every series is written.
func TestUnreachableCountsOnlyInARow(t *testing.T) {
	var calls atomic.Int64
	e := newEnv(t, mixedConfig, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if calls.Add(1)%2 == 1 {
				if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
					conn.Close()
					return
				}
			}
			h.ServeHTTP(w, r)
		})
	})
	if sum := e.run(e.options(3)); !sum.Complete || sum.Written != 6 {
		t.Errorf("%+v\n%s", sum, e.logs.String())
	}
}

// TestRemoteWriteTargetCheckedFirst: a remote-write target that cannot
// be reached, or refuses a write, ends the run before any upstream call,
// with an error naming the target without its credentials; one down for
// a moment is tried again a few times. (Before, the history was fetched
// first and the error came with the first batch.)
func TestRemoteWriteTargetCheckedFirst(t *testing.T) {
	for _, c := range []struct {
		name  string
		codes []int // the answers to the probe writes, in turn; none: no server
		want  string
		err   bool
	}{
		{name: "refused connection", want: "connect: connection refused", err: true},
		{name: "401", codes: []int{http.StatusUnauthorized}, want: "HTTP 401", err: true},
		{name: "404", codes: []int{http.StatusNotFound}, want: "HTTP 404", err: true},
		{name: "503 for good", codes: []int{503, 503, 503, 503}, want: "3 tries): HTTP 503", err: true},
		{name: "503 once", codes: []int{503, 204}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, mixedConfig, nil)
			addr := closedAddr(t)
			var probes atomic.Int64
			if c.codes != nil {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					n := probes.Add(1)
					if r.ContentLength > 8 { // not the empty probe: taken
						w.WriteHeader(http.StatusNoContent)
						return
					}
					w.WriteHeader(c.codes[min(int(n), len(c.codes))-1])
				}))
				t.Cleanup(srv.Close)
				addr = strings.TrimPrefix(srv.URL, "http://")
			}
			o := remoteOptions(t, e, "http://backfill:s3cret@"+addr+"/api/v1/write", 1000)
			sum, err := Run(context.Background(), e.cfg, e.pool, o)
			if calls := e.fake.Calls("data") + e.fake.Calls("indicator"); c.err && calls != 0 {
				t.Errorf("%d upstream calls before the target was checked", calls)
			}
			switch {
			case !c.err && (err != nil || !sum.Complete):
				t.Errorf("a target down for one probe: %v %+v", err, sum)
			case c.err && (err == nil || !strings.Contains(err.Error(), "the remote-write target http://backfill:xxxxx@"+addr+"/api/v1/write does not take a write") ||
				!strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "s3cret")):
				t.Errorf("got %v, want the target named, redacted, and %q", err, c.want)
			}
		})
	}
}

// TestDryRunCountsBlockPages: the dry run gives the pages of block
// series as a number, estimated from the chain's block spacing, and
// counts them in its total.
func TestDryRunCountsBlockPages(t *testing.T) {
	e := newEnv(t, dataConfig(`    - path: /v1/btc/network-data/supply
      window: block
    - path: /v2/network/events-count
      asset: usdt
      window: block
`), nil)
	var out bytes.Buffer
	if err := DryRun(&out, e.cfg, e.options(100)); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	// 100 days, 12 h 34 min 56 s: 723 775 blocks of 12 s, 73 pages of
	// 10 000; 14 476 blocks of 10 min, one page of 100 000.
	for _, want := range []string{
		"#   and about 72 more pages before it by to=, 10000 rows a page: about 723775 ethereum blocks, one every 12s",
		"#   and about 0 more pages before it by to=, 100000 rows a page: about 14476 btc blocks, one every 10m0s",
		"# 2 series, 74 calls (72 of them pages of block series, estimated from their chains' block spacing)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the dry run does not say %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "and more") || strings.Contains(text, "while an answer holds") {
		t.Errorf("a page count without a number:\n%s", text)
	}
}
