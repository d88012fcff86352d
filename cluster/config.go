package cluster

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/alecthomas/kingpin/v2"
)

// Defaults, as Alertmanager's cluster flags have them, so that an
// operator who runs both finds the same behaviour under the same names.
const (
	// defaultPeerTimeout is how long each rank waits after the one before
	// it: the fallback of rank r acts r × PeerTimeout late.
	defaultPeerTimeout = 15 * time.Second
	// defaultGossipInterval sends queued deltas five times a second.
	defaultGossipInterval = 200 * time.Millisecond
	// defaultPushPullInterval exchanges the full state with one random
	// member every minute, which repairs any delta that gossip lost.
	defaultPushPullInterval = time.Minute
	// defaultProbeTimeout is the round trip after which a probed member
	// is suspected: the 99th percentile of a LAN's.
	defaultProbeTimeout = 500 * time.Millisecond
	// defaultProbeInterval probes one random member every second.
	defaultProbeInterval = time.Second
	// defaultSettleTimeout bounds Settle: one push/pull interval.
	defaultSettleTimeout = defaultPushPullInterval
	// defaultReconnectInterval is how often the names of --cluster.peer
	// are resolved again and lost members are asked to join again.
	defaultReconnectInterval = 10 * time.Second
	// defaultReconnectTimeout is how long a member that left or failed is asked to
	// join again before it is forgotten.
	defaultReconnectTimeout = 6 * time.Hour
)

// keySizes are the AES key sizes memberlist accepts: AES-128, -192, -256.
var keySizes = []int{16, 24, 32}

// Config is what a member needs to know to join a cluster. The zero value
// is cluster mode off; a zero duration takes its default.
type Config struct {
	// ListenAddress is the host:port gossip binds, UDP and TCP alike.
	// Empty turns cluster mode off.
	ListenAddress string
	// AdvertiseAddress is the IP:port other members reach this one at,
	// when it is not the listen address (behind NAT, or when listening
	// on 0.0.0.0 picks the wrong interface). Empty: memberlist's choice.
	AdvertiseAddress string
	// Name identifies this member; it must be unique in the cluster.
	// Empty: the host name and a random suffix, new at every start.
	Name string
	// Peers are the host:port addresses joined at start and again when
	// lost. A name is resolved at every attempt and every address it
	// resolves to is joined (a Kubernetes headless Service names all
	// its pods).
	Peers []string
	// PeerTimeout is how long the member of rank r+1 waits after the
	// member of rank r before it acts in its place.
	PeerTimeout time.Duration
	// GossipInterval is how often queued deltas are sent.
	GossipInterval time.Duration
	// PushPullInterval is how often the full state is exchanged with one
	// random member.
	PushPullInterval time.Duration
	// ProbeTimeout is how long a probe waits for an answer before the
	// probed member is suspected; it must be under ProbeInterval.
	ProbeTimeout time.Duration
	// ProbeInterval is how often one random member is probed.
	ProbeInterval time.Duration
	// SettleTimeout bounds Settle.
	SettleTimeout time.Duration
	// ReconnectInterval is how often peers are resolved and joined again.
	ReconnectInterval time.Duration
	// ReconnectTimeout is how long a member that left or failed is retried.
	ReconnectTimeout time.Duration
	// KeyFile names a file that holds the key all gossip is encrypted and
	// authenticated with: 16, 24 or 32 bytes (AES-128, -192, -256), raw
	// or base64. Empty: gossip is in the clear.
	KeyFile string
}

