// Package schedule decides when each tuple is refreshed: at the moment
// its next row is expected, learned per key (an API's endpoint and
// window, whose series share a publication delay).
//
//   - policy.go: Policy, the twelve tunables, each with its unit and why,
//     and what is derived from them;
//   - next.go: Policy.Next, the policy itself: from what is known of the
//     key (Known), the series (Series), its next poll (Poll), the outcome of its
//     last refresh and the time, the next plan. No locks, no I/O;
//   - learn.go: what a find, a miss or a probe teaches of the delay
//     (Estimate), and which series of a key leads;
//   - cadence.go: how often a series without a window has a new row
//     (Policy.LearnCadence, a pure function of what it learned and one
//     answer), and the grid an answer without times is placed on;
//   - book.go: Book, the one owner of the estimates of an API and of their
//     lock, saved and restored with the state file (Snapshot, Restore);
//   - check.go: the bounds on what the schedule takes back (an Estimate,
//     a Poll, a time), checked by the owner that takes them back;
//   - instant.go: Instant, a time as a tuple's state keeps it (8 bytes,
//     the JSON of a time.Time).
package schedule
