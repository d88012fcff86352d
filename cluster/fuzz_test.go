package cluster

import (
	"bytes"
	"net"
	"testing"
	"time"

	"github.com/go-kit/log"
)

// Nothing a peer sends can panic a member. The gossip decoders are fuzzed
// here (FuzzDecode, in message_test.go, the delta and the full state);
// their corpus is kept in testdata/fuzz. Run one for a while with
//
//	go test ./cluster -run '^$' -fuzz FuzzHeartbeat -fuzztime 60s

// A heartbeat decodes to a name and a digest within their bounds, and
// what it decodes to encodes to a heartbeat that decodes the same (the
// bytes may differ: a varint may come in a longer form than ours), or
// it is an error.
func FuzzHeartbeat(f *testing.F) {
	f.Add(encodeHeartbeat("a", "file-1", time.Unix(1795132800, 5)))
	f.Add(encodeHeartbeat("onchain-exporter-0", "", time.Unix(0, 0)))
	f.Add(encodeHeartbeat(string(bytes.Repeat([]byte("n"), maxNameBytes)), string(bytes.Repeat([]byte("d"), maxDigestBytes)), time.Unix(-1, 0)))
	f.Add([]byte{formatVersion, kindHeartbeat, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		name, digest, sent, err := decodeHeartbeat(b)
		if err != nil {
			return
		}
		if name == "" || len(name) > maxNameBytes || len(digest) > maxDigestBytes {
			t.Fatalf("decoded name %q (%d bytes), digest of %d bytes", name, len(name), len(digest))
		}
		again := encodeHeartbeat(name, digest, sent)
		n2, d2, s2, err := decodeHeartbeat(again)
		if err != nil || n2 != name || d2 != digest || !s2.Equal(sent) {
			t.Fatalf("decoded %x to %q %q %v; its encoding %x decodes to %q %q %v (%v)", b, name, digest, sent, again, n2, d2, s2, err)
		}
	})
}

// A frame stream is read within its bounds: no frame past
// MaxFrameBytes, no more frames than asked, no more bytes in all than 64
// times its size (16 MiB at least).
func FuzzFrames(f *testing.F) {
	w := NewFrameWriter()
	for _, frame := range []string{`{"api":"data","key":"a"}`, "", "x"} {
		if err := w.Write([]byte(frame)); err != nil {
			f.Fatal(err)
		}
	}
	good, err := w.Bytes()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good, uint16(10))
	f.Add(good, uint16(1))
	f.Add([]byte{0x1f, 0x8b}, uint16(3))
	f.Add(append(append([]byte(nil), good[:len(good)/2]...), 0), uint16(3))
	f.Fuzz(func(t *testing.T, b []byte, maxFrames uint16) {
		frames, total := 0, 0
		n, _ := ReadFrames(b, int(maxFrames), func(frame []byte) error {
			frames++
			total += len(frame)
			if len(frame) > MaxFrameBytes {
				t.Fatalf("a frame of %d bytes", len(frame))
			}
			return nil
		})
		if n != frames || frames > int(maxFrames) {
			t.Fatalf("%d frames read, %d handed over, at most %d asked", n, frames, maxFrames)
		}
		if most := max(maxExpansion*len(b), minExpanded); total > most {
			t.Fatalf("%d bytes expanded from %d, past %d", total, len(b), most)
		}
	})
}

// A stream's label is read from whatever a connection sends first.
func FuzzPeekLabel(f *testing.F) {
	f.Add([]byte{244, 4, 't', 'e', 's', 't', 1})
	f.Add([]byte{244, 255})
	f.Add([]byte{1, 2, 3})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		client, server := net.Pipe()
		go func() {
			_, _ = client.Write(b)
			_ = client.Close()
		}()
		_ = server.SetReadDeadline(time.Now().Add(time.Second))
		peeked, label, err := peekLabel(server)
		_ = server.Close()
		if err == nil && (!bytes.HasPrefix(b, peeked) || len(label) > 255) {
			t.Fatalf("peeked %x (label %q) of %x", peeked, label, b)
		}
	})
}

// Whatever reaches a member as a message (a heartbeat, a delta) or a
// full state is decoded, merged or refused, never a panic.
func FuzzGossip(f *testing.F) {
	cfg := testConfig("fuzz")
	p, err := newPeer(cfg, log.NewNopLogger(), nil, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = p.Leave(time.Second) })
	p.AddState("rows", newSetState())
	d := &delegate{p}
	f.Add(encodeHeartbeat("fuzz", "", time.Unix(1795132800, 0)))
	f.Add(encodeHeartbeat("other", "file-1", time.Unix(1795132800, 0)))
	f.Add(encodeDelta("rows", []byte("a\nb")))
	f.Add(encodeDelta("unknown", nil))
	f.Add(encodeFull([]part{{"rows", []byte("x")}, {"plan", []byte("{}")}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		d.NotifyMsg(b)
		d.MergeRemoteState(b, false)
	})
}
