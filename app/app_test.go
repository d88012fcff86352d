package app

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/internal/clock"
	"github.com/onchain-exporter/onchain_exporter/testtool"
	"github.com/prometheus/exporter-toolkit/web"
)

// fakeUpstream is the fake upstream on 127.0.0.1, recording the credential
// each request carried.
type fakeUpstream struct {
	*httptest.Server
	fake *fakeapi.Server
	mu   sync.Mutex
	auth map[string][]string // path -> credentials seen, in order
}

func newFakeUpstream(t *testing.T, o fakeapi.Options) *fakeUpstream {
	t.Helper()
	u := &fakeUpstream{fake: fakeapi.New(o), auth: map[string][]string{}}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cred := r.Header.Get("Authorization") + r.Header.Get("X-API-Key") + r.URL.Query().Get("api_key")
		u.mu.Lock()
		u.auth[r.URL.Path] = append(u.auth[r.URL.Path], cred)
		u.mu.Unlock()
		u.fake.ServeHTTP(w, r)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *fakeUpstream) credentials(path string) []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.auth[path]...)
}

// exporter is an App serving on a free 127.0.0.1 port.
type exporter struct {
	t              *testing.T
	app            *App
	base           string
	client         *http.Client
	user, password string
	stdout, stderr *testtool.LogBuffer
	answers        *testtool.LogBuffer // every HTTP answer received, headers included
	stopped        bool
}

// flags are the command line's flags a test gives (--config.file, --demo,
// --web.telemetry-path, --web.config.file, --storage.path, --log.level,
// --log.format); the others keep their defaults.
type flags struct {
	config, metricsPath, webConfig string
	demo                           bool
	storage                        *string // nil: startRun's temporary directory, startRunIn's default
	logLevel, logFormat            string
	clock                          clock.Clock // nil: the real clock
}

// options are the Options of f, logging to stderr.
func (f flags) options(stderr io.Writer) Options {
	o := DefaultOptions()
	if f.config != "" {
		o.ConfigFile = f.config
	}
	if f.metricsPath != "" {
		o.MetricsPath = f.metricsPath
	}
	o.Demo = f.demo
	o.Clock = f.clock
	if f.storage != nil {
		o.StoragePath, o.StorageSet = *f.storage, true
	}
	addrs, systemd, webConfig := []string{"127.0.0.1:0"}, false, f.webConfig
	o.Web = &web.FlagConfig{WebListenAddresses: &addrs, WebSystemdSocket: &systemd, WebConfigFile: &webConfig}
	o.Logger, o.Slogger = NewLoggers(stderr, cmp.Or(f.logLevel, "info"), cmp.Or(f.logFormat, "logfmt"))
	return o
}

// startRun runs the exporter with f and waits until it serves; its state
// is kept in a temporary directory unless f says where.
func startRun(t *testing.T, client *http.Client, scheme string, f flags) *exporter {
	t.Helper()
	if f.storage == nil {
		dir := t.TempDir()
		f.storage = &dir
	}
	return startRunIn(t, client, scheme, f)
}

