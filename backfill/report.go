package backfill

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
)

// Status is how a run stands.
type Status struct {
	Total, Done int // series
	Rows, Calls int64
	Elapsed     time.Duration
	// Left is the time estimated until the end; 0 while unknown.
	Left time.Duration
}

func (s Status) String() string {
	left := "estimating"
	if s.Left > 0 {
		left = s.Left.Round(time.Second).String()
	} else if s.Done == s.Total {
		left = "0s"
	}
	return fmt.Sprintf("%d/%d series, %d rows, %d calls, %s elapsed, %s left",
		s.Done, s.Total, s.Rows, s.Calls, s.Elapsed.Round(time.Second), left)
}

// Reporter shows the progress of a run.
type Reporter interface {
	Update(Status)
	Close()
}

// logReporter logs the progress at most every interval: what a run
// writes when its output is not a terminal.
type logReporter struct {
	logger log.Logger
	every  time.Duration
	last   time.Time
	shown  Status
}

func (l *logReporter) Update(s Status) {
	now := time.Now()
	if now.Sub(l.last) < l.every || s == l.shown {
		return
	}
	l.last, l.shown = now, s
	level.Info(l.logger).Log("msg", "backfill progress", "series_done", s.Done, "series", s.Total, "rows", s.Rows,
		"calls", s.Calls, "elapsed", s.Elapsed.Round(time.Second), "left", s.Left.Round(time.Second))
}

func (l *logReporter) Close() {}

// Bar draws the progress as one line on a terminal, redrawn in place.
// Log lines go through it (Write): the bar is cleared, the line written,
// and the bar drawn again under it. A few lines of our own rather than a
// progress-bar library: one line of counts needs no dependency, and the
// log lines must pass through the same writer.
type Bar struct {
	mu    sync.Mutex
	w     io.Writer
	line  string
	width int
}

// NewBar draws on w, a terminal width columns wide (0: 80).
func NewBar(w io.Writer, width int) *Bar {
	if width <= 0 {
		width = 80
	}
	return &Bar{w: w, width: width}
}

// Write passes a log line through above the bar.
func (b *Bar) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.clear()
	n, err := b.w.Write(p)
	b.draw()
	return n, err
}

// Update redraws the bar.
func (b *Bar) Update(s Status) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.clear()
	b.line = b.render(s)
	b.draw()
}

// Close leaves the last bar on its line.
func (b *Bar) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.line != "" {
		io.WriteString(b.w, "\n")
		b.line = ""
	}
}

func (b *Bar) clear() {
	if b.line != "" {
		io.WriteString(b.w, "\r\033[K")
	}
}

func (b *Bar) draw() {
	if b.line != "" {
		io.WriteString(b.w, b.line)
	}
}

// render is [=====>    ] 12/40 series, ... cut to the terminal's width.
func (b *Bar) render(s Status) string {
	text := " " + s.String()
	cells := min(30, max(10, b.width-len(text)-3))
	filled := 0
	if s.Total > 0 {
		filled = cells * s.Done / s.Total
	}
	bar := "[" + strings.Repeat("=", filled) + strings.Repeat(" ", cells-filled) + "]" + text
	if len(bar) > b.width-1 {
		bar = bar[:b.width-1]
	}
	return bar
}
