package cluster

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/hashicorp/memberlist"
	"github.com/onchain-exporter/onchain_exporter/config"
)

// Defaults, as Alertmanager's cluster flags have them, so that an
// operator who runs both finds the same behaviour under the same names.
const (
	defaultPeerTimeout       = 15 * time.Second
	defaultGossipInterval    = 200 * time.Millisecond
	defaultPushPullInterval  = time.Minute
	defaultProbeTimeout      = 500 * time.Millisecond // a LAN's 99th percentile round trip
	defaultProbeInterval     = time.Second
	defaultSettleTimeout     = defaultPushPullInterval
	defaultReconnectInterval = 10 * time.Second
	// defaultReconnectTimeout: long enough for a container restart or a
	// short network cut, short enough that an address given to another
	// pod is not knocked at for hours.
	defaultReconnectTimeout = 10 * time.Minute
	// defaultMaxMembers: replicas, a rolling update's surge and a margin.
	defaultMaxMembers    = 10
	defaultMaxStateBytes = 8 << 20
	defaultMaxDeltaBytes = 1 << 20
	// labelPrefix begins every packet's label; the cluster's name follows.
	labelPrefix = config.Namespace
)

// keySizes are the AES key sizes memberlist accepts: AES-128, -192, -256.
var keySizes = []int{16, 24, 32}

// Config is what a member needs to know to join a cluster; the fields
// are the flags of AddFlags. The zero value is cluster mode off; a zero
// duration or bound takes its default.
type Config struct {
	ListenAddress    string // host:port, UDP and TCP; empty: cluster mode off
	AdvertiseAddress string // IP:port; empty: memberlist's choice
	Name             string // unique; empty: host name and a random suffix
	// Peers are host:port addresses joined at start and when lost; a name
	// is resolved at every attempt and all its addresses joined.
	Peers             []string
	PeerTimeout       time.Duration // between rank r and rank r+1
	GossipInterval    time.Duration
	PushPullInterval  time.Duration
	ProbeTimeout      time.Duration // under ProbeInterval
	ProbeInterval     time.Duration
	SettleTimeout     time.Duration
	ReconnectInterval time.Duration
	ReconnectTimeout  time.Duration
	// KeyFile holds the gossip keys (readKeys), read again every
	// ReconnectInterval (keyring.go). Empty: gossip in the clear.
	KeyFile string
	// ClusterName labels every packet and stream. Required: two clusters
	// whose addresses meet would otherwise merge, each counting the
	// other's calls and serving its rows.
	ClusterName string
	// NameFile, when Name is empty, keeps the generated name across
	// restarts, so that a member restarted with its storage is the same
	// member and its day's calls are not counted twice.
	NameFile      string
	MaxMembers    int // this one included
	MaxStateBytes int // a peer's full state
	MaxDeltaBytes int // one delta
	// Clock is the wall clock heartbeats carry and measure others by (nil:
	// time.Now); tests give one that is off.
	Clock func() time.Time
	// Reference, when it knows one, is this member's clock less the
	// provider's (upstream.Pool.ClockOffset): the cluster's clock is then
	// the provider's, which no peer can move; else the median of the
	// trusted members' clocks.
	Reference func() (time.Duration, bool)
}

