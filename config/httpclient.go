package config

import (
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	promconfig "github.com/prometheus/common/config"
	"gopkg.in/yaml.v3"
)

// The HTTP client keys of an API section are those of Prometheus and
// blackbox_exporter (prometheus/common/config), with the same meaning, so
// that a corporate CA or proxy is written the way it is written everywhere
// else in the ecosystem. Only transport settings are taken: the credential
// is ours (token_env, token_file, auth), sent as each API expects.
var httpClientKeys = []string{"tls_config", "proxy_url", "no_proxy", "proxy_from_environment", "proxy_connect_header", "follow_redirects"}

// tlsConfigKeys are the keys taken inside tls_config.
var tlsConfigKeys = []string{"ca_file", "cert_file", "key_file", "server_name", "insecure_skip_verify", "min_version", "max_version"}

// refusedHTTPKeys are keys of the ecosystem's HTTP client configuration
// that a section does not take, with the reason a user is told.
var refusedHTTPKeys = map[string]string{
	"authorization":     ourCredential,
	"basic_auth":        ourCredential,
	"bearer_token":      ourCredential,
	"bearer_token_file": ourCredential,
	"oauth2":            ourCredential,
	"http_headers":      "not taken here: the exporter sets the headers each API expects",
}

const ourCredential = "not taken here: the credential comes from token_env or token_file, sent the way the API expects (see auth)"

// httpClientPairs collects a section's HTTP client keys while the section
// is read; httpClient turns them into the section's HTTPClient.
type httpClientPairs []pair

// take keeps p when it is an HTTP client key, reports it when it is a
// refused one, and says whether p was either.
func (h *httpClientPairs) take(l *errorList, p pair, key string) bool {
	if why, ok := refusedHTTPKeys[p.key]; ok {
		l.add(p.keyN, key, "%s", why)
		return true
	}
	if slices.Contains(httpClientKeys, p.key) {
		*h = append(*h, p)
		return true
	}
	return false
}

// httpClient reads the section's TLS and proxy keys into a.HTTPClient and
// checks them now: files are read relative to the configuration file's
// directory (files.go), and a CA or client certificate that cannot be read
// or used is a load error naming its key and line.
func (l *errorList) httpClient(a *API, h *httpClientPairs) {
	c := &a.HTTPClient
	*c = promconfig.HTTPClientConfig{EnableHTTP2: true}
	dir := filepath.Dir(l.file)
	errs := len(l.errs)
	nodes := map[string]*yaml.Node{}
	fromEnvSet := false
	for _, p := range *h {
		k := join(a.Name, p.key)
		nodes[p.key] = p.keyN
		switch p.key {
		case "tls_config":
			l.tlsConfig(&c.TLSConfig, p.value, k, dir)
		case "proxy_url":
			var raw string
			l.str(p.value, k, &raw)
			if raw == "" {
				break
			}
			u, err := url.Parse(raw)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "socks5") || u.Host == "" {
				l.add(p.value, k, "must be an http, https or socks5 URL, got %q", shownURL(raw))
				break
			}
			c.ProxyURL = promconfig.URL{URL: u}
		case "no_proxy":
			l.str(p.value, k, &c.NoProxy)
		case "proxy_from_environment":
			fromEnvSet = l.boolean(p.value, k, &c.ProxyFromEnvironment)
		case "proxy_connect_header":
			c.ProxyConnectHeader = l.connectHeader(p.value, k)
		case "follow_redirects":
			// Off unless set (Prometheus defaults it on): an API answers
			// where it is asked. On, a redirect within the API's host is
			// followed, never one to another host (upstream.New).
			l.boolean(p.value, k, &c.FollowRedirects)
		}
	}
	hasURL := c.ProxyURL.URL != nil
	switch {
	case hasURL && c.ProxyFromEnvironment:
		l.add(nodes["proxy_from_environment"], join(a.Name, "proxy_from_environment"), "set proxy_url or proxy_from_environment: true, not both")
	case c.NoProxy != "" && !hasURL:
		l.add(nodes["no_proxy"], join(a.Name, "no_proxy"), "needs proxy_url (with proxy_from_environment, NO_PROXY is read from the environment)")
	case !hasURL && !fromEnvSet:
		// Unlike Prometheus, environment proxies (HTTPS_PROXY, NO_PROXY)
		// are honoured unless proxy_from_environment: false says not to:
		// the exporter always did, and a deployment behind a proxy set in
		// the environment must not lose the upstream on upgrade.
		c.ProxyFromEnvironment = true
	}
	if len(c.ProxyConnectHeader) > 0 && !hasURL && !c.ProxyFromEnvironment {
		l.add(nodes["proxy_connect_header"], join(a.Name, "proxy_connect_header"), "needs a proxy: set proxy_url or proxy_from_environment: true")
	}
	if len(l.errs) == errs {
		// What the library itself refuses, should a case above miss it.
		if err := c.Validate(); err != nil {
			l.add(nil, a.Name, "%v", err)
		}
	}
}

