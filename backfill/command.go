package backfill

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
	promconfig "github.com/prometheus/common/config"
	"golang.org/x/term"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/demo"
	"github.com/onchain-exporter/onchain_exporter/expand"
	keyplan "github.com/onchain-exporter/onchain_exporter/plan"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// Command is `onchain_exporter backfill`: the history of the configured
// series, written for promtool or sent by remote write (docs/history.md).
type Command struct {
	chosen                                     bool
	from, to, output, progressFile, sampleTime *string
	labels                                     *[]string
	dryRun, replace                            *bool
	step, timeout                              *time.Duration
	concurrency                                *int
	rateShare                                  *float64
	rw                                         remoteWriteFlags
}

type remoteWriteFlags struct {
	url, file, bearerFile, user, passwordFile, ca, cert, key, serverName *string
	queryURL                                                             *string
	readBackWait                                                         *time.Duration
	insecure                                                             *bool
	headers                                                              *[]string
}

// Globals are the application's flags the command reads, and how it
// makes its logger.
type Globals struct {
	ConfigFile, StoragePath string
	Demo                    bool
	// NewLogger is the application's logger, writing to w.
	NewLogger func(w io.Writer) log.Logger
}

// AddCommand adds the backfill command to app.
func AddCommand(app *kingpin.Application) *Command {
	c := &Command{}
	cmd := app.Command("backfill", "Write the history of the configured series for promtool (--output) or a remote-write receiver (--remote-write.url). See docs/history.md.").
		Action(func(*kingpin.ParseContext) error { c.chosen = true; return nil })
	c.from = cmd.Flag("from", "Oldest row wanted: a date (2024-01-31) or an RFC 3339 time. Before a series' first row, the series starts where the upstream starts.").Required().String()
	c.to = cmd.Flag("to", "Newest sample time written. Default: now minus 4 h (promtool calls the last 3 h unsafe to backfill); a resumed run keeps the one it started with.").String()
	c.output = cmd.Flag("output", "OpenMetrics file to write, for promtool tsdb create-blocks-from openmetrics.").String()
	c.replace = cmd.Flag("output.replace", "Replace --output if it exists (a regular file); without it an existing --output is refused.").Bool()
	c.labels = cmd.Flag("label", "name=value added to every series, repeatable: the job and instance your Prometheus attaches when it scrapes the exporter.").Strings()
	c.dryRun = cmd.Flag("dry-run", "Print the calls it would make, and make none.").Bool()
	c.progressFile = cmd.Flag("progress.file", "Where what was written is recorded, so that a run started again goes on. Default: FILE.progress.json beside --output; for remote write, under --storage.path.").String()
	c.sampleTime = cmd.Flag("sample-time", "Time a row's samples carry: end of its interval (when a scrape could first have seen it) or start (the row's own date).").Default("end").Enum("end", "start")
	c.step = cmd.Flag("sample-interval", "Write each row's value every interval until the next row, as scrapes would have (more samples, no last_over_time needed); 0 writes one sample per row.").Default("0s").Duration()
	c.concurrency = cmd.Flag("concurrency", "Series fetched at once per API, within the API's concurrency.").Default("2").Int()
	c.timeout = cmd.Flag("upstream.timeout", "Time one call may take (a year of rows is larger than a live refresh's answer).").Default("2m").Duration()
	c.rateShare = cmd.Flag("rate-limit.share", "Share of each API's rate_limit this command takes, so that an exporter running beside it keeps the rest.").Default("0.5").Float64()
	c.rw.url = cmd.Flag("remote-write.url", "Remote-write endpoint (Prometheus with --web.enable-remote-write-receiver: http://host:9090/api/v1/write).").String()
	c.rw.file = cmd.Flag("remote-write.config", "YAML file holding one remote_write entry in Prometheus' format (url, basic_auth, authorization, oauth2, tls_config, proxy_url, headers, queue_config).").String()
	c.rw.bearerFile = cmd.Flag("remote-write.bearer-token-file", "File holding the bearer token of the remote-write endpoint.").String()
	c.rw.user = cmd.Flag("remote-write.basic-auth.username", "Basic-auth user of the remote-write endpoint.").String()
	c.rw.passwordFile = cmd.Flag("remote-write.basic-auth.password-file", "File holding the basic-auth password.").String()
	c.rw.ca = cmd.Flag("remote-write.tls.ca-file", "CA certificate to verify the remote-write endpoint with.").String()
	c.rw.cert = cmd.Flag("remote-write.tls.cert-file", "Client certificate for the remote-write endpoint.").String()
	c.rw.key = cmd.Flag("remote-write.tls.key-file", "Key of the client certificate.").String()
	c.rw.serverName = cmd.Flag("remote-write.tls.server-name", "Server name the endpoint's certificate is checked against.").String()
	c.rw.insecure = cmd.Flag("remote-write.tls.insecure-skip-verify", "Do not verify the endpoint's certificate.").Bool()
	c.rw.headers = cmd.Flag("remote-write.header", "Name=value header sent with every request (X-Scope-OrgID=tenant), repeatable.").Strings()
	c.rw.queryURL = cmd.Flag("remote-write.query-url", "Prometheus query API of the target (http://host:9090/api/v1/query), through which the oldest and newest sample of every series sent is read back: a series the target does not hold is not recorded as written. Default: from the remote-write URL, /api/v1/write (Prometheus, VictoriaMetrics) → /api/v1/query, /api/v1/push (Mimir, Cortex) → /prometheus/api/v1/query; none reads nothing back.").String()
	c.rw.readBackWait = cmd.Flag("remote-write.read-back-wait", "How long after a tuple is sent a sample not found through the query API is still asked for (again after 1 s, 2 s, 4 s, then every 8 s): a target shows samples a moment after acknowledging them, longer under load. Only a sample still missing then counts as dropped.").Default(DefaultReadBackWait.String()).Duration()
	return c
}

