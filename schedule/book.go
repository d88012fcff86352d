package schedule

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/onchain-exporter/onchain_exporter/plan"
)

// Book keeps what the series of one API taught, per key, across reloads
// and (Snapshot, Restore) restarts. It owns the estimates and their lock:
// every call hands a copy (Known) to the Policy and puts back the result.
type Book struct {
	p  *Policy
	mu sync.Mutex
	// est holds the key's estimate under the key, and a series' own, once
	// the key split, under ownKey.
	est     map[string]*Estimate
	members map[string]int // series of each key in the configuration
	// pools holds the keys of each API and window (pool.go); poolOf is
	// each key's pool.
	pools  map[string]*duePool
	poolOf map[string]*duePool
}

// NewBook returns an empty Book that plans with p (Default when nil).
func NewBook(p *Policy) *Book {
	if p == nil {
		p = &Default
	}
	return &Book{p: p, est: map[string]*Estimate{}, pools: map[string]*duePool{}, poolOf: map[string]*duePool{}}
}

// join puts the key's estimate e in the pool of its API and window: keys
// of windows only, not a series' own estimate.
func (b *Book) join(key string, e *Estimate) {
	k, own, err := ParseKey(key)
	if err != nil || own != "" || k.Series != "" {
		return
	}
	w := plan.WindowDuration(k.Window)
	if w <= 0 {
		return
	}
	name := k.API + " " + k.Window
	p := b.pools[name]
	if p == nil {
		p = newDuePool(w)
		b.pools[name] = p
	}
	p.keys = append(p.keys, e)
	p.version++
	b.poolOf[key] = p
}

// pooled is the pooled tolerance of the key, 0 when there is none.
func (b *Book) pooled(key string) time.Duration {
	p, e := b.poolOf[key], b.est[key]
	if p == nil || e == nil {
		return 0
	}
	return p.margin(e)
}

// Policy is the policy the Book plans with.
func (b *Book) Policy() *Policy { return b.p }

func ownKey(key, id string) string { return key + "\x00" + id }

// take copies what is known of the key for the series id, the key's
// estimate made first if there is none.
func (b *Book) take(key, id string, w time.Duration) Known {
	k := Known{Members: b.members[key]}
	if e := b.est[key]; e != nil {
		k.Key = *e
		k.Key.pooled = b.pooled(key)
	} else {
		k.Key = b.p.fresh(w)
	}
	if !k.Key.Split {
		return k // the key's series share its estimate: no own one
	}
	if own := b.est[ownKey(key, id)]; own != nil {
		k.Own, k.HasOwn = *own, true
	}
	prefix := key + "\x00"
	for name, own := range b.est {
		if strings.HasPrefix(name, prefix) {
			k.OwnFirst = append(k.OwnFirst, own.First)
		}
	}
	return k
}

// put stores what the policy made of what it was given.
func (b *Book) put(key, id string, k Known) {
	if e := b.est[key]; e != nil {
		changed := !slices.Equal(e.Released, k.Key.Released)
		*e = k.Key // in place: no allocation per refresh
		if p := b.poolOf[key]; changed && p != nil {
			p.changed(e)
		}
	} else {
		e := k.Key
		b.est[key] = &e
		b.join(key, &e)
	}
	if k.HasOwn {
		own := k.Own
		b.est[ownKey(key, id)] = &own
	}
}

// Next runs Policy.Step for one series of key on an event, stores what
// the key learned and returns the series' next poll, and whether the
// key's other series may be due sooner.
func (b *Book) Next(key string, s Series, pl Poll, o Outcome, now time.Time) (Poll, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	k, pl, changed := b.p.Step(b.take(key, s.ID, s.W), s, pl, o, now)
	b.put(key, s.ID, k)
	return pl, changed
}

// Update runs f (the engine's transition, Policy.Step) on what is known of
// the key for the series id (Fresh when nothing is) under the Book's lock,
// and keeps the result.
func (b *Book) Update(key, id string, f func(Known) Known) {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := Known{Members: b.members[key], Fresh: b.est[key] == nil}
	if !k.Fresh {
		k = b.take(key, id, 0)
	}
	if k = f(k); !k.Fresh {
		b.put(key, id, k)
	}
}

// read returns a copy of the key's estimate (zero when none).
func (b *Book) read(key string) Estimate {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e := b.est[key]; e != nil {
		return *e
	}
	return Estimate{}
}

// WaitsForLeader: see Policy.WaitsForLeader.
func (b *Book) WaitsForLeader(key string, s Series, pl Poll, now time.Time) (bool, time.Time) {
	if !pl.Following {
		return false, time.Time{} // most series: no lock taken
	}
	e := b.read(key)
	return b.p.WaitsForLeader(&e, s, pl, now)
}

// SiblingFound: see Policy.SiblingFound.
func (b *Book) SiblingFound(key string, s Series, pl Poll, at time.Time) bool {
	if pl.Polls == 0 && !pl.Following {
		return false // most series: no lock taken
	}
	e := b.read(key)
	return b.p.SiblingFound(&e, s, pl, at)
}

// Publication: see Known.Publication.
func (b *Book) Publication(key string, w time.Duration) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.take(key, "", w)
	return k.Publication(w)
}

// Earliest: see Known.Earliest.
func (b *Book) Earliest(key, id string, w time.Duration) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.take(key, id, w)
	return k.Earliest()
}

// SetMembers records how many series share each key and which series
// there are: a leader or chaser no longer configured hands its part on. A
// key without series leaves its pool (its old spread would speak for the
// provider for ever) but keeps its estimate.
func (b *Book) SetMembers(m map[string]int, ids map[string]bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.members = m
	for key, e := range b.est {
		if e.Leader != "" && !ids[e.Leader] {
			e.Leader = ""
		}
		if e.Chaser != "" && !ids[e.Chaser] {
			e.Chaser, e.Chased = "", time.Time{}
		}
		switch p := b.poolOf[key]; {
		case p != nil && m[key] == 0:
			p.keys = slices.DeleteFunc(p.keys, func(o *Estimate) bool { return o == e })
			delete(p.margins, e)
			p.version++
			delete(b.poolOf, key)
		case p == nil && m[key] > 0:
			b.join(key, e)
		}
	}
}

// Snapshot copies the estimates for saving.
func (b *Book) Snapshot() map[string]Estimate {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]Estimate, len(b.est))
	for k, e := range b.est {
		out[k] = *e
	}
	return out
}

// Restore takes saved estimates for keys not learned by this process.
func (b *Book) Restore(saved map[string]Estimate) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for k, e := range saved {
		if b.est[k] == nil {
			e.Depth = max(e.Depth, 0)
			b.est[k] = &e
			b.join(k, &e)
		}
	}
}

// Estimate returns a copy of what the key learned (what a cluster's owner
// of the key sends its peers), false when nothing was.
func (b *Book) Estimate(key string) (Estimate, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e := b.est[key]; e != nil {
		out := *e
		out.pooled = b.pooled(key)
		return out, true
	}
	return Estimate{}, false
}