// tlsConfig reads a tls_config mapping and checks its files.
func (l *errorList) tlsConfig(t *promconfig.TLSConfig, n *yaml.Node, key, dir string) {
	pairs, ok := l.mapping(n, key)
	if !ok {
		return
	}
	nodes := map[string]*yaml.Node{}
	strs := map[string]*string{"ca_file": &t.CAFile, "cert_file": &t.CertFile, "key_file": &t.KeyFile, "server_name": &t.ServerName}
	for _, p := range pairs {
		k := join(key, p.key)
		nodes[p.key] = p.value
		switch dst := strs[p.key]; {
		case dst != nil:
			l.str(p.value, k, dst)
		case p.key == "insecure_skip_verify":
			l.boolean(p.value, k, &t.InsecureSkipVerify)
		case p.key == "min_version":
			l.tlsVersion(p.value, k, &t.MinVersion)
		case p.key == "max_version":
			l.tlsVersion(p.value, k, &t.MaxVersion)
		default:
			l.add(p.keyN, k, "%s", unknownKeyMessage(p.key, tlsConfigKeys))
		}
	}
	written := map[string]string{"ca_file": t.CAFile, "cert_file": t.CertFile, "key_file": t.KeyFile}
	t.SetDirectory(dir)
	errs := len(l.errs)
	switch {
	case t.CertFile != "" && t.KeyFile == "":
		l.add(nodes["cert_file"], join(key, "cert_file"), "needs key_file")
	case t.KeyFile != "" && t.CertFile == "":
		l.add(nodes["key_file"], join(key, "key_file"), "needs cert_file")
	}
	readable := func(file, name string) bool {
		if file == "" {
			return false
		}
		if _, err := os.ReadFile(file); err != nil {
			l.add(nodes[name], join(key, name), "%s", readProblem(dir, written[name], err))
			return false
		}
		return true
	}
	// The library reads and parses the files, each alone first so that
	// its error is reported at its own key.
	if readable(t.CAFile, "ca_file") {
		if _, err := promconfig.NewTLSConfig(&promconfig.TLSConfig{CAFile: t.CAFile}); err != nil {
			l.add(nodes["ca_file"], join(key, "ca_file"), "%v (a PEM file of one or more CA certificates is expected)", err)
		}
	}
	certOK := readable(t.CertFile, "cert_file")
	if keyOK := readable(t.KeyFile, "key_file"); certOK && keyOK {
		if _, err := promconfig.NewTLSConfig(&promconfig.TLSConfig{CertFile: t.CertFile, KeyFile: t.KeyFile}); err != nil {
			l.add(nodes["cert_file"], join(key, "cert_file"), "%v", err)
		}
	}
	if len(l.errs) == errs {
		if _, err := promconfig.NewTLSConfig(t); err != nil {
			l.add(n, key, "%v", err)
		}
	}
}

func (l *errorList) boolean(n *yaml.Node, key string, dst *bool) bool {
	return typed(l, n, key, dst, "true or false", strconv.ParseBool, "!!bool")
}

func (l *errorList) tlsVersion(n *yaml.Node, key string, dst *promconfig.TLSVersion) {
	var s string
	l.str(n, key, &s)
	if s == "" {
		return
	}
	v, ok := promconfig.TLSVersions[s]
	if !ok {
		names := slices.Sorted(maps.Keys(promconfig.TLSVersions))
		l.add(n, key, "must be one of %s, got %q", strings.Join(names, ", "), s)
		return
	}
	*dst = v
}

// connectHeader reads proxy_connect_header: header names, each with a
// value or a list of values. The values are secrets (a proxy credential)
// and never appear in a message.
func (l *errorList) connectHeader(n *yaml.Node, key string) promconfig.ProxyHeader {
	pairs, ok := l.mapping(n, key)
	if !ok {
		return nil
	}
	h := promconfig.ProxyHeader{}
	for _, p := range pairs {
		k := join(key, p.key)
		if p.key == "" || strings.ContainsAny(p.key, " :\t\r\n") {
			l.add(p.keyN, k, "is not a valid header name")
			continue
		}
		var values []promconfig.Secret
		items := []*yaml.Node{p.value}
		if p.value.Kind == yaml.SequenceNode {
			if !l.spend(p.value, len(p.value.Content)) {
				return nil
			}
			items = p.value.Content
		}
		for _, v := range items {
			if v.Kind != yaml.ScalarNode || v.Tag == "!!null" || v.Value == "" {
				l.add(v, k, "must be a value or a list of values")
				continue
			}
			values = append(values, promconfig.Secret(v.Value))
		}
		h[p.key] = values
	}
	return h
}
