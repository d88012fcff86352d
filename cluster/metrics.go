package cluster

import (
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

const namespace = config.Namespace + "_cluster_"

// Label values of "kind": a full state moves by push/pull when a member
// joins and every push/pull interval; a delta is one Broadcast.
const (
	kindFullLabel      = "full"
	kindDeltaLabel     = "delta"
	kindHeartbeatLabel = "heartbeat"
)

// metrics are the package's own; one owner, registered once per Peer.
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
	byKind := []string{"kind"}
	m := &metrics{
		received: f.NewCounterVec(prometheus.CounterOpts{
			Name: namespace + "messages_received_total",
			Help: "Cluster messages received, by kind: full (a peer's whole state, by push/pull) or delta (one broadcast, retransmissions and relays included).",
		}, byKind),
		receivedBytes: f.NewCounterVec(prometheus.CounterOpts{
			Name: namespace + "messages_received_bytes_total",
			Help: "Bytes of cluster messages received, by kind, before memberlist's framing and encryption.",
		}, byKind),
		sent: f.NewCounterVec(prometheus.CounterOpts{
			Name: namespace + "messages_sent_total",
			Help: "Cluster messages sent, by kind; a delta counts once per member it is sent to, retransmissions included.",
		}, byKind),
		sentBytes: f.NewCounterVec(prometheus.CounterOpts{
			Name: namespace + "messages_sent_bytes_total",
			Help: "Bytes of cluster messages sent, by kind, before memberlist's framing and encryption.",
		}, byKind),
		invalid: f.NewCounterVec(prometheus.CounterOpts{
			Name: namespace + "messages_invalid_total",
			Help: "Cluster messages received that could not be used, by kind: undecodable, another format version, an unknown state key, or refused by the state's Merge.",
		}, byKind),
		oversized: f.NewCounterVec(prometheus.CounterOpts{
			Name: namespace + "oversized_messages_total",
			Help: "Deltas too large for a gossip packet, sent to each member over TCP instead, by result: sent and failed count per member, dropped counts deltas refused because the queue was full.",
		}, []string{"result"}),
		pruned: f.NewCounter(prometheus.CounterOpts{
			Name: namespace + "messages_pruned_total",
			Help: "Queued deltas dropped because more than the queue's limit waited to be gossiped; push/pull repairs them.",
		}),
		relayed: f.NewCounter(prometheus.CounterOpts{
			Name: namespace + "messages_relayed_total",
			Help: "Deltas from other members queued for gossip again on first receipt, so that a delta spreads from every member that has it.",
		}),
		joins: f.NewCounter(prometheus.CounterOpts{
			Name: namespace + "peer_joins_total",
			Help: "Members seen joining the cluster, this one included, and failed ones seen alive again.",
		}),
		leaves: f.NewCounter(prometheus.CounterOpts{
			Name: namespace + "peer_leaves_total",
			Help: "Other members seen leaving the cluster, whether they left or were declared failed.",
		}),
		rejoins: f.NewCounterVec(prometheus.CounterOpts{
			Name: namespace + "join_attempts_total",
			Help: "Attempts to join an address of --cluster.peer or a failed member, by result (success, failure).",
		}, []string{"result"}),
		refused: f.NewCounterVec(prometheus.CounterOpts{
			Name: namespace + "messages_refused_total",
			Help: "Gossip refused before it is read, by reason: cluster_name (another --cluster.label), streams (too many at once), stream_size, state_size, delta_size (past their bounds), members (a member past --cluster.max-members), compressed (compressed gossip in the clear).",
		}, []string{"reason"}),
		keyReloads: f.NewCounterVec(prometheus.CounterOpts{
			Name: namespace + "encryption_key_reloads_total",
			Help: "Changes of --cluster.encryption-key-file installed in the keyring, by result (success, failure).",
		}, []string{"result"}),
	}
	for _, r := range refusalReasons {
		m.refused.WithLabelValues(r)
	}
	m.keyReloads.WithLabelValues("success")
	m.keyReloads.WithLabelValues("failure")
	m.received.WithLabelValues(kindHeartbeatLabel)
	m.invalid.WithLabelValues(kindHeartbeatLabel)
	for _, k := range []string{kindFullLabel, kindDeltaLabel} {
		m.received.WithLabelValues(k)
		m.receivedBytes.WithLabelValues(k)
		m.sent.WithLabelValues(k)
		m.sentBytes.WithLabelValues(k)
		m.invalid.WithLabelValues(k)
	}
	for _, r := range []string{"sent", "failed", "dropped"} {
		m.oversized.WithLabelValues(r)
	}
	m.rejoins.WithLabelValues("success")
	m.rejoins.WithLabelValues("failure")
	return m
}

