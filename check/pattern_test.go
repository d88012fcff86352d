package check

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// A pattern whose discovery cannot be read (here the upstream fails it;
// at scale, an answer past what a client reads) is said not expanded, not
// left out of the output while the check says OK.
func TestConfigCheckPatternWithoutItsDiscovery(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"status": {"code": 500, "message": "internal error"}}`, http.StatusInternalServerError)
	}))
	t.Cleanup(s.Close)
	t.Setenv("ONCHAIN_TEST_DATA", "tok")
	file := filepath.Join(t.TempDir(), "pattern.yml")
	writeFile(t, file, "data:\n  url: "+s.URL+"\n  token_env: ONCHAIN_TEST_DATA\n  timeout: 1s\n  metrics:\n"+
		"    - path: /v1/btc/network-data/supply\n    - path: /v1/btc/**\n")
	var out, errOut bytes.Buffer
	run([]string{"--config.check", "--config.check.upstream", "--config.file=" + file}, &out, &errOut)
	want := "\ndata.metrics[1] (line 7) /v1/btc/**: not expanded: /v1/discovery/endpoints was not read (Not checked, above, says why)\n"
	if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "Not checked: data: what /v1/discovery/endpoints lists") {
		t.Errorf("the output lacks %q:\n%s", want, out.String())
	}
}
