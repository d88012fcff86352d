package cluster

import (
	"testing"

	"go.uber.org/goleak"
)

// Every member a test starts is stopped by its cleanup: Leave (or kill)
// ends memberlist's goroutines and this package's.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
