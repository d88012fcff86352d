package backfill

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/go-kit/log"

	keyplan "github.com/onchain-exporter/onchain_exporter/plan"
)

// Options say what to backfill, where to, and how.
type Options struct {
	// From is the oldest row time wanted (a row of that day is in); To is
	// the newest sample time written. ToSet says To was given by the
	// user: otherwise a resumed run keeps the To it started with.
	From, To time.Time
	ToSet    bool
	// Labels are added to every series (job, instance).
	Labels []Label
	// Stamp is which time a row's samples carry (StampEnd by default).
	Stamp Stamp
	// Step, when positive, writes each row's value every Step until the
	// next row, as scrapes of the live exporter would have seen it; 0
	// writes one sample per row.
	Step time.Duration
	// Output is the OpenMetrics file to write, or RemoteWrite the target
	// to send to: one of them.
	Output      string
	RemoteWrite *RemoteWrite
	// ReplaceOutput allows an Output that exists (a regular file) to be
	// replaced; without it an existing Output is refused.
	ReplaceOutput bool
	// ProgressFile records what was written (resume); "" keeps none.
	ProgressFile string
	// Concurrency is the most series fetched at once per API, within the
	// API's own concurrency.
	Concurrency int
	// Timeout bounds one call (a year of rows takes longer than a live
	// refresh).
	Timeout time.Duration
	// MaxWait is the longest pause of an API (rate limited upstream)
	// waited out; a longer one leaves the API's series to a later run.
	MaxWait time.Duration
	// Report shows the progress (nil: log lines).
	Report Reporter
	// Plan is the key's plan on the data API (nil: not known; Run then
	// takes the one its data client holds): each series' history starts
	// no earlier than its window's depth on it, and a series it refuses
	// is not called.
	Plan *keyplan.Plan
	// TempDir holds the spools of long series ("" is the system's).
	TempDir string
	Logger  log.Logger
	Now     func() time.Time
}

// Defaults of Options.
const (
	DefaultConcurrency = 2
	DefaultTimeout     = 2 * time.Minute
	DefaultMaxWait     = 5 * time.Minute
	// DefaultMargin is how far before now --to ends when not given:
	// promtool's documentation calls the last 3 hours unsafe to backfill
	// (they may overlap Prometheus' head block), and an hour more covers
	// a head that has not been compacted on time.
	DefaultMargin = 4 * time.Hour
)

var labelNameRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// ParseLabel reads one --label name=value.
func ParseLabel(s string) (Label, error) {
	name, value, ok := strings.Cut(s, "=")
	switch {
	case !ok:
		return Label{}, fmt.Errorf("--label %q: want name=value", s)
	case !labelNameRE.MatchString(name):
		return Label{}, fmt.Errorf("--label %q: %q is not a label name", s, name)
	case strings.HasPrefix(name, "__"):
		return Label{}, fmt.Errorf("--label %q: names starting with __ are reserved", s)
	case value == "":
		return Label{}, fmt.Errorf("--label %q: the value is empty", s)
	}
	return Label{name, value}, nil
}

// ParseDate reads --from and --to: a date (UTC midnight) or an RFC 3339
// time.
func ParseDate(flag, s string) (time.Time, error) {
	if t, err := time.ParseInLocation(time.DateOnly, s, time.UTC); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	return time.Time{}, fmt.Errorf("%s %q: want a date (2024-01-31) or an RFC 3339 time (2024-01-31T12:00:00Z)", flag, s)
}

// setDefaults fills what was left out.
func (o *Options) setDefaults() {
	o.Stamp = cmp.Or(o.Stamp, StampEnd)
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxWait <= 0 {
		o.MaxWait = DefaultMaxWait
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = log.NewNopLogger()
	}
}

// validate checks the options; a dry run (dry) may have no target: it
// writes nothing.
func (o *Options) validate(dry bool) error {
	switch {
	case o.From.IsZero():
		return errors.New("--from is required")
	case !o.From.Before(o.To):
		return fmt.Errorf("--from %s is not before --to %s", o.From.Format(time.RFC3339), o.To.Format(time.RFC3339))
	case o.Output != "" && o.RemoteWrite != nil:
		return errors.New("give one of --output and --remote-write.url, not both")
	case o.Output == "" && o.RemoteWrite == nil && !dry:
		return errors.New("give one of --output and --remote-write.url")
	case o.Stamp != StampEnd && o.Stamp != StampStart:
		return fmt.Errorf("--sample-time %q: want end or start", o.Stamp)
	case o.Step < 0:
		return errors.New("--sample-interval must not be negative")
	case o.Step > 0 && o.Step < time.Second:
		return errors.New("--sample-interval below 1s writes more samples than any scrape would")
	}
	seen := map[string]bool{}
	for _, l := range o.Labels {
		if seen[l.Name] {
			return fmt.Errorf("--label %s is given twice", l.Name)
		}
		seen[l.Name] = true
	}
	return nil
}

// target names where the samples go, for the progress file.
func (o *Options) target() string {
	switch {
	case o.RemoteWrite != nil:
		return "remote-write " + o.RemoteWrite.Redacted
	case o.Output == "":
		return "no target (a dry run without --output or --remote-write.url)"
	}
	abs, err := filepath.Abs(o.Output)
	if err != nil {
		abs = o.Output
	}
	return "openmetrics " + abs
}

// DefaultProgressFile is where the progress of a run is kept unless
// --progress.file says otherwise: beside the output, or for remote write
// under the storage directory, one file per target.
func DefaultProgressFile(output, remoteWriteURL, storage string) string {
	if output != "" {
		return output + ".progress.json"
	}
	if storage == "" {
		return ""
	}
	u, err := url.Parse(remoteWriteURL)
	host := "target"
	if err == nil && u.Host != "" {
		host = u.Host
	}
	return filepath.Join(storage, "backfill-"+sanitize(host)+"-"+shortHash(remoteWriteURL)+".json")
}

// sanitize keeps a host name fit for a file name.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' {
			return r
		}
		return '_'
	}, s)
}

// shortHash tells two targets on one host apart without writing their
// paths (or credentials) into a file name.
func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}
