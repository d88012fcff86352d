package expand

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/plan"
)

// A data-API path that neither discovery, nor the key's plan, nor the
// catalog lists is most likely a typo: an error of the file, said with
// the nearest listed path. A check or a reload fails on it; at start and
// in the background the entry stays out until the file is fixed.

// UnlistedPath is an entry's path that no list of the upstream knows.
type UnlistedPath struct {
	File  string
	Entry *config.Entry
	Path  string
	Plan  string // the key's plan that does not list it either, "" for none
	Near  string // the listed path it is probably a typo of, or ""
}

func (u *UnlistedPath) Error() string {
	msg := fmt.Sprintf("%s:%d: %s.path: discovery lists no endpoint %s", u.File, u.Entry.KeyLine("path"), u.Entry.Key, u.Path)
	if u.Plan != "" {
		msg += fmt.Sprintf(", nor does the key's plan (%s)", u.Plan)
	}
	if u.Near != "" {
		return msg + "; did you mean " + u.Near + "?"
	}
	return msg + ": no such endpoint"
}

// Unlisted returns, in line order, one per entry and path, the data-API
// paths of cfg's entries named one by one that neither listing
// (AddDiscovery) nor the catalog lists. Paths of a version the listing
// holds none of (not read), or still holding all, are not judged.
func Unlisted(cfg *config.Config, listing config.Listing) []*UnlistedPath {
	a := cfg.APIs[config.APIData]
	if a == nil || len(listing) == 0 {
		return nil
	}
	var idx *pathIndex
	var out []*UnlistedPath
	for _, t := range a.Tuples {
		if t.Endpoint != nil || t.Entry.Origin != nil {
			continue // the catalog's, or selected from discovery
		}
		if _, listed := listing[t.Path]; listed || slices.Contains(strings.Split(t.Path, "/"), config.All) {
			continue
		}
		if idx == nil {
			idx = newPathIndex(listing)
		}
		if !idx.versions[version(t.Path)] || slices.ContainsFunc(out, func(u *UnlistedPath) bool { return u.Entry.Key == t.Entry.Key && u.Path == t.Path }) {
			continue
		}
		out = append(out, &UnlistedPath{File: cfg.File, Entry: t.Entry, Path: t.Path, Near: idx.near(t.Path)})
	}
	slices.SortStableFunc(out, func(x, y *UnlistedPath) int { return x.Entry.KeyLine("path") - y.Entry.KeyLine("path") })
	return out
}

// NotInPlan keeps of what Unlisted found the paths the key's plan p does
// not list either, naming the plan; all of them when p is nil.
func NotInPlan(unlisted []*UnlistedPath, p *plan.Plan) []*UnlistedPath {
	if p == nil {
		return unlisted
	}
	var out []*UnlistedPath
	for _, u := range unlisted {
		if !p.Listed(u.Path) {
			named := *u
			named.Plan = p.Name
			out = append(out, &named)
		}
	}
	return out
}

// pathIndex is a listing's paths by their parent, for the listed path
// nearest one that is not: compared with its siblings, or its parent with
// the parents; never with every path.
type pathIndex struct {
	versions map[string]bool
	parents  []string
	leaves   map[string][]string
}

func newPathIndex(listing config.Listing) *pathIndex {
	idx := &pathIndex{versions: map[string]bool{}, leaves: map[string][]string{}}
	for path := range listing {
		idx.versions[version(path)] = true
		parent, leaf := splitLeaf(path)
		if idx.leaves[parent] == nil {
			idx.parents = append(idx.parents, parent)
		}
		idx.leaves[parent] = append(idx.leaves[parent], leaf)
	}
	slices.Sort(idx.parents)
	for _, l := range idx.leaves {
		slices.Sort(l)
	}
	return idx
}

// near is the listed path that path is probably a typo of, or "".
func (idx *pathIndex) near(path string) string {
	parent, leaf := splitLeaf(path)
	leaves, ok := idx.leaves[parent]
	if !ok {
		if parent = config.NearName(parent, idx.parents); parent == "" {
			return ""
		}
		leaves = idx.leaves[parent]
		if _, found := slices.BinarySearch(leaves, leaf); found {
			return parent + "/" + leaf
		}
	}
	if l := config.NearName(leaf, leaves); l != "" {
		return parent + "/" + l
	}
	return ""
}

func splitLeaf(path string) (parent, leaf string) {
	i := strings.LastIndexByte(path, '/')
	if i < 0 {
		return "", path
	}
	return path[:i], path[i+1:]
}

// version is the version prefix of a data-API path: "/v1/", "/v2/".
func version(path string) string {
	if len(path) > 4 && path[0] == '/' && path[3] == '/' {
		return path[:4]
	}
	return ""
}

// discovery is what the discovery this expansion read lists; empty when
// it read none.
func (r *resolution) discovery(a *config.API) config.Listing {
	listing := config.Listing{}
	for _, path := range []string{config.ListDataV1, config.ListDataV2} {
		if l, ok := r.lists[listKey(a, path)]; ok && l.ok {
			AddDiscovery(listing, l.rows)
		}
	}
	return listing
}

// unlisted keeps out the entries whose paths no list knows, blamed on
// the data API as a file's error, and returns cfg resolved without them;
// not in the background it fails with them instead.
func (r *resolution) unlisted(cfg, out *config.Config, listing config.Listing, background bool, blamed map[string]error) (*config.Config, map[string]error, error) {
	a := out.APIs[config.APIData]
	if a == nil {
		return out, blamed, nil
	}
	bad := NotInPlan(Unlisted(out, listing), r.x.plans(a))
	if len(bad) == 0 {
		return out, blamed, nil
	}
	errs := make([]error, len(bad))
	for i, u := range bad {
		errs[i] = u
	}
	err := errors.Join(errs...)
	if !background {
		return nil, blamed, err
	}
	src := cfg.APIs[config.APIData]
	for _, u := range bad {
		if i := slices.IndexFunc(src.Metrics, func(e *config.Entry) bool { return e.Key == u.Entry.Key }); i >= 0 {
			r.waiting[src.Metrics[i]] = true
			r.entryAPI[src.Metrics[i]] = config.APIData
		}
		if key := listKey(src, config.DataDiscovery(u.Path)); !slices.Contains(r.needs[config.APIData], key) {
			r.needs[config.APIData] = append(r.needs[config.APIData], key)
		}
	}
	if blamed == nil {
		blamed = map[string]error{}
	}
	blamed[config.APIData] = errors.Join(blamed[config.APIData], err)
	out, err = r.withoutWaiting(cfg).ResolveWith(r.resolve, r.match)
	return out, blamed, err
}
