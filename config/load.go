package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"
)

// MaxFileSize bounds a configuration file. The example is 2 KiB and a
// thousand tuples take a few dozen; parsing costs a few hundred times the
// size in memory, so past this the file is refused unread.
const MaxFileSize = 1 << 20

// Load reads, parses and validates a configuration file. Credentials named
// by token_env and token_file are read now: a missing one is an error.
func Load(file string) (*Config, error) {
	b, err := readAtMost(file, MaxFileSize)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	return Parse(file, b, os.Getenv)
}

// readAtMost reads a file, or its first limit+1 bytes when it is longer.
func readAtMost(file string, limit int64) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit+1))
}

// Parse validates the YAML in b as if read from file; getenv resolves
// token_env.
func Parse(file string, b []byte, getenv func(string) string) (*Config, error) {
	if len(b) > MaxFileSize {
		return nil, &Error{Problems: []string{fmt.Sprintf("%s: the file is larger than %d MiB; a configuration is a few KiB", file, MaxFileSize>>20)}}
	}
	l := &errorList{file: file}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			l.addAt(1, "", "the file is empty: configure at least one of %s", strings.Join(APINames, ", "))
			return nil, l.err()
		}
		return nil, &Error{Problems: []string{yamlError(file, b, err)}}
	}
	cfg := &Config{File: file, APIs: map[string]*API{}}
	root := doc.Content[0]
	pairs, ok := l.mapping(root, "")
	if !ok {
		return nil, l.err()
	}
	for _, p := range pairs {
		if !slices.Contains(APINames, p.key) {
			l.add(p.keyN, p.key, "%s", unknownKeyMessage(p.key, APINames))
			continue
		}
		if a := l.api(p.key, p.value, getenv); a != nil {
			a.line = p.keyN.Line
			cfg.APIs[p.key] = a
		}
	}
	if len(pairs) > 0 && len(cfg.APIs) == 0 && len(l.errs) == 0 {
		l.add(root, "", "configure at least one of %s", strings.Join(APINames, ", "))
	}
	if l.tooMuch {
		return nil, l.err() // what was read is partial: nothing to expand
	}
	// Entries are expanded and checked even when other parts of the file
	// are wrong, so that one run shows every error; expand skips entries
	// that were read with errors.
	l.expand(cfg)
	if err := l.err(); err != nil {
		return nil, err
	}
	return cfg, nil
}

func (l *errorList) api(name string, n *yaml.Node, getenv func(string) string) *API {
	a := &API{
		Name:         name,
		Auth:         "header",
		Timeout:      DefaultTimeout,
		Concurrency:  DefaultConcurrency,
		MaxStaleness: DefaultMaxStaleness,
		MaxTuples:    DefaultMaxTuples,
	}
	pairs, ok := l.mapping(n, name)
	if !ok {
		return nil
	}
	var rawURL string
	var urlNode, metricsNode *yaml.Node
	keyNodes := map[string]*yaml.Node{}
	var httpKeys httpClientPairs
	for _, p := range pairs {
		k := join(name, p.key)
		keyNodes[p.key] = p.keyN
		if httpKeys.take(l, p, k) {
			continue
		}
		switch p.key {
		case "url":
			urlNode = p.value
			l.str(p.value, k, &rawURL)
		case "token_env":
			l.str(p.value, k, &a.TokenEnv)
		case "token_file":
			l.str(p.value, k, &a.TokenFile)
		case "auth":
			l.str(p.value, k, &a.Auth)
			if a.Auth != "header" && a.Auth != "query" {
				l.add(p.value, k, "must be header or query, got %q", a.Auth)
			}
		case "timeout":
			l.duration(p.value, k, &a.Timeout)
			if a.Timeout == 0 {
				l.add(p.value, k, "must be greater than 0")
			}
		case "concurrency":
			l.integer(p.value, k, &a.Concurrency)
			if a.Concurrency < 1 || a.Concurrency > 64 {
				l.add(p.value, k, "must be between 1 and 64, got %d", a.Concurrency)
			}
		case "rate_limit":
			a.RateLimitSet = true
			if l.float(p.value, k, &a.RateLimit) && !(a.RateLimit >= 0 && a.RateLimit <= MaxRateLimit) {
				l.add(p.value, k, "must be between 0 and %d requests per minute (0 = no limit), got %v", MaxRateLimit, a.RateLimit)
				a.RateLimit = 0
			}
		case "daily_budget":
			a.DailyBudgetSet = true
			if l.integer(p.value, k, &a.DailyBudget) && (a.DailyBudget < 1 || a.DailyBudget > MaxDailyBudget) {
				l.add(p.value, k, "must be between 1 and %d calls per day, got %d (leave it out for no budget)", MaxDailyBudget, a.DailyBudget)
				a.DailyBudget = 0
			}
		case "max_staleness":
			l.duration(p.value, k, &a.MaxStaleness)
		case "revalidate":
			l.duration(p.value, k, &a.Revalidate)
		case "max_tuples":
			n := len(l.errs)
			l.integer(p.value, k, &a.MaxTuples)
			if a.MaxTuples < 1 {
				l.add(p.value, k, "must be at least 1, got %d", a.MaxTuples)
			} else if a.MaxTuples > MaxMaxTuples {
				l.add(p.value, k, "must be at most %d, got %d", MaxMaxTuples, a.MaxTuples)
			}
			if len(l.errs) > n {
				a.MaxTuples = noMaxTuples // reported; expand does not compare
			}
		case "metrics":
			metricsNode = p.value
		default:
			l.add(p.keyN, k, "%s", unknownKeyMessage(p.key, sectionKeys))
		}
	}
	if urlNode == nil {
		l.add(n, join(name, "url"), "is required")
	} else if rawURL != "" {
		u, err := url.Parse(rawURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			l.add(urlNode, join(name, "url"), "must be an absolute http(s) URL, got %q", shownURL(rawURL))
		} else if u.User != nil || u.RawQuery != "" || u.ForceQuery {
			l.add(urlNode, join(name, "url"), "must not carry credentials or a query; use token_env or token_file")
		} else if strings.Contains(rawURL, "#") {
			// Sent nowhere: every request would go to the address
			// without the path after it, while logs name that path.
			l.add(urlNode, join(name, "url"), "must not carry a #fragment: nothing after \"#\" is ever sent")
		} else {
			u.Path = strings.TrimSuffix(u.Path, "/")
			if prefix := versionSuffix(name, u.Path); prefix != "" {
				fixed := *u
				fixed.Path = u.Path[:len(u.Path)-len(prefix)]
				l.add(urlNode, join(name, "url"), "%q ends in %s, but metrics paths already start with %s (calls would go to %s%s/...): drop %s, url: %s",
					shownURL(rawURL), prefix, strings.Join(versionPrefixes[name], " or "), prefix, prefix, prefix, fixed.String())
			} else {
				a.URL = u
			}
		}
	}
	if a.Auth == "query" && name == APIIndicator {
		l.add(n, join(name, "auth"), "the Indicator API takes its key only as a bearer header")
	}
	a.credentialKey = keyNodes["token_env"] != nil || keyNodes["token_file"] != nil
	l.credential(a, keyNodes, getenv)
	l.httpClient(a, &httpKeys)
	if metricsNode == nil {
		l.add(n, join(name, "metrics"), "is required: list at least one metric")
	} else {
		a.Metrics = l.entries(name, metricsNode)
	}
	return a
}

