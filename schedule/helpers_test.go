package schedule

import (
	"time"

	"github.com/onchain-exporter/onchain_exporter/plan"
)

// tuple is one series as the tests drive it: what the policy reads of it
// and its plan, refreshed through a Book as the engine does.
type tuple struct {
	Series
	Poll
	key  string
	book *Book
}

func newTuple(b *Book, id, path, window string) *tuple {
	return &tuple{Series: Series{ID: id, Window: window, W: plan.WindowDuration(window)},
		key: "data " + path + " " + window, book: b}
}

// success plans after a refresh at now that succeeded; prev is the newest
// row before it.
func (t *tuple) success(prev, now time.Time) time.Time {
	t.Poll, _ = t.book.Next(t.key, t.Series, t.Poll, Outcome{PrevNewest: prev}, now)
	return t.Poll.Next.Time()
}

// failure plans after a refresh at now that failed.
func (t *tuple) failure(f Failure, now time.Time) time.Time {
	t.Poll, _ = t.book.Next(t.key, t.Series, t.Poll, Outcome{Err: &f}, now)
	return t.Poll.Next.Time()
}

// known is a copy of what the book knows of the tuple's key.
func (t *tuple) known() Known {
	t.book.mu.Lock()
	defer t.book.mu.Unlock()
	return t.book.take(t.key, t.ID, t.W)
}
