package check

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

// A typo in a path on a premium key (issue 39): the path that neither the
// discovery nor the key's plan lists fails the check, naming the file, the
// entry and the path and the listed path it is nearest; it is not said to
// be refused by the plan. A path discovery lists that the key's plan does
// not include stays a warning in the plan's words: the exporter does not
// call it, and the file is right.
func TestConfigCheckUnlistedPath(t *testing.T) {
	up := newFakeUpstream(t, fakeapi.Options{Catalog: fakeapi.CatalogFull, DataToken: "premium-tok",
		DataKeys: map[string]fakeapi.Tier{"basic-tok": fakeapi.TierBasic}})
	file := filepath.Join(t.TempDir(), "typo.yml")
	writeFile(t, file, "data:\n  url: "+up.URL+"\n  token_env: ONCHAIN_TEST_DATA\n  metrics:\n"+
		"    - path: /v1/btc/market-indicator/mvrv\n"+
		"    - path: /v1/btc/market-indicator/mvrvv\n"+
		"    - path: /v1/btc/network-indicator/*\n")

	t.Setenv("ONCHAIN_TEST_DATA", "premium-tok")
	var out, errOut bytes.Buffer
	code := run([]string{"--config.check", "--config.check.upstream", "--config.file=" + file}, &out, &errOut)
	typo := file + ":6: data.metrics[1].path: discovery lists no endpoint /v1/btc/market-indicator/mvrvv, nor does the key's plan (PREMIUM); did you mean /v1/btc/market-indicator/mvrv?"
	if first, _, _ := strings.Cut(out.String(), "\n"); code != 1 || first != "FAILED: "+file+": "+typo || !strings.Contains(errOut.String(), typo+"\n") {
		t.Errorf("exit %d, first line %q, want 1 and the typo\nstderr:\n%s", code, first, errOut.String())
	}
	if s := out.String(); strings.Contains(s, "does not include") || strings.Contains(s, "cannot be checked") || strings.Contains(s, "WARNING") {
		t.Errorf("the typo is said as a plan's refusal or a warning besides:\n%s", s)
	}
	// What the pattern selects is shown all the same, as the exporter
	// would start: the typo's entry kept out.
	if s := out.String(); !strings.Contains(s, "\nPatterns, from the data API's discovery and the key's plan") ||
		!regexp.MustCompile(`data.metrics\[2\] \(line 7\) /v1/btc/network-indicator/\*: [1-9]\d* paths?, [1-9]\d* series`).MatchString(s) {
		t.Errorf("the pattern beside the typo is not expanded:\n%s", s)
	}

	t.Setenv("ONCHAIN_TEST_DATA", "basic-tok")
	writeFile(t, file, "data:\n  url: "+up.URL+"\n  token_env: ONCHAIN_TEST_DATA\n  metrics:\n    - path: /v1/btc/market-indicator/mvrv\n")
	out.Reset()
	errOut.Reset()
	code = run([]string{"--config.check", "--config.check.upstream", "--config.file=" + file}, &out, &errOut)
	refused := "WARNING: " + file + ":5: data.metrics[0].path: your plan (BASIC) does not include /v1/btc/market-indicator/mvrv; the exporter does not call it\n"
	if code != 0 || !strings.HasPrefix(out.String(), "OK: "+file+": 1 tuple\n"+refused) {
		t.Errorf("a path the plan refuses: exit %d\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
}
