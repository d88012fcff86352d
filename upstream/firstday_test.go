package upstream

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// What a user sees of a failed call: the URL asked for, never the key.

func TestFailedCallNamesTheURL(t *testing.T) {
	const key = "first-day-key-6d1f"
	srv := httptest.NewServer(fakeapi.New(fakeapi.Options{DataToken: key}))
	defer srv.Close()
	cfg, err := config.Parse("t.yml", []byte(fmt.Sprintf(`
data:
  url: %s
  token_env: T
  auth: query
  metrics:
    - path: /v1/btc/exchange-flows/netflow
`, srv.URL)), func(string) string { return key })
	if err != nil {
		t.Fatal(err)
	}
	c := New(cfg.APIs[config.APIData], NewMetrics(prometheus.NewRegistry()), time.Now, log.NewNopLogger())
	defer c.Close()
	_, err = c.Get(context.Background(), "/v1/v1/btc/exchange-flows/netflow", url.Values{"window": {"day"}, "exchange": {"binance"}}, true)
	if err == nil {
		t.Fatal("an unknown path answered")
	}
	want := "not_found (HTTP 404) for GET " + srv.URL + "/v1/v1/btc/exchange-flows/netflow?api_key=<redacted>&exchange=binance&window=day"
	if got := err.Error(); got != want {
		t.Errorf("error:\n got %s\nwant %s", got, want)
	}
	if AsError(err).URL == "" || strings.Contains(err.Error(), key) {
		t.Errorf("error %q: URL missing or carrying the key", err)
	}
}

func TestShownURLMasksTheCredential(t *testing.T) {
	for raw, want := range map[string]string{
		"http://h/v1/x":                             "http://h/v1/x",
		"http://u:pw@h/v1/x?window=day#f":           "http://h/v1/x?window=day",
		"http://h/v1/x?API_KEY=k&b=1&a=2&a=3":       "http://h/v1/x?API_KEY=<redacted>&a=2&a=3&b=1",
		"https://h/consensus?asset=btc&api_key=k+k": "https://h/consensus?api_key=<redacted>&asset=btc",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := ShownURL(u); got != want {
			t.Errorf("ShownURL(%s) = %s, want %s", raw, got, want)
		}
	}
}

// A refused credential pauses the API; the log says so once, names where
// the credential is read from (never its value) and how to lift the pause.
func TestCredentialPauseNamesSourceAndReload(t *testing.T) {
	const wrong = "wrong-key-0a9c"
	srv := httptest.NewServer(fakeapi.New(fakeapi.Options{DataToken: "right-key"}))
	defer srv.Close()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "data-token"), []byte(wrong), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "onchain.yml")
	yml := fmt.Sprintf("data:\n  url: %s\n  token_file: data-token\n  metrics:\n    - path: /v1/btc/network-data/supply\n", srv.URL)
	if err := os.WriteFile(file, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	var logs testtool.LogBuffer
	c := New(cfg.APIs[config.APIData], NewMetrics(prometheus.NewRegistry()), time.Now, log.NewLogfmtLogger(&logs))
	defer c.Close()
	for range 3 { // the first is refused, the others meet the pause
		if _, err := c.Get(context.Background(), "/v1/btc/network-data/supply", nil, true); err == nil {
			t.Fatal("a wrong key was accepted")
		}
	}
	source := "file " + filepath.Join(dir, "data-token")
	if n := logs.Count("level=error", "refused the credential", "code=unauthorized", `credential="`+source+`"`, "write the new key to "+source, "POST /-/reload", "SIGHUP"); n != 1 {
		t.Errorf("%d pause lines naming %s and the reload, want 1; log:\n%s", n, source, logs.String())
	}
	if strings.Contains(logs.String(), wrong) {
		t.Error("the log carries the credential")
	}
	// After a reload the pause is lifted; refused again, it is logged again.
	c.Reloaded()
	if _, err := c.Get(context.Background(), "/v1/btc/network-data/supply", nil, true); err == nil {
		t.Fatal("a wrong key was accepted")
	}
	if n := logs.Count("refused the credential"); n != 2 {
		t.Errorf("%d pause lines after a reload and a second refusal, want 2", n)
	}
	// A pause saved by the last run and restored is said too.
	fresh := New(cfg.APIs[config.APIData], NewMetrics(prometheus.NewRegistry()), time.Now, log.NewLogfmtLogger(&logs))
	defer fresh.Close()
	fresh.RestorePauses(c.Pauses())
	if n := logs.Count("before the restart", `credential="`+source+`"`, "POST /-/reload"); n != 1 {
		t.Errorf("%d lines for a restored credential pause, want 1", n)
	}
}

// A key from token_env cannot be fixed by a reload (the process's
// environment never changes): the hint asks for a restart or a
// token_file instead.
func TestCredentialPauseFromEnvAsksForRestart(t *testing.T) {
	srv := httptest.NewServer(fakeapi.New(fakeapi.Options{DataToken: "right-key"}))
	defer srv.Close()
	t.Setenv("ONCHAIN_TEST_WRONG_KEY", "wrong-key-5e1b")
	cfg, err := config.Parse("t.yml", []byte(fmt.Sprintf("data:\n  url: %s\n  token_env: ONCHAIN_TEST_WRONG_KEY\n  metrics:\n    - path: /v1/btc/network-data/supply\n", srv.URL)), os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	var logs testtool.LogBuffer
	c := New(cfg.APIs[config.APIData], NewMetrics(prometheus.NewRegistry()), time.Now, log.NewLogfmtLogger(&logs))
	defer c.Close()
	if _, err := c.Get(context.Background(), "/v1/btc/network-data/supply", nil, true); err == nil {
		t.Fatal("a wrong key was accepted")
	}
	if n := logs.Count("refused the credential", "restart the exporter with the new key in ONCHAIN_TEST_WRONG_KEY", "token_file"); n != 1 {
		t.Errorf("%d pause lines asking for a restart or a token_file, want 1; log:\n%s", n, logs.String())
	}
	if logs.Count("a reload lifts the pause") != 0 {
		t.Errorf("the hint says a reload fixes a key read from the environment; log:\n%s", logs.String())
	}
}
