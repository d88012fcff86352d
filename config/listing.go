package config

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Listing is what the data API's discovery endpoints say of its paths:
// per path, the parameters it takes and, for those it lists them of, the
// values each accepts (nil: the name only).
type Listing map[string]map[string][]string

// CheckListing is CheckListingFindings as the lines a log or a check
// prints, file:line: key: message.
func (c *Config) CheckListing(listing Listing) []string {
	fs := c.CheckListingFindings(listing)
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.String()
	}
	return out
}

// CheckListingFindings checks the data API's tuples against a discovery
// listing and returns findings, in line order: a parameter the listing
// does not have for the tuple's path, or a value it does not have for that
// parameter, each with the listed one it is probably a typo of; a path
// neither the catalog nor the listing knows, once per entry, with the
// listed path it is near, since nothing else about it can be checked, and
// any parameter of it that the listing has for no path but is one edit
// from one it has (exchnage: binance), since it would become a label
// silently. Parameters filled into the path and limit are not checked, nor
// the paths of a version whose discovery the listing does not hold. The
// upstream may accept what it does not list: warnings, not errors.
func (c *Config) CheckListingFindings(listing Listing) []Finding {
	if len(listing) == 0 {
		return nil
	}
	known := map[string]bool{} // parameter names listed for any path
	versions := map[string]bool{}
	for path, params := range listing {
		versions[version(path)] = true
		for name := range params {
			known[name] = true
		}
	}
	knownNames := slices.Sorted(maps.Keys(known))
	paths := slices.Sorted(maps.Keys(listing))
	l := &findingList{file: c.File}
	for _, t := range c.Tuples {
		if t.API != APIData || !versions[version(t.Path)] {
			continue
		}
		e := t.Entry
		params, listed := listing[t.Path]
		if !listed {
			if t.Endpoint != nil {
				continue // checked at load against the catalog
			}
			msg := fmt.Sprintf("discovery lists no endpoint %s: its parameters and their values cannot be checked", t.Path)
			if s := nearListed(t.Path, paths); s != "" {
				msg += fmt.Sprintf("; did you mean %s?", s)
			}
			l.add(FindingListingPath, e.KeyLine("path"), join(e.Key, "path"), "%s", msg)
			for _, p := range e.Params {
				if e.takesAnyway(p.Name) || known[p.Name] {
					continue
				}
				if s := nearKey(p.Name, knownNames, 4); s != "" {
					l.add(FindingListingParameter, p.Line, join(e.Key, p.Name), "discovery lists a parameter %s for no endpoint; did you mean %q? (it is sent, and labels the series, as written)", p.Name, s)
				}
			}
			continue
		}
		names := slices.Sorted(maps.Keys(params))
		var catalog []string
		if t.Endpoint != nil {
			catalog = t.Endpoint.Params
		}
		for _, p := range e.Params {
			if e.takesAnyway(p.Name) {
				continue
			}
			values, has := params[p.Name]
			if !has {
				if slices.Contains(catalog, p.Name) {
					continue // checked at load
				}
				l.add(FindingListingParameter, p.Line, join(e.Key, p.Name), "discovery lists no parameter %s for %s (listed: %s); it is sent anyway%s",
					p.Name, t.Path, cmp.Or(strings.Join(names, ", "), "none"), didYouMean(nearKey(p.Name, names, 3)))
				continue
			}
			v, ok := t.Params.Lookup(p.Name)
			if !ok || len(values) == 0 || slices.Contains(values, v) {
				continue
			}
			l.add(FindingListingValue, p.Line, join(e.Key, p.Name), "discovery lists no value %q of %s for %s (listed: %s); it is asked for anyway%s",
				v, p.Name, t.Path, someValues(values, 8), didYouMean(nearKey(v, values, 3)))
		}
	}
	return SortFindings(l.list)
}

// nearListed returns the listed path that path is near, or "": as long,
// every segment equal but those one edit (two from 8 characters on) from
// the listed one, at least one of them; the first such path in paths.
func nearListed(path string, paths []string) string {
	segs := strings.Split(path, "/")
	for _, p := range paths {
		ls := strings.Split(p, "/")
		if len(ls) != len(segs) {
			continue
		}
		near := true
		for i := range segs {
			if segs[i] != ls[i] && nearKey(segs[i], ls[i:i+1], 3) == "" {
				near = false
				break
			}
		}
		if near {
			return p
		}
	}
	return ""
}

// someValues lists at most n of a listing's values, in its order.
func someValues(values []string, n int) string {
	if len(values) <= n {
		return strings.Join(values, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(values[:n], ", "), len(values)-n)
}

// version is the version prefix of a data-API path: "/v1/", "/v2/".
func version(path string) string {
	if len(path) > 4 && path[0] == '/' && path[3] == '/' {
		return path[:4]
	}
	return ""
}
