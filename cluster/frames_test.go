package cluster

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestFramesReadBackWhole: the frames written are read back whole, in
// order, and each frame past the bounds is refused with its number.
func TestFramesReadBackWhole(t *testing.T) {
	w := NewFrameWriter()
	var want []string
	for i := range 1000 {
		f := fmt.Sprintf(`{"row":%d,"key":"exchange_%06d"}`, i, i)
		want = append(want, f)
		if err := w.Write([]byte(f)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Write(make([]byte, MaxFrameBytes+1)); err == nil {
		t.Error("a frame past MaxFrameBytes written")
	}
	b, err := w.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if !IsFrames(b) || IsFrames([]byte(`[{"row":1}]`)) {
		t.Error("IsFrames does not tell a frame stream from JSON")
	}
	var got []string
	n, err := ReadFrames(b, 1000, func(f []byte) error { got = append(got, string(f)); return nil })
	if err != nil || n != 1000 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("read %d frames, %v; differ from those written: %v", n, err, len(got))
	}
	if n, err := ReadFrames(b, 999, func([]byte) error { return nil }); err == nil || n != 999 || err.Error() != "more than 999 frames" {
		t.Errorf("999 frames at most: read %d, %v", n, err)
	}
	stop := errors.New("stop")
	if n, err := ReadFrames(b, 1000, func(f []byte) error {
		if strings.Contains(string(f), `"row":7,`) {
			return stop
		}
		return nil
	}); !errors.Is(err, stop) || n != 7 || !strings.HasPrefix(err.Error(), "frame 7: ") {
		t.Errorf("f's error at frame 7: read %d, %v", n, err)
	}
	if _, err := ReadFrames(b[:len(b)/2], 1000, func([]byte) error { return nil }); err == nil {
		t.Error("half a stream read without an error")
	}
}
