package config

import (
	"fmt"
	"slices"
	"strings"
)

// UnlistedParams checks the configuration against a listing of the
// parameters each path accepts, as the data API's discovery endpoints
// publish it (path → parameter names), and returns a warning, with the
// file:line of the parameter, for each parameter an entry sends that the
// listing does not have for the tuple's path. Paths outside the listing
// are not checked (there is nothing to compare with), nor parameters
// filled into the path, limit (the exporter sends it on every call), and
// parameters the built-in catalog lists for the path (they were checked at
// load). The upstream may still accept what it does not list, so these are
// warnings, not errors.
func (c *Config) UnlistedParams(listed map[string][]string) []string {
	l := &errorList{file: c.File}
	for _, t := range c.Tuples {
		names, ok := listed[t.Path]
		if !ok {
			continue
		}
		e := t.Entry
		inPath := map[string]bool{}
		for _, m := range placeholderRE.FindAllStringSubmatch(e.Path, -1) {
			inPath[m[1]] = true
		}
		var catalog []string
		if t.Endpoint != nil {
			catalog = t.Endpoint.Params
		}
		for _, p := range e.Params {
			if inPath[p.Name] || p.Name == "limit" || contains(catalog, p.Name) || contains(names, p.Name) {
				continue
			}
			msg := fmt.Sprintf("discovery lists no parameter %s for %s (listed: %s); it is sent anyway", p.Name, t.Path, listedNames(names))
			if s := nearKey(p.Name, names, 3); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			}
			l.addAt(p.Line, join(e.Key, p.Name), "%s", msg)
		}
	}
	return l.sorted()
}

func listedNames(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(slices.Sorted(slices.Values(names)), ", ")
}
