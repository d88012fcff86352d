package cluster

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
)

// logWriter turns memberlist's log lines ("[WARN] memberlist: ...") into
// go-kit records, warnings and errors at warn, the rest at debug. Since
// memberlist writes a line per bad packet, a warning of one kind is logged
// at most every logEvery, the next counting those left out; refusals
// logged by refuse are debug.
type logWriter struct {
	logger log.Logger
	now    func() time.Time

	mu    sync.Mutex
	kinds map[string]*logKind
}

// logKind is when a kind was last logged, and how many were left out since.
type logKind struct {
	at      time.Time
	skipped int
}

const (
	logEvery     = time.Minute
	maxLogKinds  = 64 // past it, the others share one kind
	maxKindBytes = 48 // of a line, naming its kind
)

func newLogWriter(logger log.Logger) *logWriter {
	return &logWriter{logger: logger, now: time.Now, kinds: map[string]*logKind{}}
}

// refusedLines are memberlist's words for what refuse already said.
var refusedLines = []string{"ignoring alive message", errTooManyMembers.Error(), "unacceptable label"}

func (w *logWriter) Write(b []byte) (int, error) {
	msg := strings.TrimSpace(string(b))
	warn := (strings.HasPrefix(msg, "[WARN]") || strings.HasPrefix(msg, "[ERR]")) &&
		!slices.ContainsFunc(refusedLines, func(r string) bool { return strings.Contains(msg, r) })
	if i := strings.Index(msg, "] "); i >= 0 && strings.HasPrefix(msg, "[") {
		msg = strings.TrimPrefix(msg[i+2:], "memberlist: ")
	}
	if !warn {
		level.Debug(w.logger).Log("msg", msg, "source", "memberlist")
		return len(b), nil
	}
	if skipped, ok := w.take(logKindOf(msg)); ok {
		kv := []any{"msg", msg, "source", "memberlist"}
		if skipped > 0 {
			kv = append(kv, "left_out", skipped, "left_out_in", logEvery)
		}
		level.Warn(w.logger).Log(kv...)
	}
	return len(b), nil
}

// take says whether a warning of kind is logged now, and how many were
// left out since.
func (w *logWriter) take(kind string) (skipped int, ok bool) {
	now := w.now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, seen := w.kinds[kind]; !seen && len(w.kinds) >= maxLogKinds {
		kind = "other"
	}
	k := w.kinds[kind]
	if k == nil {
		k = &logKind{}
		w.kinds[kind] = k
	}
	if !k.at.IsZero() && now.Sub(k.at) < logEvery && !now.Before(k.at) {
		k.skipped++
		return 0, false
	}
	skipped, k.at, k.skipped = k.skipped, now, 0
	return skipped, true
}

// logKindOf is a line without what differs from one packet to the next:
// cut before an error's detail, a name, an address or a number.
func logKindOf(msg string) string {
	if i := strings.IndexAny(msg, ":'\"([=0123456789"); i >= 0 {
		msg = msg[:i]
	}
	if len(msg) > maxKindBytes {
		msg = msg[:maxKindBytes]
	}
	return strings.TrimSpace(msg)
}
