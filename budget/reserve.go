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
// most this many calls of the day's budget (reserved, never made), and a
// process writes its count at most once per this many calls. The first
// chunk after New, Restore or SetReserver is one call, and each next one
// twice the last, up to MaxChunk: a process that crashes right after its
// first call wastes nothing.
const MaxChunk = 5

// ReserveRetry is how long a call waits after a reservation could not be
// written: the call is held back (money is not spent that the next
// process cannot see), and asked again then.
const ReserveRetry = 30 * time.Second

// SetReserver makes every call beyond what is already reserved wait for a
// new reservation: before Take allows it, the day's count with the next
// chunk of calls counted as spent (and the bucket's level with them
// taken) goes to r, synchronously. So a process killed at any moment has
// spent at most what its file says, and a restart that restores the file
// (Restore) neither gets a new day nor a new burst. A write that fails
// holds the call back (Take says no until ReserveRetry) and is kept for
// ReserveError. Without a limit in force nothing is reserved: no money is
// capped. A nil r stops reserving.
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

// reserve writes the next chunk before the call about to be taken under
// limit l, the calls reserved so far being used; false when it could not
// be written. The lock is held on entry and on return, released while
// the chunk is written: readers of the budget never wait for the disk.
func (b *Budget) reserve(l int) bool {
	// The chunk fits the day's calls left and the bucket's whole tokens,
	// so that the level saved is never below zero: a restart waits no
	// longer than the process that wrote it would have.
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
