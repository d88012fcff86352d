package upstream

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	promconfig "github.com/prometheus/common/config"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// newTransport builds the transport of an API from its section's TLS and
// proxy settings with prometheus/common, as Prometheus does. What it does
// not let us set does not matter: the semaphore keeps connections to
// `concurrency`, the context's timeout bounds the wait for headers and
// the handshake, and answers are small and capped at MaxBody. The
// dialects add the credential; New's http.Client handles redirects.
func newTransport(a *config.API) http.RoundTripper {
	t := &lazyTransport{build: func() (http.RoundTripper, error) {
		return promconfig.NewRoundTripperFromConfig(a.HTTPClient, "onchain_"+a.Name,
			promconfig.WithDialContextFunc(dial),
			promconfig.WithIdleConnTimeout(90*time.Second),
		)
	}}
	_, _ = t.get() // a failure is every call's error until it is fixed
	return t
}

// dial opens the connections of every client; a variable for tests.
var dial promconfig.DialContextFunc = (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext

// lazyTransport holds the built transport, or builds it at each use while
// building fails (a tls_config file gone since load): calls fail with the
// reason until the file is back, then work without a reload. Once built,
// the library re-reads renewed CA and certificate files itself.
type lazyTransport struct {
	build func() (http.RoundTripper, error)

	mu sync.Mutex
	rt http.RoundTripper
}

func (t *lazyTransport) get() (http.RoundTripper, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.rt != nil {
		return t.rt, nil
	}
	rt, err := t.build()
	if err != nil {
		return nil, &unusableTLSError{err}
	}
	t.rt = rt
	return rt, nil
}

func (t *lazyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rt, err := t.get()
	if err != nil {
		closeBody(req)
		return nil, err
	}
	return rt.RoundTrip(req)
}

func (t *lazyTransport) CloseIdleConnections() {
	t.mu.Lock()
	rt := t.rt
	t.mu.Unlock()
	closeIdle(rt)
}

// certificateError says why the API's certificate was refused, with the
// key that fixes it; false for other errors. Retrying does not fix these.
func certificateError(err error) (string, bool) {
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	switch {
	case errors.As(err, &unknown):
		return err.Error() + " (tls_config.ca_file names the CA that signed the API's certificate)", true
	case errors.As(err, &host):
		return err.Error() + " (tls_config.server_name sets the name checked)", true
	case errors.As(err, &invalid), errors.As(err, &verify):
		return err.Error(), true
	}
	return "", false
}

// writeHTTPClientIdentity writes what of the TLS and proxy settings makes
// a different client: file paths, not contents, which the library
// re-reads itself.
func writeHTTPClientIdentity(w io.Writer, c *promconfig.HTTPClientConfig) {
	t := &c.TLSConfig
	fmt.Fprintf(w, "tls\x00%s\x00%s\x00%s\x00%s\x00%t\x00%d\x00%d\x00", t.CAFile, t.CertFile, t.KeyFile, t.ServerName, t.InsecureSkipVerify, t.MinVersion, t.MaxVersion)
	proxy := ""
	if c.ProxyURL.URL != nil {
		proxy = c.ProxyURL.String() // digested, never shown
	}
	fmt.Fprintf(w, "proxy\x00%s\x00%s\x00%t\x00", proxy, c.NoProxy, c.ProxyFromEnvironment)
	for _, name := range slices.Sorted(maps.Keys(c.ProxyConnectHeader)) {
		fmt.Fprintf(w, "%s\x00", name)
		for _, v := range c.ProxyConnectHeader[name] {
			fmt.Fprintf(w, "%s\x00", string(v))
		}
	}
}

// unusableTLSError says the section's TLS files cannot be used: retrying
// at once cannot fix it.
type unusableTLSError struct{ err error }

func (e *unusableTLSError) Error() string {
	return "TLS settings of the section cannot be used: " + e.err.Error()
}

func (e *unusableTLSError) Unwrap() error { return e.err }
