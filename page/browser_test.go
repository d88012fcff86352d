package page

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// The browser tests of this package drive headless chromium over the
// DevTools protocol on a pipe (--remote-debugging-pipe: chromium reads
// the test's messages on its fd 3 and answers on its fd 4, each a JSON
// object ended by a NUL): the test asks the loaded document what it holds
// and where it draws it, as an operator's browser lays it out. The page
// itself carries no script; the expressions are the test's. As
// app/landing_test.go's browser tests do, chromium is Debian's, a test
// without it fails under CI=true and is skipped elsewhere, and pictures
// go to $ONCHAIN_ARTIFACTS.

// updatePictures rewrites the pictures of docs/ this package's browser
// tests take.
var updatePictures = flag.Bool("update-screenshot", false, "rewrite docs/page-series.png, the picture of a series' view, from TestSeriesViewInBrowser")

// chromiumPath finds Debian's chromium: under CI=true a test without it
// fails, elsewhere it is skipped.
func chromiumPath(t *testing.T) string {
	t.Helper()
	return testtool.Require(t, "apt-get install -y chromium", "chromium", "chromium-browser")
}

// browser is one headless chromium and the tab the test drives.
type browser struct {
	t       *testing.T
	cmd     *exec.Cmd
	in      io.WriteCloser // chromium's fd 3
	out     *bufio.Reader  // chromium's fd 4
	stderr  *bytes.Buffer
	mu      sync.Mutex
	id      int
	session string
}

// newBrowser starts chromium with a window of width × height and opens a
// blank tab; the test's end stops it.
func newBrowser(t *testing.T, width, height int) *browser {
	t.Helper()
	bin := chromiumPath(t)
	toChrome, in, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	out, fromChrome, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	b := &browser{t: t, in: in, out: bufio.NewReader(out), stderr: &bytes.Buffer{}}
	b.cmd = exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
		"--remote-debugging-pipe", "--user-data-dir="+t.TempDir(), fmt.Sprintf("--window-size=%d,%d", width, height), "about:blank")
	b.cmd.ExtraFiles = []*os.File{toChrome, fromChrome}
	b.cmd.Stderr = b.stderr
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	toChrome.Close()
	fromChrome.Close()
	t.Cleanup(func() {
		in.Close()
		_ = b.cmd.Process.Kill()
		_ = b.cmd.Wait()
		out.Close()
	})
	var target struct{ TargetID string }
	b.call("Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var attached struct{ SessionID string }
	b.call("Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached)
	b.session = attached.SessionID
	b.call("Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}, nil)
	return b
}

// call sends one command (to the tab once attached) and reads its answer
// into result, skipping the events that come before it; within a minute.
func (b *browser) call(method string, params map[string]any, result any) {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.id++
	msg := map[string]any{"id": b.id, "method": method, "params": params}
	if b.session != "" {
		msg["sessionId"] = b.session
	}
	req, err := json.Marshal(msg)
	if err != nil {
		b.t.Fatal(err)
	}
	if _, err := b.in.Write(append(req, 0)); err != nil {
		b.t.Fatalf("chromium %s: %v\n%s", method, err, b.stderr)
	}
	type answer struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	done := make(chan error, 1)
	var got answer
	go func() {
		for {
			line, err := b.out.ReadBytes(0)
			if err != nil {
				done <- err
				return
			}
			var a answer
			if err := json.Unmarshal(line[:len(line)-1], &a); err != nil {
				done <- err
				return
			}
			if a.ID == b.id {
				got = a
				done <- nil
				return
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	select {
	case err := <-done:
		if err != nil {
			b.t.Fatalf("chromium %s: %v\n%s", method, err, b.stderr)
		}
	case <-ctx.Done():
		b.t.Fatalf("chromium %s: no answer in a minute\n%s", method, b.stderr)
	}
	if got.Error != nil {
		b.t.Fatalf("chromium %s: %s", method, got.Error.Message)
	}
	if result != nil {
		if err := json.Unmarshal(got.Result, result); err != nil {
			b.t.Fatalf("chromium %s: %v in %s", method, err, got.Result)
		}
	}
}

// open loads a URL in the tab and waits until the document is loaded.
func (b *browser) open(url string) {
	b.t.Helper()
	b.call("Page.navigate", map[string]any{"url": url}, nil)
	for deadline := time.Now().Add(time.Minute); ; {
		var ready string
		b.eval(`document.readyState + " " + location.href`, &ready)
		if ready == "complete "+url {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("%s never loaded: %s", url, ready)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// eval evaluates a JavaScript expression in the tab and reads its value
// (JSON) into v.
func (b *browser) eval(expr string, v any) {
	b.t.Helper()
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	b.call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &r)
	if e := r.ExceptionDetails; e != nil {
		b.t.Fatalf("%s: %s %s", expr, e.Text, e.Exception.Description)
	}
	if err := json.Unmarshal(r.Result.Value, v); err != nil {
		b.t.Fatalf("%s: %v in %s", expr, err, r.Result.Value)
	}
}

// screenshot writes a picture of the whole document to the artifacts'
// directory ($ONCHAIN_ARTIFACTS, or onchain_exporter-artifacts in the
// temporary directory) and returns its path.
func (b *browser) screenshot(name string) string {
	b.t.Helper()
	var shot struct{ Data string }
	b.call("Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": false}, &shot)
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) || len(png) < 10_000 {
		b.t.Fatalf("chromium took no picture: %v (%d bytes)", errors.Join(err), len(png))
	}
	dir := os.Getenv("ONCHAIN_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "onchain_exporter-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	file := filepath.Join(dir, name)
	if err := os.WriteFile(file, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", file)
	return file
}
