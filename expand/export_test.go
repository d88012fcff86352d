package expand

import "time"

// What the tests of package expand_test reach inside an Expander for.

// SetRetry sets the bounds of the back-off of Maintain's retries: tests
// retry within milliseconds.
func (x *Expander) SetRetry(lo, hi time.Duration) { x.retryMin, x.retryMax = lo, hi }

// Backoff is the wait before retry n.
func (x *Expander) Backoff(n int) time.Duration { return x.backoff(n) }

// ListCache is the Cache the Expander reads and fills.
func (x *Expander) ListCache() *Cache { return x.cache }
