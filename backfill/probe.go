package backfill

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/prometheus/prompb"
)

// probeTries bounds the tries of the probe write when the target cannot
// be reached or answers 5xx or 429: a target down at the start is
// reported in seconds, not after the batches' whole back-off.
const probeTries = 3

// CheckTarget checks a remote-write target before anything is fetched:
// one write of an empty request (it writes nothing; Prometheus,
// VictoriaMetrics and Mimir answer it as any write, 204 or 200) must be
// taken, or the error names the target (redacted) and what it answered.
// Then the query API of the read-back is asked for vector(1): one that
// cannot be read is warned of once, and the run reads nothing back. Run
// checks the target itself; a caller that makes upstream calls before Run
// (the listings of "all") calls it first, and Run does not ask again.
func CheckTarget(ctx context.Context, rw *RemoteWrite, logger log.Logger) error {
	if rw == nil || rw.checked {
		return nil
	}
	if logger == nil {
		logger = log.NewNopLogger()
	}
	err := rw.retry(ctx, &prompb.WriteRequest{}, probeTries, func(tries int, err error) error {
		return fmt.Errorf("the remote-write target %s does not take a write (an empty one, which writes nothing; %d tries): %w; nothing was fetched", rw.Redacted, tries, err)
	})
	if err != nil {
		return err
	}
	rw.checked = true
	if rw.QueryURL == "" {
		return nil
	}
	v := newVerifier(ctx, rw, logger)
	form := url.Values{"query": {"vector(1)"}, "time": {strconv.FormatInt(time.Now().Unix(), 10)}}
	if _, err := v.ask(form, "vector"); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rw.noReadBack = true
		level.Warn(logger).Log("msg", "the target's query API cannot be read: what it keeps is not checked in this run; the series it acknowledges are recorded as written",
			"query_url", v.redacted, "err", err)
	}
	return nil
}
