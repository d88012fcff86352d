package cluster

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kingpin/v2"
)

func TestValidateNamesTheFlag(t *testing.T) {
	on := Config{ListenAddress: "0.0.0.0:9094", ClusterName: "prod"}
	with := func(f func(*Config)) Config {
		c := on
		f(&c)
		return c
	}
	missing := filepath.Join(t.TempDir(), "absent")
	short := writeKey(t, []byte("0123456789"))
	k := base64.StdEncoding.EncodeToString(make([]byte, 32))
	fourKeys := writeKey(t, []byte(strings.Repeat(k+"\n", 4)))
	badLine := writeKey(t, []byte(k+"\nnot-a-secret-shown\n"))
	cases := []struct {
		name string
		cfg  Config
		err  string // "" for valid
	}{
		{"off", Config{}, ""},
		{"on, defaults", on, ""},
		{"listen on all interfaces", Config{ListenAddress: ":9094", ClusterName: "prod"}, ""},
		{"no label", Config{ListenAddress: ":9094"}, "--cluster.label is required with --cluster.listen-address: name the cluster, the same on every replica (the Helm chart gives <namespace>/<release>), so that two clusters whose addresses meet stay apart"},
		{"peers while off", Config{Peers: []string{"a:9094"}}, "--cluster.peer is set but --cluster.listen-address is empty (cluster mode off)"},
		{"key while off", Config{KeyFile: "k"}, "--cluster.encryption-key-file is set but --cluster.listen-address is empty (cluster mode off)"},
		{"advertise while off", Config{AdvertiseAddress: "10.0.0.1:9094"}, "--cluster.advertise-address is set but --cluster.listen-address is empty (cluster mode off)"},
		{"listen without port", Config{ListenAddress: "0.0.0.0", ClusterName: "prod"}, `--cluster.listen-address "0.0.0.0": want host:port`},
		{"listen port out of range", Config{ListenAddress: ":70000", ClusterName: "prod"}, `--cluster.listen-address ":70000": port "70000" is not a number from 0 to 65535`},
		{"peer without port", with(func(c *Config) { c.Peers = []string{"a:9094", "svc.ns"} }), `--cluster.peer "svc.ns": want host:port`},
		{"peer without host", with(func(c *Config) { c.Peers = []string{":9094"} }), `--cluster.peer ":9094": the host is empty`},
		{"advertise a name", with(func(c *Config) { c.AdvertiseAddress = "pod.svc:9094" }), `--cluster.advertise-address "pod.svc:9094": the host must be an IP address, not a name`},
		{"advertise IPv6", with(func(c *Config) { c.AdvertiseAddress = "[fd00::1]:9094" }), ""},
		{"negative peer timeout", with(func(c *Config) { c.PeerTimeout = -time.Second }), "--cluster.peer-timeout must not be negative, got -1s"},
		{"probe timeout too long", with(func(c *Config) { c.ProbeTimeout = 2 * time.Second }), "--cluster.probe-timeout (2s) must be shorter than --cluster.probe-interval (1s)"},
		{"key file missing", with(func(c *Config) { c.KeyFile = missing }), "--cluster.encryption-key-file: open " + missing + ": no such file or directory"},
		{"label too long", with(func(c *Config) { c.ClusterName = strings.Repeat("x", 256) }), "--cluster.label is 256 bytes long; at most 238"},
		{"negative max members", with(func(c *Config) { c.MaxMembers = -1 }), "--cluster.max-members must not be negative, got -1"},
		{"too many keys", with(func(c *Config) { c.KeyFile = fourKeys }), "--cluster.encryption-key-file: " + fourKeys + " holds 4 keys; at most 3 (the key in use, the next and a spare)"},
		{"a bad key line", with(func(c *Config) { c.KeyFile = badLine }), "--cluster.encryption-key-file: " + badLine + " line 2 is not base64 of 16, 24 or 32 bytes (one key a line: the first encrypts, all are accepted)"},
		{"key too short", with(func(c *Config) { c.KeyFile = short }), "--cluster.encryption-key-file: " + short + " holds 10 bytes; want a key of 16, 24 or 32 bytes, raw or base64 (for example: head -c 32 /dev/urandom | base64)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.err {
				t.Errorf("Validate() = %q\nwant          %q", got, tc.err)
			}
		})
	}
}

// Create refuses what Validate refuses, before it listens.
func TestCreateValidates(t *testing.T) {
	_, err := Create(Config{ListenAddress: "127.0.0.1:0", ClusterName: "prod", Peers: []string{"nohost"}}, nil, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "--cluster.peer ") {
		t.Errorf("Create = %v", err)
	}
}