// AddFlags registers the cluster flags on app and returns the Config they
// fill when app parses its arguments. The names are Alertmanager's where
// Alertmanager has the same setting.
func AddFlags(app *kingpin.Application) *Config {
	c := &Config{}
	app.Flag("cluster.listen-address", "host:port for gossip between replicas (UDP and TCP). Empty turns cluster mode off: this replica calls upstream for every row itself.").Default("").StringVar(&c.ListenAddress)
	app.Flag("cluster.advertise-address", "IP:port other replicas reach this one at, when it is not the listen address. Empty: the listen address, or a private IP of this host when listening on all interfaces.").Default("").StringVar(&c.AdvertiseAddress)
	app.Flag("cluster.peer-name", "Name of this replica in the cluster, unique among them. Empty: the host name and a random suffix.").Default("").StringVar(&c.Name)
	app.Flag("cluster.peer", "host:port of a replica to join (repeatable). A name that resolves to several addresses, such as a Kubernetes headless Service, joins them all; names are resolved again every --cluster.reconnect-interval.").StringsVar(&c.Peers)
	app.Flag("cluster.peer-timeout", "Time each replica waits after the one ranked before it before it calls upstream in its place.").Default(defaultPeerTimeout.String()).DurationVar(&c.PeerTimeout)
	app.Flag("cluster.gossip-interval", "Interval between gossip messages. Lower spreads rows faster and costs more bandwidth.").Default(defaultGossipInterval.String()).DurationVar(&c.GossipInterval)
	app.Flag("cluster.pushpull-interval", "Interval between full state exchanges with one random replica. Lower repairs lost gossip faster and costs more bandwidth.").Default(defaultPushPullInterval.String()).DurationVar(&c.PushPullInterval)
	app.Flag("cluster.probe-timeout", "Time to wait for a probed replica's answer before it is suspected; the 99th percentile of the network's round trip.").Default(defaultProbeTimeout.String()).DurationVar(&c.ProbeTimeout)
	app.Flag("cluster.probe-interval", "Interval between probes of one random replica. Lower detects a failed replica sooner and costs more bandwidth.").Default(defaultProbeInterval.String()).DurationVar(&c.ProbeInterval)
	app.Flag("cluster.settle-timeout", "Longest wait at start for the number of replicas seen to stop changing.").Default(defaultSettleTimeout.String()).DurationVar(&c.SettleTimeout)
	app.Flag("cluster.reconnect-interval", "Interval between attempts to resolve --cluster.peer again and rejoin lost replicas.").Default(defaultReconnectInterval.String()).DurationVar(&c.ReconnectInterval)
	app.Flag("cluster.reconnect-timeout", "How long a replica that left or failed is asked to rejoin before it is forgotten.").Default(defaultReconnectTimeout.String()).DurationVar(&c.ReconnectTimeout)
	app.Flag("cluster.encryption-key-file", "File holding the key that encrypts and authenticates all gossip: 16, 24 or 32 bytes (AES-128, -192, -256), raw or base64. Every replica needs the same key. Empty: gossip in the clear.").Default("").StringVar(&c.KeyFile)
	return c
}

// Enabled reports whether cluster mode is on.
func (c Config) Enabled() bool { return c.ListenAddress != "" }

