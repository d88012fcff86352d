package collector

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/onchain-exporter/onchain_exporter/cluster"
)

// replicated is the Exporter's state as package cluster moves it.
type replicated struct{ e *Exporter }

// A full state (MarshalBinary) is a gzipped frame stream, a row's JSON a
// frame: 770 bytes a tuple compress to 30-40, so 100 000 tuples fit a
// push/pull (memberlist's 20 MiB; BENCHMARKS.md). A delta is one row's
// JSON; an earlier version's full state, a JSON array of rows, is taken.

// fullBatch is how many rows of a full state are taken under one hold of
// an engine's lock: its refreshes wait at most one batch.
const fullBatch = 512

// MarshalBinary is every tuple's state that has had a refresh, for a
// member that joins and for the periodic push/pull.
func (r replicated) MarshalBinary() ([]byte, error) {
	w := cluster.NewFrameWriter()
	for _, c := range *r.e.served.Load() {
		for _, row := range c.appendRows(nil, r.e.peer) {
			j, err := json.Marshal(row)
			if err == nil {
				err = w.Write(j)
			}
			if err != nil {
				return nil, fmt.Errorf("tuple %s: %w", row.Key, err)
			}
		}
	}
	return w.Bytes()
}

// Merge takes a peer's rows: one (a delta) or all (push/pull).
func (r replicated) Merge(b []byte) error {
	later := map[*apiCollector]map[string]bool{}
	if cluster.IsFrames(b) {
		n, err := r.mergeFull(b, later)
		r.replan(later, n > 0)
		return err
	}
	var rows []peerRow
	if b = bytes.TrimSpace(b); len(b) > 0 && b[0] == '[' {
		// The full state of a member of an earlier version.
		if err := json.Unmarshal(b, &rows); err != nil {
			return fmt.Errorf("a peer's rows: %w", err)
		}
		r.take(rows, later)
		r.replan(later, len(rows) > 0)
		return nil
	}
	var row peerRow
	if err := json.Unmarshal(b, &row); err != nil {
		return fmt.Errorf("a peer's row: %w", err)
	}
	r.take([]peerRow{row}, later)
	r.replanSoon(later)
	return nil
}

// mergeFull takes a full state, fullBatch rows at a time, and returns
// the rows read. A row that cannot be read ends it: the rows before it
// are taken, and the error says where.
func (r replicated) mergeFull(b []byte, later map[*apiCollector]map[string]bool) (int, error) {
	batch := make([]peerRow, 0, fullBatch)
	n, err := cluster.ReadFrames(b, maxFullRows(*r.e.served.Load()), func(frame []byte) error {
		var row peerRow
		if err := json.Unmarshal(frame, &row); err != nil {
			return err
		}
		if batch = append(batch, row); len(batch) == fullBatch {
			r.take(batch, later)
			batch = batch[:0]
		}
		return nil
	})
	r.take(batch, later)
	if err != nil {
		return n, fmt.Errorf("a peer's full state: %w", err)
	}
	return n, nil
}

// maxFullRows bounds the rows of a full state: one a tuple, with room for
// a peer amid a rolling change of the file.
func maxFullRows(engines []*apiCollector) int {
	n := 1024
	for _, c := range engines {
		if v := c.view.Load(); v != nil {
			n += 2 * len(v.tuples)
		}
	}
	return n
}

// take hands each row to the engine of its API, and adds to later the
// keys to place again once every row is in (replan).
func (r replicated) take(rows []peerRow, later map[*apiCollector]map[string]bool) {
	if len(rows) == 0 {
		return
	}
	for _, c := range *r.e.served.Load() {
		var mine []peerRow
		for _, row := range rows {
			if row.API == c.name {
				mine = append(mine, row)
			}
		}
		if len(mine) == 0 {
			continue
		}
		if later[c] == nil {
			later[c] = map[string]bool{}
		}
		c.adoptRows(mine, later[c])
	}
}

// replan places again, once, every tuple of the keys the rows touched:
// once a row made a join cost the square of the tuples (issue 34).
// scraped, for a full state of one row or more: the cluster is scraped,
// so this member's engines call from now on, scraped themselves or not.
func (r replicated) replan(later map[*apiCollector]map[string]bool, scraped bool) {
	for c, keys := range later {
		c.mu.Lock()
		c.replanKeysLocked(keys)
		c.unlockWake()
	}
	if !scraped {
		return
	}
	for _, c := range *r.e.served.Load() {
		if c.lastScrape.CompareAndSwap(0, r.e.now().UnixNano()) {
			c.wake()
		}
	}
}
