package e2e

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/alecthomas/kingpin/v2"
	"github.com/go-kit/log"

	"github.com/onchain-exporter/onchain_exporter/app"
	"github.com/onchain-exporter/onchain_exporter/backfill"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// exporter is the exporter run in this process (package app), serving on
// a free port of 127.0.0.1.
type exporter struct {
	name    string
	app     *app.App
	addr    string // host:port
	url     string // http://addr
	logPath string
	stopped bool
}

// startExporter runs the exporter on the configuration file cfg with the
// flags' defaults, its storage in dir, changed by opts (nil: none); its
// log goes to dir/name.log. t.Cleanup stops it and, on failure, prints
// the tail of its log.
func startExporter(t *testing.T, dir, name, cfg string, opts func(*app.Options)) *exporter {
	t.Helper()
	logPath := filepath.Join(dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	o := app.DefaultOptions()
	addrs := []string{"127.0.0.1:0"}
	o.Web.WebListenAddresses = &addrs
	o.ConfigFile, o.StoragePath, o.StorageSet = cfg, filepath.Join(dir, name+"-data"), true
	o.Logger, o.Slogger = app.NewLoggers(f, "info", "logfmt")
	if opts != nil {
		opts(&o)
	}
	a, err := app.New(o)
	if err != nil {
		f.Close()
		t.Fatalf("%s: %v\n%s", name, err, tail(logPath, 40))
	}
	e := &exporter{name: name, app: a, logPath: logPath}
	t.Cleanup(func() {
		e.stop()
		f.Close()
		if t.Failed() {
			t.Logf("---- %s log (tail) ----\n%s", name, tail(logPath, 40))
		}
	})
	if err := a.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	e.addr = a.Addr()
	e.url = "http://" + e.addr
	return e
}

// logged returns what the exporter logged so far.
func (e *exporter) logged(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(e.logPath)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// stop stops the exporter, once.
func (e *exporter) stop() {
	if !e.stopped {
		e.stopped = true
		e.app.Stop()
	}
}

// runBackfill runs `onchain_exporter backfill` in this process, as package
// main runs it: the command's flags and the application's it reads
// (--config.file, --storage.path). It returns the command's exit code and
// what it printed.
func runBackfill(ctx context.Context, args ...string) (int, string) {
	a := kingpin.New(app.Name, "")
	out := &testtool.LogBuffer{}
	a.UsageWriter(out)
	a.ErrorWriter(out)
	g := backfill.Globals{NewLogger: func(w io.Writer) log.Logger { l, _ := app.NewLoggers(w, "info", "logfmt"); return l }}
	a.Flag("config.file", "").Default("onchain.yml").StringVar(&g.ConfigFile)
	a.Flag("storage.path", "").Default(app.DefaultStoragePath).StringVar(&g.StoragePath)
	c := backfill.AddCommand(a)
	if _, err := a.Parse(append([]string{"backfill"}, args...)); err != nil {
		return 2, fmt.Sprintf("%s: %v\n", app.Name, err)
	}
	code := c.Run(ctx, g, out, out)
	return code, out.String()
}
