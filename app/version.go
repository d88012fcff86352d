package app

import (
	"regexp"
	"runtime/debug"
	"strings"

	"github.com/prometheus/common/version"
)

// pseudoVersionRE matches the tail of a Go pseudo-version
// (v0.1.1-0.20251123181100-c2b497ed1a34), which names a commit, not a
// release.
var pseudoVersionRE = regexp.MustCompile(`[-.][0-9]{14}-[0-9a-f]{12}(\+[a-z]+)*$`)

// FillVersion completes the build information that -ldflags did not set
// (go build and go run set none) from what the Go toolchain embeds in
// every binary, so that --version, the start-up log line and
// onchain_exporter_build_info say something true rather than nothing:
//
//   - version: the main module's version when it is a release tag
//     (go install ...@v0.1.0, or go build in a clean checkout of the tag),
//     without its v; else source (the VERSION file, which package main
//     embeds) with "-devel" (a go run, or a go build between releases);
//   - revision: vcs.revision, with "-modified" for a tree with uncommitted
//     changes, else "unknown";
//   - build date: vcs.time, marked as the commit time it is, else
//     "unknown";
//   - branch and build user: not embedded by Go, "unknown".
//
// Values set with -ldflags -X are kept.
func FillVersion(source string, bi *debug.BuildInfo, ok bool) {
	var v, rev, at string
	modified := false
	if ok {
		if mv := bi.Main.Version; strings.HasPrefix(mv, "v") && !pseudoVersionRE.MatchString(mv) && !strings.Contains(mv, "+") {
			v = strings.TrimPrefix(mv, "v")
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
	setDefault(&version.Version, v, strings.TrimSpace(source)+"-devel")
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
