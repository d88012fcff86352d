package collector

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/cluster"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool/simclock"
)

// sameViews fails t where the replica does not serve what the owner does.
func sameViews(t *testing.T, owner, replica *env) {
	t.Helper()
	av, bv := owner.exp.View(), replica.exp.View()
	n := 0
	for i := range av {
		for j, s := range av[i].Series {
			r := bv[i].Series[j]
			if s.OK != r.OK || s.Served != r.Served || !s.Newest.Equal(r.Newest) || s.Spacing != r.Spacing || s.Earliest != r.Earliest {
				t.Errorf("%s: the owner's view %+v, the replica's %+v", s.Tuple.Key, s, r)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("no series to compare")
	}
	if a, b := dataLines(owner.serve("10")), dataLines(replica.serve("10")); a == "" || a != b {
		t.Errorf("the owner serves\n%s\nthe replica\n%s", a, b)
	}
}

// TestFullStateReadsBackWhole: the full state a member sends to one that
// joins (gzip, a frame a row) is taken whole: the member that takes it
// serves what the sender serves. A full state of the previous version (a
// JSON array of rows) is taken too.
func TestFullStateReadsBackWhole(t *testing.T) {
	owner := newEnv(t, supplyConfig, fakeapi.Options{})
	owner.scrape("10")
	full, err := (replicated{owner.exp}).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if len(full) < 2 || full[0] != 0x1f || full[1] != 0x8b {
		t.Fatalf("a full state of %d bytes that is not gzip: % x", len(full), full[:min(len(full), 8)])
	}
	replica := envOn(t, owner.clock, owner.srv, supplyConfig)
	if err := (replicated{replica.exp}).Merge(full); err != nil {
		t.Fatal(err)
	}
	sameViews(t, owner, replica)

	// The previous version's full state: every row in one JSON array.
	var rows []peerRow
	for _, c := range engines(owner.exp) {
		rows = c.appendRows(rows, nil)
	}
	old, err := json.Marshal(rows)
	if err != nil {
		t.Fatal(err)
	}
	earlier := envOn(t, owner.clock, owner.srv, supplyConfig)
	if err := (replicated{earlier.exp}).Merge(old); err != nil {
		t.Fatal(err)
	}
	sameViews(t, owner, earlier)
}

// gzipFrames is a full state of the given frames, each a length and the
// bytes given (a length that lies is written as given).
func gzipFrames(t *testing.T, frames ...[]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for _, f := range frames {
		if _, err := zw.Write(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func frame(b []byte) []byte { return append(binary.AppendUvarint(nil, uint64(len(b))), b...) }

// TestFullStateRefused: a full state that cannot be read is refused with
// an error that says what and where (package cluster counts and logs it),
// never a crash, and the rows before the fault are taken, each through
// the door; a full state of more rows or larger rows than a configuration
// can produce is cut off there, without expanding the rest.
func TestFullStateRefused(t *testing.T) {
	owner := newEnv(t, supplyConfig, fakeapi.Options{})
	owner.scrape("10")
	var rows []peerRow
	for _, c := range engines(owner.exp) {
		rows = c.appendRows(rows, nil)
	}
	good, err := json.Marshal(rows[0])
	if err != nil {
		t.Fatal(err)
	}
	huge := binary.AppendUvarint(nil, cluster.MaxFrameBytes+1)
	many := make([][]byte, 0, 3000)
	for range 3000 {
		many = append(many, frame(good))
	}
	whole := gzipFrames(t, frame(good))
	// Rows of 1 MiB of spaces after a row's JSON: each within a row's
	// bound, all of them far past what the compressed state may expand to.
	padded := append(append([]byte(nil), good...), bytes.Repeat([]byte{' '}, cluster.MaxFrameBytes-len(good))...)
	var bigRows [][]byte
	for range 20 {
		bigRows = append(bigRows, frame(padded))
	}
	for _, c := range []struct {
		name string
		b    []byte
		want string
		took bool
	}{
		{"not gzip after its magic", []byte{0x1f, 0x8b, 0, 1, 2}, "a peer's full state: ", false},
		{"cut short", whole[:len(whole)-12], "a peer's full state: frame ", true},
		{"a row larger than a row can be", gzipFrames(t, frame(good), huge, bytes.Repeat([]byte{'x'}, 64)), "frame 1: 1048577 bytes, more than 1048576", true},
		{"a length past the end", gzipFrames(t, frame(good), binary.AppendUvarint(nil, 500), []byte("{}")), "frame 1: unexpected EOF", true},
		{"a row that is not JSON", gzipFrames(t, frame(good), frame([]byte("{nope"))), "frame 1: invalid character", true},
		{"more rows than the file has tuples", gzipFrames(t, many...), "more than 1032 frames", true},
		{"expands past 64 times its size", gzipFrames(t, append([][]byte{frame(good)}, bigRows...)...), "expand past 16777216 (64 times their size) at frame ", true},
		{"not JSON, not gzip", []byte("\x00\x01garbage"), "a peer's row: ", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			replica := envOn(t, owner.clock, owner.srv, supplyConfig)
			err := (replicated{replica.exp}).Merge(c.b)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Merge: %v, want an error with %q", err, c.want)
			}
			if took := taken(replica) > 0; took != c.took {
				t.Errorf("the rows before the fault taken: %v, want %v", took, c.took)
			}
		})
	}
}

// taken counts the tuples that have a state (a refresh, or a peer's row).
func taken(e *env) int {
	n := 0
	for _, c := range engines(e.exp) {
		c.mu.Lock()
		for _, st := range c.states {
			if !st.LastAttempt.IsZero() {
				n++
			}
		}
		c.mu.Unlock()
	}
	return n
}

// TestDeltaBurst measures a burst of deltas: a member that owns nothing
// takes every row of n hour tuples of one key (one endpoint and window),
// each as a delta of its own, as when they all come due at once at their
// owner. ONCHAIN_DELTA_BURST=n sets n (a measure: it logs how long the
// deltas took to take); without it (CI) 200 deltas check the logic, not
// the time: the member then serves every tuple. Each delta once placed
// every tuple of its key again, which made a burst cost the square of
// the key's tuples.
func TestDeltaBurst(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("ONCHAIN_DELTA_BURST"))
	if n <= 0 {
		n = 200
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		newest := time.Now().UTC().Truncate(time.Hour)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"status":{"code":200,"message":"success"},"result":{"data":[{"date":%q,"open_interest":%d.5},{"date":%q,"open_interest":1}]}}`,
			newest.Format(time.DateTime), len(r.URL.RawQuery), newest.Add(-time.Hour).Format(time.DateTime))
	}))
	t.Cleanup(srv.Close)
	var yml strings.Builder
	fmt.Fprintf(&yml, "data:\n  url: {{URL}}\n  token_env: T\n  concurrency: 16\n  max_tuples: %d\n  metrics:\n    - path: /v1/btc/market-data/open-interest\n      window: hour\n      exchange: [", n)
	for i := range n {
		if i > 0 {
			yml.WriteString(", ")
		}
		fmt.Fprintf(&yml, "x%06d", i)
	}
	yml.WriteString("]\n")
	c := simclock.New(time.Now().UTC().Truncate(time.Second))
	owner := envOn(t, c, srv, yml.String())
	owner.scrape("600")
	var deltas [][]byte
	for _, e := range engines(owner.exp) {
		for _, row := range e.appendRows(nil, nil) {
			b, err := json.Marshal(row)
			if err != nil {
				t.Fatal(err)
			}
			deltas = append(deltas, b)
		}
	}
	if len(deltas) != n {
		t.Fatalf("the owner has %d rows of %d tuples", len(deltas), n)
	}
	replica := envOn(t, c, srv, yml.String())
	began := time.Now()
	for _, b := range deltas {
		if err := (replicated{replica.exp}).Merge(b); err != nil {
			t.Fatal(err)
		}
	}
	replica.exp.Settle()
	took := time.Since(began)
	t.Logf("%d deltas of one key taken in %s (%s a delta)", n, took.Round(time.Millisecond), (took / time.Duration(n)).Round(time.Microsecond))
	if got := taken(replica); got != n {
		t.Errorf("the replica took %d rows of %d", got, n)
	}
	// What a periodic push/pull then costs: the owner's full state
	// written, and taken by a member that has every row already.
	began = time.Now()
	full, err := (replicated{owner.exp}).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	wrote := time.Since(began)
	began = time.Now()
	if err := (replicated{replica.exp}).Merge(full); err != nil {
		t.Fatal(err)
	}
	t.Logf("a push/pull: %d bytes written in %s, taken (every row older) in %s", len(full), wrote.Round(time.Millisecond), time.Since(began).Round(time.Millisecond))
}