// AddFlags registers the cluster flags on app (Alertmanager's names where
// it has the setting) and returns the Config they fill.
func AddFlags(app *kingpin.Application) *Config {
	c := &Config{}
	app.Flag("cluster.listen-address", "host:port for gossip between replicas (UDP and TCP). Empty turns cluster mode off: this replica calls upstream for every row itself.").Default("").StringVar(&c.ListenAddress)
	app.Flag("cluster.advertise-address", "IP:port other replicas reach this one at, when it is not the listen address. Empty: the listen address, or a private IP of this host when listening on all interfaces.").Default("").StringVar(&c.AdvertiseAddress)
	app.Flag("cluster.peer-name", "Name of this replica in the cluster, unique among them. Empty: the host name and a random suffix.").Default("").StringVar(&c.Name)
	app.Flag("cluster.peer", "host:port of a replica to join (repeatable). A name that resolves to several addresses, such as a Kubernetes headless Service, joins them all; names are resolved again every --cluster.reconnect-interval.").StringsVar(&c.Peers)
	for _, f := range c.durationFlags() {
		app.Flag(f.name, f.help).Default(f.def.String()).DurationVar(f.field)
	}
	app.Flag("cluster.encryption-key-file", "File holding the key that encrypts and authenticates all gossip: 16, 24 or 32 bytes (AES-128, -192, -256), raw or base64; or several base64 keys one a line, the first encrypting and all accepted (a key rotation). Read again every --cluster.reconnect-interval. Every replica needs the same key. Empty: gossip in the clear, which anyone who reaches the port can read and write.").Default("").StringVar(&c.KeyFile)
	app.Flag("cluster.label", "Name of this cluster, put on every gossip packet: a replica of another cluster name is refused, so that two clusters whose addresses meet (a pod address reused, two releases on one network) stay apart. Every replica of a cluster needs the same; required with --cluster.listen-address (the Helm chart gives <namespace>/<release>).").Default("").StringVar(&c.ClusterName)
	app.Flag("cluster.max-members", "Most replicas taken into the cluster, this one included: replicas, a rolling update's surge and a margin. A replica past it is refused and counted; it bounds memory and the members a budget share counts.").Default(strconv.Itoa(defaultMaxMembers)).IntVar(&c.MaxMembers)
	app.Flag("cluster.max-state-bytes", "Largest full state taken from a replica (every row it serves, compressed: some 30-40 bytes a tuple, so the default holds 100 000 tuples); a larger one is refused and counted.").Default(strconv.Itoa(defaultMaxStateBytes)).IntVar(&c.MaxStateBytes)
	return c
}

// durationFlag is a duration flag, its field and its default.
type durationFlag struct {
	name, help string
	field      *time.Duration
	def        time.Duration
}

// durationFlags are c's duration flags, in the order of AddFlags.
func (c *Config) durationFlags() []durationFlag {
	return []durationFlag{
		{"cluster.peer-timeout", "Time each replica waits after the one ranked before it before it calls upstream in its place.", &c.PeerTimeout, defaultPeerTimeout},
		{"cluster.gossip-interval", "Interval between gossip messages. Lower spreads rows faster and costs more bandwidth.", &c.GossipInterval, defaultGossipInterval},
		{"cluster.pushpull-interval", "Interval between full state exchanges with one random replica. Lower repairs lost gossip faster and costs more bandwidth.", &c.PushPullInterval, defaultPushPullInterval},
		{"cluster.probe-timeout", "Time to wait for a probed replica's answer before it is suspected; the 99th percentile of the network's round trip.", &c.ProbeTimeout, defaultProbeTimeout},
		{"cluster.probe-interval", "Interval between probes of one random replica. Lower detects a failed replica sooner and costs more bandwidth.", &c.ProbeInterval, defaultProbeInterval},
		{"cluster.settle-timeout", "Longest wait at start for the number of replicas seen to stop changing.", &c.SettleTimeout, defaultSettleTimeout},
		{"cluster.reconnect-interval", "Interval between attempts to resolve --cluster.peer again and rejoin lost replicas.", &c.ReconnectInterval, defaultReconnectInterval},
		{"cluster.reconnect-timeout", "How long a replica that left or failed is asked to rejoin before it is forgotten.", &c.ReconnectTimeout, defaultReconnectTimeout},
	}
}

// Enabled reports whether cluster mode is on.
func (c Config) Enabled() bool { return c.ListenAddress != "" }

// Validate reports the first setting that cannot work, naming its flag;
// it reads the key file. A cluster flag with cluster mode off is an error:
// each replica would pay for every call while its operator thinks they
// share.
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
	if c.ClusterName == "" {
		return errors.New("--cluster.label is required with --cluster.listen-address: name the cluster, the same on every replica (the Helm chart gives <namespace>/<release>), so that two clusters whose addresses meet stay apart")
	}
	if len(c.label()) > memberlist.LabelMaxSize {
		return fmt.Errorf("--cluster.label is %d bytes long; at most %d", len(c.ClusterName), memberlist.LabelMaxSize-len(labelPrefix)-1)
	}
	if c.MaxMembers < 0 {
		return fmt.Errorf("--cluster.max-members must not be negative, got %d", c.MaxMembers)
	}
	if c.MaxStateBytes < 0 {
		return fmt.Errorf("--cluster.max-state-bytes must not be negative, got %d", c.MaxStateBytes)
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
	for _, f := range c.durationFlags() {
		if *f.field < 0 {
			return fmt.Errorf("--%s must not be negative, got %s", f.name, *f.field)
		}
	}
	if d := c.withDefaults(); d.ProbeTimeout >= d.ProbeInterval {
		return fmt.Errorf("--cluster.probe-timeout (%s) must be shorter than --cluster.probe-interval (%s)", d.ProbeTimeout, d.ProbeInterval)
	}
	if c.KeyFile != "" {
		if _, err := readKeys(c.KeyFile); err != nil {
			return fmt.Errorf("--cluster.encryption-key-file: %w", err)
		}
	}
	return nil
}

