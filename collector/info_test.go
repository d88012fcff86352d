package collector

import (
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/schedule"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// infoLines are the lines a scrape writes of a tuple's per-tuple families.
func infoLines(st *tupleState) string {
	var b strings.Builder
	var scratch []byte
	for _, s := range st.info.appendTo(nil, st.tuple.TupleLabelValues, &scratch) {
		b.Write(s.Line())
	}
	return b.String()
}

// The per-tuple families' samples are made at the scrape from what the
// state held when it changed: those it has, in their order, with the
// label set rendered once; a state that did not change keeps its info
// (the view published is not replaced), and a label value the families
// refuse leaves the tuple without them.
func TestTupleInfo(t *testing.T) {
	tf := newTupleFamilies([]string{"api", "endpoint"})
	st := &tupleState{tuple: &config.Tuple{API: "data", Path: "/p", Window: "day", Key: "k",
		TupleLabelValues: []string{"data", `/v1/"q"`}}}
	st.buildInfo(tf)
	if got := infoLines(st); got != "" {
		t.Errorf("a tuple never asked: %q, want no lines", got)
	}
	first := st.info
	st.buildInfo(tf)
	if st.info != first {
		t.Error("the info of a state that did not change was made again")
	}
	block := 812.0
	st.OK, st.LastAttempt, st.Block, st.Deprecated = true, schedule.InstantOf(time.Unix(1_764_000_000, 0)), &block, true
	st.RowTime = schedule.InstantOf(time.Unix(1_763_996_400, 0))
	st.LastSuccess = schedule.InstantOf(time.Unix(1_764_000_000, 500_000_000))
	st.buildInfo(tf)
	set := `{api="data",endpoint="/v1/\"q\""}`
	want := "onchain_exporter_query_success" + set + " 1\n" +
		"onchain_data_timestamp_seconds" + set + " 1.7639964e+09\n" +
		"onchain_data_block_height" + set + " 812\n" +
		"onchain_exporter_query_deprecated" + set + " 1\n" +
		"onchain_exporter_last_success_timestamp_seconds" + set + " 1.7640000005e+09\n"
	if got := infoLines(st); got != want {
		t.Errorf("lines\n%s\nwant\n%s", got, want)
	}
	if st.info == first || first.has != 0 {
		t.Error("the info published before was written")
	}
	st.OK, st.LastCode, st.Block, st.Deprecated = false, upstream.PlanRefused, nil, false
	st.buildInfo(tf)
	if got := infoLines(st); !strings.HasPrefix(got, "onchain_exporter_query_success"+set+" 0\n") || !strings.Contains(got, "onchain_exporter_query_refused"+set+" 1\n") {
		t.Errorf("a refused tuple: %q", got)
	}
	if st.info.labels != "" {
		t.Errorf("a label set of plain names kept as %q: a scrape renders it", st.info.labels)
	}
	// A label name the client library writes quoted: the label set it
	// rendered is kept, and served as it rendered it.
	quoted := &tupleState{tuple: &config.Tuple{API: "data", Key: "q", TupleLabelValues: []string{"data", "/p"}}}
	quoted.OK, quoted.LastAttempt = true, schedule.InstantOf(time.Unix(1_764_000_000, 0))
	quoted.buildInfo(newTupleFamilies([]string{"api", "end.point"}))
	if got, want := infoLines(quoted), `onchain_exporter_query_success{api="data","end.point"="/p"} 1`+"\n"; got != want || quoted.info.labels == "" {
		t.Errorf("a quoted label name: %q, want %q, kept as %q", got, want, quoted.info.labels)
	}
	bad := &tupleState{tuple: &config.Tuple{API: "data", Key: "b", TupleLabelValues: []string{"data", "\xff"}}}
	bad.OK, bad.LastAttempt = true, schedule.InstantOf(time.Unix(1_764_000_000, 0))
	bad.buildInfo(tf)
	if bad.info != nil || infoLines(bad) != "" {
		t.Errorf("a label value that is not UTF-8: %q", infoLines(bad))
	}
}
