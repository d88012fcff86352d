package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// freeAddr returns a 127.0.0.1 address whose port was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// writeFile writes content to name in dir and returns the path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// process is a started program (Prometheus, Alertmanager,
// VictoriaMetrics) whose output goes to a log file that the test prints
// when it fails.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
}

// start runs bin with args and env; t.Cleanup kills it and, on failure,
// prints the tail of its log.
func start(t *testing.T, dir, name, bin string, env []string, args ...string) *process {
	t.Helper()
	logPath := filepath.Join(dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), env...)
	dieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	p := &process{name: name, cmd: cmd, log: logPath}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		f.Close()
		if t.Failed() {
			t.Logf("---- %s log (tail) ----\n%s", name, tail(logPath, 40))
		}
	})
	return p
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// waitLimit bounds one wait, so that one broken step reports before the
// test's time is spent: generous, since a loaded machine is slow to do
// what it does, and a step that works takes seconds.
const waitLimit = 2 * time.Minute

// eventually calls check every 250 ms until it returns nil, or fails with
// the last error after waitLimit or when ctx ends.
func eventually(ctx context.Context, t *testing.T, what string, check func() error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, waitLimit)
	defer cancel()
	var err error
	for {
		if err = check(); err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: gave up: %v (last error: %v)", what, ctx.Err(), err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// get fetches url and returns the body of a 200 answer.
func get(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	return do(req)
}

func post(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
	if err != nil {
		return nil, err
	}
	return do(req)
}

func do(req *http.Request) ([]byte, error) {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return body, fmt.Errorf("%s %s: %s: %s", req.Method, req.URL, resp.Status, strings.TrimSpace(string(body)))
	}
	return body, nil
}

// sample is one series of a Prometheus instant-query result.
type sample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// query runs an instant query against Prometheus's HTTP API.
func query(ctx context.Context, promURL, q string) ([]sample, error) {
	body, err := get(ctx, promURL+"/api/v1/query?query="+url.QueryEscape(q))
	if err != nil {
		return nil, err
	}
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string   `json:"resultType"`
			Result     []sample `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, err
	}
	if r.Status != "success" {
		return nil, errors.New(r.Error)
	}
	return r.Data.Result, nil
}

// notification is one alert of an Alertmanager webhook message.
type notification struct {
	Status string            `json:"status"`
	Labels map[string]string `json:"labels"`
}

// webhook records the alerts Alertmanager sends it.
type webhook struct {
	mu     sync.Mutex
	alerts []notification
}

func (h *webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var msg struct {
		Alerts []notification `json:"alerts"`
	}
	if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.alerts = append(h.alerts, msg.Alerts...)
	h.mu.Unlock()
}

// received reports whether an alert named name with status and the given
// labels has arrived.
func (h *webhook) received(name, status string, labels map[string]string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var seen []string
	for _, a := range h.alerts {
		if a.Labels["alertname"] != name {
			seen = append(seen, a.Labels["alertname"]+"/"+a.Status)
			continue
		}
		match := a.Status == status
		for k, v := range labels {
			match = match && a.Labels[k] == v
		}
		if match {
			return nil
		}
		seen = append(seen, fmt.Sprintf("%s/%s%v", name, a.Status, a.Labels))
	}
	return fmt.Errorf("no %s notification of %s%v yet (received: %v)", status, name, labels, seen)
}
