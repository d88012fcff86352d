package cluster

import (
	"encoding/base64"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
)

// Rogues heartbeating a captured configuration digest cannot fill
// --cluster.max-members and lock out a member the operator named: a, b
// and c are each other's --cluster.peer, c comes up last, after eight
// rogues knocked. The slot of c's address is kept; the rogues get what
// is left. Before, the rogues filled the slots and c was refused by a and
// b, and ran alone.
func TestRoguesCannotTakeANamedMembersSlot(t *testing.T) {
	addrs := []string{freeAddress(t), freeAddress(t), freeAddress(t)}
	cfg := func(name string, i int) Config {
		c := testConfig(name, addrs...)
		c.ListenAddress, c.MaxMembers = addrs[i], 4
		return c
	}
	a := create(t, cfg("a", 0))
	_ = a.Join(t.Context()) // b and c are not up yet
	a.SetConfigDigest("file-1")
	b := create(t, cfg("b", 1))
	if err := b.Join(t.Context()); err != nil {
		t.Fatal(err)
	}
	b.SetConfigDigest("file-1")
	eventually(t, "a and b serve", seeAll([]*member{a, b}, "a", "b"))

	for i := range 8 {
		startRogue(t, fmt.Sprintf("rogue-%d", i), a.address(), "file-1", 0)
	}
	eventually(t, "a refuses rogues past the slots", func() bool {
		return a.counter(t, "onchain_exporter_cluster_messages_refused_total", "reason", "members") > 0
	})
	c := create(t, cfg("c", 2))
	if err := c.Join(t.Context()); err != nil {
		t.Fatal(err)
	}
	c.SetConfigDigest("file-1")
	eventually(t, "a, b and c serve together", func() bool {
		for _, m := range []*member{a, b, c} {
			names := m.names()
			if !slices.Contains(names, "a") || !slices.Contains(names, "b") || !slices.Contains(names, "c") {
				return false
			}
		}
		return true
	})
	for _, m := range []*member{a, b, c} {
		if live := len(m.liveNames()); live > 4 {
			t.Errorf("%s holds %d live members: %v", m.Name(), live, m.liveNames())
		}
	}
}

// A flood of packets with the cluster's label that memberlist cannot read
// (20 000 of them, as the hostile run sent) makes a few warning lines,
// not one a packet: memberlist's warnings are logged once a minute per
// kind, with the count left out. Encrypted (the chart's default) and in
// the clear alike. Before, each packet was a line: 8 758 of 20 000.
func TestJunkPacketsDoNotFloodTheLog(t *testing.T) {
	for _, encrypted := range []bool{true, false} {
		t.Run(fmt.Sprintf("encrypted=%v", encrypted), func(t *testing.T) {
			cfg := testConfig("a")
			if encrypted {
				cfg.KeyFile = writeKey(t, []byte(base64.StdEncoding.EncodeToString(randomBytes(t, 32))))
			}
			a := start(t, cfg)
			conn, err := net.Dial("udp", a.address())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			junk := randomBytes(t, 100)
			for i := range 20000 {
				junk[0] = byte(i) // every kind of message memberlist knows, and more
				pkt, err := memberlist.AddLabelHeaderToPacket(junk, testLabel)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = conn.Write(pkt)
				if i%500 == 0 {
					time.Sleep(5 * time.Millisecond) // within the socket's buffer
				}
			}
			time.Sleep(500 * time.Millisecond)
			warned := 0
			for _, line := range strings.Split(a.logs.String(), "\n") {
				if strings.Contains(line, "level=warn") && strings.Contains(line, "source=memberlist") {
					warned++
				}
			}
			t.Logf("20 000 junk packets: %d warning lines", warned)
			if warned == 0 || warned > 20 {
				t.Errorf("20 000 junk packets made %d warning lines, want a few and at most 20:\n%s", warned, firstLines(a.logs.String(), 40))
			}
		})
	}
}

// firstLines is the first n lines of s.
func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[:min(n, len(lines))], "\n")
}
