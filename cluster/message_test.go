package cluster

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestMessageRoundTrip(t *testing.T) {
	d, err := decodeDelta(encodeDelta("rows", []byte("payload")))
	if err != nil || d.key != "rows" || string(d.data) != "payload" {
		t.Errorf("delta: %+v, %v", d, err)
	}
	d, err = decodeDelta(encodeDelta("", nil))
	if err != nil || d.key != "" || len(d.data) != 0 {
		t.Errorf("empty delta: %+v, %v", d, err)
	}
	parts := []part{{"budget", []byte{0, 1, 2}}, {"rows", bytes.Repeat([]byte("r"), 300)}, {"empty", nil}}
	got, err := decodeFull(encodeFull(parts))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(parts) {
		t.Fatalf("%d parts, want %d", len(got), len(parts))
	}
	for i := range parts {
		if got[i].key != parts[i].key || !bytes.Equal(got[i].data, parts[i].data) {
			t.Errorf("part %d: %+v, want %+v", i, got[i], parts[i])
		}
	}
	if got, err := decodeFull(encodeFull(nil)); err != nil || len(got) != 0 {
		t.Errorf("no parts: %v, %v", got, err)
	}
}

func TestMessageRefused(t *testing.T) {
	full := encodeFull([]part{{"rows", []byte("abc")}})
	cases := []struct {
		name string
		b    []byte
		full bool
		err  string
	}{
		{"empty", nil, false, "short message"},
		{"other version", []byte{2, kindDelta, 0}, false, "format version 2, want 1"},
		{"full as delta", full, false, "message kind 2, want 1"},
		{"key longer than message", []byte{formatVersion, kindDelta, 9, 'a'}, false, "key: bad length"},
		{"truncated full", full[:len(full)-1], true, `part "rows": bad length`},
		{"trailing bytes", append(slices.Clone(full), 0), true, "1 bytes after the last part"},
		{"huge count", []byte{formatVersion, kindFull, 0xff, 0xff, 0x03}, true, "bad part count"},
	}
	for _, tc := range cases {
		var err error
		if tc.full {
			_, err = decodeFull(tc.b)
		} else {
			_, err = decodeDelta(tc.b)
		}
		if err == nil || err.Error() != tc.err {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(encodeDelta("rows", []byte("x")))
	f.Add(encodeFull([]part{{"a", []byte("b")}, {"c", nil}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = decodeDelta(b)
		_, _ = decodeFull(b)
	})
}

// Every address a name resolves to is joined, with the peer's port.
func TestResolvePeers(t *testing.T) {
	lookup := func(_ context.Context, host string) ([]string, error) {
		switch host {
		case "exporter-headless.monitoring.svc":
			return []string{"10.1.0.4", "10.1.0.5", "fd00::6"}, nil
		case "empty.test":
			return nil, nil
		}
		return nil, errors.New("no such host")
	}
	addrs, errs := resolvePeers(t.Context(), []string{
		"exporter-headless.monitoring.svc:9094", "10.1.0.4:9094", "[fd00::0:7]:9094", "gone.test:9094", "empty.test:9094",
	}, lookup)
	want := []string{"10.1.0.4:9094", "10.1.0.5:9094", "[fd00::6]:9094", "[fd00::7]:9094"}
	if !slices.Equal(addrs, want) {
		t.Errorf("addresses %v, want %v", addrs, want)
	}
	if len(errs) != 2 || !strings.Contains(errs[0].Error(), `"gone.test:9094"`) || !strings.Contains(errs[1].Error(), "no address") {
		t.Errorf("errors %v", errs)
	}
}

// seenSet forgets the oldest digest once full, and only it.
func TestSeenSetForgetsOldest(t *testing.T) {
	var s seenSet
	for i := uint64(0); i < seenSize; i++ {
		if !s.add(i) {
			t.Fatalf("%d seen before it was added", i)
		}
	}
	if s.add(0) || s.add(seenSize-1) {
		t.Fatal("a digest added twice")
	}
	if !s.add(seenSize) {
		t.Fatal("a new digest refused")
	}
	if !s.add(0) {
		t.Error("the oldest digest is still remembered when the set overflowed")
	}
	if s.add(seenSize - 1) {
		t.Error("a recent digest was forgotten")
	}
}
