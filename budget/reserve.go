package budget

import (
	"math"
	"time"
)

// Reserver writes a Saved value where the next process will find it, and
// returns only once it is durable (synced and renamed into place): a
// crash right after it returns must still find it. A Budget calls it with
// the calls of a chunk counted as spent before it allows any of them.
type Reserver func(Saved) error

// MaxChunk is the most calls one reservation covers: a crash loses at
// most this many (reserved, never made). The first chunk after New,
// Restore or SetReserver is one call and each next one twice the last, so
// a process that crashes right after its first call wastes nothing.
const MaxChunk = 5

// ReserveRetry is how long a call is held back after a reservation could
// not be written: money is not spent that the next process cannot see.
const ReserveRetry = 30 * time.Second

// SetReserver makes every call past what is reserved wait for r to write
// the day's count with the next chunk counted as spent: a process killed
// at any moment has spent at most what its file says, and a restart that
// restores it gets neither a new day nor a new burst. A failed write
// holds the call back (ReserveRetry, ReserveError). Without a limit
// nothing is reserved. A nil r stops reserving.
func (b *Budget) SetReserver(r Reserver) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reserver, b.reserved, b.chunk = r, 0, 1
}

// ReserveError is the error of the last reservation that could not be
// written, or nil once one was.
func (b *Budget) ReserveError() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.reserveErr
}

// reserve writes the next chunk under limit l; false when it could not.
// The lock is held on entry and return, released while writing.
func (b *Budget) reserve(l int) bool {
	// Within the bucket's whole tokens: a restart waits no longer than
	// the process that wrote it would have.
	k := min(max(b.chunk, 1), MaxChunk, l-b.used, int(math.Floor(b.tokens+tokenSlack)))
	k = max(k, 1)
	s := b.savedLocked()
	s.Used = b.used + k
	s.Tokens = max(b.tokens-float64(k), 0)
	r, day, done := b.reserver, b.day, make(chan struct{})
	b.writing = done
	b.mu.Unlock()
	err := r(s)
	b.mu.Lock()
	b.writing = nil
	close(done)
	if err != nil {
		b.reserveErr = err
		return false
	}
	b.reserveErr = nil
	if b.day.Equal(day) && b.reserver != nil {
		b.reserved = max(b.reserved, s.Used)
	}
	b.chunk = min(2*max(b.chunk, 1), MaxChunk)
	return true
}
