package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/app"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// The history end to end: 30 days of day, hour and block rows of the fake
// upstream, backfilled by the backfill command, run in this process as
// package main runs it, (1) into an OpenMetrics
// file that promtool turns into blocks under a Prometheus which then
// scrapes the live exporter, and (2) by remote write into a Prometheus
// with the receiver and an out-of-order window, which scrapes it too.
// Each Prometheus must hold one series per tuple: every past row at the
// end of its interval with the value the fake served, then the live
// samples.

const backfillConfig = `data:
  url: "{{URL}}"
  token_env: E2E_DATA_TOKEN
  metrics:
    - path: /v1/btc/network-data/supply
      window: [day, hour, block]
`

const backfillPromConfig = `global:
  scrape_interval: 1s
  scrape_timeout: 1s
{{STORAGE}}
scrape_configs:
  - job_name: onchain_exporter
    static_configs:
      - targets: ["{{EXPORTER}}"]
`

const oooStorage = `storage:
  tsdb:
    out_of_order_time_window: 60d`

func TestBackfillEndToEnd(t *testing.T) {
	prom := testtool.Require(t, "install the Debian package prometheus", "prometheus")
	promtool := testtool.Require(t, "install the Debian package prometheus", "promtool")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b := newBackfillRun(ctx, t, 30, "[day, hour, block]")
	dir, backfill := b.dir, b.args
	// The exporter is served from the start, so that the history is
	// labelled with the instance Prometheus scrapes; nothing scrapes it
	// until the Prometheus servers start.
	exp := startExporter(t, dir, "exporter", b.cfg, func(o *app.Options) { o.StoragePath = "" })
	expAddr, fileAddr, rwAddr := exp.addr, freeAddr(t), freeAddr(t)
	backfill = append(backfill, "--label=instance="+expAddr)

	// (1) OpenMetrics, promtool, then Prometheus on the blocks.
	om := filepath.Join(dir, "history.om")
	runBackfillOK(ctx, t, append(backfill, "--output="+om)...)
	fileData := filepath.Join(dir, "prom-file")
	runIn(ctx, t, dir, nil, promtool, "tsdb", "create-blocks-from", "openmetrics", "--max-block-duration=24h", om, fileData)

	promStart := time.Now()
	fileCfg := writeFile(t, dir, "prom-file.yml", fill(backfillPromConfig, "{{STORAGE}}", "", "{{EXPORTER}}", expAddr))
	start(t, dir, "prometheus-file", prom, nil, "--config.file="+fileCfg, "--storage.tsdb.path="+fileData,
		"--storage.tsdb.retention.time=90d", "--web.listen-address="+fileAddr)
	// (2) Remote write into a Prometheus that scrapes the exporter already.
	rwCfg := writeFile(t, dir, "prom-rw.yml", fill(backfillPromConfig, "{{STORAGE}}", oooStorage, "{{EXPORTER}}", expAddr))
	start(t, dir, "prometheus-rw", prom, nil, "--config.file="+rwCfg, "--storage.tsdb.path="+filepath.Join(dir, "prom-rw"),
		"--storage.tsdb.retention.time=90d", "--web.listen-address="+rwAddr, "--web.enable-remote-write-receiver")
	for _, u := range []string{"http://" + fileAddr, "http://" + rwAddr} {
		expectSeries(ctx, t, u, `onchain_supply{window="day"}`, 1, map[string]string{"instance": expAddr})
	}
	// The read-back goes through Prometheus' query API, derived from the
	// remote-write URL, and finds every series.
	out := runBackfillOK(ctx, t, append(backfill, "--remote-write.url=http://"+rwAddr+"/api/v1/write")...)
	if !strings.Contains(out, "read_back=http://"+rwAddr+"/api/v1/query") || !strings.Contains(out, "series_dropped_by_target=0") {
		t.Errorf("the remote-write run does not read back through Prometheus' query API:\n%s", out)
	}

	want := map[string]map[int64]float64{}
	for _, w := range []string{"day", "hour", "block"} {
		want[w] = servedRows(ctx, t, b.upstream, w, b.from, b.to)
	}
	for name, addr := range map[string]string{"promtool": fileAddr, "remote write": rwAddr} {
		t.Run(name, func(t *testing.T) {
			for _, w := range []string{"day", "hour", "block"} {
				checkHistory(ctx, t, "http://"+addr, `onchain_supply{window="`+w+`"}`, expAddr, want[w], promStart)
			}
			stamps := map[int64]float64{}
			for ms := range want["day"] {
				stamps[ms] = float64(ms/1000 - 86400)
			}
			checkHistory(ctx, t, "http://"+addr, `onchain_data_timestamp_seconds{window="day"}`, expAddr, stamps, promStart)
		})
	}
}

// backfillRun is what a backfill end to end runs on: the fake upstream, a
// configuration of backfillConfig's supply series on it, and a backfill's
// arguments for them.
type backfillRun struct {
	dir, cfg string
	upstream string    // the fake's address
	from, to time.Time // days ago, at midnight, to 4 hours ago
	args     []string  // the backfill from from to to, labelled with the job
}

