package decode

import (
	"sync"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// ShapeLog logs the shape an endpoint's answer was found in, once per API,
// endpoint and entry and again when it changes: at info when it was
// searched for (so that a user can pin it), at debug when expected. One
// lives for the process, so that reloads do not log every shape again.
type ShapeLog struct {
	logger log.Logger
	mu     sync.Mutex
	seen   map[shapeKey]Shape
}

type shapeKey struct{ api, entry, endpoint string }

// NewShapeLog returns a ShapeLog writing to logger.
func NewShapeLog(logger log.Logger) *ShapeLog {
	return &ShapeLog{logger: logger, seen: map[shapeKey]Shape{}}
}

// Tuple notes the shape of an answer for a tuple.
func (l *ShapeLog) Tuple(t *config.Tuple, s Shape) {
	endpoint, entry := t.Path, ""
	if t.Entry != nil {
		endpoint, entry = t.Entry.Path, t.Entry.Key
	}
	l.Note(t.API, endpoint, entry, s)
}

// Note notes the shape of an answer of an endpoint (entry is "" for a
// listing endpoint).
func (l *ShapeLog) Note(api, endpoint, entry string, s Shape) {
	if l == nil {
		return
	}
	key := shapeKey{api, entry, endpoint}
	l.mu.Lock()
	prev, seen := l.seen[key]
	l.seen[key] = s
	l.mu.Unlock()
	if seen && prev == s {
		return
	}
	lg := level.Info(l.logger)
	if s.Expected {
		lg = level.Debug(l.logger)
	}
	kv := []any{"msg", "payload shape detected", "api", api, "endpoint", endpoint}
	if entry != "" {
		kv = append(kv, "entry", entry)
	}
	kv = append(kv, "rows", s.Rows)
	if s.TimeKey != "" || entry != "" {
		kv = append(kv, "time_key", s.TimeKey)
	}
	if s.CountedBy != "" {
		kv = append(kv, "counted_by", s.CountedBy)
	}
	if s.LabelsFrom != "" {
		kv = append(kv, "labels_from", s.LabelsFrom)
	}
	lg.Log(kv...)
}
