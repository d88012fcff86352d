package backfill

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-kit/log/level"

	"github.com/onchain-exporter/onchain_exporter/config"
	keyplan "github.com/onchain-exporter/onchain_exporter/plan"
	"github.com/onchain-exporter/onchain_exporter/series"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// Summary is what a run did.
type Summary struct {
	// Series is every series of the configuration that has a history;
	// Already those an earlier run wrote, Written those this run wrote.
	Series, Already, Written int
	// Refused: the upstream refuses the series as asked (skipped, with
	// the reason logged). Failed: errors that may pass (run again).
	// NotTried: left for a later run (an API paused, the budget spent,
	// the run interrupted).
	Refused, Failed, NotTried int
	// Dropped counts the series the remote-write target acknowledged and
	// then did not hold when read back (their tuples count as Failed).
	Dropped int
	// Clamped counts the series whose history starts after --from, where
	// the key's plan reads their window from.
	Clamped int
	// Rows read and samples written this run, and the calls made for them.
	Rows, Samples, Calls int64
	// RefusedSamples were refused by the remote-write target.
	RefusedSamples int64
	// Complete says every series but those refused is written: the
	// OpenMetrics output is whole.
	Complete bool
}

type sink interface {
	// series writes one series; each calls add for its samples, oldest
	// first.
	series(def *seriesDef, each func(add func(ms int64, v float64) error) error) error
	// commit ends a tuple: what it wrote is on disk or acknowledged. An
	// OpenMetrics output returns the lengths of its parts.
	commit() (map[string]int64, error)
	// finish ends the run; complete says nothing is left to write.
	finish(complete bool) error
	// refused counts the series the target refused so far.
	refused() int
}

// Run writes the history of every series of cfg (expanded: "all"
// resolved) through the clients of pool.
func Run(ctx context.Context, cfg *config.Config, pool *upstream.Pool, o Options) (*Summary, error) {
	o.setDefaults()
	prog, tuples, err := prepare(cfg, &o, false)
	if err != nil {
		return nil, err
	}
	if err := outputAllowed(prog, o); err != nil {
		return nil, err
	}
	sum := &Summary{Series: len(tuples)}
	var todo []*config.Tuple
	for _, t := range tuples {
		if _, ok := prog.file.Series[t.Key]; ok {
			sum.Already++
		} else {
			todo = append(todo, t)
		}
	}
	if prog.file.Complete && len(todo) == 0 {
		level.Info(o.Logger).Log("msg", "nothing left to do: every series is written", "progress_file", prog.path, "series", sum.Series)
		sum.Complete = true
		return sum, nil
	}
	if prog.file.Complete && o.Output != "" {
		// Refused by the upstream when it was written, or new in the
		// configuration since: a complete file takes nothing more.
		level.Warn(o.Logger).Log("msg", "the output is complete; series of the configuration not in it are not written: write them to another --output",
			"output", o.Output, "series", len(todo))
		sum.Complete = true
		return sum, nil
	}
	if err := CheckTarget(ctx, o.RemoteWrite, o.Logger); err != nil {
		return nil, err
	}
	r := &runner{o: o, cfg: cfg, pool: pool, prog: prog, claims: series.NewClaims(), sum: sum, stopped: map[string]string{},
		stopping: map[string]chan struct{}{}, inARow: map[string]int{}, unreachable: map[string]error{}, kp: o.Plan, saidClamp: map[string]bool{}}
	if a := cfg.APIs[config.APIData]; r.kp == nil && a != nil {
		r.kp = pool.Client(a).Plan()
	}
	for name, f := range prog.file.Families {
		if f.Owner != "" {
			_ = r.claims.Claim(f.Owner, series.Family{Name: name, Help: f.Help, Type: f.Type}, f.Labels)
		}
	}
	r.applyBudgets()
	var rw *remoteWrite
	if o.RemoteWrite != nil {
		rw = &remoteWrite{ctx: ctx, rw: o.RemoteWrite, logger: o.Logger}
		r.sink = rw
		if o.RemoteWrite.QueryURL != "" && !o.RemoteWrite.noReadBack {
			r.ver = newVerifier(ctx, o.RemoteWrite, o.Logger)
		}
	} else if r.sink, err = newOpenMetrics(o.Output, o.ReplaceOutput, prog.file.Families, o.Logger); err != nil {
		return nil, err
	}
	kv := []any{"msg", "backfill starting", "series", len(todo), "already_written", sum.Already,
		"from", o.From.Format(time.RFC3339), "to", o.To.Format(time.RFC3339), "target", o.target()}
	if r.ver != nil {
		kv = append(kv, "read_back", r.ver.redacted)
	}
	level.Info(o.Logger).Log(kv...)
	runErr := r.run(ctx, todo)
	for _, api := range config.APINames {
		if err := r.unreachable[api]; err != nil {
			runErr = errors.Join(runErr, err)
		}
	}
	sum.Calls = r.calls.Load()
	complete := runErr == nil && sum.Failed == 0 && sum.NotTried == 0
	if rw != nil {
		sum.RefusedSamples = rw.refusedSamples
	}
	// The output is complete only once it is where it was asked: a run
	// whose last step failed keeps its parts and goes on when run again.
	if err := r.sink.finish(complete); err != nil {
		runErr = errors.Join(runErr, err)
		complete = false
	}
	sum.Complete = complete
	prog.file.Complete = complete && o.Output != ""
	r.saveBudgets()
	prog.dirty = true
	if err := prog.save(o.Now(), true); err != nil {
		runErr = errors.Join(runErr, err)
	}
	return sum, runErr
}