// startRunIn is startRun with the flags as given: the state is kept
// where they say, or in the default place.
func startRunIn(t *testing.T, client *http.Client, scheme string, f flags) *exporter {
	t.Helper()
	e := &exporter{t: t, client: client, stdout: &testtool.LogBuffer{}, stderr: &testtool.LogBuffer{},
		answers: &testtool.LogBuffer{}}
	a, err := New(f.options(e.stderr))
	if err != nil {
		t.Fatalf("New: %v:\n%s", err, e.stderr.String())
	}
	if err := a.Start(); err != nil {
		a.Stop()
		t.Fatalf("Start: %v:\n%s", err, e.stderr.String())
	}
	e.app, e.base = a, scheme+"://"+a.Addr()
	t.Cleanup(e.stop)
	deadline := time.Now().Add(15 * time.Second)
	for {
		select {
		case err := <-a.Done():
			a.served <- err
			t.Fatalf("serving ended: %v:\n%s", err, e.stderr.String())
		default:
		}
		if resp, err := e.do(http.MethodGet, "/-/healthy"); err == nil {
			resp.Body.Close()
			return e
		}
		if time.Now().After(deadline) {
			t.Fatalf("the exporter does not answer:\n%s", e.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop ends the exporter as a service manager's SIGTERM does (Stop), and
// checks that serving ended by it.
func (e *exporter) stop() {
	if e.stopped {
		return
	}
	e.stopped = true
	done := make(chan struct{})
	go func() { defer close(done); e.app.Stop() }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		e.t.Fatal("the exporter did not stop")
	}
	if err := <-e.app.Done(); !errors.Is(err, http.ErrServerClosed) {
		e.t.Errorf("serving ended with %v, not by Stop:\n%s", err, e.stderr.String())
	}
}

func (e *exporter) do(method, path string, header ...string) (*http.Response, error) {
	req, err := http.NewRequest(method, e.base+path, nil)
	if err != nil {
		return nil, err
	}
	if e.user != "" {
		req.SetBasicAuth(e.user, e.password)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return e.client.Do(req)
}

// get requests path and returns the status and body, recording both.
func (e *exporter) get(method, path string, header ...string) (int, string) {
	e.t.Helper()
	resp, err := e.do(method, path, header...)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	var h bytes.Buffer
	_ = resp.Header.Write(&h)
	fmt.Fprintf(e.answers, "%s %s -> %d\n%s\n%s\n", method, path, resp.StatusCode, h.String(), b)
	return resp.StatusCode, string(b)
}

// metrics scrapes and fails the test on anything but 200.
func (e *exporter) metrics() string {
	e.t.Helper()
	code, body := e.get(http.MethodGet, "/metrics", "X-Prometheus-Scrape-Timeout-Seconds", "5")
	if code != http.StatusOK {
		e.t.Fatalf("/metrics: HTTP %d: %s", code, body)
	}
	return body
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

const (
	supplyPath = "/v1/btc/network-data/supply"
	oiPath     = "/v1/btc/market-data/open-interest"
	pnlPath    = "/v1/btc/network-indicator/pnl-utxo"
)

// reloadConfig is the base of the reload tests: supply is cached for
// hours by its schedule, open interest refreshes every second.
func reloadConfig(url, tokenFile string, extra string) string {
	return fmt.Sprintf(`
data:
  url: %q
  token_file: %q
  metrics:
    - path: %s
      window: day
    - path: %s
      window: hour
      exchange: binance
      cache_ttl: 1s
%s`, url, tokenFile, supplyPath, oiPath, extra)
}

const pnlEntry = "    - path: " + pnlPath + "\n"

// TestReload reloads through POST /-/reload and Reload (package main's
// SIGHUP): a good file is put in force with the cache of surviving series
// kept and the credential read anew; a bad file keeps the old
// configuration, answers 500 with the error, and sets the reload metrics.
func TestReload(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	up := newFakeUpstream(t, fakeapi.Options{})
	dir := t.TempDir()
	cfgFile, tokenFile := filepath.Join(dir, "onchain.yml"), filepath.Join(dir, "token")
	writeFile(t, tokenFile, "token-A\n")
	writeFile(t, cfgFile, reloadConfig(up.URL, tokenFile, ""))
	e := startRun(t, http.DefaultClient, "http", flags{config: cfgFile})

	body := e.metrics()
	if valueOf(body, "onchain_exporter_config_last_reload_successful ") != "1" {
		t.Fatalf("reload_successful after start:\n%s", body)
	}
	okTime := valueOf(body, "onchain_exporter_config_last_reload_success_timestamp_seconds ")
	if okTime == "" || okTime == "0" {
		t.Fatalf("success timestamp %q", okTime)
	}
	if got := up.credentials(supplyPath); len(got) != 1 || got[0] != "Bearer token-A" {
		t.Fatalf("supply calls with credentials %q", got)
	}
	landingShows(t, e, cfgFile, "2 tuples")

	// POST, good file, rotated credential, one more series.
	writeFile(t, tokenFile, "token-B\n")
	writeFile(t, cfgFile, reloadConfig(up.URL, tokenFile, pnlEntry))
	time.Sleep(20 * time.Millisecond) // a success timestamp later than the first
	if code, answer := e.get(http.MethodPost, "/-/reload"); code != http.StatusOK {
		t.Fatalf("good reload: HTTP %d: %s", code, answer)
	}
	// A tuple a reload adds is served once its first refresh ends: the
	// reload holds no scrape for it.
	body = e.metrics()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(body, "onchain_utxo_profit_amount{") && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		body = e.metrics()
	}
	if !strings.Contains(body, "onchain_utxo_profit_amount{") {
		t.Errorf("the added series is not served after 30 s:\n%s", body)
	}
	if got := up.credentials(supplyPath); len(got) != 1 {
		t.Errorf("supply, cached and not due, was called again on reload: %q", got)
	}
	if got := up.credentials(pnlPath); len(got) != 1 || got[0] != "Bearer token-B" {
		t.Errorf("the new series was called with %q, want the rotated token", got)
	}
	landingShows(t, e, cfgFile, "3 tuples")
	time.Sleep(1100 * time.Millisecond) // open interest is due again
	e.metrics()
	if got := up.credentials(oiPath); len(got) < 2 || got[len(got)-1] != "Bearer token-B" {
		t.Errorf("a surviving series was refreshed with %q, want the rotated token last", got)
	}
	good := valueOf(body, "onchain_exporter_config_last_reload_success_timestamp_seconds ")
	if v := valueOf(body, "onchain_exporter_config_last_reload_successful "); v != "1" || !later(good, okTime) {
		t.Errorf("after a good reload: successful %q, timestamp %s (before %s)", v, good, okTime)
	}

	// POST, bad file: 500 with the error, the old configuration stays.
	writeFile(t, cfgFile, reloadConfig(up.URL, tokenFile, pnlEntry)+"    - path: /v1/btc/market-data/open-interest\n      window: week\n")
	code, answer := e.get(http.MethodPost, "/-/reload")
	if code != http.StatusInternalServerError || !strings.Contains(answer, cfgFile+":14: data.metrics[3].window: \"week\" is not allowed") {
		t.Errorf("bad reload: HTTP %d: %s", code, answer)
	}
	body = e.metrics()
	if v := valueOf(body, "onchain_exporter_config_last_reload_successful "); v != "0" {
		t.Errorf("reload_successful = %q after a bad file", v)
	}
	if v := valueOf(body, "onchain_exporter_config_last_reload_success_timestamp_seconds "); v != good {
		t.Errorf("success timestamp moved on a failed reload: %s -> %s", good, v)
	}
	if !strings.Contains(body, "onchain_utxo_profit_amount{") || valueOf(body, `onchain_exporter_tuples{api="data"}`) != "3" {
		t.Errorf("the old configuration is not in force after a bad file:\n%s", body)
	}
	landingShows(t, e, cfgFile, "3 tuples")

	// The same through Reload: a bad file first, then a good one that
	// drops the added series.
	writeFile(t, tokenFile, "")
	before := strings.Count(e.stderr.String(), "configuration reload failed")
	body = reloadUntil(t, e, func(string) bool {
		return strings.Count(e.stderr.String(), "configuration reload failed") > before
	})
	if v := valueOf(body, "onchain_exporter_config_last_reload_successful "); v != "0" {
		t.Errorf("reload_successful = %q after Reload with an empty token file", v)
	}
	if !strings.Contains(e.stderr.String(), tokenFile+" is empty") {
		t.Errorf("the log does not say why the reload failed:\n%s", e.stderr.String())
	}
	writeFile(t, tokenFile, "token-C")
	writeFile(t, cfgFile, reloadConfig(up.URL, tokenFile, ""))
	// The new tuples are in force before Reload records its success: wait
	// for both, or a scrape between the two reads the failure before.
	body = reloadUntil(t, e, func(b string) bool {
		return valueOf(b, `onchain_exporter_tuples{api="data"}`) == "2" &&
			valueOf(b, "onchain_exporter_config_last_reload_successful ") == "1"
	})
	if strings.Contains(body, "onchain_utxo_profit_amount{") {
		t.Error("a series dropped by the reload is still served")
	}
	if got := up.credentials(supplyPath); len(got) != 1 {
		t.Errorf("supply was called again by the reloads: %q", got)
	}

	if code, _ := e.get(http.MethodGet, "/-/reload"); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /-/reload: HTTP %d, want 405", code)
	}

	// Once Stop has returned, nothing of it is left running.
	e.stop()
	http.DefaultClient.CloseIdleConnections()
	up.Close()
	goleak.VerifyNone(t, ignore)
}

// landingShows checks that the landing page shows the configuration in
// force: its file and the data API's tuple count.
func landingShows(t *testing.T, e *exporter, file, dataTuples string) {
	t.Helper()
	code, page := e.get(http.MethodGet, "/")
	if code != http.StatusOK || !strings.Contains(page, "<code>"+file+"</code>") ||
		!strings.Contains(page, `<a href="/metrics?collect[]=data">Metrics of the data API only</a>: `+dataTuples+"<") {
		t.Errorf("the landing page does not show %s with %s: HTTP %d\n%s", file, dataTuples, code, page)
	}
}

// reloadUntil reloads as SIGHUP does (Reload) until done says the
// reload happened.
func reloadUntil(t *testing.T, e *exporter, done func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_ = e.app.Reload()
		time.Sleep(100 * time.Millisecond)
		body := e.metrics()
		if done(body) {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("Reload: no reload seen:\n%s", e.stderr.String())
		}
	}
}

func later(a, b string) bool {
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	return err1 == nil && err2 == nil && x > y
}

var valueOf = testtool.ValueOf

// A first run without a configuration file says what to do (check's
// TestMissingConfigFile: and doing it works), and exits.
func TestMissingConfigFileServing(t *testing.T) {
	file := filepath.Join(t.TempDir(), "onchain.yml")
	hint := "no configuration file: to try the exporter without a real upstream, run it with --demo; " +
		"to configure it, copy examples/config.yml to " + file + ", set ONCHAIN_DATA_TOKEN and edit its metrics"
	var errOut bytes.Buffer
	f := flags{config: file}
	if _, err := New(f.options(&errOut)); err == nil || !strings.Contains(errOut.String(), fmt.Sprintf("hint=%q", hint)) {
		t.Errorf("serving: error %v, stderr %q; want an error and the hint", err, errOut.String())
	}
}
