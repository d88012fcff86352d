package collector

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// This file gives the operator's page read-only copies of what the
// engines already publish for scrapes (served, apiView, tupleView, plans,
// the publication delay gauge): no engine lock, no upstream call. What a
// view does not publish, the page does not show.

// APIView is what one API's engine published last.
type APIView struct {
	Name   string
	API    *config.API      // the section in force; never written
	Client *upstream.Client // its client: limits, budget, pauses
	// Filled says every tuple has had its first refresh.
	Filled bool
	Series []SeriesView // in the configuration's order
}

// SeriesView is what the engine published of one tuple.
type SeriesView struct {
	Tuple *config.Tuple // the tuple in force; never written
	// OK: the last refresh succeeded; Attempted: one has ended;
	// InFlight: one is under way; Served: its values are on /metrics.
	OK, Attempted, InFlight, Served, Deprecated bool
	// Refused: the key's plan refuses its request, as
	// onchain_exporter_query_refused says.
	Refused      bool
	FailingSince time.Time
	Next         time.Time // when its next refresh is due
	Newest       time.Time // start of the newest row fetched
	// Spacing is the spacing of its rows, 0 when it is not scheduled by
	// rows (cache_ttl); Earliest the offset from a row's start at which
	// its rows are taken to be out, 0 until a row came.
	Spacing, Earliest time.Duration
	// Unit is what a cluster member owns: the tuples of one endpoint and
	// window (Exporter.Owner).
	Unit string
}

// View copies what the engines in force published, at now.
func (e *Exporter) View() []APIView {
	now := e.now()
	var out []APIView
	for _, c := range *e.served.Load() {
		v := c.view.Load()
		if v == nil || v.api == nil {
			continue
		}
		a := APIView{Name: c.name, API: v.api, Client: v.up, Series: make([]SeriesView, 0, len(v.tuples))}
		select {
		case <-v.filled:
			a.Filled = true
		default:
		}
		for i, st := range v.tuples {
			tv := st.view.Load()
			if tv == nil || i >= len(v.api.Tuples) {
				continue
			}
			t := v.api.Tuples[i] // the tuple st held when v was published
			a.Series = append(a.Series, SeriesView{Tuple: t, OK: tv.ok, Attempted: tv.attempted, InFlight: tv.inflight,
				Served: showValues(tv.values, tv.ok, tv.failingSince, now, v.api.MaxStaleness), Deprecated: tv.deprecated,
				FailingSince: tv.failingSince, Next: tv.next, Newest: tv.newest, Spacing: tv.w, Earliest: tv.earliest,
				Refused: hasFamily(tv.info, refusedFamily), Unit: delayKey(t)})
		}
		out = append(out, a)
	}
	return out
}

// Owner says which member of the cluster owns a unit, "" alone.
func (e *Exporter) Owner(unit string) string {
	owner, _ := e.peer.Owner(unit)
	return owner
}

// LoggedQuery is a tuple's query as the engine's log lines show it.
func LoggedQuery(t *config.Tuple) string { return redactedQuery(t.Query) }

// EndpointWindow names a publication delay: an API's endpoint and window.
type EndpointWindow struct{ API, Endpoint, Window string }

// PublicationDelays are the learned publication delays as
// onchain_exporter_publication_delay_seconds serves them.
func (e *Exporter) PublicationDelays() map[EndpointWindow]time.Duration {
	ch := make(chan prometheus.Metric, 64)
	go func() { e.m.pubDelay.Collect(ch); close(ch) }()
	out := map[EndpointWindow]time.Duration{}
	for m := range ch {
		var d dto.Metric
		if m.Write(&d) != nil || d.Gauge == nil {
			continue
		}
		var k EndpointWindow
		for _, l := range d.Label {
			switch l.GetName() {
			case "api":
				k.API = l.GetValue()
			case "endpoint":
				k.Endpoint = l.GetValue()
			case "window":
				k.Window = l.GetValue()
			}
		}
		out[k] = time.Duration(d.Gauge.GetValue() * float64(time.Second))
	}
	return out
}

// refusedFamily is the per-tuple family that says the plan refuses it.
const refusedFamily = namespace + "_query_refused"

// hasFamily says whether samples hold one of the family name.
func hasFamily(samples []sampleOf, name string) bool {
	for _, s := range samples {
		if s.fam != nil && s.fam.name == name {
			return true
		}
	}
	return false
}
