package app

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// A reload of the file of issue 17 (testtool.AliasedLists: 30⁹
// combinations) answers 500 with the entry's file:line, and the
// configuration in force stays, serving.
func TestReloadRefusesAProductPastMaxTuples(t *testing.T) {
	up := newFakeUpstream(t, fakeapi.Options{})
	dir := t.TempDir()
	cfgFile, tokenFile := filepath.Join(dir, "onchain.yml"), filepath.Join(dir, "token")
	writeFile(t, tokenFile, "token-A\n")
	writeFile(t, cfgFile, reloadConfig(up.URL, tokenFile, ""))
	e := startRun(t, http.DefaultClient, "http", flags{config: cfgFile})

	writeFile(t, cfgFile, testtool.AliasedLists(up.URL, tokenFile))
	code, answer := e.get(http.MethodPost, "/-/reload")
	if code != http.StatusInternalServerError || !strings.Contains(answer, cfgFile+":5: data.metrics[0]: expands to 19683000000000 series") ||
		!strings.Contains(answer, "more than max_tuples (1000)") {
		t.Errorf("reload: HTTP %d: %s", code, answer)
	}
	body := e.metrics()
	if valueOf(body, "onchain_exporter_config_last_reload_successful ") != "0" || valueOf(body, `onchain_exporter_tuples{api="data"}`) != "2" ||
		!strings.Contains(body, "onchain_supply{") {
		t.Errorf("the configuration in force is not served after the refused reload:\n%s", body)
	}
	landingShows(t, e, cfgFile, "2 tuples")
}

// An upstream that echoes the credential in its error texts, for a series
// and for the list that "all" is expanded through: the credential is in
// no log line, no answer of the exporter, and not on the landing page,
// which shows the list's error.
func TestEchoedCredentialLeavesNothing(t *testing.T) {
	const secret = "echo/secret+7c1d"
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"status":{"code":401,"message":"invalid request for key %s; you sent %s?%s"}}`,
			r.Header.Get("Authorization"), r.URL.Path, r.URL.RawQuery)
	}))
	defer echo.Close()
	dir := t.TempDir()
	cfgFile, tokenFile := filepath.Join(dir, "onchain.yml"), filepath.Join(dir, "token")
	writeFile(t, tokenFile, secret+"\n")
	for _, auth := range []string{"header", "query"} {
		t.Run(auth, func(t *testing.T) {
			writeFile(t, cfgFile, fmt.Sprintf(`
data:
  url: %q
  token_file: %q
  auth: %s
  metrics:
    - path: /v1/btc/network-data/supply
    - path: /v2/network/events-count
      asset: all
`, echo.URL, tokenFile, auth))
			e := startRun(t, http.DefaultClient, "http", flags{config: cfgFile, logLevel: "debug"})
			e.metrics()
			page := ""
			for range 200 { // the expansion's failure is recorded in the background
				_, page = e.get(http.MethodGet, "/")
				if strings.Contains(page, "lists failing") {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if !strings.Contains(page, "lists failing (") || !strings.Contains(page, "invalid request for key") {
				t.Fatalf("the landing page does not show the list's error:\n%s", page)
			}
			e.get(http.MethodPost, "/-/reload")
			e.stop()
			everything := e.stderr.String() + e.stdout.String() + e.answers.String()
			for _, form := range []string{secret, url.QueryEscape(secret)} {
				if strings.Contains(everything, form) {
					t.Errorf("the credential (as %q) left the exporter:\n%s", form, everything)
				}
			}
			if !strings.Contains(e.stderr.String(), "invalid request for key Bearer <secret>") && !strings.Contains(e.stderr.String(), "api_key=<secret>") {
				t.Errorf("the log does not show the upstream's message, scrubbed:\n%s", e.stderr.String())
			}
		})
	}
}

// The metrics path is the operator's, and it is escaped on the landing
// page (package main's TestMetricsPathChecked: a path that cannot be
// served is refused with exit code 2, not a panic).
func TestMetricsPathEscaped(t *testing.T) {
	const path = `/m"><script>alert(1)</script>`
	e := startRun(t, http.DefaultClient, "http", flags{demo: true, metricsPath: path})
	code, page := e.get(http.MethodGet, "/")
	if code != http.StatusOK || strings.Contains(page, "<script>") || strings.Contains(page, `"><script`) ||
		!strings.Contains(page, `<a href="/m%22%3E%3Cscript%3Ealert%281%29%3C/script%3E?collect[]=data">`) {
		t.Errorf("landing page: HTTP %d\n%s", code, page)
	}
	if code, _ := e.get(http.MethodGet, "/m%22%3E%3Cscript%3Ealert%281%29%3C/script%3E"); code != http.StatusOK {
		t.Errorf("the link of the landing page: HTTP %d", code)
	}
}
