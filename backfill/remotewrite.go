package backfill

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/golang/snappy"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/prometheus/common/version"
	"github.com/prometheus/prometheus/prompb"
)

// Remote write, protocol version 1: a prompb.WriteRequest, snappy block
// encoded, POSTed with the protocol's headers. Batches carry at most
// BatchSamples samples, a series' samples in time order; a batch refused
// with 5xx or 429 is sent again after a back-off, one refused with
// another 4xx is not (the same samples would be refused again): its
// series are then sent one by one, so that the error names the series
// refused and why, and the others are kept.

// RemoteWrite is the target of remote write and how to send to it.
type RemoteWrite struct {
	URL    string // shown redacted in errors and logs (Redacted)
	Client *http.Client
	// Headers are sent with every request (a tenant's X-Scope-OrgID).
	Headers map[string]string
	// BatchSamples is the most samples in one request.
	BatchSamples int
	// Timeout bounds one request.
	Timeout time.Duration
	// MinBackoff and MaxBackoff bound the wait before a batch refused
	// with 5xx or 429 is sent again; MaxRetries bounds how often.
	MinBackoff, MaxBackoff time.Duration
	MaxRetries             int
	// Redacted is URL without credentials, for messages.
	Redacted string
	// QueryURL is the target's Prometheus query API (…/api/v1/query),
	// through which what it acknowledged is read back (verify.go); ""
	// reads nothing back.
	QueryURL string
	// ReadBackWait is how long after a tuple was sent a sample not found
	// through QueryURL is still asked for (verify.go); 0 is
	// DefaultReadBackWait.
	ReadBackWait time.Duration

	// checkTimes replaces checkSettle and checkEvery (tests).
	checkTimes *[2]time.Duration
	// checked says CheckTarget found the target taking writes;
	// noReadBack that its query API could not be read.
	checked, noReadBack bool
}

// maxRefusedInARow stops a run whose target refuses every series it is
// sent: a target without an out-of-order window, or that no longer takes
// samples this old, refuses the rest too.
const maxRefusedInARow = 10

// refusedError is a batch the target refused for good.
type refusedError struct {
	status int
	body   string
}

func (e *refusedError) Error() string {
	return fmt.Sprintf("HTTP %d: %s", e.status, e.body)
}

// send sends one request, again on 5xx and 429 until MaxRetries.
func (rw *RemoteWrite) send(ctx context.Context, req *prompb.WriteRequest) error {
	return rw.retry(ctx, req, rw.MaxRetries+1, func(tries int, err error) error {
		var refused *refusedError
		if errors.As(err, &refused) || ctx.Err() != nil {
			return err
		}
		return fmt.Errorf("remote write to %s failed %d times, last: %w", rw.Redacted, tries, err)
	})
}

// retry posts req until it is taken, at most tries times: again after a
// back-off, or the wait the target asked for, on 5xx, 429 and errors
// below HTTP; not after another refusal or once ctx ends. The last post's
// error goes to failed with the tries made; an interrupted wait's comes
// back as it is.
func (rw *RemoteWrite) retry(ctx context.Context, req *prompb.WriteRequest, tries int, failed func(tries int, err error) error) error {
	data, err := req.Marshal()
	if err != nil {
		return err
	}
	body := snappy.Encode(nil, data)
	backoff := rw.MinBackoff
	for try := 1; ; try++ {
		wait, err := rw.post(ctx, body)
		if err == nil {
			return nil
		}
		var refused *refusedError
		if errors.As(err, &refused) || ctx.Err() != nil || try >= tries {
			return failed(try, err)
		}
		if err := sleepCtx(ctx, max(wait, backoff)); err != nil {
			return err
		}
		backoff = min(2*backoff, rw.MaxBackoff)
	}
}

// post sends one request. A refusal that waiting can fix comes back as an
// error with the wait the target asked for (Retry-After).
func (rw *RemoteWrite) post(ctx context.Context, body []byte) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, rw.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rw.URL, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	for k, v := range rw.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Encoding", "snappy")
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("User-Agent", version.ComponentUserAgent(config.Namespace))
	req.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	resp, err := rw.Client.Do(req)
	if err != nil {
		return 0, redactURL(err, rw.URL, rw.Redacted)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	text := strings.TrimSpace(string(msg))
	switch {
	case resp.StatusCode/100 == 2:
		return 0, nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		var wait time.Duration
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			wait = min(time.Duration(s)*time.Second, rw.MaxBackoff)
		}
		return wait, fmt.Errorf("HTTP %d: %s", resp.StatusCode, text)
	}
	return 0, &refusedError{status: resp.StatusCode, body: text}
}

// redactURL keeps credentials of the URL out of an error.
func redactURL(err error, raw, redacted string) error {
	if raw == redacted {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), raw, redacted))
}

