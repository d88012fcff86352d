package upstream

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	promconfig "github.com/prometheus/common/config"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// newTransport builds the transport of an API from its section's TLS and
// proxy settings with the ecosystem's own library, as Prometheus and
// blackbox_exporter do. What the library does not let us set, and why
// that is fine:
//   - MaxIdleConnsPerHost is the library's (1000): the client's semaphore
//     lets at most `concurrency` requests out at once, so no more
//     connections than that are ever opened or kept idle.
//   - ResponseHeaderTimeout is unset: every request carries the section's
//     timeout in its context, which bounds the wait for headers too.
//   - TLSHandshakeTimeout is the library's 10 s, under that same context.
//   - Compression is off: answers are small (a few rows), and what is read
//     is capped at MaxBody as sent.
//
// The credential is not the library's business: the dialects add it to
// each request (dialect.go), and redirects stay with the http.Client that
// New builds.
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

// dial opens the connections of every client, to the API or to its proxy;
// a variable so that tests can give names of their own an address.
var dial promconfig.DialContextFunc = (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext

// lazyTransport holds the built transport, or builds it on first use when
// building failed: the files of tls_config are checked at load, but one
// may go missing before the client is built. Every call fails with the
// reason until the file is back, and then the client works without a
// reload. Once built, the library itself re-reads the CA and certificate
// files and picks up a renewed one.
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
		if req.Body != nil {
			req.Body.Close()
		}
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
// key that fixes it; ok is false for errors that are not about the
// certificate. Retrying does not fix these.
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
// a different client. File contents are left out: the library reads the
// CA and certificate files again for every request and rebuilds its
// connections when they change, so the paths are enough.
func writeHTTPClientIdentity(w io.Writer, c *promconfig.HTTPClientConfig) {
	t := &c.TLSConfig
	fmt.Fprintf(w, "tls\x00%s\x00%s\x00%s\x00%s\x00%t\x00%d\x00%d\x00", t.CAFile, t.CertFile, t.KeyFile, t.ServerName, t.InsecureSkipVerify, t.MinVersion, t.MaxVersion)
	proxy := ""
	if c.ProxyURL.URL != nil {
		proxy = c.ProxyURL.String() // digested, never shown
	}
	fmt.Fprintf(w, "proxy\x00%s\x00%s\x00%t\x00", proxy, c.NoProxy, c.ProxyFromEnvironment)
	names := make([]string, 0, len(c.ProxyConnectHeader))
	for name := range c.ProxyConnectHeader {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		fmt.Fprintf(w, "%s\x00", name)
		for _, v := range c.ProxyConnectHeader[name] {
			fmt.Fprintf(w, "%s\x00", string(v))
		}
	}
}

// unusableTLSError says the section's TLS files cannot be used (gone,
// unreadable): retrying the same request at once cannot fix it.
type unusableTLSError struct{ err error }

func (e *unusableTLSError) Error() string {
	return "TLS settings of the section cannot be used: " + e.err.Error()
}

func (e *unusableTLSError) Unwrap() error { return e.err }
