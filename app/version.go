package app

import (
	"cmp"
	"regexp"
	"runtime/debug"
	"strings"

	"github.com/prometheus/common/version"
)

// pseudoVersionRE matches the tail of a Go pseudo-version
// (v0.1.1-0.20251123181100-c2b497ed1a34), which names a commit, not a
// release.
var pseudoVersionRE = regexp.MustCompile(`[-.][0-9]{14}-[0-9a-f]{12}(\+[a-z]+)*$`)

// FillVersion completes the build information -ldflags -X did not set
// from what the toolchain embeds: version, the module's release tag
// without its v, else source (the VERSION file) with "-devel"; revision,
// vcs.revision ("-modified" for uncommitted changes); build date,
// vcs.time marked as the commit time; else, and for branch and build
// user, "unknown".
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
	version.Version = cmp.Or(version.Version, v, strings.TrimSpace(source)+"-devel")
	version.Revision = cmp.Or(version.Revision, rev, "unknown")
	version.BuildDate = cmp.Or(version.BuildDate, at, "unknown")
	version.Branch = cmp.Or(version.Branch, "unknown")
	version.BuildUser = cmp.Or(version.BuildUser, "unknown")
}
