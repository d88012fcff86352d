package state_test

import (
	"sort"
	"strings"
	"time"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

// The helpers of collector's tests that the restart tests use, for an
// exporter run from outside package collector.

// newClock is the simulated time shared by the fake upstream and the
// exporter of a test.
func newClock() *fakeapi.SimClock {
	return fakeapi.NewSimClock(time.Date(2026, 11, 20, 12, 34, 56, 0, time.UTC))
}

const testToken = "test-data-token"

// lines returns the sample lines of families whose name starts with one
// of the prefixes, sorted.
func lines(body string, prefixes ...string) []string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		for _, p := range prefixes {
			if strings.HasPrefix(l, p) {
				out = append(out, l)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}