// CheckOutput says, before anything is called, whether a run may write
// the OpenMetrics output of o: absent (or, with ReplaceOutput, a regular
// file), and its parts directory absent or one an earlier run made.
func CheckOutput(o Options) error {
	o.setDefaults()
	if o.Output == "" {
		return nil
	}
	prog, _, err := prepare(&config.Config{}, &o, false)
	if err != nil {
		return err
	}
	return outputAllowed(prog, o)
}

// outputAllowed checks the output of a run against its progress: a
// complete output must be there; another is written only where
// checkOutput and checkParts allow.
func outputAllowed(prog *progress, o Options) error {
	switch {
	case o.Output == "":
		return nil
	case prog.file.Complete:
		if _, err := os.Lstat(o.Output); err != nil {
			return fmt.Errorf("progress file %s records %s as complete, but it is not there (%v): remove the progress file to write it again", prog.path, o.Output, err)
		}
		return nil
	}
	if err := checkOutput(o.Output, o.ReplaceOutput); err != nil {
		return err
	}
	return checkParts(o.Output + ".parts")
}

// prepare checks the options, opens the progress file and picks the
// series that have a history; dry says a dry run asks.
func prepare(cfg *config.Config, o *Options, dry bool) (*progress, []*config.Tuple, error) {
	if err := o.validate(dry); err != nil {
		return nil, nil, err
	}
	labels := make(map[string]string, len(o.Labels))
	for _, l := range o.Labels {
		labels[l.Name] = l.Value
	}
	want := progressFile{Target: o.target(), From: o.From, To: o.To, Stamp: o.Stamp, Step: o.Step.String(), Labels: labels}
	prog, err := openProgress(o.ProgressFile, want, o.ToSet)
	if err != nil {
		return nil, nil, err
	}
	if o.To = prog.file.To; !o.From.Before(o.To) {
		return nil, nil, fmt.Errorf("--from %s is not before --to %s", o.From.Format(time.RFC3339), o.To.Format(time.RFC3339))
	}
	var tuples []*config.Tuple
	consensus := 0
	for _, t := range cfg.Tuples {
		if t.API == config.APIConsensus {
			consensus++
			continue
		}
		tuples = append(tuples, t)
	}
	if consensus > 0 {
		level.Info(o.Logger).Log("msg", "the Analyst Consensus API has no history endpoint: its series are not backfilled", "series", consensus)
	}
	return prog, tuples, nil
}

type runner struct {
	o      Options
	cfg    *config.Config
	pool   *upstream.Pool
	prog   *progress
	sink   sink
	ver    *verifier // reads back what a remote-write target holds; nil: no check
	claims *series.Claims
	sum    *Summary
	start  time.Time

	// Counters the progress reporter reads while the run goes on.
	done, rows, calls atomic.Int64

	mu sync.Mutex
	// stopped holds, per API, why its remaining series wait for a later
	// run (its credential refused, a long pause, the budget spent, its
	// upstream out of reach); stopping has a channel per API, closed
	// when it is stopped.
	stopped  map[string]string
	stopping map[string]chan struct{}
	// inARow counts, per API, the calls that failed below HTTP since its
	// upstream last answered; unreachable holds the error of an API
	// stopped for it (fetch.go).
	inARow      map[string]int
	unreachable map[string]error
	// kp is the key's plan on the data API (nil: not known); saidClamp
	// the paths and windows whose clamped start was said.
	kp        *keyplan.Plan
	saidClamp map[string]bool
}

