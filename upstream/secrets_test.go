package upstream

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// TestTransportErrorHidesTheKey: an error below HTTP names the URL, which
// may carry api_key; the classified error does not.
func TestTransportErrorHidesTheKey(t *testing.T) {
	const secret = "url-secret-91c2"
	e := transportError(&url.Error{Op: "Get", URL: "http://127.0.0.1:1/v1/x?api_key=" + secret + "&window=day",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}})
	if strings.Contains(e.Error(), secret) || strings.Contains(e.Error(), "api_key") {
		t.Errorf("transport error carries the URL: %s", e)
	}
	if e.Code != "transport" || !e.Retryable {
		t.Errorf("classified as %+v", e)
	}
	e = transportError(&url.Error{Op: "Get", URL: "http://x/?api_key=" + secret, Err: context.DeadlineExceeded})
	if e.Code != "timeout" || strings.Contains(e.Error(), secret) {
		t.Errorf("deadline classified as %q: %s", e.Code, e)
	}

	// The same through the real client: a closed port, auth: query.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg, err := config.Parse("t.yml", []byte(`
data:
  url: "http://`+addr+`"
  token_env: T
  auth: query
  timeout: 2s
  metrics:
    - path: /v1/btc/network-data/supply
`), func(string) string { return secret })
	if err != nil {
		t.Fatal(err)
	}
	m := NewMetrics(prometheus.NewRegistry())
	u := New(cfg.APIs[config.APIData], m, time.Now, log.NewNopLogger())
	defer u.Close()
	_, gerr := u.Get(context.Background(), "/v1/btc/network-data/supply", url.Values{"window": {"day"}}, true)
	if gerr == nil {
		t.Fatal("a closed port answered")
	}
	// The error names the URL asked for, with the key masked.
	if strings.Contains(gerr.Error(), secret) || !strings.Contains(gerr.Error(), "?api_key=<redacted>&window=day") {
		t.Errorf("error carries the key, or not the URL: %s", gerr)
	}
	if ae := AsError(gerr); ae.Code != "transport" {
		t.Errorf("code %q, want transport", ae.Code)
	}
}