// registerGauges registers the gauges read from the live Peer; called
// once memberlist runs.
func (p *Peer) registerGauges(reg prometheus.Registerer) {
	f := promauto.With(reg)
	f.NewGauge(prometheus.GaugeOpts{
		Name:        namespace + "peer_info",
		Help:        "Always 1; the label peer is this member's name in the cluster.",
		ConstLabels: prometheus.Labels{"peer": p.name},
	}).Set(1)
	f.NewGaugeFunc(prometheus.GaugeOpts{
		Name: namespace + "members",
		Help: "Members that serve as this member sees them, itself included: live, and heard in a heartbeat of the same configuration digest lately. Units are owned among them.",
	}, func() float64 { return float64(len(*p.serving.Load())) })
	f.NewGaugeFunc(prometheus.GaugeOpts{
		Name: namespace + "failed_peers",
		Help: "Failed members this member still asks to rejoin, until --cluster.reconnect-timeout.",
	}, func() float64 {
		p.mu.Lock()
		defer p.mu.Unlock()
		return float64(len(p.failed))
	})
	f.NewGaugeFunc(prometheus.GaugeOpts{
		Name: namespace + "health_score",
		Help: "memberlist's awareness score of this member: 0 is healthy; higher means its probes go unanswered, from its own slowness or the network's.",
	}, func() float64 { return float64(p.ml.GetHealthScore()) })
	f.NewGaugeFunc(prometheus.GaugeOpts{
		Name: namespace + "messages_queued",
		Help: "Deltas waiting to be gossiped.",
	}, func() float64 { return float64(p.queue.NumQueued()) })
	f.NewGaugeFunc(prometheus.GaugeOpts{
		Name: namespace + "live_members",
		Help: "Live members this member sees, itself included, serving or not (suspected ones count until declared failed); above onchain_exporter_cluster_members, members that say nothing or run another configuration.",
	}, func() float64 { return float64(len(*p.members.Load())) })
	f.NewGaugeFunc(prometheus.GaugeOpts{
		Name: namespace + "clock_offset_seconds",
		Help: "This member's clock less the cluster's, which is the provider's as the Date of this member's answers says it (before its first answer, the median of the clocks of the members it trusts, from their heartbeats); past a minute it owns no unit.",
	}, func() float64 { return p.ClockOffset().Seconds() })
	f.NewGaugeFunc(prometheus.GaugeOpts{
		Name: namespace + "encrypted",
		Help: "1 when gossip is encrypted and authenticated (--cluster.encryption-key-file); 0 in the clear, where anyone who reaches the gossip port can read it and change what every member serves.",
	}, func() float64 {
		if p.keyring != nil {
			return 1
		}
		return 0
	})
	f.NewGaugeFunc(prometheus.GaugeOpts{
		Name: namespace + "encryption_keys",
		Help: "Gossip keys this member accepts (the primary, which encrypts, and those kept for a rotation); 0 in the clear.",
	}, func() float64 { return float64(p.keyCount()) })
	f.NewGaugeFunc(prometheus.GaugeOpts{
		Name: namespace + "settled",
		Help: "1 once Settle has returned: the member count stopped changing or --cluster.settle-timeout passed.",
	}, func() float64 {
		if p.Ready() {
			return 1
		}
		return 0
	})
}
