package demo

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

//go:embed demo.yml
var demoYAML string

// Credentials of the demo: the fake upstream accepts exactly these. The
// consensus key is on a premium plan, so that the per-analyst endpoint
// answers too.
const (
	DataToken      = "demo-data-token"
	IndicatorToken = "demo-indicator-token"
	ConsensusKey   = "demo-consensus-key"
)

// credentials are the demo's token_env variables and their values.
var credentials = map[string]string{
	"ONCHAIN_DEMO_DATA_TOKEN":      DataToken,
	"ONCHAIN_DEMO_INDICATOR_TOKEN": IndicatorToken,
	"ONCHAIN_DEMO_CONSENSUS_KEY":   ConsensusKey,
}

// Demo is a running fake upstream and the configuration that points at it.
type Demo struct {
	Config *config.Config
	Fake   *fakeapi.Server
	URL    string
	srv    *http.Server
}

// YAML returns the demo configuration for a fake upstream at url.
func YAML(url string) []byte {
	return []byte(strings.ReplaceAll(demoYAML, "{{URL}}", url))
}

// Getenv resolves the demo's credential variables, and nothing else.
func Getenv(name string) string { return credentials[name] }

// DialectEnv names the environment variable that picks the payload
// dialect of the demo's Indicator and Analyst Consensus APIs: a (the
// default) or b (see fakeapi.Dialect). The exporter finds rows in either
// without configuration; `ONCHAIN_DEMO_DIALECT=b onchain_exporter --demo`
// shows it.
const DialectEnv = "ONCHAIN_DEMO_DIALECT"

// TimelessEnv names the environment variable that, set to true, has the
// demo's Indicator and Analyst Consensus answers carry no time (no date,
// timestamp, updated_at or as_of; fakeapi.Options.Timeless): the
// exporter then learns their cadence from how often their values change.
const TimelessEnv = "ONCHAIN_DEMO_TIMELESS"

// Start serves the fake upstream on 127.0.0.1, in the dialect DialectEnv
// names (without times when TimelessEnv says so), and loads the demo
// config.
func Start(logger log.Logger) (*Demo, error) {
	dialect, err := fakeapi.ParseDialect(os.Getenv(DialectEnv))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", DialectEnv, err)
	}
	timeless := false
	if v := os.Getenv(TimelessEnv); v != "" {
		if timeless, err = strconv.ParseBool(v); err != nil {
			return nil, fmt.Errorf("%s=%q: want true or false", TimelessEnv, v)
		}
	}
	return Listen(logger, "127.0.0.1:0", fakeapi.Options{Dialect: dialect, Timeless: timeless})
}

// FaultPath is where the fake upstream's own server switches its faults
// (see FaultHandler), beside the three APIs.
const FaultPath = "/-/fault"

// Listen serves the fake upstream on addr, configured by o with the demo's
// credentials in place of o's: the data API at the root, the Indicator
// API under /indicator, the Analyst Consensus API under /consensus, and
// FaultPath.
func Listen(logger log.Logger, addr string, o fakeapi.Options) (*Demo, error) {
	o.DataToken, o.IndicatorToken, o.ConsensusKeys = DataToken, IndicatorToken, map[string]string{ConsensusKey: "premium"}
	fake := fakeapi.New(o)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("demo upstream: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle(FaultPath, FaultHandler(fake))
	mux.Handle("/", fake)
	d := &Demo{Fake: fake, URL: "http://" + reachable(ln.Addr()),
		srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}}
	go func() {
		if err := d.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			level.Error(logger).Log("msg", "demo upstream stopped", "err", err)
		}
	}()
	if d.Config, err = d.load(); err != nil {
		d.Close()
		return nil, err
	}
	level.Info(logger).Log("msg", "fake upstream serving", "url", d.URL, "dialect", o.Dialect, "timeless", o.Timeless)
	return d, nil
}

// load parses the demo configuration against the fake upstream.
func (d *Demo) load() (*config.Config, error) {
	return config.Parse("demo.yml (embedded)", YAML(d.URL), Getenv)
}

// reachable is a listener's address as a client on this host dials it:
// an unspecified IP (0.0.0.0, ::) becomes the loopback address.
func reachable(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return a.String()
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
}

// Close stops the fake upstream.
func (d *Demo) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = d.srv.Shutdown(ctx)
}
