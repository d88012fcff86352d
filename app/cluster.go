package app

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"time"

	"github.com/go-kit/log"

	"github.com/onchain-exporter/onchain_exporter/cluster"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// inCluster has the budget of each client the pool puts in force count
// the cluster's UTC day (cluster.Peer.ClusterTime) and log the members'
// counts it refuses. The start's listing calls, before the cluster
// exists, count on this member's own day. Alone (peer nil) it does
// nothing.
func inCluster(peer *cluster.Peer, clients *upstream.Pool, logger log.Logger) {
	if peer == nil {
		return
	}
	clients.OnClient(func(c *upstream.Client) {
		if b := c.Budget(); b != nil {
			b.SetClock(peer.ClusterTime)
			b.SetLogger(log.With(logger, "component", "budget", "api", c.API().Name))
		}
	})
}

// configDigest is the digest of what decides a file's calls, before the
// upstream's lists expand it: each API's URL and max_tuples, each entry
// as written and how its rows are read. Members that read their lists at
// other times agree, and so do files that differ only in comments, key
// order, the credential, rate_limit or daily_budget. No credential is in
// it: a parameter named like one (api_key) is masked as upstream shows it.
func configDigest(c *config.Config) string {
	type param struct {
		Name   string
		Shown  string
		Labels map[string]string `json:",omitempty"`
	}
	type entry struct {
		Path         string
		Windows      []string
		Params       []param
		CacheTTL     time.Duration
		Fields       map[string]*config.Field
		MaxFields    int
		Rows         string
		TimeKey      string
		LabelFields  []string
		Exclude      []string
		WindowChoice string
		Coarsen      bool
	}
	type api struct {
		Name      string
		URL       string
		MaxTuples int
		Entries   []entry
	}
	var apis []api
	for _, name := range config.APINames {
		a := c.APIs[name]
		if a == nil {
			continue
		}
		v := api{Name: name, MaxTuples: a.MaxTuples}
		if a.URL != nil {
			v.URL = upstream.ShownURL(a.URL)
		}
		for _, e := range a.Metrics {
			if e.Origin != nil {
				continue // expanded from a pattern: the pattern stands for it
			}
			ev := entry{Path: e.Path, Windows: e.Windows, CacheTTL: e.CacheTTL, Fields: e.Fields, MaxFields: e.MaxFields,
				Rows: e.Rows, TimeKey: e.TimeKey, LabelFields: e.LabelFields, WindowChoice: e.WindowChoice, Coarsen: e.Coarsen}
			for _, p := range e.Params {
				q := url.Values{p.Name: p.Values}
				ev.Params = append(ev.Params, param{Name: p.Name, Shown: upstream.ShownURL(&url.URL{RawQuery: q.Encode()}), Labels: p.Labels})
			}
			for _, x := range e.Exclude {
				ev.Exclude = append(ev.Exclude, x.Text)
			}
			v.Entries = append(v.Entries, ev)
		}
		apis = append(apis, v)
	}
	b, _ := json.Marshal(apis) // plain values: it cannot fail
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}
