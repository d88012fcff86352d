package check

import (
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/alecthomas/kingpin/v2"
	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

// TestMain runs the tests from the repository's root, so that they name
// its files (examples/config.yml) as the README and the output do.
func TestMain(m *testing.M) {
	if err := os.Chdir(".."); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

// run is the command line of the check as package main reads it:
// --config.check, --config.check.upstream, --config.file, --demo and
// --storage.path.
func run(args []string, stdout, stderr io.Writer) int {
	a := kingpin.New("onchain_exporter", "")
	var o Options
	a.Flag("config.file", "").Default("onchain.yml").StringVar(&o.ConfigFile)
	checkFlag := a.Flag("config.check", "").Bool()
	a.Flag("config.check.upstream", "").BoolVar(&o.Upstream)
	a.Flag("demo", "").BoolVar(&o.Demo)
	// Not the flag's default (onchain_exporter_data/ in the directory the
	// tests run in, which the README's steps leave in a checkout): a test
	// reads a storage directory only when it gives one.
	a.Flag("storage.path", "").Default(filepath.Join(os.TempDir(), "onchain-check-tests-no-storage")).StringVar(&o.StoragePath)
	if _, err := a.Parse(args); err != nil || !*checkFlag && !o.Upstream {
		panic(fmt.Sprintf("not a check: %q (%v)", args, err))
	}
	o.Logger = level.NewFilter(log.NewLogfmtLogger(log.NewSyncWriter(stderr)), level.AllowInfo())
	return Run(stdout, stderr, o)
}

// fakeUpstream is the fake upstream on 127.0.0.1.
type fakeUpstream struct {
	*httptest.Server
	fake *fakeapi.Server
}

func newFakeUpstream(t testing.TB, o fakeapi.Options) *fakeUpstream {
	t.Helper()
	u := &fakeUpstream{fake: fakeapi.New(o)}
	u.Server = httptest.NewServer(u.fake)
	t.Cleanup(u.Close)
	return u
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
