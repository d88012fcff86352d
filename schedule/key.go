package schedule

import (
	"fmt"
	"strings"
	"time"

	"github.com/onchain-exporter/onchain_exporter/internal/text"
	"github.com/onchain-exporter/onchain_exporter/plan"
)

// Key names the series that share a publication delay: an API's endpoint
// and window. A series without a window is a key of its own: nothing says
// two assets' consensus come out of one pipeline. String is its spelling
// in state files, Books and a cluster's units; ParseKey reads it.
type Key struct {
	API, Path, Window string
	// Series is the series' id when it has no window, else empty.
	Series string
}

// NewKey is the key of a series, its id used when it has no window.
func NewKey(api, path, window, series string) Key {
	k := Key{API: api, Path: path, Window: window}
	if window == "" {
		k.Series = series
	}
	return k
}

// String spells the key: API, path and window, and the series' id when
// it has no window, apart by spaces.
func (k Key) String() string {
	if k.Window == "" {
		return k.API + " " + k.Path + " " + k.Window + " " + k.Series
	}
	return k.API + " " + k.Path + " " + k.Window
}

// ParseKey reads a key as String spells it, and the id of the series
// whose own estimate it names when the key's series learn apart (Book).
func ParseKey(s string) (k Key, own string, err error) {
	s, own, _ = strings.Cut(s, "\x00")
	parts := strings.SplitN(s, " ", 4)
	switch {
	case len(parts) == 3 && parts[2] != "":
		k = Key{API: parts[0], Path: parts[1], Window: parts[2]}
	case len(parts) == 4 && parts[2] == "" && parts[3] != "":
		k = Key{API: parts[0], Path: parts[1], Series: parts[3]}
	}
	if k.API == "" || !strings.HasPrefix(k.Path, "/") {
		return Key{}, "", fmt.Errorf("%q is not a delay key (API, endpoint and window, or a series without one)", text.Clip(s, 80, "…"))
	}
	return k, own, nil
}

// CheckSaved checks an estimate kept under key in a state file: the key
// parses, and the estimate fits its spacing (Estimate.Check).
func CheckSaved(key string, e Estimate, now time.Time) error {
	k, _, err := ParseKey(key)
	if err != nil {
		return err
	}
	return e.Check(k.MaxSpacing(), now)
}

// MaxSpacing is the largest spacing a key's estimate can have been
// learned for: its window's, else the bound MaxSpacing.
func (k Key) MaxSpacing() time.Duration {
	if w := plan.WindowDuration(k.Window); w > 0 {
		return w
	}
	return MaxSpacing
}