// Chosen says whether the command line named the command.
func (c *Command) Chosen() bool { return c.chosen }

// Run runs the command until it is done or ctx is (package main: SIGINT
// or SIGTERM); its code is the process's.
func (c *Command) Run(ctx context.Context, g Globals, stdout, stderr io.Writer) int {
	var bar *Bar
	logOut := stderr
	if f, ok := stderr.(*os.File); ok && !*c.dryRun && term.IsTerminal(int(f.Fd())) {
		width, _, _ := term.GetSize(int(f.Fd()))
		bar = NewBar(stderr, width)
		logOut = bar
	}
	logger := g.NewLogger(logOut)
	fail := func(msg string, err error) int {
		level.Error(logger).Log("msg", msg, "err", err)
		return 1
	}
	opts, err := c.options(g)
	if err != nil {
		level.Error(logger).Log("msg", "bad flags", "err", err)
		return 2
	}
	opts.Logger = logger
	if bar != nil {
		opts.Report = bar
	}
	parse, d, err := demo.Source(g.ConfigFile, g.Demo, logger)
	if err != nil {
		return fail("cannot start the demo", err)
	}
	if d != nil {
		defer d.Close()
	}
	cfg, err := parse()
	if err != nil {
		return fail("cannot load the configuration", err)
	}
	if *c.dryRun {
		// The key's plan as the last run kept it: a dry run calls nothing.
		if saved := expand.ReadSaved(g.StoragePath, cfg); cfg.APIs[config.APIData] != nil {
			opts.Plan = expand.PlanOf(saved.Get(config.APIData, keyplan.Path)).Plan
		}
		if err := DryRun(stdout, cfg, opts); err != nil {
			return fail("dry run", err)
		}
		return 0
	}
	for _, a := range cfg.APIs {
		a.RateLimit *= *c.rateShare // 0 (no limit) stays 0
	}
	if opts.RemoteWrite != nil && opts.RemoteWrite.QueryURL == "" && *c.rw.queryURL != "none" {
		level.Warn(logger).Log("msg", "the target's query API cannot be told from its remote-write URL: what it keeps is not read back; give --remote-write.query-url (or none)")
	}
	if err := CheckOutput(opts); err != nil {
		return fail("cannot write the output", err)
	}
	// The target is checked before any upstream call, the listings of
	// "all" included.
	if err := CheckTarget(ctx, opts.RemoteWrite, logger); err != nil {
		return fail("cannot write to the remote-write target", err)
	}
	reg := prometheus.NewRegistry()
	pool := upstream.NewPool(reg, time.Now, logger)
	defer pool.Close()
	if cfg, err = expandLists(ctx, logger, pool, cfg); err != nil {
		return fail("the configuration does not fit the upstream's lists", err)
	}
	sum, err := Run(ctx, cfg, pool, opts)
	if sum != nil {
		level.Info(logger).Log("msg", "backfill done", "series", sum.Series, "written", sum.Written, "already_written", sum.Already,
			"refused", sum.Refused, "failed", sum.Failed, "left_for_later", sum.NotTried, "rows", sum.Rows, "samples", sum.Samples,
			"upstream_requests", requestsMade(reg), "refused_by_target", sum.RefusedSamples, "series_dropped_by_target", sum.Dropped, "clamped_by_plan", sum.Clamped)
	}
	switch {
	case errors.Is(err, context.Canceled):
		level.Warn(logger).Log("msg", "interrupted; run again with the same flags to go on", "progress_file", opts.ProgressFile)
		return 1
	case err != nil:
		return fail("backfill failed", err)
	case !sum.Complete:
		level.Warn(logger).Log("msg", "some series are not written yet; run again with the same flags to go on", "progress_file", opts.ProgressFile)
		return 1
	}
	return 0
}

