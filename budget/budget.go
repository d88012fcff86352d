package budget

import (
	"math"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/onchain-exporter/onchain_exporter/internal/clock"
)

// Budget is the daily budget of one API: at most Limit calls per UTC day,
// every call counted, paced by a token bucket refilled at Limit/86400
// calls a second with room for Limit/96 (a quarter hour's share, at least
// one): no clock hour spends more than Limit/24 + 25 %, and a burst at
// 00:05 does not leave the evening dark. The limit is the smaller of
// daily_budget and the upstream's X-Daily-Limit seen today; with neither,
// every call is allowed and still counted.
type Budget struct {
	mu  sync.Mutex
	own int // daily_budget; 0 = none
	// upLimit is the upstream's X-Daily-Limit as seen on the UTC day upDay.
	upLimit int
	upDay   time.Time
	day     time.Time // the UTC day used counts
	used    int
	// tokens is the bucket's level at `at`; paced says a limit was in
	// force then (else the bucket fills at once when one comes).
	tokens float64
	at     time.Time
	paced  bool

	// reserve.go: reserved is the day's count last written, chunk the
	// size of the next one, reserveErr the last write's failure.
	reserver   Reserver
	reserved   int
	chunk      int
	reserveErr error
	writing    chan struct{} // closed when the write under way ends

	// cluster.go: the other members' counts, those that serve now, and
	// seen of the most members there were.
	peers    map[string]peerCount
	serving  map[string]bool
	seen, of int
	// peerRefused counts refused peers' counts by reason; logged says
	// when each member and reason was last logged.
	peerRefused map[string]int
	logger      log.Logger
	logged      map[refusalKey]time.Time

	clock func(time.Time) time.Time // SetClock
}

// New returns a budget of limit calls per UTC day (0 = none of our own)
// whose bucket is full at now.
func New(limit int, now time.Time) *Budget {
	b := &Budget{own: max(limit, 0), peers: map[string]peerCount{}, logged: map[refusalKey]time.Time{}}
	b.advance(now)
	return b
}

// midnight is the start of t's UTC day.
func midnight(t time.Time) time.Time { return t.UTC().Truncate(24 * time.Hour) }

// maxClockShift bounds how far the cluster's clock may move the day from
// this member's own: a member whose clock is hours wrong still counts on
// the cluster's day; past a day the cluster's clock is broken, and a day
// taken far ahead would hold every count until this clock caught up.
const maxClockShift = 24 * time.Hour

// SetClock has the day follow clock (cluster.Peer.ClusterTime), so that
// every member counts on the same UTC day; the pace still runs on the
// time passed in. clock is called with the lock held: it must not call
// the budget. nil is the time passed in.
func (b *Budget) SetClock(clock func(time.Time) time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.clock = clock
}

// shift is how far the day's clock is ahead of now (SetClock), within
// maxClockShift; the lock is held.
func (b *Budget) shift(now time.Time) time.Duration {
	if b.clock == nil {
		return 0
	}
	return min(max(b.clock(now).Sub(now), -maxClockShift), maxClockShift)
}

// today is the UTC day at now on the day's clock; the lock is held.
func (b *Budget) today(now time.Time) time.Time { return midnight(now.Add(b.shift(now))) }

// rate is the bucket's refill, in calls per second, and burst its room.
func rate(limit int) float64 { return float64(limit) / 86400 }

func burst(limit int) float64 { return max(1, float64(limit)/96) }

// tokenSlack absorbs the rounding of refills: a bucket asked again at the
// time Take named holds a whole token.
const tokenSlack = 1e-9

// limit is the limit in force on the day advanced to; the lock is held.
func (b *Budget) limit() int {
	l := b.own
	if b.upLimit > 0 && b.upDay.Equal(b.day) && (l == 0 || b.upLimit < l) {
		l = b.upLimit
	}
	return l
}

