package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/go-kit/log/level"
)

// Join asks the addresses of Config.Peers to let this member in, which
// exchanges the full state with each, and starts asking again every
// ReconnectInterval: names are resolved again (a Service's new pods are
// joined) and failed members are retried until ReconnectTimeout. An error
// says no peer could be joined now; it is not fatal, as the member keeps
// trying and works alone meanwhile. Each address may take up to
// memberlist's TCP timeout (10 s) to fail; ctx bounds name resolution.
func (p *Peer) Join(ctx context.Context) error {
	if p == nil {
		return nil
	}
	p.joining.Add(1)
	defer p.joinEnded()
	return p.join(ctx)
}

// JoinInBackground is Join in a goroutine of its own, logged when no peer
// could be joined: a member serves (its /metrics, its probes) while it
// joins and takes the others' full state, however long that takes.
// Joining reports true from the call until the join ends.
func (p *Peer) JoinInBackground(ctx context.Context) {
	if p == nil {
		return
	}
	p.joining.Add(1)
	go func() {
		defer p.joinEnded()
		if err := p.join(ctx); err != nil {
			level.Warn(p.logger).Log("msg", "no cluster peer reachable yet; joining in the background", "err", err)
		}
	}()
}

// Joining reports whether a join is under way: this member does not know
// yet what the others hold, and a tuple it would fetch now may be in the
// full state on its way. A nil *Peer is never joining.
func (p *Peer) Joining() bool { return p != nil && p.joining.Load() > 0 }

// joinEnded ends a join and fires Changed: what waited for the join (an
// engine that does not call while it joins) looks again.
func (p *Peer) joinEnded() {
	p.joining.Add(-1)
	p.mu.Lock()
	next := make(chan struct{})
	close(*p.changed.Swap(&next))
	p.mu.Unlock()
}

// join is Join.
func (p *Peer) join(ctx context.Context) error {
	p.joinOnce.Do(func() {
		p.wg.Add(1)
		go p.reconnect()
	})
	addrs, errs := resolvePeers(ctx, p.cfg.Peers, p.lookup)
	for _, err := range errs {
		level.Warn(p.logger).Log("msg", "cannot resolve a peer; trying again every --cluster.reconnect-interval", "err", err)
	}
	p.keepResolved(addrs, errs)
	self := p.Self().Address
	addrs = slices.DeleteFunc(addrs, func(a string) bool { return a == self })
	if len(addrs) == 0 {
		if len(p.cfg.Peers) > 0 && len(errs) > 0 {
			return errors.New("no address of --cluster.peer resolved")
		}
		return nil // the first member, or its own Service's only pod
	}
	n, err := p.ml.Join(addrs)
	if err != nil {
		p.m.rejoins.WithLabelValues("failure").Inc()
		return fmt.Errorf("join %s: %w", strings.Join(addrs, ","), err)
	}
	p.m.rejoins.WithLabelValues("success").Inc()
	level.Info(p.logger).Log("msg", "joined the cluster", "contacted", n, "of", len(addrs), "members", len(*p.members.Load()))
	return nil
}

// reconnect resolves the peers again and joins the addresses that are not
// live members, and retries failed members, every ReconnectInterval; it
// reads the key file again too (keyring.go).
func (p *Peer) reconnect() {
	defer p.wg.Done()
	t := time.NewTicker(p.cfg.ReconnectInterval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		p.reloadKeys()
		if p.Joining() {
			// A join under way (its push/pull may take a while at many
			// tuples) is not made twice.
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), p.cfg.ReconnectInterval)
		addrs, errs := resolvePeers(ctx, p.cfg.Peers, p.lookup)
		cancel()
		for _, err := range errs {
			level.Debug(p.logger).Log("msg", "cannot resolve a peer", "err", err)
		}
		p.keepResolved(addrs, errs)
		for _, a := range p.lost(addrs, time.Now()) {
			select {
			case <-p.stop:
				return
			default:
			}
			if _, err := p.ml.Join([]string{a}); err != nil {
				p.m.rejoins.WithLabelValues("failure").Inc()
				level.Debug(p.logger).Log("msg", "cannot join", "address", a, "err", err)
				continue
			}
			p.m.rejoins.WithLabelValues("success").Inc()
			level.Info(p.logger).Log("msg", "joined", "address", a)
		}
	}
}

// lost returns the addresses to join: those resolved and the failed
// members', less this member's and the live members'. It forgets failed
// members older than ReconnectTimeout.
func (p *Peer) lost(resolved []string, now time.Time) []string {
	self := p.Self().Address // before p.mu: memberlist locks, then calls memberJoined
	p.mu.Lock()
	defer p.mu.Unlock()
	skip := map[string]bool{self: true}
	for _, m := range p.live {
		skip[m.Address] = true
	}
	var out []string
	add := func(a string) {
		if !skip[a] {
			skip[a] = true
			out = append(out, a)
		}
	}
	for _, a := range resolved {
		add(a)
	}
	for name, f := range p.failed {
		if now.Sub(f.since) > p.cfg.ReconnectTimeout {
			delete(p.failed, name)
			continue
		}
		add(f.address)
	}
	return out
}

// keepResolved keeps the addresses resolved as those whose slots are
// kept (members.go). A name that did not resolve this time keeps the
// addresses it had: a DNS hiccup does not give the slots away.
func (p *Peer) keepResolved(addrs []string, errs []error) {
	if len(errs) > 0 {
		p.mu.Lock()
		for a := range p.expected {
			addrs = append(addrs, a)
		}
		p.mu.Unlock()
	}
	p.setExpected(addrs)
}

// lookupFunc resolves a host name to addresses, as net.Resolver.LookupHost.
type lookupFunc func(ctx context.Context, host string) ([]string, error)

// resolvePeers turns host:port peers into IP:port addresses, every address
// a name resolves to, without duplicates. A name that does not resolve now
// is an error and is left out; the others are still returned.
func resolvePeers(ctx context.Context, peers []string, lookup lookupFunc) (addrs []string, errs []error) {
	seen := map[string]bool{}
	add := func(host, port string) {
		a := net.JoinHostPort(host, port)
		if !seen[a] {
			seen[a] = true
			addrs = append(addrs, a)
		}
	}
	for _, peer := range peers {
		host, port, err := net.SplitHostPort(peer)
		if err != nil {
			errs = append(errs, fmt.Errorf("--cluster.peer %q: %w", peer, err))
			continue
		}
		if ip := net.ParseIP(host); ip != nil {
			add(ip.String(), port)
			continue
		}
		ips, err := lookup(ctx, host)
		if err == nil && len(ips) == 0 {
			err = errors.New("no address")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("--cluster.peer %q: %w", peer, err))
			continue
		}
		for _, ip := range ips {
			if parsed := net.ParseIP(ip); parsed != nil {
				ip = parsed.String()
			}
			add(ip, port)
		}
	}
	return addrs, errs
}
