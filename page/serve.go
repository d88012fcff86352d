package page

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/internal/text"
)

// The paths the page answers; every other one is 404.
const (
	PathIndex  = "/"
	PathSeries = "/series"
	PathJSON   = "/api/v1/status"
)

// defaultLimit is how many series a page shows unless limit says.
const defaultLimit = 100

//go:embed templates/*.html
var templateFiles embed.FS

var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"human": func(seconds float64) string { return human(time.Duration(seconds * float64(time.Second))) },
	"at": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"calls": func(f float64) string { return strconv.FormatFloat(f, 'f', 0, 64) },
	"yes":   func(b *bool) bool { return b != nil && *b },
	// ms is a short duration in seconds, to the millisecond: "0.042s".
	"ms": func(seconds any) string {
		switch v := seconds.(type) {
		case *float64:
			return strconv.FormatFloat(*v, 'f', 3, 64) + "s"
		case float64:
			return strconv.FormatFloat(v, 'f', 3, 64) + "s"
		}
		return fmt.Sprint(seconds)
	},
	"plural":  plural,
	"number":  number,
	"chart":   chartOf,
	"lead":    leadOf,
	"rfc3339": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"factor":  func(f float64) string { return strconv.FormatFloat(f, 'g', 3, 64) },
	"stateClass": func(s string) string {
		return strings.ReplaceAll(s, " ", "-")
	},
	"seriesURL": func(api, key string) string {
		return PathSeries + "?" + url.Values{"api": {api}, "key": {key}}.Encode()
	},
	"labels": func(m map[string]string) string {
		var b strings.Builder // one string a label set: the index lists thousands
		for i, k := range slices.Sorted(maps.Keys(m)) {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(k)
			b.WriteByte('=')
			b.WriteString(m[k])
		}
		return b.String()
	},
}).ParseFS(templateFiles, "templates/*.html"))

// Handler serves the page, the view of one series and the JSON.
type Handler struct {
	src     Source
	derived atomic.Pointer[derived]
}

// NewHandler serves src.
func NewHandler(src Source) *Handler { return &Handler{src: src} }

// view is what the templates render.
type view struct {
	Status
	Title string
	// MetricsHref is the metrics path escaped as a URL path.
	MetricsHref  string
	States       []string
	Prev, Next   string // links of the pages
	First, Last  int
	StateFilters []stateCount
	// Orders are the links of the orders of the series (SortKeys).
	Orders []stateCount
	// Shown are the endpoints the filter keeps, at most maxShown;
	// Hidden counts the rest (the JSON has them all).
	Shown  []Endpoint
	Hidden int
	// For a series' view: its API and its endpoint and window.
	API      *API
	Endpoint *Endpoint
}

// maxShown is the most endpoints, and entries of an API, the HTML lists.
const maxShown = 50

type stateCount struct {
	State string
	N     int
	URL   string
	On    bool
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "only GET and HEAD", http.StatusMethodNotAllowed)
		return
	}
	q := r.URL.Query()
	f, order, offset, limit, err := parseQuery(q)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	switch r.URL.Path {
	case PathJSON:
		st := h.Build(f, order, offset, limit)
		st.cutForJSON()
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(st)
	case PathIndex:
		h.render(w, "index.html", h.viewOf(h.Build(f, order, offset, limit), q))
	case PathSeries:
		if f.API == "" || f.Key == "" {
			http.Error(w, "/series needs api and key, as the page's links give them", http.StatusBadRequest)
			return
		}
		st, ok := h.BuildSeries(f.API, f.Key)
		if !ok {
			http.Error(w, fmt.Sprintf("no series %q of the API %q in the configuration in force", f.Key, f.API), http.StatusNotFound)
			return
		}
		v := h.viewOf(st, q)
		s := st.Series.Items[0]
		v.API = &st.APIs[0] // BuildSeries gives the series' API alone
		for i, e := range st.Endpoints {
			if e.API == s.API && e.Path == s.Endpoint && e.Window == s.Window {
				v.Endpoint = &st.Endpoints[i]
			}
		}
		h.render(w, "series.html", v)
	default:
		http.NotFound(w, r)
	}
}

