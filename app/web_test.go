package app

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

// TestNoSecretInAnyAnswerOrLog runs the exporter at debug level with known
// credentials (the data API's in the URL as api_key) through healthy
// scrapes, every upstream fault, a rejected credential, good and bad
// reloads, the landing page and the error answers, and looks for the
// credentials in the log, stdout and every HTTP answer.
func TestNoSecretInAnyAnswerOrLog(t *testing.T) {
	const (
		dataSecret      = "data-secret-0a1b2c"
		indicatorSecret = "indicator-secret-3d4e5f"
		consensusSecret = "consensus-secret-6a7b8c"
		wrongSecret     = "rotated-wrong-secret-9d0e"
	)
	secrets := []string{dataSecret, indicatorSecret, consensusSecret, wrongSecret}
	up := newFakeUpstream(t, fakeapi.Options{DataToken: dataSecret, IndicatorToken: indicatorSecret,
		ConsensusKeys: map[string]string{consensusSecret: "enterprise"}})
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "onchain.yml")
	dataToken, indicatorToken := filepath.Join(dir, "data-token"), filepath.Join(dir, "indicator-token")
	writeFile(t, dataToken, dataSecret)
	writeFile(t, indicatorToken, indicatorSecret)
	t.Setenv("ONCHAIN_TEST_CONSENSUS_KEY", consensusSecret)
	cfg := fmt.Sprintf(`
data:
  url: %[1]q
  token_file: %[2]q
  auth: query
  timeout: 1s
  metrics:
    - path: /v1/btc/network-data/supply
      window: day
      cache_ttl: 100ms
indicator:
  url: "%[1]s/indicator"
  token_file: %[3]q
  timeout: 1s
  metrics:
    - path: /api/equities/{equity}/pbr-band
      equity: "KRX:005930"
      cache_ttl: 100ms
consensus:
  url: "%[1]s/consensus"
  token_env: ONCHAIN_TEST_CONSENSUS_KEY
  auth: query
  timeout: 1s
  metrics:
    - path: /consensus
      asset: btc
      days: 7
      cache_ttl: 100ms
`, up.URL, dataToken, indicatorToken)
	writeFile(t, cfgFile, cfg)
	e := startRun(t, http.DefaultClient, "http", flags{config: cfgFile, logLevel: "debug"})

	body := e.metrics()
	for _, family := range []string{"onchain_supply{", "onchain_equity_close_price{", "onchain_consensus_score{"} {
		if !strings.Contains(body, family) {
			t.Fatalf("healthy scrape lacks %s:\n%s", family, body)
		}
	}
	if got := up.credentials("/v1/btc/network-data/supply"); len(got) == 0 || got[0] != dataSecret {
		t.Fatalf("the data API was not called with api_key: %q", got)
	}
	reload := func(want int) {
		t.Helper()
		if code, answer := e.get(http.MethodPost, "/-/reload"); code != want {
			t.Fatalf("reload: HTTP %d, want %d: %s", code, want, answer)
		}
	}
	for _, f := range []fakeapi.Fault{
		{Kind: fakeapi.Slow, Delay: 5 * time.Second},
		{Kind: fakeapi.SlowBody, Delay: 5 * time.Second},
		{Kind: fakeapi.ConnReset},
		{Kind: fakeapi.Status500},
		{Kind: fakeapi.Status503},
		{Kind: fakeapi.TooManyRequests, RetryAfter: 1},
		{Kind: fakeapi.InvalidJSON},
		{Kind: fakeapi.TruncatedJSON},
		{Kind: fakeapi.EmptyData},
		{Kind: fakeapi.StatusMismatch},
		{Kind: fakeapi.NumbersAsStrings},
		{Kind: fakeapi.NonFinite},
		{Kind: fakeapi.HugeBody},
		{Kind: fakeapi.Unauthorized},
		{Kind: fakeapi.Redirect, Location: "http://127.0.0.1:1/v1/btc/network-data/supply?api_key=" + dataSecret},
		{Kind: fakeapi.Redirect, Location: up.URL + "/elsewhere"},
	} {
		calls := func() int64 { return up.fake.Calls("data") + up.fake.Calls("indicator") + up.fake.Calls("consensus") }
		before := calls()
		up.fake.SetFault("", f)
		// The engine refreshes on its own (cache_ttl 100ms): wait until
		// the fault has been answered to each API, a scrape keeping the
		// demand up.
		for end := time.Now().Add(20 * time.Second); calls() < before+3 && time.Now().Before(end); {
			e.metrics()
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(150 * time.Millisecond) // the answers are logged
		e.metrics()
		up.fake.ClearFaults()
		reload(http.StatusOK) // failing series are due at once after a reload
		e.metrics()
	}
	// A rotated credential the upstream rejects.
	writeFile(t, dataToken, wrongSecret)
	reload(http.StatusOK)
	time.Sleep(150 * time.Millisecond)
	e.metrics()
	// Bad files: a key in the URL, an unreadable token file.
	writeFile(t, cfgFile, strings.Replace(cfg, fmt.Sprintf("url: %q", up.URL), "url: data-api.example.com/v1?api_key="+dataSecret, 1))
	reload(http.StatusInternalServerError)
	writeFile(t, cfgFile, cfg)
	writeFile(t, dataToken, "")
	reload(http.StatusInternalServerError)
	writeFile(t, dataToken, dataSecret)
	reload(http.StatusOK)
	// Every other page.
	for _, p := range []struct{ method, path string }{
		{http.MethodGet, "/"}, {http.MethodGet, "/-/healthy"}, {http.MethodGet, "/-/ready"},
		{http.MethodGet, "/metrics?collect[]=nope"}, {http.MethodGet, "/-/reload"}, {http.MethodGet, "/no-such-page"},
	} {
		e.get(p.method, p.path)
	}
	e.metrics()
	e.stop()

	logs := e.stderr.String()
	for what, text := range map[string]string{"log": logs, "stdout": e.stdout.String(), "HTTP answers": e.answers.String()} {
		for _, s := range secrets {
			if i := strings.Index(text, s); i >= 0 {
				t.Errorf("%s carries a credential: ...%s...", what, text[max(0, i-300):min(len(text), i+40)])
			}
		}
	}
	for _, want := range []string{"level=debug", "refresh failed", "configuration reload failed", "unauthorized", "connection reset|EOF", "<redacted>"} {
		if !slices.ContainsFunc(strings.Split(want, "|"), func(w string) bool { return strings.Contains(logs, w) }) {
			t.Errorf("the log has no %q: the paths it should cover were not taken", want)
		}
	}
	if !strings.Contains(e.answers.String(), "onchain_exporter") || !strings.Contains(e.answers.String(), "-> 500") {
		t.Error("the answers recorded do not cover metrics and errors")
	}
}

