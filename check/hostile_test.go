package check

import (
	"bytes"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// --config.check refuses the file at the entry, after counting: the
// check allocates a few MiB, not the product.
func TestConfigCheckCountsBeforeExpanding(t *testing.T) {
	dir := t.TempDir()
	cfgFile, tokenFile := filepath.Join(dir, "onchain.yml"), filepath.Join(dir, "token")
	writeFile(t, tokenFile, "token-A\n")
	writeFile(t, cfgFile, testtool.AliasedLists("http://127.0.0.1:1", tokenFile))
	var out, errOut bytes.Buffer
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	code := run([]string{"--config.check", "--config.file=" + cfgFile}, &out, &errOut)
	runtime.ReadMemStats(&after)
	want := cfgFile + ":5: data.metrics[0]: expands to 19683000000000 series (p0 30 × p1 30 × p2 30 × p3 30 × p4 30 × p5 30 × p6 30 × p7 30 × p8 30), more than max_tuples (1000)\n"
	if code != 1 || errOut.String() != want {
		t.Errorf("exit %d, stderr %q; want 1 and %q", code, errOut.String(), want)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 16<<20 {
		t.Errorf("--config.check allocated %d bytes", n)
	}
}
