package upstream

import (
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/onchain-exporter/onchain_exporter/decode"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// Pool holds the one Client of each API for the life of the process, so
// that its limits and pauses hold whoever calls. A reload builds a new
// client only when what it is made of (Identity) changed.
type Pool struct {
	m      *Metrics
	now    func() time.Time
	logger log.Logger
	shapes *decode.ShapeLog // shared: a shape is logged once per process

	refusals chan string // Refusals

	mu       sync.Mutex
	clients  map[string]*Client
	onClient []func(*Client)
}

// NewPool returns an empty pool whose request families are registered in
// reg; now is the clock of pauses and Retry-After dates.
func NewPool(reg prometheus.Registerer, now func() time.Time, logger log.Logger) *Pool {
	if now == nil {
		now = time.Now
	}
	return &Pool{m: NewMetrics(reg), now: now, logger: logger, shapes: decode.NewShapeLog(logger), clients: map[string]*Client{},
		refusals: make(chan string, 1)}
}

// Client returns the client of an API section: the one in use when the
// section is the same, else a new one (the old one closed).
func (p *Pool) Client(a *config.API) *Client {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.clientLocked(a)
}

func (p *Pool) clientLocked(a *config.API) *Client {
	old := p.clients[a.Name]
	if old != nil && old.identity == Identity(a) {
		return old
	}
	c := p.build(a, old, true)
	c.unmark("")
	if old != nil {
		old.Close()
	}
	p.clients[a.Name] = c
	for _, f := range p.onClient {
		f(c)
	}
	return c
}

// OnClient calls f with each client in force and each one the pool puts
// in force from now on, before its first call: where a client's budget
// and pauses are hooked to what keeps them across restarts.
func (p *Pool) OnClient(f func(*Client)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.onClient = append(p.onClient, f)
	for _, name := range config.APINames {
		if c := p.clients[name]; c != nil {
			f(c)
		}
	}
}

// Candidate returns a client for a section not (yet) in force: the one in
// use when the section is the same, else one of its own that shares the
// account's turns, budget and pauses and that release closes, so that
// expanding a candidate configuration leaves the clients in use as they
// are. With no client of the API yet, the section's goes in.
func (p *Pool) Candidate(a *config.API) (c *Client, release func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.clients[a.Name]
	switch {
	case old == nil:
		return p.clientLocked(a), func() {}
	case old.identity == Identity(a):
		return old, func() {}
	}
	c = p.build(a, old, false)
	return c, c.Close
}

// build makes a client of section a. Of old's account, it carries over
// what is the account's: pauses but a rejected credential's (which a may
// have fixed), the rate_limit turns, the day's calls and the key's plan;
// in force, at a's limits; a candidate shares them as they are.
func (p *Pool) build(a *config.API, old *Client, inForce bool) *Client {
	c := New(a, p.m, p.now, p.logger) // New adds the api label
	c.identity, c.refusals, c.shapes = Identity(a), p.refusals, p.shapes
	if old == nil || !sameAccount(old.api, a) {
		return c
	}
	c.RestorePauses(slices.DeleteFunc(old.Pauses(), func(ps Pause) bool { return ps.Credential }))
	lim, day := old.rateCap(), old.Budget()
	c.mu.Lock()
	defer c.mu.Unlock()
	if lim != nil && c.limit != nil {
		if inForce {
			lim.resize(a.RateLimit)
		}
		c.limit = lim
	}
	if day != nil {
		if inForce {
			day.SetLimit(a.DailyBudget, p.now())
		}
		c.budget = day
	}
	c.plan = old.plan
	return c
}

// Current returns the client of an API in the pool now, or nil.
func (p *Pool) Current(name string) *Client {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.clients[name]
}

// Drop closes the client of an API no longer configured.
func (p *Pool) Drop(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.clients[name]; c != nil {
		c.Close()
		delete(p.clients, name)
		p.m.apiPaused.DeletePartialMatch(prometheus.Labels{"api": name})
	}
}

// Close closes every client.
func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for name, c := range p.clients {
		c.Close()
		delete(p.clients, name)
	}
}

// Identity is a digest of what a client of the section is made of:
// address, credential, authentication, limits, timeout, TLS and proxy
// settings. Equal identities share one client; the credential cannot be
// read back from it.
func Identity(a *config.API) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%d\x00%g\x00%d\x00", a.Name, a.URL, a.Auth, a.Timeout, a.Concurrency, a.RateLimit, a.DailyBudget)
	h.Write([]byte(a.Token()))
	writeHTTPClientIdentity(h, &a.HTTPClient)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// sameAccount says whether two sections call the same API with the same
// credential.
func sameAccount(a, b *config.API) bool {
	return a.URL.String() == b.URL.String() && a.Token() == b.Token()
}

// accountIterations is the cost of the account digest: a state file others
// can read must not make guessing the credential cheap.
const accountIterations = 50000

var (
	accountsMu sync.Mutex
	accounts   = map[[32]byte]string{} // in memory only: sha256 of the fields -> digest
)

// Account is the digest a state file is saved under: the API, address,
// auth mode and credential only, so that a new timeout, limit, CA or proxy
// keeps what was learned while another account starts cold. A PBKDF2 of
// the credential salted by the rest, computed once per process and
// section.
func Account(a *config.API) string {
	key := sha256.Sum256([]byte(a.Name + "\x00" + a.URL.String() + "\x00" + a.Auth + "\x00" + string(a.Token())))
	accountsMu.Lock()
	defer accountsMu.Unlock()
	if d, ok := accounts[key]; ok {
		return d
	}
	salt := []byte("onchain_exporter state\x00" + a.Name + "\x00" + a.URL.String() + "\x00" + a.Auth)
	d := ""
	// An error (parameters out of range in a FIPS-only mode) leaves "",
	// which matches no file: a cold start, never a wrong one.
	if sum, err := pbkdf2.Key(sha256.New, string(a.Token()), salt, accountIterations, 16); err == nil {
		d = hex.EncodeToString(sum)
	}
	accounts[key] = d
	return d
}
