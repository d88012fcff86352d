// Package cluster owns membership of a cluster of exporter replicas that
// share their upstream calls (--cluster.* flags). It is the one package
// that uses hashicorp/memberlist, the membership and gossip library of
// Alertmanager, Loki and Mimir: failure detection (SWIM probes), gossip of
// small messages, and full state exchange by TCP push/pull.
//
// It owns:
//
//   - config.go: Config, its defaults (Alertmanager's), Validate, whose
//     errors name the flag, the flags themselves (AddFlags) and the gossip
//     encryption key read from a file;
//   - peer.go: Peer, this process's membership: Create, Settle, Leave;
//   - join.go: Join (every address a peer name resolves to), and the loop
//     that resolves the names again and retries members that went, every
//     reconnect interval, which also heals a partition; JoinInBackground
//     and Joining, so that a member serves while it joins and its engines
//     wait for the full state before they call;
//   - members.go: the live members and those that serve (Members, Self,
//     Changed), published on every change so that readers take no lock,
//     and the slots: the addresses --cluster.peer resolves to keep theirs;
//   - heartbeat.go: heartbeats, which say which members serve (the same
//     configuration digest, SetConfigDigest) and measure this member's
//     clock against the cluster's, the trusted members' (ClockOffset,
//     ClusterTime), and which members' clocks are far off it;
//   - owner.go: who refreshes what, without a vote: Owner, Rank and
//     FallbackDelay, by rendezvous hashing over the names of the serving
//     members whose clocks agree with the cluster's (the others rank last);
//   - guard.go: what comes in from the network: another cluster's packets
//     and streams refused, streams bounded in number and size;
//   - keyring.go: the gossip keys, read again and rotated in place;
//   - channel.go, delegate.go and relay.go: replicated state, as
//     Alertmanager's: each State registers under a key (AddState), its
//     deltas go out through the Channel it gets back (gossip, relayed by
//     each member that merges one, and also a packet to each member at
//     once when every gossip round reaches them all: three or four
//     members, more with eight --cluster.peer or more; TCP to each member
//     when too large for a packet), and its whole copy moves by push/pull
//     when a member joins and every push/pull interval;
//   - message.go: the wire format inside memberlist's messages;
//   - frames.go: a frame stream, the compact whole copy a State may send
//     (gzip of frames, read back a frame at a time within bounds);
//   - memberlistlog.go: memberlist's log lines, its warnings once a minute
//     per kind;
//   - metrics.go: the onchain_exporter_cluster_* metrics.
//
// Order of use: Create, AddState for every State, Join (or
// JoinInBackground), Settle; Leave at shutdown. With --cluster.listen-address empty Create returns a nil
// *Peer, and every method of a nil *Peer answers as a cluster of one:
// this member owns every unit at rank 0, and channels send nothing.
//
// # What it promises
//
// Fail open, at least once. Each refresh unit has one owner among the
// members that serve (live, and heard in a heartbeat of the same
// configuration digest lately), and every member computes the same owner
// from the same member list. A member of rank r for a unit waits r × --cluster.peer-timeout past
// the unit's due time for the owner's result before it fetches the unit
// itself. So a dead owner costs one late refresh, not a missing one; while
// members disagree on who is alive (a join or failure not yet known
// everywhere, a partition), a unit may be fetched by two members: twice,
// never zero times. Deltas reach the members that can be reached, possibly
// twice and out of order: by gossip, which in a burst rarely misses a
// member (where every gossip round reaches every member, a delta also
// goes to each in a packet of its own: memberlist's queue could hand all
// of a delta's transmissions to the others), and otherwise by the next
// push/pull, which repairs any loss.
// Merge must therefore be idempotent and commutative. After a partition
// heals, the members on each side ask the others to rejoin (join.go); the
// push/pull of those joins, and then the periodic one, merge what each
// side learned.
//
// Gossip carries only what the States marshal and broadcast; it must
// never carry a credential. With --cluster.encryption-key-file it is
// encrypted and authenticated (AES-GCM) and a member without the key
// cannot join; without it, anyone who can reach the port can read and
// join, and the member warns at start. Every packet is labelled
// "onchain_exporter" and the cluster's name (--cluster.label, required),
// so a member pointed at another program's or another cluster's gossip
// port is refused, and counted. What the port can make a member hold is
// bounded (guard.go): members, streams, full states and deltas. What a
// peer says is its word, bounded by what this member would do itself:
// its name takes a slot only while the slots the operator named are kept
// (members.go); its clock moves no one's but its own, unless this member
// trusts it (heartbeat.go); its rows and call counts are judged by the
// States that take them (packages collector and budget).
package cluster