// expandLists resolves "all" through the upstream's lists, as the
// exporter does at start (expand.Expander.Start): entries whose lists
// cannot be read, or show the file wrong for their API, are left for a
// later run, and the run says so; the other APIs' series are backfilled.
// The APIs whose daily_budget leaves the backfill nothing
// (Unfunded) are not listed: they are kept as written, and the
// run leaves their series for later without a call.
func expandLists(ctx context.Context, logger log.Logger, pool *upstream.Pool, cfg *config.Config) (*config.Config, error) {
	unfunded := Unfunded(cfg)
	listed := cfg
	if len(unfunded) > 0 {
		apis := maps.Clone(cfg.APIs)
		for _, api := range unfunded {
			delete(apis, api)
		}
		var err error
		if listed, err = resolveAs(cfg.File, apis); err != nil {
			return nil, err
		}
	}
	x := expand.New(logger, expand.Options{Clients: pool})
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	out, err := x.Start(ctx, listed)
	for api, st := range x.State() {
		if st.Waiting > 0 {
			level.Warn(logger).Log("msg", "entries wait for the upstream's lists and are not backfilled in this run", "api", api, "entries", st.Waiting, "err", st.LastError)
		}
	}
	if err != nil || len(unfunded) == 0 {
		return out, err
	}
	apis := maps.Clone(out.APIs)
	for _, api := range unfunded {
		apis[api] = cfg.APIs[api]
	}
	return resolveAs(cfg.File, apis)
}

// resolveAs is the configuration of these API sections, their tuples
// built again, nothing resolved.
func resolveAs(file string, apis map[string]*config.API) (*config.Config, error) {
	c := &config.Config{File: file, APIs: apis}
	return c.Resolve(func(_ *config.API, _ *config.Entry, p config.Param) (config.Param, error) { return p, nil })
}

