package upstream

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	stdlog "log"
	"math/big"
	"net"
	"net/http"
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
)

const tlsSecret = "tls-secret-40af"

// testPKI is a CA of the test's own, writing its files into dir as a
// user would put them beside the configuration.
type testPKI struct {
	dir   string
	ca    *x509.Certificate
	caKey *ecdsa.PrivateKey
	pool  *x509.CertPool
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	p := &testPKI{dir: t.TempDir(), pool: x509.NewCertPool()}
	p.caKey, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "corporate test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &p.caKey.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	p.ca, _ = x509.ParseCertificate(der)
	p.pool.AddCert(p.ca)
	p.write(t, "ca.pem", "CERTIFICATE", der)
	return p
}

func (p *testPKI) write(t *testing.T, name, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(p.dir, name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// issue signs a server certificate for names (or a client certificate
// when names is empty) and writes name.pem and name-key.pem.
func (p *testPKI) issue(t *testing.T, name string, names ...string) tls.Certificate {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, DNSNames: names,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	if len(names) == 0 {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	p.write(t, name+".pem", "CERTIFICATE", der)
	p.write(t, name+"-key.pem", "PRIVATE KEY", keyDER)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// testDial gives every name under .test (reserved, never real) the
// address 127.0.0.1, so that a certificate can name the API the way a
// real one does; everything else is dialled as asked.
func testDial(ctx context.Context, network, addr string) (net.Conn, error) {
	if host, port, err := net.SplitHostPort(addr); err == nil && strings.HasSuffix(host, ".test") {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	return (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, addr)
}

func useTestDial(t *testing.T) {
	old := dial
	dial = testDial
	t.Cleanup(func() { dial = old })
}

// tlsUpstream serves the fake data API over TLS with cert; clientCAs,
// when set, requires a client certificate they signed.
func tlsUpstream(t *testing.T, cert tls.Certificate, clientCAs *x509.CertPool) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(fakeapi.New(fakeapi.Options{DataToken: tlsSecret}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	if clientCAs != nil {
		srv.TLS.ClientCAs, srv.TLS.ClientAuth = clientCAs, tls.RequireAndVerifyClientCert
	}
	srv.Config.ErrorLog = stdlog.New(io.Discard, "", 0) // refused handshakes are the point
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// dataSection loads a data section whose extra keys are yml, from a file
// in dir so that relative paths resolve beside it.
func dataSection(t *testing.T, dir, base, yml string) *config.API {
	t.Helper()
	file := filepath.Join(dir, "onchain.yml")
	text := fmt.Sprintf("data:\n  url: %s\n  token_env: T\n  timeout: 3s\n%s  metrics:\n    - path: /v1/btc/network-data/supply\n", base, yml)
	cfg, err := config.Parse(file, []byte(text), func(string) string { return tlsSecret })
	if err != nil {
		t.Fatal(err)
	}
	return cfg.APIs[config.APIData]
}

// supply makes one call of the data API with a new client and returns the
// error, and how many attempts went to the transport.
func supply(t *testing.T, a *config.API) (*Error, int) {
	t.Helper()
	u := New(a, NewMetrics(prometheus.NewRegistry()), time.Now, log.NewNopLogger())
	defer u.Close()
	var attempts int
	u.WrapTransport(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			attempts++
			return rt.RoundTrip(req)
		})
	})
	return call(u), attempts
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func call(u *Client) *Error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := u.Get(ctx, "/v1/btc/network-data/supply", url.Values{"window": {"day"}}, true)
	if err != nil {
		return AsError(err)
	}
	return nil
}

func hostURL(srv *httptest.Server, host string) string {
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return "https://" + net.JoinHostPort(host, port)
}

// TestTLSUpstreamWithCorporateCA: an API whose certificate a CA of its own
// signed is reached with tls_config.ca_file from YAML alone, and refused
// without it, once (retrying brings the same certificate back), with a
// message that names the key to set.
func TestTLSUpstreamWithCorporateCA(t *testing.T) {
	useTestDial(t)
	pki := newTestPKI(t)
	srv := tlsUpstream(t, pki.issue(t, "server", "data-api.test"), nil)
	base := hostURL(srv, "data-api.test")

	if e, _ := supply(t, dataSection(t, pki.dir, base, "  tls_config:\n    ca_file: ca.pem\n")); e != nil {
		t.Fatalf("with ca_file: %v", e)
	}

	e, attempts := supply(t, dataSection(t, pki.dir, base, ""))
	if e == nil {
		t.Fatal("a certificate of an unknown CA was accepted")
	}
	if e.Code != "transport" || !strings.Contains(e.Message, "x509: certificate signed by unknown authority") || !strings.Contains(e.Message, "tls_config.ca_file") {
		t.Errorf("without ca_file: %+v", e)
	}
	if attempts != 1 {
		t.Errorf("a refused certificate was tried %d times", attempts)
	}
	if strings.Contains(e.Error(), tlsSecret) {
		t.Errorf("error carries the credential: %s", e)
	}
}

// TestTLSServerName: server_name is the name the certificate is checked
// against when it is not the host of url.
func TestTLSServerName(t *testing.T) {
	useTestDial(t)
	pki := newTestPKI(t)
	srv := tlsUpstream(t, pki.issue(t, "server", "data-api.internal"), nil)
	base := hostURL(srv, "data-api.test")

	e, _ := supply(t, dataSection(t, pki.dir, base, "  tls_config:\n    ca_file: ca.pem\n"))
	if e == nil || e.Code != "transport" || !strings.Contains(e.Message, "data-api.internal") || !strings.Contains(e.Message, "tls_config.server_name") {
		t.Errorf("a certificate for another name: %+v", e)
	}
	if e, _ := supply(t, dataSection(t, pki.dir, base, "  tls_config:\n    ca_file: ca.pem\n    server_name: data-api.internal\n")); e != nil {
		t.Errorf("with server_name: %v", e)
	}
}

// TestTLSClientCertificate: an API that asks for a client certificate
// gets the one of cert_file and key_file.
func TestTLSClientCertificate(t *testing.T) {
	useTestDial(t)
	pki := newTestPKI(t)
	srv := tlsUpstream(t, pki.issue(t, "server", "data-api.test"), pki.pool)
	pki.issue(t, "client")
	base := hostURL(srv, "data-api.test")

	if e, _ := supply(t, dataSection(t, pki.dir, base, "  tls_config:\n    ca_file: ca.pem\n")); e == nil || e.Code != "transport" {
		t.Errorf("without a client certificate: %+v", e)
	}
	mtls := "  tls_config:\n    ca_file: ca.pem\n    cert_file: client.pem\n    key_file: client-key.pem\n    min_version: TLS13\n"
	if e, _ := supply(t, dataSection(t, pki.dir, base, mtls)); e != nil {
		t.Errorf("with cert_file and key_file: %v", e)
	}
}

// TestTLSFileGoneBeforeTheClient: a CA file checked at load and gone when
// the client is built fails every call with the reason, without a panic,
// and the same client works once the file is back.
func TestTLSFileGoneBeforeTheClient(t *testing.T) {
	useTestDial(t)
	pki := newTestPKI(t)
	srv := tlsUpstream(t, pki.issue(t, "server", "data-api.test"), nil)
	a := dataSection(t, pki.dir, hostURL(srv, "data-api.test"), "  tls_config:\n    ca_file: ca.pem\n")
	ca := filepath.Join(pki.dir, "ca.pem")
	moved := ca + ".moved"
	if err := os.Rename(ca, moved); err != nil {
		t.Fatal(err)
	}
	u := New(a, NewMetrics(prometheus.NewRegistry()), time.Now, log.NewNopLogger())
	defer u.Close()
	if e := call(u); e == nil || e.Code != "transport" || !strings.Contains(e.Message, "unable to read CA cert") {
		t.Errorf("CA file gone: %+v", e)
	}
	if err := os.Rename(moved, ca); err != nil {
		t.Fatal(err)
	}
	if e := call(u); e != nil {
		t.Errorf("CA file back: %v", e)
	}
}

// TestIdentityFollowsTLSAndProxy: a changed CA path, server name or proxy
// makes a new client; the same section keeps its client.
func TestIdentityFollowsTLSAndProxy(t *testing.T) {
	pki := newTestPKI(t)
	pki.issue(t, "other")
	base := "https://data-api.test"
	sections := map[string]string{
		"none":         "",
		"ca":           "  tls_config:\n    ca_file: ca.pem\n",
		"other ca":     "  tls_config:\n    ca_file: other.pem\n",
		"server name":  "  tls_config:\n    ca_file: ca.pem\n    server_name: data-api.internal\n",
		"insecure":     "  tls_config:\n    insecure_skip_verify: true\n",
		"proxy":        "  proxy_url: http://proxy.test:3128\n",
		"proxy secret": "  proxy_url: http://u:p2@proxy.test:3128\n",
		"no_proxy":     "  proxy_url: http://proxy.test:3128\n  no_proxy: .internal\n",
		"no env proxy": "  proxy_from_environment: false\n",
		"header":       "  proxy_url: http://proxy.test:3128\n  proxy_connect_header:\n    X-Proxy-Token: a\n",
		"header value": "  proxy_url: http://proxy.test:3128\n  proxy_connect_header:\n    X-Proxy-Token: b\n",
	}
	seen := map[string]string{}
	for name, yml := range sections {
		id := Identity(dataSection(t, pki.dir, base, yml))
		if other, dup := seen[id]; dup {
			t.Errorf("%q and %q have one identity", name, other)
		}
		seen[id] = name
		if again := Identity(dataSection(t, pki.dir, base, yml)); again != id {
			t.Errorf("%q: identity changed on reload", name)
		}
	}

	p := NewPool(prometheus.NewRegistry(), nil, log.NewNopLogger())
	defer p.Close()
	first := p.Client(dataSection(t, pki.dir, base, sections["ca"]))
	if p.Client(dataSection(t, pki.dir, base, sections["ca"])) != first {
		t.Error("an unchanged section got a new client")
	}
	if p.Client(dataSection(t, pki.dir, base, sections["other ca"])) == first {
		t.Error("a new CA kept the old client")
	}
}
