package app

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// legacyStoragePath is the default of earlier versions.
const legacyStoragePath = "data/"

// resolveStoragePath returns the directory to keep state in: the path as
// given, except that with the default, a data/ that holds the exporter's
// state and no onchain_exporter_data/ yet stays in use, with a warning:
// an upgrade keeps what the last run learned.
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

// holdsExporterState says whether dir holds a file of a name the exporter
// writes in its storage directory, which neither Prometheus nor
// Alertmanager writes.
func holdsExporterState(dir string) bool {
	names := []string{"cluster-member-name"}
	for _, api := range config.APINames {
		names = append(names, api+".json", "budget-"+api+".json")
	}
	return slices.ContainsFunc(names, func(name string) bool {
		fi, err := os.Stat(filepath.Join(dir, name))
		return err == nil && fi.Mode().IsRegular()
	})
}
