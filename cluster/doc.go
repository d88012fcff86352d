// Package cluster owns membership of a cluster of exporter replicas that
// share their upstream calls (--cluster.* flags), on hashicorp/memberlist
// (Alertmanager's, Loki's and Mimir's): SWIM failure detection, gossip of
// small messages, full state exchange by TCP push/pull.
//
// Order of use: Create, AddState for every State, Join (or
// JoinInBackground), Settle; Leave at shutdown. With
// --cluster.listen-address empty Create returns a nil *Peer, and every
// method of a nil *Peer answers as a cluster of one: this member owns
// every unit at rank 0, and channels send nothing.
//
// # What it promises
//
// Fail open, at least once. Each refresh unit has one owner among the
// members that serve (live, and heard in a heartbeat of the same
// configuration digest lately), and every member computes the same owner
// from the same member list. A member of rank r waits r ×
// --cluster.peer-timeout past the unit's due time for the owner's result
// before it fetches the unit itself: a dead owner costs one late refresh,
// not a missing one, and while members disagree on who is alive a unit
// may be fetched twice, never zero times. Deltas reach the members that
// can be reached, possibly twice and out of order, by gossip (and relays,
// and direct packets in a small cluster) and otherwise by the next
// push/pull, which repairs any loss: Merge must be idempotent and
// commutative. After a partition heals, each side asks the other to
// rejoin and their push/pulls merge what each learned.
//
// Gossip carries only what the States marshal; it must never carry a
// credential. With --cluster.encryption-key-file it is encrypted and
// authenticated (AES-GCM); without it, anyone who reaches the port can
// read and join, and the member warns at start. Every packet is labelled
// with the cluster's name (--cluster.label, required), so another
// cluster's or program's gossip is refused and counted. What the port can
// make a member hold is bounded (guard.go). What a peer says is its word,
// bounded by what this member would do itself: its name takes a slot only
// while the operator's are kept (members.go), its clock moves no one's
// unless trusted (heartbeat.go), its rows and call counts are judged by
// the States that take them (packages collector and budget).
package cluster