// advance brings the day and the bucket up to now and returns the limit
// in force; the lock is held. A clock that steps back neither resets the
// day nor refills the bucket, but the cluster's clock (SetClock) may move
// the day back, its calls with it: they were made on the cluster's day.
func (b *Budget) advance(now time.Time) int {
	switch d := b.today(now); {
	case d.After(b.day):
		b.day, b.used, b.reserved = d, 0, 0
	case d.Before(b.day) && b.clock != nil:
		b.day = d
	}
	l := b.limit()
	switch {
	case l == 0:
		b.paced = false
	case !b.paced:
		b.tokens, b.paced = burst(l), true
	case now.After(b.at):
		b.tokens += now.Sub(b.at).Seconds() * rate(l)
	}
	if b.paced {
		b.tokens = min(b.tokens, burst(l))
	}
	if now.After(b.at) {
		b.at = now
	}
	return l
}

// Take spends one call at now if the budget allows it. When it does not,
// next is the earliest time it may: the bucket's next whole token, the
// next 00:00 UTC on the day's clock once the day's calls are used, or
// ReserveRetry later when the reservation could not be written. The
// reservation is written outside the lock, so readers never wait for the
// disk; a Take that meets one under way waits for it.
func (b *Budget) Take(now time.Time) (ok bool, next time.Time) { return b.take(now, false) }

// Borrow is Take without waiting for the pace: the bucket goes into debt
// that later calls wait out. The read of the key's plan borrows, so that
// a small budget spent to its pace does not keep a changed plan out of
// force for hours.
func (b *Budget) Borrow(now time.Time) (ok bool, next time.Time) { return b.take(now, true) }

func (b *Budget) take(now time.Time, borrow bool) (ok bool, next time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for {
		l := b.advance(now)
		switch {
		case l == 0:
		case b.used+b.peersUsed(l, now) >= l || b.used >= b.ownCap(l):
			return false, clock.Later(b.day.Add(24*time.Hour).Add(-b.shift(now)), b.refilled(now, l))
		case b.tokens+tokenSlack < 1 && !borrow:
			return false, b.refilled(now, l)
		case b.writing != nil:
			w := b.writing
			b.mu.Unlock()
			<-w
			b.mu.Lock()
			continue
		case b.reserver != nil && b.used >= b.reserved:
			if !b.reserve(l) {
				return false, now.Add(ReserveRetry)
			}
			continue // the count may have moved while it was written
		case borrow:
			b.tokens--
		default:
			b.tokens = max(b.tokens-1, 0)
		}
		b.used++
		return true, now
	}
}

// refilled is when the bucket holds a whole token again; the lock is held.
func (b *Budget) refilled(now time.Time, l int) time.Time {
	if b.tokens+tokenSlack >= 1 {
		return now
	}
	wait := math.Ceil((1 - b.tokens) / rate(l) * float64(time.Second))
	return now.Add(time.Duration(wait))
}

// Used is the calls counted on now's UTC day: those taken (or
// X-Daily-Used when more), and the other members' (ObservePeer).
func (b *Budget) Used(now time.Time) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	l := b.advance(now)
	return b.used + b.peersUsed(l, now)
}

// Limit is the limit in force at now; 0 when there is none.
func (b *Budget) Limit(now time.Time) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.advance(now)
}

// SetLimit sets daily_budget (0 = none), as a reload does: the day's
// calls and the bucket's level carry over.
func (b *Budget) SetLimit(limit int, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advance(now)
	b.own = max(limit, 0)
	b.advance(now)
}

// ObserveUpstream takes an answer's X-Daily-Limit (in force for the rest
// of the UTC day when below daily_budget) and X-Daily-Used (which may
// count others' calls with the same key); a value below 1 is absent.
func (b *Budget) ObserveUpstream(limit, used int, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	l := b.advance(now)
	if limit > 0 {
		b.upLimit, b.upDay = limit, b.day
	}
	if others := b.peersUsed(l, now); used > b.used+others {
		b.used = used - others // the upstream's count holds the other members' calls too
	}
	b.advance(now)
}
