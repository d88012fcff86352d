package expand

import (
	"context"
	"time"
)

// What the tests of package expand_test reach inside an Expander for.

// SetRetry sets the bounds of the back-off of Maintain's retries: tests
// retry within milliseconds.
func (x *Expander) SetRetry(lo, hi time.Duration) { x.retryMin, x.retryMax = lo, hi }

// Backoff is the wait before retry n.
func (x *Expander) Backoff(n int) time.Duration { return x.backoff(n) }

// ListCache is the Cache the Expander reads and fills.
func (x *Expander) ListCache() *Cache { return x.cache }

// Refresh is what Maintain does at its daily refresh: fresh lists (and
// plan) asked for, the configuration last loaded expanded again.
func (x *Expander) Refresh(ctx context.Context) error {
	x.cache.renew()
	_, err := x.reexpand(ctx)
	return err
}
