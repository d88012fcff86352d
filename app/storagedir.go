package app

import (
	"os"
	"path/filepath"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// legacyStoragePath is the default of earlier versions.
const legacyStoragePath = "data/"

// resolveStoragePath returns the directory to keep state in. A path the
// user gave (set) or none ("": nothing kept) is used as it is. With the
// default, an existing data/ that holds the exporter's state files, and
// no onchain_exporter_data/ yet, keeps being used, with a warning that
// says how to move it: a restart after an upgrade serves what it learned
// and calls upstream only for what is due, as before.
func resolveStoragePath(path string, set bool, logger log.Logger) string {
	if set || path != DefaultStoragePath {
		return path
	}
	if _, err := os.Stat(DefaultStoragePath); err == nil {
		return path
	}
	if !holdsExporterState(legacyStoragePath) {
		return path
	}
	level.Warn(logger).Log("msg", "keeping state in "+legacyStoragePath+", the default of earlier versions; the default is now "+DefaultStoragePath+", apart from the data/ Prometheus and Alertmanager use",
		"storage_path", legacyStoragePath,
		"hint", "move the exporter's files to "+DefaultStoragePath+" (docs/operations.md, State kept across restarts) or pass --storage.path="+legacyStoragePath)
	return legacyStoragePath
}

// stateFiles are the names the exporter writes in its storage directory
// and nothing else does: each API's state (package state: <api>.json),
// its budget (budget-<api>.json) and a cluster member's name. Prometheus
// (wal/, chunks_head/, lock, queries.active) and Alertmanager (nflog,
// silences) write none of them.
func stateFiles() []string {
	names := []string{"cluster-member-name"}
	for _, api := range config.APINames {
		names = append(names, api+".json", "budget-"+api+".json")
	}
	return names
}

// holdsExporterState says whether dir holds one of the exporter's state
// files.
func holdsExporterState(dir string) bool {
	for _, name := range stateFiles() {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Mode().IsRegular() {
			return true
		}
	}
	return false
}
