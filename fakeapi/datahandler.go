package fakeapi

import (
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// statusWords are the data API's status.message words per HTTP status.
var statusWords = map[int]string{
	200: "success",
	400: "bad_request",
	401: "unauthorized",
	403: "forbidden",
	404: "not_found",
	405: "not_allowed",
	429: "too_many_requests",
	500: "internal_server_error",
	503: "service_unavailable",
}

func statusObj(code int, message string) obj {
	return obj{{"code", code}, {"message", message}}
}

// writeEnvelopeError answers with the data API's error envelope.
func writeEnvelopeError(w http.ResponseWriter, code int) {
	writeJSON(w, code, obj{{"status", statusObj(code, statusWords[code])}, {"result", obj{}}})
}

// serveData serves the data API (v1 and v2).
func (s *Server) serveData(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeEnvelopeError(w, http.StatusMethodNotAllowed)
		return
	}
	plan, ok := s.keyPlan(r)
	if !ok {
		writeEnvelopeError(w, http.StatusUnauthorized)
		return
	}
	q := r.URL.Query()
	switch r.URL.Path {
	case "/v1/discovery/endpoints", "/v2/discovery/endpoints", planPath:
		if unknownParam(q) != "" {
			writeEnvelopeError(w, http.StatusBadRequest)
			return
		}
		if r.URL.Path == planPath {
			s.servePlan(w, plan)
			return
		}
		writeJSON(w, http.StatusOK, s.discovery(r.URL.Path == "/v2/discovery/endpoints"))
		return
	}
	if slices.Contains(statics, r.URL.Path) {
		answer, code := entityList(r.URL.Path, q)
		if code != http.StatusOK {
			writeEnvelopeError(w, code)
			return
		}
		writeJSON(w, code, answer)
		return
	}
	ep, pathAsset, ok := s.lookupEndpoint(r.URL.Path)
	if !ok {
		writeEnvelopeError(w, http.StatusNotFound)
		return
	}
	if unknownParam(q, seriesParams, ep.paramNames()) != "" {
		writeEnvelopeError(w, http.StatusBadRequest)
		return
	}
	window, rows, message, code := s.rows(ep, pathAsset, q, plan)
	if code == http.StatusForbidden {
		s.refused.Add(1)
	}
	if code != http.StatusOK {
		writeEnvelopeError(w, code)
		return
	}
	writeJSON(w, http.StatusOK, obj{
		{"status", statusObj(http.StatusOK, message)},
		{"result", obj{{"window", window}, {"data", rows}}},
	})
}

// rows validates the query of a series request and generates its rows,
// newest first. The work is proportional to the rows returned. A request
// the plan does not cover is 403 (planCovers), once its parameters are
// known to be valid.
func (s *Server) rows(ep *endpoint, pathAsset string, q url.Values, plan Tier) (window string, rows []obj, message string, code int) {
	window = cmp.Or(q.Get("window"), "day")
	if !slices.Contains(ep.windows, window) {
		return window, nil, "", http.StatusBadRequest
	}
	if f := q.Get("format"); f != "" && f != "json" {
		return window, nil, "", http.StatusBadRequest
	}
	limit := 100
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > ep.maxLimit {
			return window, nil, "", http.StatusBadRequest
		}
		limit = n
	}
	params := map[string]string{}
	key := []string{ep.path, "window=" + window}
	for _, p := range ep.params {
		v := q.Get(p.name)
		if v == "" {
			if p.required {
				return window, nil, "", http.StatusBadRequest
			}
			v = p.def
		}
		if v == "" {
			continue
		}
		if p.values != nil && !slices.Contains(p.values, v) {
			return window, nil, "", http.StatusBadRequest
		}
		params[p.name] = v
		key = append(key, p.name+"="+v)
	}
	asset := pathAsset
	if ep.v2 {
		asset = params["asset"]
	}
	tl := s.seriesTimeline(ep.path, window, asset)
	end := tl.latest(s.now())
	message = "success"
	if params["exchange"] == "ftx" {
		message = "deprecated"
		if last := floorTo(ftxStop.Add(-1), tl.step); last.Before(end) {
			end = last
		}
	}
	newest := end
	if v := q.Get("to"); v != "" {
		t, err := tl.parseBound(v)
		if err != nil {
			return window, nil, "", http.StatusBadRequest
		}
		if t = floorTo(t, tl.step); t.Before(end) {
			end = t
		}
	}
	start, from := tl.first, time.Time{}
	if v := q.Get("from"); v != "" {
		t, err := tl.parseBound(v)
		if err != nil {
			return window, nil, "", http.StatusBadRequest
		}
		if from = ceilTo(t, tl.step); from.After(start) {
			start = from
		}
	}
	if !planCovers(plan, ep, window, tl, s.now(), from, oldestRow(start, end, tl.step, limit)) {
		return window, nil, "", http.StatusForbidden
	}
	c := &rowCtx{key: strings.Join(key, "&"), step: tl.step, block: window == "block", params: params}
	rows = make([]obj, 0, min(limit, 4096))
	for t := end; len(rows) < limit && !t.Before(start); t = t.Add(-tl.step) {
		c.newest = t.Equal(newest)
		row := make(obj, 0, 7)
		switch {
		case ep.v2:
			row.add("datetime", t.Format(time.DateTime))
		case window == "day":
			row.add("date", t.Format(time.DateOnly))
		default:
			row.add("date", t.Format(time.DateTime))
		}
		if c.block {
			row.add("blockheight", tl.height(t))
		}
		ep.fields(c, t, &row)
		rows = append(rows, row)
	}
	return window, rows, message, http.StatusOK
}

