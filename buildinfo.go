package main

import (
	"runtime/debug"

	"github.com/prometheus/common/version"
)

// fillVersion completes the build information that -ldflags did not set
// (go build and go run set none) from what the Go toolchain embeds in
// every binary, so that --version, the start-up log line and
// onchain_exporter_build_info say something true rather than nothing:
//
//   - version: the main module's version (a tag, or a pseudo-version
//     v0.0.0-<commit time>-<revision> when go build stamps version control
//     information), else "devel";
//   - revision: vcs.revision, with "-modified" for a tree with uncommitted
//     changes, else "unknown";
//   - build date: vcs.time, marked as the commit time it is, else
//     "unknown";
//   - branch and build user: not embedded by Go, "unknown".
//
// Values set with -ldflags -X are kept.
func fillVersion(bi *debug.BuildInfo, ok bool) {
	var v, rev, at string
	modified := false
	if ok {
		if bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if rev != "" && modified {
		rev += "-modified"
	}
	if at != "" {
		at += " (commit time)"
	}
	setDefault(&version.Version, v, "devel")
	setDefault(&version.Revision, rev, "unknown")
	setDefault(&version.BuildDate, at, "unknown")
	setDefault(&version.Branch, "", "unknown")
	setDefault(&version.BuildUser, "", "unknown")
}

// setDefault sets an empty *dst to value, or to fallback when value is
// empty too.
func setDefault(dst *string, value, fallback string) {
	switch {
	case *dst != "":
	case value != "":
		*dst = value
	default:
		*dst = fallback
	}
}