// shownURL is a refused URL as a message may show it: user information
// and query can hold a credential, so both are masked.
func shownURL(raw string) string {
	s, query, hasQuery := strings.Cut(raw, "?")
	s, _, _ = strings.Cut(s, "#")
	if at := strings.LastIndex(s, "@"); at >= 0 {
		scheme := ""
		if i := strings.Index(s[:at], "://"); i >= 0 {
			scheme = s[:i+3]
		}
		s = scheme + "<redacted>@" + s[at+1:]
	}
	if hasQuery && query != "" {
		s += "?<redacted>"
	}
	return s
}

// versionPrefixes are the path prefixes every metrics path of an API
// starts with; a url that ends in one doubles it on every call.
var versionPrefixes = map[string][]string{
	APIData:      {"/v1", "/v2"},
	APIIndicator: {"/api"},
}

// versionSuffix returns the version prefix the path of a section's url
// ends in, or "".
func versionSuffix(api, path string) string {
	for _, p := range versionPrefixes[api] {
		if strings.HasSuffix(strings.ToLower(path), p) {
			return p
		}
	}
	return ""
}

// maxTokenFile bounds what is read of a token_file: a credential is one
// line; a file past this is not one (a log, a device).
const maxTokenFile = 64 << 10

// credential reads token_env or token_file, trimmed of surrounding space;
// a relative token_file is read from the configuration file's directory
// (files.go). The value is never part of an error message. A credential
// that cannot be read, or is not one line, is reported by expand, and
// only when an entry of the section needs it: a section of key-free
// endpoints runs without one.
func (l *errorList) credential(a *API, keys map[string]*yaml.Node, getenv func(string) string) {
	dir := filepath.Dir(l.file)
	// what names the credential in a message; empty and oneLine end the
	// messages for an empty value and one that is not one line.
	var v, keyName, what, empty, oneLine string
	unread := func(msg string) { a.unread = &problem{keys[keyName].Line, join(a.Name, keyName), msg} }
	switch {
	case a.TokenEnv != "" && a.TokenFile != "":
		l.add(keys["token_file"], a.Name, "set token_env or token_file, not both")
		return
	case a.TokenEnv != "":
		a.source = "environment variable " + a.TokenEnv
		keyName, what, empty, oneLine = "token_env", a.source, " is not set or empty", "; a credential is one line"
		v = getenv(a.TokenEnv)
	case a.TokenFile != "":
		path := filePath(dir, a.TokenFile)
		a.source = "file " + path
		keyName, what = "token_file", path
		rel := relativeTo(dir, a.TokenFile)
		empty, oneLine = " is empty"+rel, "; a credential is one line (a trailing line break is fine)"+rel
		b, err := readAtMost(path, maxTokenFile)
		if err != nil {
			unread(readProblem(dir, a.TokenFile, err))
			return
		}
		if len(b) > maxTokenFile {
			unread(fmt.Sprintf("%s is larger than %d KiB; a credential is one line%s", path, maxTokenFile>>10, rel))
			return
		}
		v = string(b)
	default:
		return
	}
	v = strings.TrimSpace(v)
	if v == "" {
		unread(what + empty)
	} else if why := notOneLine(v); why != "" {
		unread(what + " " + why + oneLine)
		return
	}
	a.token = Secret(v)
}

// notOneLine says why a trimmed credential cannot be sent: a line break
// or another control character inside it would fail every call, or split
// the header it is sent in. It never quotes the credential.
func notOneLine(v string) string {
	i := strings.IndexFunc(v, unicode.IsControl)
	switch {
	case i < 0:
		return ""
	case v[i] == '\n' || v[i] == '\r':
		return "holds a line break"
	}
	return "holds a control character"
}