func TestReadKey(t *testing.T) {
	raw24 := []byte("abc\x00\xffdefghijklmnopqrstuv")
	b64 := []byte("0123456789abcdef0123456789abcdef")
	cases := []struct {
		name    string
		content []byte
		want    []byte
	}{
		{"raw 16", []byte("0123456789abcdef"), []byte("0123456789abcdef")},
		{"raw 24 with binary bytes", raw24, raw24},
		{"base64 of 32, with a newline", []byte(base64.StdEncoding.EncodeToString(b64) + "\n"), b64},
		{"base64 of 16", []byte(base64.StdEncoding.EncodeToString(b64[:16])), b64[:16]},
		// 32 characters that are valid base64 are read as 24 bytes: every
		// member reads the same file the same way.
		{"32 base64 characters", b64, mustDecode(t, string(b64))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			keys, err := readKeys(writeKey(t, tc.content))
			if err != nil {
				t.Fatal(err)
			}
			if got := keys[0]; len(keys) != 1 || string(got) != string(tc.want) {
				t.Errorf("key = %q, want %q", got, tc.want)
			}
		})
	}
	for _, bad := range [][]byte{nil, []byte("short"), []byte(base64.StdEncoding.EncodeToString(make([]byte, 20)))} {
		if k, err := readKeys(writeKey(t, bad)); err == nil {
			t.Errorf("readKeys(%q) = %q, want an error", bad, k)
		}
	}
}

func mustDecode(t *testing.T, s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAddFlags(t *testing.T) {
	app := kingpin.New("test", "")
	cfg := AddFlags(app)
	if _, err := app.Parse(nil); err != nil {
		t.Fatal(err)
	}
	want := Config{
		PeerTimeout: 15 * time.Second, GossipInterval: 200 * time.Millisecond, PushPullInterval: time.Minute,
		ProbeTimeout: 500 * time.Millisecond, ProbeInterval: time.Second, SettleTimeout: time.Minute,
		ReconnectInterval: 10 * time.Second, ReconnectTimeout: 10 * time.Minute,
		MaxMembers: 10, MaxStateBytes: 8 << 20,
	}
	if !equalConfig(*cfg, want) {
		t.Errorf("defaults:\n%+v\nwant\n%+v", *cfg, want)
	}
	if cfg.Enabled() || cfg.Validate() != nil {
		t.Error("the default is not cluster mode off")
	}

	app = kingpin.New("test", "")
	cfg = AddFlags(app)
	_, err := app.Parse([]string{
		"--cluster.listen-address=:9094", "--cluster.advertise-address=10.0.0.7:9094",
		"--cluster.peer=exporter-headless.monitoring.svc:9094", "--cluster.peer=10.0.0.8:9094",
		"--cluster.peer-timeout=20s", "--cluster.peer-name=replica-0", "--cluster.encryption-key-file=/etc/key",
		"--cluster.label=prod", "--cluster.max-members=4",
	})
	if err != nil {
		t.Fatal(err)
	}
	want.ListenAddress, want.AdvertiseAddress, want.Name, want.KeyFile = ":9094", "10.0.0.7:9094", "replica-0", "/etc/key"
	want.Peers = []string{"exporter-headless.monitoring.svc:9094", "10.0.0.8:9094"}
	want.PeerTimeout, want.ClusterName, want.MaxMembers = 20*time.Second, "prod", 4
	if !equalConfig(*cfg, want) {
		t.Errorf("parsed:\n%+v\nwant\n%+v", *cfg, want)
	}
}

func equalConfig(a, b Config) bool {
	return reflect.DeepEqual(a, b)
}

func TestDefaultName(t *testing.T) {
	a, err := defaultName()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := defaultName()
	if a == b || !strings.Contains(a, "-") {
		t.Errorf("default names %q and %q", a, b)
	}
}

// A key file of several lines is a rotation's keyring: the first key
// encrypts, all are accepted.
func TestReadKeys(t *testing.T) {
	a, b := randomBytes(t, 32), randomBytes(t, 16)
	content := base64.StdEncoding.EncodeToString(a) + "\n\n" + base64.StdEncoding.EncodeToString(b) + "\n"
	keys, err := readKeys(writeKey(t, []byte(content)))
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || string(keys[0]) != string(a) || string(keys[1]) != string(b) {
		t.Errorf("keys = %x, want %x then %x", keys, a, b)
	}
}

// A member restarted with its storage keeps its name; without the file
// each start is a new name.
func TestMemberNameKept(t *testing.T) {
	file := filepath.Join(t.TempDir(), "cluster-member-name")
	first, saved, err := memberName(Config{NameFile: file})
	if err != nil || !saved {
		t.Fatalf("memberName = %q, %v, %v", first, saved, err)
	}
	again, _, _ := memberName(Config{NameFile: file})
	if again != first {
		t.Errorf("after a restart the name is %q, want %q kept", again, first)
	}
	if given, _, _ := memberName(Config{Name: "replica-0", NameFile: file}); given != "replica-0" {
		t.Errorf("--cluster.peer-name gave %q", given)
	}
	a, _, _ := memberName(Config{})
	b, _, _ := memberName(Config{})
	if a == b {
		t.Errorf("two starts without a file share the name %q", a)
	}
	if err := os.WriteFile(file, []byte("bad name\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := memberName(Config{NameFile: file}); n == "bad name" || !validName(n) {
		t.Errorf("a file with a bad name gave %q", n)
	}
}
