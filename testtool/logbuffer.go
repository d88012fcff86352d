package testtool

import (
	"bytes"
	"strings"
	"sync"
)

// LogBuffer records what is written to it from several goroutines (an
// exporter logs from its refreshes): a log sink for tests.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns everything written so far.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Count returns how many lines hold every one of subs.
func (l *LogBuffer) Count(subs ...string) int {
	n := 0
	for _, line := range strings.Split(l.String(), "\n") {
		all := line != ""
		for _, s := range subs {
			all = all && strings.Contains(line, s)
		}
		if all {
			n++
		}
	}
	return n
}
