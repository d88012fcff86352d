package collector

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/cluster"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// TestNoCallWhileJoining: a member scraped while its join is under way
// calls nothing (the peer's full state may hold every row), and its
// scrape waits; once the join has ended (here it fails: the peer took
// the stream and hung up), the member fetches what it owns and the
// scrape is answered with it.
func TestNoCallWhileJoining(t *testing.T) {
	up := testtool.StartFake(t, fakeapi.Options{})
	// A "peer" that takes the join's stream and answers nothing until
	// the test hangs up.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	accepted := make(chan struct{}, 1)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			select {
			case accepted <- struct{}{}:
			default:
			}
		}
	}()
	hangUp := func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	}
	defer hangUp()

	reg := prometheus.NewRegistry()
	p, err := cluster.Create(clusterConfig("b", l.Addr().String()), log.NewNopLogger(), reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Leave(time.Second) })
	e := &env{t: t, clock: up.Clock, fake: up.Fake, srv: up.Srv, reg: reg}
	exp, err := New(e.parse(supplyConfig), log.NewNopLogger(), reg, Options{Clock: up.Clock, IdleAfter: neverIdle, Peer: p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(exp.Close)
	p.JoinInBackground(t.Context())
	select {
	case <-accepted:
	case <-time.After(10 * time.Second):
		t.Fatal("the join did not reach the peer")
	}
	body := make(chan string, 1)
	go func() {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "60")
		rec := httptest.NewRecorder()
		exp.ServeHTTP(rec, req)
		body <- rec.Body.String()
	}()
	// The scrape woke the engines: they plan, and call nothing.
	eventually(t, "the scrape seen by the engines", func() bool {
		for _, c := range engines(exp) {
			if c.lastScrape.Load() == 0 {
				return false
			}
		}
		return true
	})
	exp.Settle()
	if !p.Joining() {
		t.Fatal("the join ended before the peer hung up")
	}
	if n := up.Fake.Calls("data"); n != 0 {
		t.Errorf("%d calls while joining, want none", n)
	}
	select {
	case b := <-body:
		t.Fatalf("the scrape was answered while joining, before any row:\n%s", b)
	default:
	}
	hangUp()
	b := <-body
	tuples := int64(len(e.parse(supplyConfig).Tuples))
	if n := up.Fake.Calls("data"); n != tuples {
		t.Errorf("%d calls once the join failed, want the %d tuples'", n, tuples)
	}
	if !strings.Contains(dataLines(b), "onchain_supply{") {
		t.Errorf("the scrape after the join serves no row:\n%s", dataLines(b))
	}
}
