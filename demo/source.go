package demo

import (
	"fmt"

	"github.com/go-kit/log"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// Source is where the configuration is read from: the file, or with
// demoMode (--demo) the embedded demo against a fake upstream started
// here, which the caller closes.
func Source(file string, demoMode bool, logger log.Logger) (func() (*config.Config, error), *Demo, error) {
	if !demoMode {
		return func() (*config.Config, error) { return config.Load(file) }, nil, nil
	}
	d, err := Start(logger)
	if err != nil {
		return nil, nil, err
	}
	return d.load, d, nil
}

// MissingConfigHint says what to do when the configuration file does not
// exist, as it does not on a first run.
func MissingConfigHint(file string) string {
	return fmt.Sprintf("no configuration file: to try the exporter without a real upstream, run it with --demo; "+
		"to configure it, copy examples/config.yml to %s, set ONCHAIN_DATA_TOKEN and edit its metrics", file)
}
