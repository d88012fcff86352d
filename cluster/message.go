package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The wire format inside memberlist's messages. A message of another
// format version is dropped and counted: a rolling upgrade that changes
// it costs fallback fetches, never a wrong merge.
//
//	delta: version, kindDelta, uvarint len(key), key, data
//	full:  version, kindFull, uvarint parts, then per part:
//	       uvarint len(key), key, uvarint len(data), data
const (
	formatVersion byte = 1
	kindDelta     byte = 1
	kindFull      byte = 2
	// kindHeartbeat: version, kind, uvarint len(name), name, uvarint
	// len(digest), digest, the sender's clock in Unix nanoseconds (8
	// bytes, big-endian).
	kindHeartbeat byte = 3
)

// part is one State's bytes under its key.
type part struct {
	key  string
	data []byte
}

func encodeDelta(key string, data []byte) []byte {
	b := make([]byte, 0, 2+binary.MaxVarintLen64+len(key)+len(data))
	b = append(b, formatVersion, kindDelta)
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	return append(b, data...)
}

func encodeFull(parts []part) []byte {
	n := 2 + binary.MaxVarintLen64
	for _, p := range parts {
		n += 2*binary.MaxVarintLen64 + len(p.key) + len(p.data)
	}
	b := make([]byte, 0, n)
	b = append(b, formatVersion, kindFull)
	b = binary.AppendUvarint(b, uint64(len(parts)))
	for _, p := range parts {
		b = binary.AppendUvarint(b, uint64(len(p.key)))
		b = append(b, p.key...)
		b = binary.AppendUvarint(b, uint64(len(p.data)))
		b = append(b, p.data...)
	}
	return b
}

// decodeDelta returns the key and the data of a delta; data aliases b.
func decodeDelta(b []byte) (part, error) {
	rest, err := header(b, kindDelta)
	if err != nil {
		return part{}, err
	}
	key, rest, err := field(rest)
	if err != nil {
		return part{}, fmt.Errorf("key: %w", err)
	}
	return part{key: string(key), data: rest}, nil
}

// decodeFull returns the parts of a full state; their data alias b.
func decodeFull(b []byte) ([]part, error) {
	rest, err := header(b, kindFull)
	if err != nil {
		return nil, err
	}
	n, k := binary.Uvarint(rest)
	if k <= 0 || n > uint64(len(rest)) {
		return nil, errors.New("bad part count")
	}
	rest = rest[k:]
	parts := make([]part, 0, n)
	for i := uint64(0); i < n; i++ {
		var key, data []byte
		if key, rest, err = field(rest); err != nil {
			return nil, fmt.Errorf("part %d key: %w", i, err)
		}
		if data, rest, err = field(rest); err != nil {
			return nil, fmt.Errorf("part %q: %w", key, err)
		}
		parts = append(parts, part{key: string(key), data: data})
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%d bytes after the last part", len(rest))
	}
	return parts, nil
}

func header(b []byte, kind byte) ([]byte, error) {
	if len(b) < 2 {
		return nil, errors.New("short message")
	}
	if b[0] != formatVersion {
		return nil, fmt.Errorf("format version %d, want %d", b[0], formatVersion)
	}
	if b[1] != kind {
		return nil, fmt.Errorf("message kind %d, want %d", b[1], kind)
	}
	return b[2:], nil
}

// field reads a uvarint length and that many bytes.
func field(b []byte) (value, rest []byte, err error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, nil, errors.New("bad length")
	}
	return b[k : k+int(n)], b[k+int(n):], nil
}

// errUnknownKey is a message for a state not registered here.
var errUnknownKey = errors.New("no state registered under this key")