// requestsMade is the upstream requests sent on the wire, listing calls
// and the clients' own retries included.
func requestsMade(reg *prometheus.Registry) float64 {
	mfs, _ := reg.Gather()
	n := 0.0
	for _, mf := range mfs {
		if mf.GetName() == "onchain_exporter_upstream_requests_total" {
			for _, m := range mf.Metric {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}

// options turns the flags into Options.
func (c *Command) options(g Globals) (Options, error) {
	o := Options{Output: *c.output, ReplaceOutput: *c.replace, Stamp: Stamp(*c.sampleTime), Step: *c.step,
		Concurrency: *c.concurrency, Timeout: *c.timeout}
	var err error
	if o.From, err = ParseDate("--from", *c.from); err != nil {
		return o, err
	}
	o.To = time.Now().Add(-DefaultMargin).Truncate(time.Minute)
	if *c.to != "" {
		if o.To, err = ParseDate("--to", *c.to); err != nil {
			return o, err
		}
		o.ToSet = true
	}
	for _, s := range *c.labels {
		l, err := ParseLabel(s)
		if err != nil {
			return o, err
		}
		o.Labels = append(o.Labels, l)
	}
	if *c.rateShare <= 0 || *c.rateShare > 1 {
		return o, fmt.Errorf("--rate-limit.share %g: want more than 0 and at most 1", *c.rateShare)
	}
	if *c.rw.url != "" || *c.rw.file != "" {
		rc, err := c.rw.config()
		if err != nil {
			return o, err
		}
		if o.RemoteWrite, err = rc.Build(); err != nil {
			return o, err
		}
		if o.RemoteWrite.QueryURL, err = c.rw.query(rc.URL); err != nil {
			return o, err
		}
		if *c.rw.readBackWait <= 0 {
			return o, fmt.Errorf("--remote-write.read-back-wait %s: want a positive duration (--remote-write.query-url=none reads nothing back)", *c.rw.readBackWait)
		}
		o.RemoteWrite.ReadBackWait = *c.rw.readBackWait
	}
	switch {
	case o.Output != "" && o.RemoteWrite != nil:
		return o, errors.New("give one of --output and --remote-write.url (or --remote-write.config), not both")
	case o.Output == "" && o.RemoteWrite == nil && !*c.dryRun:
		return o, errors.New("give one of --output and --remote-write.url (or --remote-write.config)")
	}
	o.ProgressFile = *c.progressFile
	if o.ProgressFile == "" && (o.Output != "" || o.RemoteWrite != nil) {
		u := *c.rw.url
		if o.RemoteWrite != nil {
			u = o.RemoteWrite.URL
		}
		o.ProgressFile = DefaultProgressFile(o.Output, u, g.StoragePath)
	}
	return o, nil
}

// query is the query API the written series are read back through: the
// flag's, "" for none, or the one QueryURLFor derives from the
// remote-write URL.
func (f remoteWriteFlags) query(writeURL string) (string, error) {
	switch q := *f.queryURL; q {
	case "none":
		return "", nil
	case "":
		return QueryURLFor(writeURL), nil
	default:
		u, err := url.Parse(q)
		if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
			return "", fmt.Errorf("--remote-write.query-url %q: want an http:// or https:// address, or none", q)
		}
		return q, nil
	}
}

// config is the remote-write entry: the file's, or one made of the flags.
func (f remoteWriteFlags) config() (*RemoteWriteConfig, error) {
	flagSet := *f.bearerFile != "" || *f.user != "" || *f.passwordFile != "" || *f.ca != "" || *f.cert != "" ||
		*f.key != "" || *f.serverName != "" || *f.insecure || len(*f.headers) > 0
	if *f.file != "" {
		if flagSet || *f.url != "" {
			return nil, errors.New("--remote-write.config holds the whole entry: give the URL, TLS and authorization there, not in --remote-write.* flags")
		}
		return LoadRemoteWriteConfig(*f.file)
	}
	c := DefaultRemoteWriteConfig()
	c.URL = *f.url
	hc := &c.HTTPClientConfig
	hc.BearerTokenFile = *f.bearerFile
	if *f.user != "" || *f.passwordFile != "" {
		hc.BasicAuth = &promconfig.BasicAuth{Username: *f.user, PasswordFile: *f.passwordFile}
	}
	hc.TLSConfig = promconfig.TLSConfig{CAFile: *f.ca, CertFile: *f.cert, KeyFile: *f.key, ServerName: *f.serverName, InsecureSkipVerify: *f.insecure}
	for _, h := range *f.headers {
		name, value, ok := strings.Cut(h, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("--remote-write.header %q: want Name=value", h)
		}
		if c.Headers == nil {
			c.Headers = map[string]string{}
		}
		c.Headers[name] = value
	}
	return &c, nil // Build validates it
}
