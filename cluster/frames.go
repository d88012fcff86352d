package cluster

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
)

// A frame stream, a State's compact whole copy, is gzip of frames, each a
// uvarint length and that many bytes (one row, say): JSON rows compress
// to about a twentieth, and reading a frame at a time bounds what a
// peer's state expands to.

// Bounds of a frame stream a peer sent (ReadFrames).
const (
	// MaxFrameBytes bounds one frame.
	MaxFrameBytes = 1 << 20
	// maxExpansion × the stream's size (at least minExpanded) bounds it.
	maxExpansion = 64
	minExpanded  = 16 << 20
)

// FrameWriter writes a frame stream.
type FrameWriter struct {
	buf   bytes.Buffer
	zw    *gzip.Writer
	frame []byte
}

// NewFrameWriter returns an empty frame stream.
func NewFrameWriter() *FrameWriter {
	w := &FrameWriter{}
	w.zw = gzip.NewWriter(&w.buf)
	return w
}

// Write adds a frame; p may be reused once it returns.
func (w *FrameWriter) Write(p []byte) error {
	if len(p) > MaxFrameBytes {
		return fmt.Errorf("a frame of %d bytes, more than %d", len(p), MaxFrameBytes)
	}
	w.frame = binary.AppendUvarint(w.frame[:0], uint64(len(p)))
	w.frame = append(w.frame, p...)
	_, err := w.zw.Write(w.frame)
	return err
}

// Bytes ends the stream and returns it.
func (w *FrameWriter) Bytes() ([]byte, error) {
	if err := w.zw.Close(); err != nil {
		return nil, err
	}
	return w.buf.Bytes(), nil
}

// IsFrames reports whether b is a frame stream: it starts as gzip does.
func IsFrames(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// ReadFrames calls f with each frame of b in order (valid only during the
// call) and returns how many it read. It stops with an error naming the
// frame at the first that cannot be read, past maxFrames, past the bounds
// above, or at f's first error.
func ReadFrames(b []byte, maxFrames int, f func(frame []byte) error) (int, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return 0, err
	}
	in := bufio.NewReader(zr)
	limit := max(maxExpansion*len(b), minExpanded)
	left := limit
	var buf []byte
	n := 0
	for ; ; n++ {
		size, err := binary.ReadUvarint(in)
		switch {
		case errors.Is(err, io.EOF):
			return n, nil
		case err != nil:
			return n, fmt.Errorf("frame %d: %w", n, err)
		case n >= maxFrames:
			return n, fmt.Errorf("more than %d frames", maxFrames)
		case size > MaxFrameBytes:
			return n, fmt.Errorf("frame %d: %d bytes, more than %d", n, size, MaxFrameBytes)
		case size > uint64(left):
			return n, fmt.Errorf("%d bytes expand past %d (%d times their size) at frame %d", len(b), limit, maxExpansion, n)
		}
		left -= int(size)
		buf = slices.Grow(buf[:0], int(size))[:size]
		if _, err := io.ReadFull(in, buf); err != nil {
			return n, fmt.Errorf("frame %d: %w", n, err)
		}
		if err := f(buf); err != nil {
			return n, fmt.Errorf("frame %d: %w", n, err)
		}
	}
}