// withDefaults returns c with every zero duration and bound replaced by
// its default, and a nil Clock by time.Now.
func (c Config) withDefaults() Config {
	for _, f := range c.durationFlags() {
		*f.field = cmp.Or(*f.field, f.def)
	}
	c.MaxMembers = cmp.Or(c.MaxMembers, defaultMaxMembers)
	c.MaxStateBytes = cmp.Or(c.MaxStateBytes, defaultMaxStateBytes)
	c.MaxDeltaBytes = cmp.Or(c.MaxDeltaBytes, defaultMaxDeltaBytes)
	if c.Clock == nil {
		c.Clock = time.Now
	}
	return c
}

// label is what every packet and stream of this cluster carries.
func (c Config) label() string {
	return labelPrefix + ":" + c.ClusterName
}

// splitAddress splits host:port; the host may be empty only if emptyHost.
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

// maxKeys is the most keys a key file may hold: the key in use, the next
// and a spare.
const maxKeys = 3

// readKeys reads the gossip keys of a file, the primary first: one key of
// 16, 24 or 32 bytes (AES-128, -192, -256), base64 or raw, or up to
// maxKeys base64 keys one a line. An error never quotes the content.
func readKeys(path string) ([][]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	trimmed := bytes.TrimSpace(b)
	if key, ok := decodeKey(trimmed); ok {
		return [][]byte{key}, nil
	}
	if validKeySize(len(b)) {
		return [][]byte{b}, nil // raw bytes, whatever they hold
	}
	lines := bytes.Fields(trimmed)
	if len(lines) > 1 {
		var keys [][]byte
		for i, line := range lines {
			key, ok := decodeKey(line)
			if !ok {
				return nil, fmt.Errorf("%s line %d is not base64 of 16, 24 or 32 bytes (one key a line: the first encrypts, all are accepted)", path, i+1)
			}
			keys = append(keys, key)
		}
		if len(keys) > maxKeys {
			return nil, fmt.Errorf("%s holds %d keys; at most %d (the key in use, the next and a spare)", path, len(keys), maxKeys)
		}
		return keys, nil
	}
	return nil, fmt.Errorf("%s holds %d bytes; want a key of 16, 24 or 32 bytes, raw or base64 (for example: head -c 32 /dev/urandom | base64)", path, len(b))
}

// decodeKey decodes one base64 key of a valid size.
func decodeKey(b []byte) ([]byte, bool) {
	if len(b) == 0 {
		return nil, false
	}
	decoded := make([]byte, base64.StdEncoding.DecodedLen(len(b)))
	n, err := base64.StdEncoding.Decode(decoded, b)
	if err != nil || !validKeySize(n) {
		return nil, false
	}
	return decoded[:n], true
}

func validKeySize(n int) bool { return slices.Contains(keySizes, n) }

// defaultName is the host name and 8 random hex digits: a restarted
// member is new, so memberlist never mistakes it for the one it replaces
// while that one is still suspected.
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

// maxNameBytes bounds a member name read from NameFile.
const maxNameBytes = 128

// memberName is Config.Name, else the one NameFile keeps, else a new
// defaultName written to NameFile. A NameFile that cannot be written
// costs a new name at each start (saved is false), never the start.
func memberName(c Config) (name string, saved bool, err error) {
	if c.Name != "" {
		return c.Name, false, nil
	}
	if c.NameFile != "" {
		if b, err := os.ReadFile(c.NameFile); err == nil {
			if n := string(bytes.TrimSpace(b)); validName(n) {
				return n, true, nil
			}
		}
	}
	name, err = defaultName()
	if err != nil {
		return "", false, err
	}
	saved = c.NameFile != "" && os.WriteFile(c.NameFile, []byte(name+"\n"), 0o600) == nil
	return name, saved, nil
}

// validName reports whether a saved name is non-empty, at most
// maxNameBytes, printable ASCII without spaces.
func validName(n string) bool {
	return n != "" && len(n) <= maxNameBytes && !strings.ContainsFunc(n, func(r rune) bool { return r <= ' ' || r > '~' })
}
