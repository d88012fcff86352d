package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/internal/testtool"
)

// TestMain keeps SIGHUP and SIGTERM from ending the test binary: run()
// handles both while it runs, and the tests send them to this process.
func TestMain(m *testing.M) {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP, syscall.SIGTERM)
	os.Exit(m.Run())
}

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

// exporter is run() serving on a free 127.0.0.1 port.
type exporter struct {
	t              *testing.T
	base           string
	client         *http.Client
	user, password string
	stdout, stderr *testtool.LogBuffer
	answers        *testtool.LogBuffer // every HTTP answer received, headers included
	done           chan int
}

// startRun runs the exporter with args and waits until it serves.
func startRun(t *testing.T, client *http.Client, scheme string, args ...string) *exporter {
	t.Helper()
	return startRunIn(t, client, scheme, append([]string{"--storage.path=" + t.TempDir()}, args...)...)
}

// startRunIn is startRun with the arguments as given: the state is kept
// where they say, or in the default place.
func startRunIn(t *testing.T, client *http.Client, scheme string, args ...string) *exporter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	e := &exporter{t: t, base: scheme + "://" + addr, client: client, stdout: &testtool.LogBuffer{}, stderr: &testtool.LogBuffer{},
		answers: &testtool.LogBuffer{}, done: make(chan int, 1)}
	args = append(args, "--web.listen-address="+addr)
	go func() { e.done <- run(args, e.stdout, e.stderr) }()
	t.Cleanup(e.stop)
	deadline := time.Now().Add(15 * time.Second)
	for {
		select {
		case code := <-e.done:
			e.done <- code
			t.Fatalf("run() exited with %d:\n%s", code, e.stderr.String())
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

// stop ends run() the way a service manager does, with SIGTERM.
func (e *exporter) stop() {
	select {
	case code := <-e.done:
		e.done <- code
		return
	default:
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		e.t.Fatal(err)
	}
	select {
	case code := <-e.done:
		e.done <- code
		if code != 0 {
			e.t.Errorf("run() exited with %d after SIGTERM:\n%s", code, e.stderr.String())
		}
	case <-time.After(15 * time.Second):
		e.t.Fatal("run() did not stop after SIGTERM")
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

// TestReload reloads through POST /-/reload and SIGHUP: a good file is put
// in force with the cache of surviving series kept and the credential read
// anew; a bad file keeps the old configuration, answers 500 with the
// error, and sets the reload metrics.
func TestReload(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	up := newFakeUpstream(t, fakeapi.Options{})
	dir := t.TempDir()
	cfgFile, tokenFile := filepath.Join(dir, "onchain.yml"), filepath.Join(dir, "token")
	writeFile(t, tokenFile, "token-A\n")
	writeFile(t, cfgFile, reloadConfig(up.URL, tokenFile, ""))
	e := startRun(t, http.DefaultClient, "http", "--config.file="+cfgFile)

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

	// The same through SIGHUP: a bad file first, then a good one that
	// drops the added series.
	writeFile(t, tokenFile, "")
	before := strings.Count(e.stderr.String(), "configuration reload failed")
	body = sighupUntil(t, e, func(string) bool {
		return strings.Count(e.stderr.String(), "configuration reload failed") > before
	})
	if v := valueOf(body, "onchain_exporter_config_last_reload_successful "); v != "0" {
		t.Errorf("reload_successful = %q after SIGHUP with an empty token file", v)
	}
	if !strings.Contains(e.stderr.String(), tokenFile+" is empty") {
		t.Errorf("the log does not say why the reload failed:\n%s", e.stderr.String())
	}
	writeFile(t, tokenFile, "token-C")
	writeFile(t, cfgFile, reloadConfig(up.URL, tokenFile, ""))
	// The new tuples are in force before Reload records its success: wait
	// for both, or a scrape between the two reads the failure before.
	body = sighupUntil(t, e, func(b string) bool {
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

	// Once run() has returned, nothing of it is left running.
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

// sighupUntil sends SIGHUP until done says the reload happened: the
// signal handler of run() may not be listening at the very first one.
func sighupUntil(t *testing.T, e *exporter, done func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		body := e.metrics()
		if done(body) {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("SIGHUP: no reload seen:\n%s", e.stderr.String())
		}
	}
}

func later(a, b string) bool {
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	return err1 == nil && err2 == nil && x > y
}

// SIGTERM is logged, then the end of the shutdown; every line, the
// exporter-toolkit's included, carries one time key, ts, in either format.
func TestShutdownAndLogLines(t *testing.T) {
	for _, format := range []string{"logfmt", "json"} {
		t.Run(format, func(t *testing.T) {
			e := startRun(t, http.DefaultClient, "http", "--demo", "--log.format="+format)
			e.metrics()
			e.stop()
			lines := strings.Split(strings.TrimSpace(e.stderr.String()), "\n")
			ts, timeKey := "ts=", "time="
			shutdown, stopped := `msg="shutting down" signal=terminated`, "msg=stopped"
			if format == "json" {
				ts, timeKey = `"ts":`, `"time":`
				shutdown, stopped = `"msg":"shutting down","signal":"terminated"`, `"msg":"stopped"`
			}
			toolkit := false
			for _, l := range lines {
				if strings.Count(l, ts) != 1 || strings.Contains(l, timeKey) {
					t.Errorf("not one %s and no %s: %s", ts, timeKey, l)
				}
				toolkit = toolkit || strings.Contains(l, "Listening on")
			}
			if !toolkit {
				t.Errorf("no line of the exporter-toolkit to check:\n%s", e.stderr.String())
			}
			// "stopped" comes last, after everything run() closes.
			at := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, shutdown) })
			if n := len(lines); at < 0 || at == n-1 || !strings.Contains(lines[n-1], stopped) {
				t.Errorf("the log does not end with the shutdown:\n%s", e.stderr.String())
			}
		})
	}
}

var valueOf = testtool.ValueOf
