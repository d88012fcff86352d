package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHTTPClientBadConfigs loads every testdata/httpclient/bad_*.yml and
// compares the whole error text: TLS and proxy mistakes name file, line and
// key like every other, and never show a credential.
func TestHTTPClientBadConfigs(t *testing.T) {
	const dir = "testdata/httpclient/"
	want := map[string]string{
		"bad_authorization.yml":   dir + "bad_authorization.yml:4: data.authorization: not taken here: the credential comes from token_env or token_file, sent the way the API expects (see auth)",
		"bad_ca_file_missing.yml": dir + "bad_ca_file_missing.yml:5: data.tls_config.ca_file: cannot read testdata/httpclient/no-such-ca.pem: no such file or directory (no-such-ca.pem is relative to testdata/httpclient/, the configuration file's directory)",
		"bad_ca_file_not_pem.yml": dir + "bad_ca_file_not_pem.yml:5: data.tls_config.ca_file: unable to use specified CA cert file testdata/httpclient/not-a-certificate.pem (a PEM file of one or more CA certificates is expected)",
		"bad_cert_without_key.yml": dir + "bad_cert_without_key.yml:5: data.tls_config.cert_file: needs key_file\n" +
			dir + "bad_cert_without_key.yml:5: data.tls_config.cert_file: cannot read testdata/httpclient/client.pem: no such file or directory (client.pem is relative to testdata/httpclient/, the configuration file's directory)",
		"bad_connect_header_no_proxy.yml": dir + "bad_connect_header_no_proxy.yml:5: data.proxy_connect_header: needs a proxy: set proxy_url or proxy_from_environment: true",
		"bad_follow_redirects.yml":        dir + "bad_follow_redirects.yml:4: data.follow_redirects: must be true or false, got \"sometimes\"",
		"bad_insecure_not_bool.yml":       dir + "bad_insecure_not_bool.yml:5: data.tls_config.insecure_skip_verify: must be true or false, got \"yes\"",
		"bad_no_proxy_alone.yml":          dir + "bad_no_proxy_alone.yml:4: data.no_proxy: needs proxy_url (with proxy_from_environment, NO_PROXY is read from the environment)",
		"bad_proxy_twice.yml":             dir + "bad_proxy_twice.yml:5: data.proxy_from_environment: set proxy_url or proxy_from_environment: true, not both",
		"bad_proxy_url.yml":               dir + "bad_proxy_url.yml:4: data.proxy_url: must be an http, https or socks5 URL, got \"ftp://<redacted>@proxy.example.com:3128\"",
		"bad_tls_not_mapping.yml":         dir + "bad_tls_not_mapping.yml:4: data.tls_config: must be a mapping, got \"ca.pem\"",
		"bad_tls_unknown_key.yml":         dir + "bad_tls_unknown_key.yml:6: data.tls_config.ca_fille: unknown key; did you mean \"ca_file\"?",
		"bad_tls_version.yml":             dir + "bad_tls_version.yml:5: data.tls_config.min_version: must be one of TLS10, TLS11, TLS12, TLS13, got \"TLS14\"",
	}
	checkBadConfigs(t, dir, want)
}

// TestHTTPClientKeys reads the TLS and proxy keys: files relative to the
// configuration file's directory, environment proxies by default.
func TestHTTPClientKeys(t *testing.T) {
	dir := t.TempDir()
	writePKI(t, dir)
	load := func(keys string) (*API, error) {
		t.Helper()
		file := filepath.Join(dir, "onchain.yml")
		yml := "data:\n  url: https://data-api.example.com\n  token_env: T\n" + keys +
			"  metrics:\n    - path: /v1/btc/network-data/supply\n"
		if err := os.WriteFile(file, []byte(yml), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(file)
		if err != nil {
			return nil, err
		}
		return cfg.APIs[APIData], nil
	}
	t.Setenv("T", "s3cret-value")

	a, err := load("")
	if err != nil {
		t.Fatal(err)
	}
	if c := a.HTTPClient; !c.ProxyFromEnvironment || c.ProxyURL.URL != nil || c.TLSConfig.CAFile != "" {
		t.Errorf("defaults: %+v", c)
	}

	a, err = load(`  tls_config:
    ca_file: ca.pem
    cert_file: client.pem
    key_file: client-key.pem
    server_name: data-api.internal
    min_version: TLS12
  proxy_url: http://proxy.example.com:3128
  no_proxy: localhost,.internal
  proxy_connect_header:
    Proxy-Authorization: Basic header-s3cret-value
`)
	if err != nil {
		t.Fatal(err)
	}
	tc := a.HTTPClient.TLSConfig
	if tc.CAFile != filepath.Join(dir, "ca.pem") || tc.CertFile != filepath.Join(dir, "client.pem") || tc.KeyFile != filepath.Join(dir, "client-key.pem") {
		t.Errorf("files are not read beside the configuration: %+v", tc)
	}
	if tc.ServerName != "data-api.internal" || tc.MinVersion != tls.VersionTLS12 {
		t.Errorf("tls_config = %+v", tc)
	}
	pc := a.HTTPClient.ProxyConfig
	if pc.ProxyFromEnvironment || pc.ProxyURL.String() != "http://proxy.example.com:3128" || pc.NoProxy != "localhost,.internal" {
		t.Errorf("proxy = %+v", pc)
	}
	if h := pc.ProxyConnectHeader["Proxy-Authorization"]; len(h) != 1 || string(h[0]) != "Basic header-s3cret-value" {
		t.Errorf("proxy_connect_header = %v", h)
	}

	a, err = load("  proxy_from_environment: false\n")
	if err != nil {
		t.Fatal(err)
	}
	if a.HTTPClient.ProxyFromEnvironment || a.HTTPClient.Proxy() != nil {
		t.Error("proxy_from_environment: false still takes a proxy")
	}

	// A key that is not the certificate's: refused at cert_file, and the
	// key's text is not in the message.
	key, err := os.ReadFile(filepath.Join(dir, "client-key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = load("  tls_config:\n    cert_file: client.pem\n    key_file: other-key.pem\n")
	if err == nil || !strings.Contains(err.Error(), "onchain.yml:5: data.tls_config.cert_file: unable to use specified client cert") ||
		!strings.Contains(err.Error(), "private key does not match public key") {
		t.Errorf("mismatched key: %v", err)
	}
	if err != nil && strings.Contains(err.Error(), strings.Split(string(key), "\n")[1]) {
		t.Error("the error carries the key")
	}
}

// writePKI writes ca.pem, a client certificate signed by it (client.pem,
// client-key.pem) and an unrelated key (other-key.pem) into dir.
func writePKI(t *testing.T, dir string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	clientKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	client := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "exporter"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	clientDER, err := x509.CreateCertificate(rand.Reader, client, ca, &clientKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	otherKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	write := func(name, typ string, der []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	keyDER := func(k *ecdsa.PrivateKey) []byte {
		b, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	write("ca.pem", "CERTIFICATE", caDER)
	write("client.pem", "CERTIFICATE", clientDER)
	write("client-key.pem", "PRIVATE KEY", keyDER(clientKey))
	write("other-key.pem", "PRIVATE KEY", keyDER(otherKey))
}