// render writes a template whole, or a 500 that says why.
func (h *Handler) render(w http.ResponseWriter, name string, v view) {
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, name, v); err != nil {
		http.Error(w, "rendering the page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

// viewOf adds the links of the filters and pages to a status.
func (h *Handler) viewOf(st Status, q url.Values) view {
	v := view{Status: st, States: States, Title: config.Namespace, MetricsHref: (&url.URL{Path: st.MetricsPath}).EscapedPath()}
	page := st.Series
	v.First = page.Offset + 1
	v.Last = page.Offset + len(page.Items)
	link := func(change func(url.Values)) string {
		c := maps.Clone(q) // q is never nil; change only sets and deletes keys
		change(c)
		return PathIndex + "?" + c.Encode()
	}
	if page.Offset > 0 {
		v.Prev = link(func(c url.Values) { c.Set("offset", strconv.Itoa(max(page.Offset-page.Limit, 0))) })
	}
	if page.Offset+len(page.Items) < page.Matched {
		v.Next = link(func(c url.Values) { c.Set("offset", strconv.Itoa(page.Offset+page.Limit)) })
	}
	for _, e := range st.Endpoints {
		if (page.Filter.API == "" || page.Filter.API == e.API) && strings.Contains(e.Path, page.Filter.Endpoint) {
			if len(v.Shown) < maxShown {
				v.Shown = append(v.Shown, e)
			} else {
				v.Hidden++
			}
		}
	}
	v.APIs = slices.Clone(v.APIs)
	for i := range v.APIs {
		if n := len(v.APIs[i].Entries); n > maxShown {
			v.APIs[i].Entries = v.APIs[i].Entries[:maxShown:maxShown]
			v.APIs[i].EntriesHidden = n - maxShown
		}
	}
	for _, o := range append([]string{""}, SortKeys...) {
		name := map[string]string{"": "configuration order", SortLate: "late first", SortChanged: "last change first"}[o]
		v.Orders = append(v.Orders, stateCount{State: name, On: page.Sort == o,
			URL: link(func(c url.Values) {
				c.Set("sort", o)
				if o == "" {
					c.Del("sort")
				}
				c.Del("offset")
			})})
	}
	for _, s := range States {
		v.StateFilters = append(v.StateFilters, stateCount{State: s, N: st.States[s], On: page.Filter.State == s,
			URL: link(func(c url.Values) { c.Set("state", s); c.Del("offset") })})
	}
	return v
}

// parseQuery reads the filter and the page from a request's query.
func parseQuery(q url.Values) (f Filter, order string, offset, limit int, err error) {
	f = Filter{API: q.Get("api"), State: q.Get("state"), Endpoint: q.Get("endpoint"), Key: q.Get("key")}
	if f.API != "" && apiTitles[f.API] == "" {
		return f, "", 0, 0, fmt.Errorf("api=%q: not an API (data, indicator, consensus)", cut(f.API))
	}
	if f.State != "" && !slices.Contains(States, f.State) {
		return f, "", 0, 0, fmt.Errorf("state=%q: not a state (%s)", cut(f.State), strings.Join(States, ", "))
	}
	if order = q.Get("sort"); order != "" && !slices.Contains(SortKeys, order) {
		return f, "", 0, 0, fmt.Errorf("sort=%q: not an order (%s)", cut(order), strings.Join(SortKeys, ", "))
	}
	whole := func(name string, def, most int) (int, error) {
		s := q.Get(name)
		if s == "" {
			return def, nil
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > most {
			return 0, fmt.Errorf("%s=%q: not a whole number from 0 to %d", name, cut(s), most)
		}
		return n, nil
	}
	if offset, err = whole("offset", 0, 1<<30); err != nil {
		return
	}
	if limit, err = whole("limit", defaultLimit, maxLimit); err != nil {
		return
	}
	// per_page and page (from 1) are limit and offset as GitHub's and
	// most APIs' pages say them.
	if q.Has("per_page") {
		if limit, err = whole("per_page", defaultLimit, maxLimit); err != nil {
			return
		}
	}
	if limit == 0 {
		limit = defaultLimit
	}
	if q.Has("page") {
		var page int
		if page, err = whole("page", 1, 1<<30/maxLimit); err != nil {
			return
		}
		offset = max(page-1, 0) * limit
	}
	return f, order, offset, limit, nil
}

// cutForJSON keeps at most maxLimit of the endpoints the filter keeps, and
// of each API's entries: at 100 000 series the answer stays a page (the
// totals say what was left out).
func (st *Status) cutForJSON() {
	f := st.Series.Filter
	var kept []Endpoint
	for _, e := range st.Endpoints {
		if (f.API == "" || f.API == e.API) && strings.Contains(e.Path, f.Endpoint) {
			st.EndpointsMatched++
			if len(kept) < maxLimit {
				kept = append(kept, e)
			}
		}
	}
	st.Endpoints = append([]Endpoint{}, kept...)
	for i := range st.APIs {
		a := &st.APIs[i]
		a.EntriesTotal = len(a.Entries)
		if len(a.Entries) > maxLimit {
			a.Entries = a.Entries[:maxLimit:maxLimit]
		}
	}
}

// cut shortens a value a request sent, for the error that quotes it.
func cut(s string) string { return text.Outside(s, 64) }
