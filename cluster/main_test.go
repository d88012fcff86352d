package cluster

import (
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Every member a test starts is stopped by its cleanup, and Leave (or
// kill) ends this package's goroutines and memberlist's. memberlist's
// Shutdown does not wait for a probe in flight, which ends at its own
// deadline (up to 8 probe intervals when the member was unhealthy), so
// the check waits up to 10 s for the goroutines to end.
func TestMain(m *testing.M) {
	if os.Getenv(floodTargetEnv) != "" {
		os.Exit(floodTarget()) // BenchmarkGossipFlood's member
	}
	code := m.Run()
	if code == 0 {
		var err error
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
			if err = goleak.Find(); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "goroutines left:", err)
			code = 1
		}
	}
	os.Exit(code)
}
