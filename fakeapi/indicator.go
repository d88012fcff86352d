package fakeapi

import (
	"cmp"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// equity is one equity of the Indicator API's catalog.
type equity struct {
	exchange, code, name string
	price                float64 // typical close, in the listing currency
	tick                 float64 // price rounding step
}

func (e equity) id() string { return e.exchange + ":" + e.code }

var equities = []equity{
	{"KRX", "005930", "Samsung Electronics", 71200, 100},
	{"KRX", "000660", "SK hynix", 182000, 100},
	{"KRX", "035420", "NAVER", 205000, 500},
	{"NASDAQ", "AAPL", "Apple Inc.", 228, 0.01},
	{"NASDAQ", "MSFT", "Microsoft Corporation", 415, 0.01},
	{"NYSE", "BRK.B", "Berkshire Hathaway Inc. Class B", 465, 0.01},
}

// nullBPSEquity has no book value yet on its newest row.
const nullBPSEquity = "NASDAQ:AAPL"

// pbrMultiples are the fixed price-to-book multiples of the band.
var pbrMultiples = []string{"0.5", "1.0", "1.5", "2.0", "2.5"}

// Defaults and bounds of the pbr-band query.
const (
	defaultBandLimit = 30
	maxBandLimit     = 1000
)

func writeIndicatorError(w http.ResponseWriter, code int, word, message string) {
	writeJSON(w, code, obj{{"error", word}, {"message", message}})
}

// indicatorAuth checks the bearer key of a value endpoint and answers the
// rejection itself; it reports whether the request may go on.
func (s *Server) indicatorAuth(w http.ResponseWriter, r *http.Request) bool {
	key := ""
	if scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
		key = strings.TrimSpace(tok)
	}
	switch {
	case s.opts.IndicatorLowPlanToken != "" && key == s.opts.IndicatorLowPlanToken:
		writeIndicatorError(w, http.StatusUnauthorized, "plan_required", "Indicator values require Pro plan or higher; this key's plan is lower.")
		return false
	case s.opts.IndicatorToken != "" && key == "":
		writeIndicatorError(w, http.StatusUnauthorized, "unauthorized", "Missing API key: send Authorization: Bearer <API_KEY>.")
		return false
	case s.opts.IndicatorToken != "" && key != s.opts.IndicatorToken:
		writeIndicatorError(w, http.StatusUnauthorized, "unauthorized", "Invalid API key.")
		return false
	}
	return true
}

// indicatorServes says whether p, a path under /indicator, is one the
// Indicator API serves: its catalog, or the band of a listed equity.
func indicatorServes(p string) bool {
	switch p {
	case "/api", "/api/", "/api/equities", "/api/indicators":
		return true
	}
	id, okPrefix := strings.CutPrefix(p, "/api/equities/")
	id, okSuffix := strings.CutSuffix(id, "/pbr-band")
	return okPrefix && okSuffix && slices.ContainsFunc(equities, func(e equity) bool { return e.id() == id })
}