// run fetches the series, per API as many at once as allowed, and writes
// each as it comes, one at a time.
func (r *runner) run(ctx context.Context, todo []*config.Tuple) error {
	r.start = r.o.Now()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	byAPI := map[string][]*config.Tuple{}
	for _, t := range todo {
		byAPI[t.API] = append(byAPI[t.API], t)
	}
	results := make(chan *outcome, 2*r.o.Concurrency)
	var wg sync.WaitGroup
	for api, list := range byAPI {
		jobs := make(chan *config.Tuple)
		n := max(1, min(r.o.Concurrency, r.cfg.APIs[api].Concurrency, len(list)))
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for t := range jobs {
					results <- r.history(wctx, t)
				}
			}()
		}
		go func() {
			defer close(jobs)
			for _, t := range list {
				select {
				case jobs <- t:
				case <-wctx.Done():
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(results) }()
	stopReport := r.report(len(todo))
	defer stopReport()

	var fatal error
	seen := 0
	// A save that comes too soon after the last (saveEvery) is made when
	// this timer fires, so that what is written is recorded within
	// saveEvery even while the next series takes long to come.
	var saveLater, checkLater <-chan time.Time
	for open := true; open; {
		if r.ver != nil && checkLater == nil && len(r.ver.pending) > 0 {
			checkLater = time.After(max(time.Until(r.ver.due()), 0))
		}
		select {
		case <-checkLater:
			checkLater = nil
			r.ver.check()
		case oc, ok := <-results:
			if !ok {
				open = false
				continue
			}
			seen++
			switch {
			case fatal != nil:
				r.sum.NotTried++
			default:
				if fatal = r.write(oc); fatal != nil {
					r.sum.NotTried++
					cancel()
				}
			}
			oc.sp.close()
			if r.prog.dirty && saveLater == nil {
				saveLater = time.After(max(saveEvery-r.o.Now().Sub(r.prog.saved), 0))
			}
		case <-saveLater:
			saveLater = nil
			if err := r.prog.save(r.o.Now(), true); err != nil && fatal == nil {
				fatal = err
				cancel()
			}
		}
	}
	if r.ver != nil {
		r.ver.drain()
		// Interrupted while read back: left for a later run.
		r.sum.NotTried += len(r.ver.pending)
	}
	// Series never handed to a worker were not tried.
	r.sum.NotTried += len(todo) - seen
	if fatal != nil {
		return fatal
	}
	return ctx.Err()
}

// stop leaves an API's remaining series to a later run, saying why once.
func (r *runner) stop(api, why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.stopped[api]; ok {
		return
	}
	r.stopped[api] = why
	close(r.stopChan(api))
	level.Warn(r.o.Logger).Log("msg", "no more calls to this API in this run; its remaining series are left for a later run", "api", api, "reason", why)
}

// stopChan is closed when an API is stopped, so that its calls waiting
// to be tried again end at once (r.mu held).
func (r *runner) stopChan(api string) chan struct{} {
	c, ok := r.stopping[api]
	if !ok {
		c = make(chan struct{})
		r.stopping[api] = c
	}
	return c
}

// wait waits d before an API's call is tried again; it ends early with
// the reason when the API is stopped meanwhile, or with the context.
func (r *runner) wait(ctx context.Context, api string, d time.Duration) error {
	r.mu.Lock()
	stopped := r.stopChan(api)
	r.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-stopped:
		return &tupleError{notTried, errors.New(r.stoppedAPI(api))}
	}
}

func (r *runner) stoppedAPI(api string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stopped[api]
}

// report shows the progress until the returned function is called.
func (r *runner) report(total int) func() {
	rep := r.o.Report
	if rep == nil {
		rep = &logReporter{logger: r.o.Logger, every: 10 * time.Second}
	}
	status := func() Status {
		done := int(r.done.Load())
		s := Status{Total: total, Done: done, Rows: r.rows.Load(), Calls: r.calls.Load(), Elapsed: r.o.Now().Sub(r.start)}
		if done > 0 && done < total {
			s.Left = time.Duration(float64(s.Elapsed) / float64(done) * float64(total-done))
		}
		return s
	}
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				rep.Update(status())
			case <-stop:
				rep.Update(status())
				rep.Close()
				return
			}
		}
	}()
	return func() { close(stop); <-stopped }
}
