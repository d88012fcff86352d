package cluster

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/hashicorp/memberlist"
	"github.com/prometheus/client_golang/prometheus"
)

// The floods of a gossip port in the clear, measured on a member of its
// own process (the target), so that its peak RSS is its own: eight
// senders at once each send it a 19 MB delta over TCP, then eight push a
// 19 MB full state by joining it, as the hostile run did (one 19 MB delta
// took a member from 22 to 539 MB of RSS, eight at once to 1.6 GB), once
// compressed as memberlist does by default and once not. The figures are
// in BENCHMARKS.md ("Cluster: gossip floods"):
//
//	go test ./cluster -run '^$' -bench BenchmarkGossipFlood -benchtime 1x
const floodTargetEnv = "ONCHAIN_FLOOD_TARGET"

// floodTarget runs a member for BenchmarkGossipFlood: it prints its
// address, then answers each line of stdin with its peak and current RSS
// and its refusals, and stops at EOF.
func floodTarget() int {
	reg := prometheus.NewRegistry()
	cfg := Config{ListenAddress: "127.0.0.1:0", Name: "target", ClusterName: "flood", GossipInterval: 20 * time.Millisecond,
		ProbeInterval: 200 * time.Millisecond, ProbeTimeout: 100 * time.Millisecond, PushPullInterval: time.Hour}
	p, err := newPeer(cfg, log.NewNopLogger(), reg, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	p.AddState("rows", newSetState())
	fmt.Println(p.Self().Address)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		refused := ""
		mfs, _ := reg.Gather()
		for _, mf := range mfs {
			if mf.GetName() == "onchain_exporter_cluster_messages_refused_total" {
				for _, m := range mf.GetMetric() {
					if v := m.GetCounter().GetValue(); v > 0 {
						refused += fmt.Sprintf("%s=%v,", m.GetLabel()[0].GetValue(), v)
					}
				}
			}
		}
		fmt.Printf("%d %d %s\n", procStatus("VmHWM"), procStatus("VmRSS"), strings.TrimSuffix(refused, ","))
	}
	_ = p.Leave(time.Second)
	return 0
}

// procStatus reads a kB figure of /proc/self/status.
func procStatus(key string) int {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}

// bigState is a memberlist delegate whose full state is size bytes.
type bigState struct{ state []byte }

func (bigState) NodeMeta(int) []byte                 { return nil }
func (bigState) NotifyMsg([]byte)                    {}
func (bigState) GetBroadcasts(int, int) [][]byte     { return nil }
func (s bigState) LocalState(bool) []byte            { return s.state }
func (bigState) MergeRemoteState(buf []byte, _ bool) {}

// sender is a bare memberlist of the flood's cluster label; compress as
// memberlist does by default, or not.
func sender(b *testing.B, name string, state []byte, compress bool) *memberlist.Memberlist {
	mc := memberlist.DefaultLANConfig()
	mc.EnableCompression = compress
	mc.Name, mc.BindAddr, mc.BindPort, mc.AdvertisePort = name, "127.0.0.1", 0, 0
	mc.Label = labelPrefix + ":flood"
	mc.LogOutput = &syncBuffer{}
	mc.Delegate = bigState{state}
	ml, err := memberlist.Create(mc)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ml.Shutdown() })
	return ml
}

func BenchmarkGossipFlood(b *testing.B) {
	for _, compress := range []bool{true, false} {
		b.Run(fmt.Sprintf("compressed=%v", compress), func(b *testing.B) { flood(b, compress) })
	}
}

func flood(b *testing.B, compress bool) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), floodTargetEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	var stdout bytes.Buffer
	out := &lockedBuffer{b: &stdout}
	cmd.Stdout, cmd.Stderr = out, os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = stdin.Close(); _ = cmd.Wait() }()
	line := func(n int) string {
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); len(lines) >= n && lines[0] != "" {
				return lines[n-1]
			}
			time.Sleep(20 * time.Millisecond)
		}
		b.Fatalf("the target said %q", out.String())
		return ""
	}
	addr := line(1)
	host, portText, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portText)
	target := &memberlist.Node{Name: "target", Addr: net.ParseIP(host), Port: uint16(port)}
	measure := func(n int, what string) {
		fmt.Fprintln(stdin, "rss")
		f := strings.Fields(line(n))
		peak, _ := strconv.Atoi(f[0])
		b.ReportMetric(float64(peak)/1024, "MB-peak-rss-"+what)
		refused := ""
		if len(f) > 2 {
			refused = f[2]
		}
		b.Logf("%s: peak RSS %d MB, RSS %s kB, refused %s", what, peak/1024, f[1], refused)
	}
	measure(2, "idle")

	const big = 19 << 20
	msg := append(encodeDelta("rows", bytes.Repeat([]byte("x"), big)), 0)[:big]
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		s := sender(b, fmt.Sprintf("delta-%d", i), nil, compress)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = s.SendReliable(target, msg)
		}()
	}
	wg.Wait()
	time.Sleep(time.Second)
	measure(3, "deltas")

	state := encodeFull([]part{{key: "rows", data: bytes.Repeat([]byte("y"), big)}})
	for i := 0; i < 8; i++ {
		s := sender(b, fmt.Sprintf("state-%d", i), state, compress)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = s.Join([]string{addr})
		}()
	}
	wg.Wait()
	time.Sleep(time.Second)
	measure(4, "states")
}

// lockedBuffer is a buffer a process writes while the benchmark reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
