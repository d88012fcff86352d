package state_test

import "github.com/onchain-exporter/onchain_exporter/testtool"

// The exposition helper and the fake's credential of the
// restart tests, shared with the other packages' tests.
var lines = testtool.Lines

const testToken = testtool.DataToken
