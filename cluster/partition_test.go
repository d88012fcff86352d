package cluster

import (
	"errors"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
)

// cutter drops what a member sends to the addresses it is cut off from:
// packets vanish and connections fail, as behind a broken network. Every
// member of a test shares one cutter, so a cut is symmetric.
type cutter struct {
	mu  sync.Mutex
	cut map[string]bool // member address → on the far side
}

func (c *cutter) isCut(from, to string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cut[from] != c.cut[to]
}

// split puts the given addresses on the far side; heal joins them again.
func (c *cutter) split(far ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cut = map[string]bool{}
	for _, a := range far {
		c.cut[a] = true
	}
}

func (c *cutter) heal() { c.split() }

// transport returns a wrapTransport; the member's own address is learnt
// when memberlist asks for it, before it sends anything.
func (c *cutter) transport() wrapTransport {
	return func(t memberlist.NodeAwareTransport) memberlist.NodeAwareTransport {
		return &cutTransport{NodeAwareTransport: t, c: c}
	}
}

type cutTransport struct {
	memberlist.NodeAwareTransport
	c    *cutter
	mu   sync.Mutex
	self string
}

var errCut = errors.New("cut off by the test")

func (t *cutTransport) FinalAdvertiseAddr(ip string, port int) (net.IP, int, error) {
	addr, p, err := t.NodeAwareTransport.FinalAdvertiseAddr(ip, port)
	if err == nil {
		t.mu.Lock()
		t.self = net.JoinHostPort(addr.String(), strconv.Itoa(p))
		t.mu.Unlock()
	}
	return addr, p, err
}

func (t *cutTransport) blocked(to string) bool {
	t.mu.Lock()
	self := t.self
	t.mu.Unlock()
	return t.c.isCut(self, to)
}

func (t *cutTransport) WriteTo(b []byte, addr string) (time.Time, error) {
	if t.blocked(addr) {
		return time.Now(), nil
	}
	return t.NodeAwareTransport.WriteTo(b, addr)
}

func (t *cutTransport) WriteToAddress(b []byte, addr memberlist.Address) (time.Time, error) {
	if t.blocked(addr.Addr) {
		return time.Now(), nil
	}
	return t.NodeAwareTransport.WriteToAddress(b, addr)
}

func (t *cutTransport) DialTimeout(addr string, timeout time.Duration) (net.Conn, error) {
	if t.blocked(addr) {
		return nil, errCut
	}
	return t.NodeAwareTransport.DialTimeout(addr, timeout)
}

func (t *cutTransport) DialAddressTimeout(addr memberlist.Address, timeout time.Duration) (net.Conn, error) {
	if t.blocked(addr.Addr) {
		return nil, errCut
	}
	return t.NodeAwareTransport.DialAddressTimeout(addr, timeout)
}

// A member cut off from the other two: each side owns every unit (a unit
// is fetched twice, never zero times), and when the network heals the
// members rejoin by themselves and exchange what each side learned: the
// members that rejoin by push/pull at once, the others by the periodic
// push/pull (1 s here).
func TestPartitionFetchesTwiceNeverZeroAndHeals(t *testing.T) {
	c := &cutter{}
	cfg := func(name string, peers ...string) Config {
		c := testConfig(name, peers...)
		c.PushPullInterval = time.Second
		return c
	}
	a := createWith(t, cfg("a"), c.transport())
	if err := a.Join(t.Context()); err != nil {
		t.Fatal(err)
	}
	var ms []*member
	for _, name := range []string{"b", "c"} {
		m := createWith(t, cfg(name, a.address()), c.transport())
		if err := m.Join(t.Context()); err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	b, cm := ms[0], ms[1]
	all := []*member{a, b, cm}
	eventually(t, "all three see a, b, c", seeAll(all, "a", "b", "c"))

	c.split(cm.address())
	took := eventually(t, "each side sees only itself", func() bool {
		return seeAll([]*member{a, b}, "a", "b")() && seeAll([]*member{cm}, "c")()
	})
	t.Logf("a partition is seen on both sides %s after it starts", took)
	us := units(100)
	owners(t, []*member{a, b}, us) // a and b agree, and one of them ranks 0
	for _, u := range us {
		if cm.Rank(u) != 0 {
			t.Fatalf("unit %s: c, alone, ranks %d", u, cm.Rank(u))
		}
	}
	cm.state.add("fetched-by-c-alone")
	a.state.add("fetched-by-a")

	c.heal()
	took = eventually(t, "all three see a, b, c again", seeAll(all, "a", "b", "c"))
	t.Logf("the cluster is whole again %s after the network heals (reconnect interval 200ms)", took)
	owners(t, all, us)
	eventually(t, "each side has the other's state", func() bool {
		return a.state.has("fetched-by-c-alone") && b.state.has("fetched-by-c-alone") && cm.state.has("fetched-by-a")
	})
}
