package main

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/onchain-exporter/onchain_exporter/budget"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/expand"
)

// landingInfo is what the landing page shows of the configuration in
// force. It holds names and counts only: nothing of a section that could
// carry a credential.
type landingInfo struct {
	MetricsPath string
	Demo        bool
	ConfigFile  string
	APIs        []apiInfo // one per API, in config.APINames order
	// Findings are the configuration's possible typos (config.Findings),
	// each file:line: key: message.
	Findings []string
}

// apiInfo is one API's line on the landing page.
type apiInfo struct {
	Name       string
	Configured bool
	Tuples     int
	// Status, when set, is shown after the tuple count (the state of the
	// API's expansion, say).
	Status string
	// Budget says how daily_budget cut the plan, when it did.
	Budget string
}

// infoOf describes a configuration for the landing page; plans are the
// daily budget's plans the exporter runs (collector.Exporter.Plans, which
// count the cadence learned of the series without a window), the
// configuration's forecast when nil.
func infoOf(metricsPath string, demo bool, cfg *config.Config, plans map[string]budget.Plan) landingInfo {
	info := landingInfo{MetricsPath: metricsPath, Demo: demo, ConfigFile: cfg.File}
	if plans == nil {
		plans = map[string]budget.Plan{}
		for _, f := range budget.Forecast(cfg).APIs {
			plans[f.API] = f.Plan
		}
	}
	for _, name := range config.APINames {
		a := apiInfo{Name: name}
		if s := cfg.APIs[name]; s != nil {
			a.Configured, a.Tuples = true, len(s.Tuples)
		}
		if p, ok := plans[name]; ok && p.Cut() {
			a.Budget = "daily_budget: " + p.Summary(3)
		}
		info.APIs = append(info.APIs, a)
	}
	for _, f := range cfg.Findings() {
		info.Findings = append(info.Findings, f.String())
	}
	return info
}

// apiTitles name the APIs in the links of the landing page.
var apiTitles = map[string]string{
	config.APIData:      "the data API",
	config.APIIndicator: "the Indicator API",
	config.APIConsensus: "the Analyst Consensus API",
}

// landingConfig is the landing page of info. The toolkit renders it with
// text/template, which escapes nothing: every text that comes from the
// configuration is escaped here.
func landingConfig(info landingInfo) web.LandingConfig {
	desc := "Prometheus exporter for on-chain, equity indicator and analyst consensus APIs"
	if info.Demo {
		desc += " (demo: serving a built-in fake upstream)"
	}
	// The metrics path is the operator's flag, written into an href: it
	// is escaped as a URL path, then as HTML.
	metrics := (&url.URL{Path: info.MetricsPath}).EscapedPath()
	links := []web.LandingLinks{{Address: html.EscapeString(metrics), Text: "Metrics", Description: "every configured API"}}
	for _, a := range info.APIs {
		d := "not configured"
		if a.Configured {
			d = plural(a.Tuples, "tuple")
		}
		if a.Status != "" {
			d += ", " + a.Status
		}
		if a.Budget != "" {
			d += "; " + a.Budget
		}
		links = append(links, web.LandingLinks{
			Address:     html.EscapeString(metrics + "?collect[]=" + a.Name),
			Text:        "Metrics of " + apiTitles[a.Name] + " only",
			Description: html.EscapeString(d),
		})
	}
	links = append(links, web.LandingLinks{Address: "/-/healthy", Text: "Health"})
	return web.LandingConfig{
		Name:        exporterName,
		Description: desc,
		Version:     html.EscapeString(version.Info()),
		Profiling:   "false", // no pprof handlers are served
		Links:       links,
		ExtraHTML:   "<div>Configuration file: <code>" + html.EscapeString(info.ConfigFile) + "</code></div>" + findingsHTML(info.Findings),
	}
}

// findingsHTML lists the configuration's findings, escaped.
func findingsHTML(findings []string) string {
	if len(findings) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("<div>Findings (probably typos, asked for as written; onchain_exporter_config_findings counts them):<ul>")
	for _, f := range findings {
		b.WriteString("<li><code>" + html.EscapeString(f) + "</code></li>")
	}
	b.WriteString("</ul></div>")
	return b.String()
}

// newLandingPage renders the landing page of info.
func newLandingPage(info landingInfo) (*web.LandingPageHandler, error) {
	h, err := web.NewLandingPage(landingConfig(info))
	if err != nil {
		return nil, fmt.Errorf("building the landing page: %w", err)
	}
	return h, nil
}

// landingPage serves the landing page of the configuration in force,
// with the live state of each API's expansion: the page is rendered per
// request (a user opens it now and then; the rendering is small).
type landingPage struct {
	info atomic.Pointer[landingInfo]
	// status, when set, says how each API's expansion stands, by name.
	status func() map[string]string
}

// Store puts the landing information of a configuration in force.
func (l *landingPage) Store(info landingInfo) { l.info.Store(&info) }

func (l *landingPage) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	info := *l.info.Load()
	info.APIs = slices.Clone(info.APIs)
	if l.status != nil {
		st := l.status()
		for i := range info.APIs {
			if s := st[info.APIs[i].Name]; s != "" {
				info.APIs[i].Status = s
			}
		}
	}
	h, err := newLandingPage(info)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	h.ServeHTTP(w, r)
}

// expansionStatus words an API's expansion state for the landing page,
// which has no authentication by default: the error of its lists goes
// through clean (upstream.Pool.Clean), which takes the API's credential
// out of it, whatever carried it in, and cuts it.
func expansionStatus(states map[string]expand.State, clean func(api, text string) string) map[string]string {
	out := make(map[string]string, len(states))
	for api, st := range states {
		switch {
		case st.OK:
			out[api] = "lists read " + st.LastSuccess.UTC().Format(time.RFC3339)
		case st.LastError != "":
			out[api] = fmt.Sprintf("lists failing (%s), %s waiting", clean(api, st.LastError), plural(st.Waiting, "entry"))
		default:
			out[api] = fmt.Sprintf("lists not read yet, %s waiting", plural(st.Waiting, "entry"))
		}
	}
	return out
}

// plural is "1 tuple", "2 tuples".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "y") {
		return fmt.Sprintf("%d %sies", n, noun[:len(noun)-1])
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
