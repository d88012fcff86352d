package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/go-kit/log/level"
)

// Join joins the addresses of Config.Peers, exchanging the full state
// with each, and starts the reconnect loop. An error says no peer could
// be joined now; it is not fatal: the member keeps trying and works alone
// meanwhile. ctx bounds name resolution; each address may take
// memberlist's TCP timeout (10 s) to fail.
func (p *Peer) Join(ctx context.Context) error {
	if p == nil {
		return nil
	}
	p.joining.Add(1)
	defer p.joinEnded()
	return p.join(ctx)
}

// JoinInBackground is Join in a goroutine, so that a member serves
// while it joins however long that takes; its error is logged.
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

// Joining reports whether a join is under way: a tuple this member would
// fetch now may be in the full state on its way.
func (p *Peer) Joining() bool { return p != nil && p.joining.Load() > 0 }

// joinEnded ends a join and fires Changed for what waited on it.
func (p *Peer) joinEnded() {
	p.joining.Add(-1)
	p.mu.Lock()
	next := make(chan struct{})
	close(*p.changed.Swap(&next))
	p.mu.Unlock()
}

func (p *Peer) join(ctx context.Context) error {
	p.joinOnce.Do(func() {
		p.wg.Go(p.reconnect)
	})
	addrs, errs := p.resolve(ctx)
	for _, err := range errs {
		level.Warn(p.logger).Log("msg", "cannot resolve a peer; trying again every --cluster.reconnect-interval", "err", err)
	}
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

// reconnect, every ReconnectInterval, reads the key file again, resolves
// the peers again (a Service's new pods) and joins the addresses that are
// not live members, failed members included until ReconnectTimeout.
func (p *Peer) reconnect() {
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
			// Its push/pull may take a while: not twice.
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), p.cfg.ReconnectInterval)
		addrs, errs := p.resolve(ctx)
		cancel()
		for _, err := range errs {
			level.Debug(p.logger).Log("msg", "cannot resolve a peer", "err", err)
		}
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

// lost returns the addresses resolved and the failed members' that no
// live member holds, and forgets failed members past ReconnectTimeout.
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

// resolve resolves the peers and keeps the slots of their addresses
// (members.go); after a failed resolution the old ones stay: a DNS hiccup
// does not give the slots away.
func (p *Peer) resolve(ctx context.Context) ([]string, []error) {
	addrs, errs := resolvePeers(ctx, p.cfg.Peers, p.lookup)
	keep := addrs
	if len(errs) > 0 {
		p.mu.Lock()
		keep = slices.AppendSeq(slices.Clone(addrs), maps.Keys(p.expected))
		p.mu.Unlock()
	}
	p.setExpected(keep)
	return addrs, errs
}

// lookupFunc resolves a host name to addresses, as net.Resolver.LookupHost.
type lookupFunc func(ctx context.Context, host string) ([]string, error)

// resolvePeers turns host:port peers into every IP:port they resolve to,
// without duplicates; a name that does not resolve is an error, left out.
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
