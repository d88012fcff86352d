package state_test

import "github.com/onchain-exporter/onchain_exporter/internal/testtool"

// The exposition helpers and the fake's clock and credential of the
// restart tests, shared with the other packages' tests.
var (
	newClock = testtool.Clock
	lines    = testtool.Lines
)

const testToken = testtool.DataToken