// TestWebConfigTLSAndBasicAuth serves over TLS with a certificate made
// here and basic auth with a bcrypt hash, through --web.config.file.
func TestWebConfigTLSAndBasicAuth(t *testing.T) {
	const user, password = "prometheus", "basic-auth-password-5e6f"
	up := newFakeUpstream(t, fakeapi.Options{})
	dir := t.TempDir()
	certPEM, keyPEM := selfSigned(t)
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writeFile(t, certFile, string(certPEM))
	writeFile(t, keyFile, string(keyPEM))
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	webFile := filepath.Join(dir, "web.yml")
	writeFile(t, webFile, fmt.Sprintf("tls_server_config:\n  cert_file: %q\n  key_file: %q\nbasic_auth_users:\n  %s: %q\n", certFile, keyFile, user, hash))
	tokenFile, cfgFile := filepath.Join(dir, "token"), filepath.Join(dir, "onchain.yml")
	writeFile(t, tokenFile, "token")
	writeFile(t, cfgFile, reloadConfig(up.URL, tokenFile, ""))

	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(certPEM) {
		t.Fatal("cannot use the certificate made")
	}
	trusting := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	e := startRun(t, trusting, "https", flags{config: cfgFile, webConfig: webFile})
	// startRun's health check went without credentials: it only needed
	// an answer over TLS. Now each case explicitly.
	e.user, e.password = user, password
	if body := e.metrics(); !strings.Contains(body, "onchain_supply{") || !strings.Contains(body, "onchain_exporter_tuples") {
		t.Errorf("metrics over TLS with basic auth:\n%s", body)
	}
	if code, answer := e.get(http.MethodPost, "/-/reload"); code != http.StatusOK {
		t.Errorf("authorised reload: HTTP %d: %s", code, answer)
	}
	for _, c := range []struct{ user, password string }{{"", ""}, {user, "wrong"}, {"someone", password}, {user, password + "x"}} {
		e.user, e.password = c.user, c.password
		for _, path := range []string{"/metrics", "/-/reload", "/"} {
			method := http.MethodGet
			if path == "/-/reload" {
				method = http.MethodPost
			}
			if code, answer := e.get(method, path); code != http.StatusUnauthorized {
				t.Errorf("%s %s as %q/%q: HTTP %d, want 401: %.200s", method, path, c.user, c.password, code, answer)
			}
		}
	}
	// Plain HTTP on the TLS port gets no metrics.
	plain := &http.Client{Timeout: 5 * time.Second}
	req, _ := http.NewRequest(http.MethodGet, strings.Replace(e.base, "https://", "http://", 1)+"/metrics", nil)
	req.SetBasicAuth(user, password)
	if resp, err := plain.Do(req); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK || strings.Contains(string(b), "onchain_") {
			t.Errorf("plain HTTP on the TLS port: HTTP %d: %.200s", resp.StatusCode, b)
		}
	}
	// A client that does not trust the certificate is refused by TLS.
	untrusting := &http.Client{Timeout: 5 * time.Second}
	req, _ = http.NewRequest(http.MethodGet, e.base+"/metrics", nil)
	req.SetBasicAuth(user, password)
	_, err = untrusting.Do(req)
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Errorf("an untrusting client got %v, want an unknown-authority error", err)
	}
	e.stop()
	if strings.Contains(e.stderr.String(), password) || strings.Contains(e.answers.String(), password) {
		t.Error("the basic auth password appears in the log or an answer")
	}
	// The server's own lines about the refused handshakes come through
	// the project's logger: one ts, no line of the standard log's format.
	handshakes := 0
	for _, l := range strings.Split(strings.TrimSpace(e.stderr.String()), "\n") {
		if strings.Count(l, "ts=") != 1 || strings.Contains(l, "time=") {
			t.Errorf("not one ts= and no time=: %s", l)
		}
		if strings.Contains(l, "TLS handshake error") {
			handshakes++
		}
	}
	if handshakes == 0 {
		t.Errorf("no line about the refused TLS handshakes:\n%s", e.stderr.String())
	}
}

// selfSigned makes a certificate for 127.0.0.1 valid for an hour.
func selfSigned(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "onchain_exporter test"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

// TestReloadDuringShutdownIsRefused: a reload asked for once shutdown has
// begun (the reload loop has ended) is answered at once, not left waiting.
func TestReloadDuringShutdownIsRefused(t *testing.T) {
	stopping := make(chan struct{})
	close(stopping)
	rec := httptest.NewRecorder()
	reloadHandler(make(chan chan error), stopping)(rec, httptest.NewRequest(http.MethodPost, "/-/reload", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("reload during shutdown: HTTP %d, want 503: %s", rec.Code, rec.Body)
	}
}