// serveIndicator serves the Indicator API mounted under /indicator.
func (s *Server) serveIndicator(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeIndicatorError(w, http.StatusMethodNotAllowed, "method_not_allowed", "Only GET is served.")
		return
	}
	p := strings.TrimPrefix(r.URL.Path, "/indicator")
	q := r.URL.Query()
	accepted := []string(nil) // the catalog paths take no parameter
	if indicatorServes(p) && strings.HasSuffix(p, "/pbr-band") {
		accepted = []string{"limit", "order"}
	}
	if name := unknownParam(q, accepted); name != "" && indicatorServes(p) {
		writeIndicatorError(w, http.StatusBadRequest, "bad_request", "Unknown parameter "+strconv.Quote(echoed(name))+".")
		return
	}
	switch p {
	case "/api", "/api/":
		writeJSON(w, http.StatusOK, obj{{"name", "indicator-api"}, {"endpoints", []string{
			"/api/equities", "/api/indicators", "/api/equities/{equity_id}/pbr-band"}}})
		return
	case "/api/equities":
		rows := make([]obj, 0, len(equities))
		for _, e := range equities {
			rows = append(rows, obj{{"id", e.id()}, {"exchange_code", e.exchange}, {"security_code", e.code}, {"name", e.name}})
		}
		writeJSON(w, http.StatusOK, s.indicatorShape("equities", obj{{"data", rows}}))
		return
	case "/api/indicators":
		writeJSON(w, http.StatusOK, s.indicatorShape("indicators", obj{{"data", []obj{{{"id", "pbr-band"}, {"name", "Price-to-book band"},
			{"path", "/api/equities/{equity_id}/pbr-band"}}}}}))
		return
	}
	id, okPrefix := strings.CutPrefix(p, "/api/equities/")
	id, okSuffix := strings.CutSuffix(id, "/pbr-band")
	if !okPrefix || !okSuffix || id == "" || strings.Contains(id, "/") {
		writeIndicatorError(w, http.StatusNotFound, "not_found", "No such endpoint.")
		return
	}
	if !s.indicatorAuth(w, r) {
		return
	}
	i := slices.IndexFunc(equities, func(e equity) bool { return e.id() == id })
	if i < 0 {
		writeIndicatorError(w, http.StatusNotFound, "not_found", "Unknown equity "+strconv.Quote(echoed(id))+"; see /api/equities.")
		return
	}
	limit := defaultBandLimit
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxBandLimit {
			writeIndicatorError(w, http.StatusBadRequest, "bad_request", "limit must be an integer from 1 to "+strconv.Itoa(maxBandLimit)+".")
			return
		}
		limit = n
	}
	order := cmp.Or(q.Get("order"), "desc")
	if order != "desc" && order != "asc" {
		writeIndicatorError(w, http.StatusBadRequest, "bad_request", "order must be desc or asc.")
		return
	}
	rows := s.pbrBand(equities[i], limit)
	if order == "asc" {
		slices.Reverse(rows)
	}
	writeJSON(w, http.StatusOK, s.answer(s.indicatorShape("band", obj{{"equity", id}, {"data", rows}})))
}

// pbrBand returns the newest limit trading-day rows, newest first. The
// row of a day is published like a data API day row; the newest row of
// nullBPSEquity has no book value yet.
func (s *Server) pbrBand(e equity, limit int) []obj {
	d := s.bandDay(s.now())
	rows := make([]obj, 0, limit)
	for len(rows) < limit {
		if !tradingDay(d) {
			d = d.AddDate(0, 0, -1)
			continue
		}
		row := bandRow(e, d)
		if len(rows) == 0 && e.id() == nullBPSEquity {
			row.set("bps", nil)
			row.set("pbr", nil)
			bands, _ := row.get("bands")
			for _, m := range bands.(obj) {
				bands.(obj).set(m.K, nil)
			}
		}
		rows = append(rows, row)
		d = d.AddDate(0, 0, -1)
	}
	return rows
}

// bandRow is the band row of equity e for the trading day d.
func bandRow(e equity, d time.Time) obj {
	hClose, hBook, hDrift := hash64(e.id(), "close"), hash64(e.id(), "bps"), hash64(e.id(), "bps-drift")
	bookBase := e.price / (1.1 + 0.5*unit(hBook))
	closePrice := math.Round(e.price*(0.8+0.4*wave(hClose, d))/e.tick) * e.tick
	closePrice = round(closePrice, 2)
	bps := round(bookBase*(0.97+0.06*wave(hDrift, d)), 2)
	bands := make(obj, 0, len(pbrMultiples))
	for _, m := range pbrMultiples {
		f, _ := strconv.ParseFloat(m, 64)
		bands.add(m, round(f*bps, 2))
	}
	return obj{{"date", d.Format(time.DateOnly)}, {"close", closePrice}, {"bps", bps}, {"pbr", round(closePrice/bps, 2)}, {"bands", bands}}
}
