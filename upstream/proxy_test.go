package upstream

import (
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

// testProxy is a forward proxy that records what passes through it: plain
// requests are forwarded, CONNECT is tunnelled.
type testProxy struct {
	*httptest.Server
	mu   sync.Mutex
	seen []proxied
}

type proxied struct {
	method, target string
	header         http.Header
}

func newTestProxy(t *testing.T) *testProxy {
	t.Helper()
	p := &testProxy{}
	forward := &http.Transport{DialContext: testDial} // and never a proxy of its own
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target := r.URL.String()
		if r.Method == http.MethodConnect {
			target = r.Host
		}
		p.mu.Lock()
		p.seen = append(p.seen, proxied{r.Method, target, r.Header.Clone()})
		p.mu.Unlock()
		if r.Method == http.MethodConnect {
			p.tunnel(w, r)
			return
		}
		out := r.Clone(r.Context())
		out.RequestURI = ""
		out.Header.Del("Proxy-Authorization")
		resp, err := forward.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(p.Close)
	t.Cleanup(forward.CloseIdleConnections)
	return p
}

func (p *testProxy) tunnel(w http.ResponseWriter, r *http.Request) {
	dest, err := testDial(r.Context(), "tcp", r.Host)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		dest.Close()
		return
	}
	_, _ = conn.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n"))
	go func() {
		_, _ = io.Copy(dest, buf)
		dest.Close()
	}()
	_, _ = io.Copy(conn, dest)
	conn.Close()
}

func (p *testProxy) requests() []proxied {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]proxied(nil), p.seen...)
}

// plainUpstream serves the fake data API over plain HTTP under the name
// data-api.test (testDial gives it 127.0.0.1): a proxy library that
// never proxies loopback addresses still has a name to proxy.
func plainUpstream(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(fakeapi.New(fakeapi.Options{DataToken: tlsSecret}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return "http://" + net.JoinHostPort("data-api.test", port)
}

// TestProxyFromYAML: proxy_url sends the calls through the proxy, with the
// proxy's own credential, and no_proxy sends a listed host direct.
func TestProxyFromYAML(t *testing.T) {
	useTestDial(t)
	clearProxyEnv(t)
	dir := t.TempDir()
	base := plainUpstream(t)
	proxy := newTestProxy(t)
	proxyURL := strings.Replace(proxy.URL, "http://", "http://proxyuser:proxy-pass@", 1)

	if e, _ := supply(t, dataSection(t, dir, base, "  proxy_url: "+proxyURL+"\n  no_proxy: .internal\n")); e != nil {
		t.Fatalf("through the proxy: %v", e)
	}
	seen := proxy.requests()
	if len(seen) != 1 || seen[0].method != http.MethodGet || !strings.HasPrefix(seen[0].target, base+"/v1/btc/network-data/supply?") {
		t.Fatalf("the proxy saw %+v", seen)
	}
	if got, want := seen[0].header.Get("Proxy-Authorization"), "Basic "+base64.StdEncoding.EncodeToString([]byte("proxyuser:proxy-pass")); got != want {
		t.Errorf("Proxy-Authorization = %q, want %q", got, want)
	}
	if seen[0].header.Get("Authorization") != "Bearer "+tlsSecret {
		t.Error("the API's credential did not reach the API")
	}

	if e, _ := supply(t, dataSection(t, dir, base, "  proxy_url: "+proxy.URL+"\n  no_proxy: localhost,data-api.test\n")); e != nil {
		t.Fatalf("past the proxy: %v", e)
	}
	if n := len(proxy.requests()); n != 1 {
		t.Errorf("no_proxy lists the API, yet the proxy saw %d requests", n)
	}
}

// TestProxyTunnelsTLS: an https API behind a proxy and a corporate CA,
// the common case, through CONNECT with proxy_connect_header.
func TestProxyTunnelsTLS(t *testing.T) {
	useTestDial(t)
	clearProxyEnv(t)
	pki := newTestPKI(t)
	srv := tlsUpstream(t, pki.issue(t, "server", "data-api.test"), nil)
	proxy := newTestProxy(t)
	yml := "  tls_config:\n    ca_file: ca.pem\n  proxy_url: " + proxy.URL + "\n  proxy_connect_header:\n    X-Proxy-Token: [proxy-token-1]\n"
	if e, _ := supply(t, dataSection(t, pki.dir, hostURL(srv, "data-api.test"), yml)); e != nil {
		t.Fatalf("through the tunnel: %v", e)
	}
	seen := proxy.requests()
	if len(seen) != 1 || seen[0].method != http.MethodConnect || !strings.HasPrefix(seen[0].target, "data-api.test:") {
		t.Fatalf("the proxy saw %+v", seen)
	}
	if seen[0].header.Get("X-Proxy-Token") != "proxy-token-1" {
		t.Errorf("CONNECT headers %v lack proxy_connect_header", seen[0].header)
	}
	if seen[0].header.Get("Authorization") != "" {
		t.Error("the API's credential was shown to the proxy")
	}
}

// TestProxyFromEnvironmentByDefault: HTTP_PROXY is honoured unless the
// section says proxy_from_environment: false.
func TestProxyFromEnvironmentByDefault(t *testing.T) {
	useTestDial(t)
	clearProxyEnv(t)
	dir := t.TempDir()
	base := plainUpstream(t)
	proxy := newTestProxy(t)
	t.Setenv("HTTP_PROXY", proxy.URL)

	if e, _ := supply(t, dataSection(t, dir, base, "")); e != nil {
		t.Fatal(e)
	}
	if n := len(proxy.requests()); n != 1 {
		t.Fatalf("by default the proxy of the environment saw %d requests, want 1", n)
	}
	if e, _ := supply(t, dataSection(t, dir, base, "  proxy_from_environment: false\n")); e != nil {
		t.Fatal(e)
	}
	if n := len(proxy.requests()); n != 1 {
		t.Errorf("proxy_from_environment: false, yet the proxy saw %d requests", n-1)
	}
}

func clearProxyEnv(t *testing.T) {
	for _, k := range []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy", "REQUEST_METHOD"} {
		t.Setenv(k, "")
	}
}