// newBackfillRun starts the fake upstream (in real time, as the exporter
// runs) for a backfill of the supply series in windows (a YAML list) from
// days ago.
func newBackfillRun(ctx context.Context, t *testing.T, days int, windows string) *backfillRun {
	t.Helper()
	t.Setenv("E2E_DATA_TOKEN", dataToken)
	b := &backfillRun{dir: t.TempDir()}
	b.upstream = testtool.StartFake(t, fakeapi.Options{Now: time.Now, DataToken: dataToken}).Srv.URL
	b.cfg = writeFile(t, b.dir, "onchain.yml", fill(backfillConfig, "{{URL}}", b.upstream, "[day, hour, block]", windows))
	b.from = time.Now().UTC().AddDate(0, 0, -days).Truncate(24 * time.Hour)
	b.to = time.Now().UTC().Add(-4 * time.Hour).Truncate(time.Minute)
	b.args = []string{"--config.file=" + b.cfg, "--from=" + b.from.Format(time.DateOnly), "--to=" + b.to.Format(time.RFC3339),
		"--label=job=onchain_exporter", "--storage.path=" + b.dir}
	return b
}

// runBackfillOK runs the backfill (runBackfill) and returns what it
// printed; it fails the test with that when the command fails.
func runBackfillOK(ctx context.Context, t *testing.T, args ...string) string {
	t.Helper()
	code, out := runBackfill(ctx, args...)
	if code != 0 {
		t.Fatalf("backfill %s: exit code %d\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

// runIn runs a program in dir and returns its output; it fails the test
// with the output when the program fails.
func runIn(ctx context.Context, t *testing.T, dir string, env []string, bin string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(cmd.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, out)
	}
	return string(out)
}

// servedRows asks the fake directly for the supply of the rows of a
// window whose interval ends (block rows: whose block is) between from
// and to, keyed by that time in Unix milliseconds.
func servedRows(ctx context.Context, t *testing.T, base, window string, from, to time.Time) map[int64]float64 {
	t.Helper()
	step := map[string]time.Duration{"day": 24 * time.Hour, "hour": time.Hour}[window]
	q := url.Values{"window": {window}, "from": {from.Format("20060102T150405")}, "to": {to.Add(-step).Format("20060102T150405")}, "limit": {"100000"}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/btc/network-data/supply?"+q.Encode(), nil)
	req.Header.Set("Authorization", "Bearer "+dataToken)
	body, err := do(req)
	if err != nil {
		t.Fatal(err)
	}
	var ans struct {
		Result struct {
			Data []struct {
				Date   string  `json:"date"`
				Supply float64 `json:"supply_total"`
			} `json:"data"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &ans); err != nil {
		t.Fatal(err)
	}
	out := map[int64]float64{}
	for _, r := range ans.Result.Data {
		at, err := time.Parse(time.DateTime, r.Date)
		if err != nil {
			at, err = time.Parse(time.DateOnly, r.Date)
		}
		if err != nil {
			t.Fatalf("row date %q", r.Date)
		}
		out[at.Add(step).UnixMilli()] = r.Supply
	}
	if len(out) < 25 {
		t.Fatalf("%s: the fake served %d rows", window, len(out))
	}
	return out
}

// checkHistory reads every raw sample of q over the last 31 days and
// checks that there is one series, the job and instance of the scrape's,
// holding each past row at its time with its value, then the live
// samples, all after the last past row.
func checkHistory(ctx context.Context, t *testing.T, promURL, q, instance string, want map[int64]float64, live time.Time) {
	t.Helper()
	var series []matrixSeries
	eventually(ctx, t, "raw samples of "+q, func() error {
		var err error
		if series, err = queryMatrix(ctx, promURL, q+"[31d]"); err != nil {
			return err
		}
		if len(series) != 1 {
			return fmt.Errorf("%d series, want 1: %v", len(series), series)
		}
		if n := len(series[0].Values); n < len(want)+2 {
			return fmt.Errorf("%d samples, want the %d past rows and live ones", n, len(want))
		}
		return nil
	})
	s := series[0]
	if s.Metric["job"] != "onchain_exporter" || s.Metric["instance"] != instance {
		t.Errorf("%s: labels %v", q, s.Metric)
	}
	past, liveSeen := 0, 0
	for i, v := range s.Values {
		if i > 0 && v.ms <= s.Values[i-1].ms {
			t.Fatalf("%s: samples out of order at %d", q, v.ms)
		}
		if v.ms < live.UnixMilli() {
			if liveSeen > 0 {
				t.Fatalf("%s: a past sample after a live one", q)
			}
			wv, ok := want[v.ms]
			if !ok || math.Abs(wv-v.v) > 1e-9*math.Abs(wv) {
				t.Errorf("%s: sample %s = %g, the fake served %g (row there: %v)", q, time.UnixMilli(v.ms).UTC(), v.v, wv, ok)
			}
			past++
			continue
		}
		liveSeen++
	}
	if past != len(want) || liveSeen == 0 {
		t.Errorf("%s: %d past samples (want %d) and %d live ones", q, past, len(want), liveSeen)
	}
}

type matrixSeries struct {
	Metric map[string]string
	Values []struct {
		ms int64
		v  float64
	}
}

// queryMatrix runs an instant query of a range selector: raw samples.
func queryMatrix(ctx context.Context, promURL, q string) ([]matrixSeries, error) {
	body, err := get(ctx, promURL+"/api/v1/query?query="+url.QueryEscape(q))
	if err != nil {
		return nil, err
	}
	var r struct {
		Data struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Values [][2]any          `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, err
	}
	var out []matrixSeries
	for _, res := range r.Data.Result {
		s := matrixSeries{Metric: res.Metric}
		for _, p := range res.Values {
			sec, _ := p[0].(float64)
			str, _ := p[1].(string)
			v, err := strconv.ParseFloat(str, 64)
			if err != nil {
				return nil, err
			}
			s.Values = append(s.Values, struct {
				ms int64
				v  float64
			}{int64(math.Round(sec * 1000)), v})
		}
		out = append(out, s)
	}
	return out, nil
}

// TestBackfillVictoriaMetricsRetention: VictoriaMetrics with Debian's
// default retention (one month) answers 204 to 60 days of history and
// keeps the last month of it. The backfill reads the series back, says
// which samples the target dropped and records nothing, so that, run
// again once VictoriaMetrics keeps 100 days, it sends the history again,
// and VictoriaMetrics then holds every row the fake served.
func TestBackfillVictoriaMetricsRetention(t *testing.T) {
	vm := testtool.Require(t, "install the Debian package victoria-metrics", "victoria-metrics")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	b := newBackfillRun(ctx, t, 60, "[day, hour]")
	dir := b.dir
	vmAddr := freeAddr(t)
	startVM := func(retention string) *process {
		p := start(t, dir, "victoria-metrics-"+retention, vm, nil, "-storageDataPath="+filepath.Join(dir, "vm"),
			"-httpListenAddr="+vmAddr, "-retentionPeriod="+retention)
		eventually(ctx, t, "victoria-metrics answers", func() error { _, err := get(ctx, "http://"+vmAddr+"/health"); return err })
		return p
	}
	backfill := append(b.args, "--label=instance=exporter:9799", "--remote-write.url=http://"+vmAddr+"/api/v1/write")

	p := startVM("1") // months: the Debian package's default
	// What a month's retention drops never shows: the read-back wait
	// only says how soon it is reported. A sample kept that shows late
	// (a loaded machine) changes neither the exit code nor the count of
	// series dropped, each of which lacks its oldest sample.
	code, out := runBackfill(ctx, append(backfill, "--remote-write.read-back-wait=10s")...)
	if code != 1 {
		t.Fatalf("a month's retention: exit code %d, want 1\n%s", code, out)
	}
	for _, want := range []string{"the target acknowledged samples it does not hold", "its oldest sample, at " + b.from.Add(24*time.Hour).Format(time.RFC3339),
		"-retentionPeriod", "series_dropped_by_target=6"} {
		if !strings.Contains(out, want) {
			t.Errorf("the run does not say %q:\n%s", want, out)
		}
	}
	progress, _ := filepath.Glob(filepath.Join(dir, "backfill-*.json"))
	if len(progress) != 1 {
		t.Fatalf("progress files %v", progress)
	}
	var rec struct{ Series map[string]any }
	if b, err := os.ReadFile(progress[0]); err != nil || json.Unmarshal(b, &rec) != nil || len(rec.Series) != 0 {
		t.Fatalf("the progress file records %d series (%v), want none", len(rec.Series), err)
	}

	_ = p.cmd.Process.Signal(os.Interrupt)
	_ = p.cmd.Wait()
	startVM("100d")
	runBackfillOK(ctx, t, backfill...)
	// VictoriaMetrics makes what it acknowledged searchable a moment
	// later, longer under load: what it holds is asked until it shows.
	for _, w := range []string{"day", "hour"} {
		want := servedRows(ctx, t, b.upstream, w, b.from, b.to)
		eventually(ctx, t, "VictoriaMetrics holds every "+w+" row the fake served", func() error {
			series, err := queryMatrix(ctx, "http://"+vmAddr, `onchain_supply{window="`+w+`"}[70d]`)
			if err != nil || len(series) != 1 {
				return fmt.Errorf("%d series, %v", len(series), err)
			}
			got := map[int64]float64{}
			for _, v := range series[0].Values {
				got[v.ms] = v.v
			}
			for ms, v := range want {
				if g, ok := got[ms]; !ok || math.Abs(g-v) > 1e-9*math.Abs(v) {
					return fmt.Errorf("sample at %s = %g (there: %v), the fake served %g", time.UnixMilli(ms).UTC().Format(time.RFC3339), g, ok, v)
				}
			}
			if len(got) != len(want) {
				return fmt.Errorf("%d samples, %d rows served", len(got), len(want))
			}
			return nil
		})
	}
}