// Validate reports the first setting that cannot work, naming its flag.
// It reads the key file. A peer, an advertise address or a key file with
// cluster mode off is an error: it would be ignored, and each replica
// would pay for every call while its operator thinks they share.
func (c Config) Validate() error {
	if !c.Enabled() {
		switch {
		case len(c.Peers) > 0:
			return errors.New("--cluster.peer is set but --cluster.listen-address is empty (cluster mode off)")
		case c.AdvertiseAddress != "":
			return errors.New("--cluster.advertise-address is set but --cluster.listen-address is empty (cluster mode off)")
		case c.KeyFile != "":
			return errors.New("--cluster.encryption-key-file is set but --cluster.listen-address is empty (cluster mode off)")
		}
		return nil
	}
	if _, _, err := splitAddress(c.ListenAddress, true); err != nil {
		return fmt.Errorf("--cluster.listen-address %q: %w", c.ListenAddress, err)
	}
	if c.AdvertiseAddress != "" {
		host, _, err := splitAddress(c.AdvertiseAddress, false)
		if err != nil {
			return fmt.Errorf("--cluster.advertise-address %q: %w", c.AdvertiseAddress, err)
		}
		if net.ParseIP(host) == nil {
			return fmt.Errorf("--cluster.advertise-address %q: the host must be an IP address, not a name", c.AdvertiseAddress)
		}
	}
	for _, p := range c.Peers {
		if _, _, err := splitAddress(p, false); err != nil {
			return fmt.Errorf("--cluster.peer %q: %w", p, err)
		}
	}
	durations := []struct {
		flag string
		d    time.Duration
	}{
		{"--cluster.peer-timeout", c.PeerTimeout},
		{"--cluster.gossip-interval", c.GossipInterval},
		{"--cluster.pushpull-interval", c.PushPullInterval},
		{"--cluster.probe-timeout", c.ProbeTimeout},
		{"--cluster.probe-interval", c.ProbeInterval},
		{"--cluster.settle-timeout", c.SettleTimeout},
		{"--cluster.reconnect-interval", c.ReconnectInterval},
		{"--cluster.reconnect-timeout", c.ReconnectTimeout},
	}
	for _, d := range durations {
		if d.d < 0 {
			return fmt.Errorf("%s must not be negative, got %s", d.flag, d.d)
		}
	}
	if d := c.withDefaults(); d.ProbeTimeout >= d.ProbeInterval {
		return fmt.Errorf("--cluster.probe-timeout (%s) must be shorter than --cluster.probe-interval (%s)", d.ProbeTimeout, d.ProbeInterval)
	}
	if c.KeyFile != "" {
		if _, err := readKey(c.KeyFile); err != nil {
			return fmt.Errorf("--cluster.encryption-key-file: %w", err)
		}
	}
	return nil
}

// withDefaults returns c with every zero duration replaced by its default.
func (c Config) withDefaults() Config {
	set := func(d *time.Duration, def time.Duration) {
		if *d == 0 {
			*d = def
		}
	}
	set(&c.PeerTimeout, defaultPeerTimeout)
	set(&c.GossipInterval, defaultGossipInterval)
	set(&c.PushPullInterval, defaultPushPullInterval)
	set(&c.ProbeTimeout, defaultProbeTimeout)
	set(&c.ProbeInterval, defaultProbeInterval)
	set(&c.SettleTimeout, defaultSettleTimeout)
	set(&c.ReconnectInterval, defaultReconnectInterval)
	set(&c.ReconnectTimeout, defaultReconnectTimeout)
	return c
}

// splitAddress splits host:port; the port must be a number in range, and
// the host may be empty (all interfaces) only where emptyHost allows it.
func splitAddress(addr string, emptyHost bool) (string, int, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, errors.New("want host:port")
	}
	if host == "" && !emptyHost {
		return "", 0, errors.New("the host is empty")
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return "", 0, fmt.Errorf("port %q is not a number from 0 to 65535", portText)
	}
	return host, int(port), nil
}

// readKey reads a gossip key. A file whose content, spaces trimmed, is
// base64 of 16, 24 or 32 bytes holds those bytes; otherwise the content
// as it is must be 16, 24 or 32 bytes. Either way every member that reads
// the same file gets the same key.
func readKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if trimmed := bytes.TrimSpace(b); len(trimmed) > 0 {
		decoded := make([]byte, base64.StdEncoding.DecodedLen(len(trimmed)))
		if n, err := base64.StdEncoding.Decode(decoded, trimmed); err == nil && validKeySize(n) {
			return decoded[:n], nil
		}
	}
	if validKeySize(len(b)) {
		return b, nil
	}
	return nil, fmt.Errorf("%s holds %d bytes; want a key of 16, 24 or 32 bytes, raw or base64 (for example: head -c 32 /dev/urandom | base64)", path, len(b))
}

func validKeySize(n int) bool {
	for _, s := range keySizes {
		if n == s {
			return true
		}
	}
	return false
}

// defaultName is the host name and 8 random hex digits: readable in logs,
// and a restarted member is a new member, so memberlist never mistakes it
// for the one it replaces while that one is still suspected.
func defaultName() (string, error) {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "member"
	}
	var suffix [4]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return "", err
	}
	return host + "-" + hex.EncodeToString(suffix[:]), nil
}