// oldestRow is the time of the oldest row of a page of at most limit
// rows from end back to start; the zero time when the page is empty.
func oldestRow(start, end time.Time, step time.Duration, limit int) time.Time {
	if end.Before(start) {
		return time.Time{}
	}
	n := min(int64(limit), int64(end.Sub(start)/step)+1)
	return end.Add(-time.Duration(n-1) * step)
}

// planCovers says whether the plan allows a page of the endpoint's
// window: the metric and the window must be in the plan, and neither
// from (when given) nor the page's oldest row may start before the
// interval that holds the plan's history cutoff.
func planCovers(plan Tier, ep *endpoint, window string, tl timeline, now, from, oldest time.Time) bool {
	depth, ok := plan.reach(ep, window)
	if !ok {
		return false
	}
	if depth.unlimited() {
		return true
	}
	cut := floorTo(depth.cutoff(now), tl.step)
	return (from.IsZero() || !from.Before(cut)) && (oldest.IsZero() || !oldest.Before(cut))
}

// seriesParams are the query parameters every series path takes besides
// its own (endpoint.params); api_key is the credential.
var seriesParams = []string{"window", "limit", "from", "to", "format", "api_key"}

func (ep *endpoint) paramNames() []string {
	names := make([]string, len(ep.params))
	for i, p := range ep.params {
		names[i] = p.name
	}
	return names
}

// unknownParam returns the first, by name, of the query's parameters that
// is neither api_key nor in one of the accepted lists, or "". The data
// API refuses such a parameter with 400 rather than ignore it, so that a
// mistyped one (exchanges for exchange) fails against the fake as it
// does for real, not as a series that silently ignores it.
func unknownParam(q url.Values, accepted ...[]string) string {
	unknown := ""
	for name := range q {
		if name == "api_key" || slices.ContainsFunc(accepted, func(a []string) bool { return slices.Contains(a, name) }) {
			continue
		}
		if unknown == "" || name < unknown {
			unknown = name
		}
	}
	return unknown
}

// listed is every endpoint the fake serves, v1 or v2, in the order
// discovery lists them: the modelled ones, the exchange flows, the full
// catalog when served, then Options.ExtraPaths.
func (s *Server) listed(v2 bool) []*endpoint {
	list := make([]*endpoint, 0, len(endpoints)+len(genericPaths)+len(s.extraPaths))
	for _, ep := range endpoints {
		if ep.v2 == v2 {
			list = append(list, ep)
		}
	}
	if !v2 {
		for _, p := range genericPaths {
			list = append(list, smallByPath[p])
		}
		full := s.catalogNow() == CatalogFull
		if full {
			list = append(list, fullCatalog...)
		}
		for _, p := range s.extraPaths {
			if !full || fullByPath[p] == nil {
				list = append(list, s.extra[p])
			}
		}
	}
	return list
}

// discovery lists the endpoints served, v1 or v2, in the data envelope:
// every path the fake serves, and no other.
func (s *Server) discovery(v2 bool) obj {
	served := s.listed(v2)
	list := make([]obj, 0, len(served))
	for _, ep := range served {
		ps := obj{{"window", ep.windows}}
		required := []string{}
		for _, p := range ep.params {
			if p.values != nil {
				ps.add(p.name, p.values)
			}
			if p.required {
				required = append(required, p.name)
			}
		}
		list = append(list, obj{{"path", ep.path}, {"parameters", ps}, {"required_parameters", required}})
	}
	return obj{{"status", statusObj(http.StatusOK, "success")}, {"result", obj{{"data", list}}}}
}