// remoteWrite is the sink that sends samples by remote write.
type remoteWrite struct {
	ctx    context.Context
	rw     *RemoteWrite
	logger log.Logger

	pending []prompb.TimeSeries
	defs    []*seriesDef // of each pending series
	n       int          // samples pending

	refusedSeries  int
	refusedSamples int64
	inARow         int // series refused since the last accepted
}

func (s *remoteWrite) series(def *seriesDef, each func(add func(ms int64, v float64) error) error) error {
	labels := promLabels(def)
	s.start(def, labels)
	err := each(func(ms int64, v float64) error {
		cur := &s.pending[len(s.pending)-1]
		cur.Samples = append(cur.Samples, prompb.Sample{Value: v, Timestamp: ms})
		s.n++
		if s.n < s.rw.BatchSamples {
			return nil
		}
		if err := s.flush(); err != nil {
			return err
		}
		s.start(def, labels) // the series goes on in the next batch
		return nil
	})
	if last := len(s.pending) - 1; last >= 0 && len(s.pending[last].Samples) == 0 {
		s.pending, s.defs = s.pending[:last], s.defs[:last]
	}
	return err
}

func (s *remoteWrite) start(def *seriesDef, labels []prompb.Label) {
	s.pending = append(s.pending, prompb.TimeSeries{Labels: labels})
	s.defs = append(s.defs, def)
}

// promLabels are a series' labels with __name__, sorted by name as the
// protocol asks.
func promLabels(def *seriesDef) []prompb.Label {
	out := make([]prompb.Label, 0, len(def.labels)+1)
	named := false
	for _, l := range def.labels {
		if !named && l.Name > "__name__" {
			out = append(out, prompb.Label{Name: "__name__", Value: def.name})
			named = true
		}
		out = append(out, prompb.Label{Name: l.Name, Value: l.Value})
	}
	if !named {
		out = append(out, prompb.Label{Name: "__name__", Value: def.name})
	}
	return out
}

// flush sends what is pending. A batch refused for good is sent again
// series by series, so that the refusal names them and the rest is kept.
func (s *remoteWrite) flush() error {
	if len(s.pending) == 0 {
		return nil
	}
	defer func() { s.pending, s.defs, s.n = s.pending[:0], s.defs[:0], 0 }()
	err := s.rw.send(s.ctx, &prompb.WriteRequest{Timeseries: s.pending})
	var refused *refusedError
	if !errors.As(err, &refused) {
		if err == nil {
			s.inARow = 0
		}
		return err
	}
	if len(s.pending) == 1 {
		return s.refuse(0, refused)
	}
	for i := range s.pending {
		err := s.rw.send(s.ctx, &prompb.WriteRequest{Timeseries: s.pending[i : i+1]})
		switch {
		case errors.As(err, &refused):
			if err := s.refuse(i, refused); err != nil {
				return err
			}
		case err != nil:
			return err
		default:
			s.inARow = 0
		}
	}
	return nil
}

// refuse records pending series i as refused, and stops the run once
// maxRefusedInARow series in a row were.
func (s *remoteWrite) refuse(i int, e *refusedError) error {
	samples := s.pending[i].Samples
	s.refusedSeries++
	s.refusedSamples += int64(len(samples))
	s.inARow++
	what := fmt.Sprintf("%s: %d samples from %s to %s refused (%s)", s.defs[i].text, len(samples),
		msTime(samples[0].Timestamp), msTime(samples[len(samples)-1].Timestamp), e)
	level.Warn(s.logger).Log("msg", "the remote-write target refused samples", "series", s.defs[i].text, "samples", len(samples),
		"from", msTime(samples[0].Timestamp), "to", msTime(samples[len(samples)-1].Timestamp), "reason", e.Error(), "hint", refusalHint(e.body))
	if s.inARow >= maxRefusedInARow {
		return fmt.Errorf("the remote-write target %s refused %d series in a row, the last %s; %s", s.rw.Redacted, s.inARow, what, refusalHint(e.body))
	}
	return nil
}

// refusalHint says what usually fixes a refusal.
func refusalHint(body string) string {
	b := strings.ToLower(body)
	switch {
	case strings.Contains(b, "out of bounds") || strings.Contains(b, "too old") || strings.Contains(b, "out of order"):
		return "the target takes samples this old only within its out-of-order window: set storage.tsdb.out_of_order_time_window (Prometheus) or out_of_order_time_window (Mimir) beyond --from, or backfill with --output and promtool"
	case strings.Contains(b, "duplicate"):
		return "the target holds other values at these times: the series was written before with other values"
	}
	return "see the target's answer"
}

func (s *remoteWrite) commit() (map[string]int64, error) { return nil, s.flush() }

func (s *remoteWrite) finish(bool) error { return s.flush() }

func (s *remoteWrite) refused() int { return s.refusedSeries }

func msTime(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339) }

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
