package cluster

import (
	"maps"
	"slices"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

const namespace = config.Namespace + "_cluster_"

// Label values of "kind".
const (
	kindFullLabel      = "full"
	kindDeltaLabel     = "delta"
	kindHeartbeatLabel = "heartbeat"
)

// metrics are the package's own, registered once per Peer.
type metrics struct {
	received      *prometheus.CounterVec // by kind
	receivedBytes *prometheus.CounterVec
	sent          *prometheus.CounterVec
	sentBytes     *prometheus.CounterVec
	invalid       *prometheus.CounterVec // by kind
	oversized     *prometheus.CounterVec // by result
	pruned        prometheus.Counter
	relayed       prometheus.Counter
	joins         prometheus.Counter
	leaves        prometheus.Counter
	rejoins       *prometheus.CounterVec // by result
	refused       *prometheus.CounterVec // by reason (guard.go)
	keyReloads    *prometheus.CounterVec // by result (keyring.go)
}

func newMetrics(reg prometheus.Registerer) *metrics {
	f := promauto.With(reg)
	counter := func(name, help string) prometheus.Counter {
		return f.NewCounter(prometheus.CounterOpts{Name: namespace + name, Help: help})
	}
	// counterVec's series of values exist from the start, at 0.
	counterVec := func(name, help, label string, values ...string) *prometheus.CounterVec {
		v := f.NewCounterVec(prometheus.CounterOpts{Name: namespace + name, Help: help}, []string{label})
		for _, x := range values {
			v.WithLabelValues(x)
		}
		return v
	}
	kinds := []string{kindFullLabel, kindDeltaLabel}
	results := []string{"success", "failure"}
	m := &metrics{
		received: counterVec("messages_received_total",
			"Cluster messages received, by kind: full (a peer's whole state, by push/pull) or delta (one broadcast, retransmissions and relays included).", "kind", append(kinds, kindHeartbeatLabel)...),
		receivedBytes: counterVec("messages_received_bytes_total",
			"Bytes of cluster messages received, by kind, before memberlist's framing and encryption.", "kind", kinds...),
		sent: counterVec("messages_sent_total",
			"Cluster messages sent, by kind; a delta counts once per member it is sent to, retransmissions included.", "kind", kinds...),
		sentBytes: counterVec("messages_sent_bytes_total",
			"Bytes of cluster messages sent, by kind, before memberlist's framing and encryption.", "kind", kinds...),
		invalid: counterVec("messages_invalid_total",
			"Cluster messages received that could not be used, by kind: undecodable, another format version, an unknown state key, or refused by the state's Merge.", "kind", append(kinds, kindHeartbeatLabel)...),
		oversized: counterVec("oversized_messages_total",
			"Deltas too large for a gossip packet, sent to each member over TCP instead, by result: sent and failed count per member, dropped counts deltas refused because the queue was full.", "result", "sent", "failed", "dropped"),
		pruned: counter("messages_pruned_total",
			"Queued deltas dropped because more than the queue's limit waited to be gossiped; push/pull repairs them."),
		relayed: counter("messages_relayed_total",
			"Deltas from other members queued for gossip again on first receipt, so that a delta spreads from every member that has it."),
		joins: counter("peer_joins_total",
			"Members seen joining the cluster, this one included, and failed ones seen alive again."),
		leaves: counter("peer_leaves_total",
			"Other members seen leaving the cluster, whether they left or were declared failed."),
		rejoins: counterVec("join_attempts_total",
			"Attempts to join an address of --cluster.peer or a failed member, by result (success, failure).", "result", results...),
		refused: counterVec("messages_refused_total",
			"Gossip refused before it is read, by reason: cluster_name (another --cluster.label), streams (too many at once), stream_size, state_size, delta_size (past their bounds), members (a member past --cluster.max-members), compressed (compressed gossip in the clear).", "reason", slices.Collect(maps.Keys(refusalMessage))...),
		keyReloads: counterVec("encryption_key_reloads_total",
			"Changes of --cluster.encryption-key-file installed in the keyring, by result (success, failure).", "result", results...),
	}
	return m
}

// sentMsg and receivedMsg count a message of kind and its bytes.
func (m *metrics) sentMsg(kind string, b []byte) {
	m.sent.WithLabelValues(kind).Inc()
	m.sentBytes.WithLabelValues(kind).Add(float64(len(b)))
}

func (m *metrics) receivedMsg(kind string, b []byte) {
	m.received.WithLabelValues(kind).Inc()
	m.receivedBytes.WithLabelValues(kind).Add(float64(len(b)))
}

// registerGauges registers the gauges read from the Peer once memberlist
// runs.
func (p *Peer) registerGauges(reg prometheus.Registerer) {
	f := promauto.With(reg)
	f.NewGauge(prometheus.GaugeOpts{
		Name:        namespace + "peer_info",
		Help:        "Always 1; the label peer is this member's name in the cluster.",
		ConstLabels: prometheus.Labels{"peer": p.name},
	}).Set(1)
	gauge := func(name, help string, fn func() float64) {
		f.NewGaugeFunc(prometheus.GaugeOpts{Name: namespace + name, Help: help}, fn)
	}
	gauge("members", "Members that serve as this member sees them, itself included: live, and heard in a heartbeat of the same configuration digest lately. Units are owned among them.",
		func() float64 { return float64(len(*p.serving.Load())) })
	gauge("failed_peers", "Failed members this member still asks to rejoin, until --cluster.reconnect-timeout.", func() float64 {
		p.mu.Lock()
		defer p.mu.Unlock()
		return float64(len(p.failed))
	})
	gauge("health_score", "memberlist's awareness score of this member: 0 is healthy; higher means its probes go unanswered, from its own slowness or the network's.",
		func() float64 { return float64(p.ml.GetHealthScore()) })
	gauge("messages_queued", "Deltas waiting to be gossiped.", func() float64 { return float64(p.queue.NumQueued()) })
	gauge("live_members", "Live members this member sees, itself included, serving or not (suspected ones count until declared failed); above onchain_exporter_cluster_members, members that say nothing or run another configuration.",
		func() float64 { return float64(len(*p.members.Load())) })
	gauge("clock_offset_seconds", "This member's clock less the cluster's, which is the provider's as the Date of this member's answers says it (before its first answer, the median of the clocks of the members it trusts, from their heartbeats); past a minute it owns no unit.",
		func() float64 { return p.ClockOffset().Seconds() })
	gauge("encrypted", "1 when gossip is encrypted and authenticated (--cluster.encryption-key-file); 0 in the clear, where anyone who reaches the gossip port can read it and change what every member serves.",
		func() float64 { return one(p.Encrypted()) })
	gauge("encryption_keys", "Gossip keys this member accepts (the primary, which encrypts, and those kept for a rotation); 0 in the clear.",
		func() float64 { return float64(p.keyCount()) })
	gauge("settled", "1 once Settle has returned: the member count stopped changing or --cluster.settle-timeout passed.",
		func() float64 { return one(p.Ready()) })
}

// one is 1 for true, 0 for false.
func one(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
