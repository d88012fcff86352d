// Package schedule decides when each tuple is refreshed: at the moment
// its next row is expected, learned per key (an API's endpoint and
// window, whose series share a publication delay).
//
//   - policy.go: Policy, the tunables;
//   - next.go: Policy.Next, the policy itself (no locks, no I/O);
//   - learn.go: what a find, a miss or a probe teaches of the delay
//     (Estimate), and which series of a key leads;
//   - release.go, pool.go: when a key's next row is due;
//   - cadence.go: how often a series without a window has a new row;
//   - book.go: Book, the owner of an API's estimates and their lock;
//   - check.go: the bounds on what the schedule takes back;
//   - instant.go: Instant, a time as a tuple's state keeps it.
package schedule
