package main

import (
	"github.com/onchain-exporter/onchain_exporter/cluster"
	"github.com/onchain-exporter/onchain_exporter/expand"
)

// planUnit is the unit whose owner among the members reads the key's
// plan at the daily refresh and sends it to the others (expand.Sharing).
const planUnit = "plan data"

// planState is the key's plan as package cluster moves it: a member that
// joins takes the answer a member holds, and each answer read is sent.
type planState struct{ x *expand.Expander }

func (s planState) MarshalBinary() ([]byte, error) { return s.x.PlanState(), nil }
func (s planState) Merge(b []byte) error           { return s.x.MergePlan(b) }

// sharePlans has the members of a cluster share the key's plan: register
// before Join. Alone (peer nil), each process reads its own.
func sharePlans(peer *cluster.Peer, x *expand.Expander) {
	if peer == nil {
		return
	}
	ch := peer.AddState("plan", planState{x})
	x.SharePlans(expand.Sharing{
		Owner: func() bool {
			owner, _ := peer.Owner(planUnit)
			return owner == peer.Name()
		},
		Send: ch.Broadcast,
	})
}
