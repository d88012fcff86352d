package fakeapi

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

// blockHeight is the height of the btc block mined at t.
func blockHeight(t time.Time) string {
	return strconv.FormatInt(int64(t.Sub(genesis("btc"))/BlockInterval("btc")), 10)
}

// A data call the key's plan does not cover is 403 forbidden in the data
// API's envelope: a metric outside the plan, a window outside it, a from
// before the plan's history or a page reaching before it. The lists are
// always allowed, v2 paths are outside every plan, and a mistake is still
// 404 or 400 whatever the plan.
func TestPlanRefusals(t *testing.T) {
	const (
		reserve  = "/v1/btc/exchange-flows/reserve"
		oi       = "/v1/btc/market-data/open-interest"
		pnl      = "/v1/btc/network-indicator/pnl-utxo"
		supply   = "/v1/btc/network-data/supply"
		erc20    = "/v1/erc20/exchange-flows/reserve"
		ethAddrs = "/v1/eth/network-data/addresses-count"
	)
	// At t0 (2026-11-22 10:17) the newest day row is 2026-11-21's. The
	// cutoffs: basic (P90D) 2026-08-24, a year 2025-11-22, three years
	// 2023-11-22.
	yearAgo := t0.AddDate(-1, 0, 0)
	cases := []struct {
		plan   Tier
		target string
		code   int
	}{
		{TierBasic, reserve + "?limit=90", 200},
		{TierBasic, reserve + "?limit=91", 403}, // the 91st row is 2026-08-23's
		{TierBasic, reserve, 403},               // 100 rows by default
		{TierBasic, reserve + "?from=20260824", 200},
		{TierBasic, reserve + "?from=2026-08-24T12:00:00Z", 200},
		{TierBasic, reserve + "?from=20260823", 403},
		{TierBasic, reserve + "?from=20260823&limit=1", 403}, // from alone refuses, however short the page
		{TierBasic, reserve + "?to=20260901&limit=5", 200},
		{TierBasic, reserve + "?to=20260801&limit=5", 403},
		{TierBasic, reserve + "?window=day&from=20261101&exchange=binance", 200},
		{TierBasic, reserve + "?window=hour&limit=1", 403},
		{TierBasic, reserve + "?window=block&limit=1", 403},
		{TierBasic, supply + "?limit=10", 200},
		{TierBasic, oi + "?limit=1", 403},
		{TierBasic, pnl + "?limit=1", 403},
		{TierBasic, erc20 + "?limit=1", 403},
		{TierBasic, "/v2/network/events-count?asset=usdt", 200},
		{TierBasic, "/v2/indicator/valuation/mvrv-z-score?asset=btc&limit=1000", 200},
		{TierBasic, "/v1/discovery/endpoints", 200},
		{TierBasic, "/v2/discovery/endpoints", 200},
		{TierBasic, planPath, 200},
		{TierBasic, "/v1/btc/status/entity-list?type=miner", 200},
		{TierBasic, "/v1/xrp/status/entity-list?type=exchange", 200},
		{TierBasic, "/v1/xrp/status/entity-list?type=miner", 400},
		{TierBasic, "/v1/btc/status/entity-list", 400},
		{TierBasic, "/v1/btc/status/entity-list?type=exchange&limit=3", 400},
		{TierBasic, "/v1/erc20/status/entity-list?type=exchange", 404},
		{TierBasic, oi + "?exchange=nope", 400},
		{TierBasic, oi + "?window=week", 400},
		{TierBasic, reserve + "?from=yesterday", 400},
		{TierBasic, "/v1/btc/market-indicator/nope", 404},

		{TierAdvanced, reserve + "?window=hour", 200},
		{TierAdvanced, reserve + "?window=hour&from=20260824T100000", 200}, // the hour of the cutoff
		{TierAdvanced, reserve + "?window=hour&from=20260824T095959", 200}, // its first row is 10:00
		{TierAdvanced, reserve + "?window=hour&from=20260824T090000", 403},
		{TierAdvanced, reserve + "?window=hour&limit=2160", 200}, // 90 days of hours
		{TierAdvanced, reserve + "?window=hour&limit=2200", 403},
		{TierAdvanced, reserve + "?from=20251122", 200},
		{TierAdvanced, reserve + "?from=20251121", 403},
		{TierAdvanced, reserve + "?window=block&limit=1", 403},
		{TierAdvanced, oi + "?window=day", 200},
		{TierAdvanced, oi + "?window=min&limit=1", 403},
		{TierAdvanced, pnl + "?limit=1", 403},
		{TierAdvanced, erc20 + "?limit=1", 403},
		{TierAdvanced, "/v1/eth/fund-data/digital-asset-holdings?limit=10", 200},

		{TierProfessional, pnl + "?from=20231122", 200},
		{TierProfessional, pnl + "?from=20231121", 403},
		{TierProfessional, oi + "?window=hour", 200},
		{TierProfessional, oi + "?window=hour&from=" + yearAgo.Format("20060102T150405"), 200},
		{TierProfessional, oi + "?window=hour&from=" + yearAgo.Add(-2*time.Hour).Format("20060102T150405"), 403},
		{TierProfessional, oi + "?window=min&limit=1", 403},
		{TierProfessional, supply + "?window=block", 200},
		{TierProfessional, supply + "?window=block&from=" + blockHeight(yearAgo.Add(time.Hour)), 200},
		{TierProfessional, supply + "?window=block&from=" + blockHeight(yearAgo.Add(-time.Hour)), 403},
		{TierProfessional, ethAddrs + "?window=10min&limit=1", 403},
		{TierProfessional, ethAddrs + "?window=block&limit=10", 200},
		{TierProfessional, erc20 + "?window=block&token=usdc", 200},
		{TierProfessional, "/v1/xrp/network-data/velocity?from=20240101", 200},

		// Paths of the full catalog: the plans by category.
		{TierBasic, "/v1/xrp/market-data/price-ohlcv?limit=30", 200},
		{TierBasic, "/v1/xrp/market-data/price-ohlcv?window=min&limit=1", 403},
		{TierBasic, "/v1/eth/network-data/transactions-count?limit=30", 200},
		{TierBasic, "/v1/btc/market-indicator/mvrv?limit=1", 403},
		{TierBasic, "/v1/stablecoin/exchange-flows/reserve?token=usdt&exchange=binance&limit=1", 403},
		{TierAdvanced, "/v1/btc/flow-indicator/mpi?limit=30", 200},
		{TierAdvanced, "/v1/eth/flow-indicator/exchange-whale-ratio?exchange=binance&limit=30", 200},
		{TierAdvanced, "/v1/eth/flow-indicator/exchange-whale-ratio?exchange=binance&window=hour&limit=1", 403},
		{TierAdvanced, "/v1/btc/market-indicator/mvrv?limit=1", 403},
		{TierAdvanced, "/v1/xrp/exchange-flows/reserve?exchange=binance&limit=1", 403},
		{TierAdvanced, "/v1/trx/network-data/fees?window=hour", 200},
		{TierProfessional, "/v1/btc/market-indicator/mvrv?limit=30", 200},
		{TierProfessional, "/v1/btc/market-indicator/mvrv?window=hour&limit=1", 403}, // indicators at day only
		{TierProfessional, "/v1/btc/inter-entity-flows/miner-to-exchange?from_miner=f2pool&to_exchange=binance&limit=1", 403},
		{TierProfessional, "/v1/btc/miner-flows/reserve?window=block", 200},
		{TierProfessional, "/v1/stablecoin/network-data/supply?token=usdc&window=10min&limit=1", 403},
		{TierProfessional, "/v1/erc20/exchange-flows/netflow?token=link&exchange=binance&window=hour", 200},
		{TierPremium, "/v1/btc/inter-entity-flows/miner-to-exchange?from_miner=f2pool&to_exchange=binance&from=20160101", 200},
		{TierPremium, "/v1/stablecoin/network-data/supply?token=usdc&window=10min&limit=1000", 200},
		{TierPremium, "/v1/btc/market-indicator/mvrv?window=hour&limit=100000", 200},

		{TierPremium, reserve + "?from=20160101&limit=100000", 200},
		{TierPremium, oi + "?window=min&from=20160101", 200},
		{TierPremium, ethAddrs + "?window=10min&limit=1000", 200},
		{TierPremium, supply + "?window=block&from=0", 200},
		{TierPremium, pnl + "?to=20170101", 200},
	}
	keys := map[string]Tier{}
	for _, p := range Tiers {
		keys["k-"+p.String()] = p
	}
	s, _ := newTestServer(Options{DataToken: "tok", DataKeys: keys, Catalog: CatalogFull})
	refused := 0
	for _, c := range cases {
		rec := get(t, s, c.target, "Authorization", "Bearer k-"+c.plan.String())
		if rec.Code != c.code {
			t.Errorf("%s: GET %s: HTTP %d, want %d: %.200s", c.plan, c.target, rec.Code, c.code, rec.Body)
			continue
		}
		if c.target == planPath {
			continue // not in the envelope; plan_test.go reads it
		}
		if e := parseEnvelope(t, rec); e.code != c.code || (c.code == 403 && (e.message != "forbidden" || len(e.result) != 0)) {
			t.Errorf("%s: GET %s: status %d %q, result %v", c.plan, c.target, e.code, e.message, e.result)
		}
		if c.code == 403 {
			refused++
		}
		// The demo token, on premium, reads what the test reads today.
		if rec := get(t, s, c.target, "Authorization", "Bearer tok"); rec.Code == http.StatusForbidden {
			t.Errorf("the premium token: GET %s: HTTP 403", c.target)
		}
	}
	if got := s.Refused(); got != int64(refused) {
		t.Errorf("Refused() = %d, want %d", got, refused)
	}
	s.ResetCalls()
	if s.Refused() != 0 {
		t.Error("ResetCalls kept the refusals")
	}
}

// Every window of every path a plan answer allows is served as far back
// as the answer says, and one interval further back is refused; every
// other window of every listed path is refused: the answer and the
// refusals agree, for every plan and catalog.
func TestPlanAnswerMatchesRefusals(t *testing.T) {
	for _, c := range []Catalog{CatalogSmall, CatalogFull} {
		t.Run(c.String(), func(t *testing.T) { planAnswerMatchesRefusals(t, c) })
	}
}

func planAnswerMatchesRefusals(t *testing.T, c Catalog) {
	s, _ := newTestServer(Options{DataKeys: planKeys, Catalog: c})
	for key, p := range planKeys {
		doc := planOf(t, s, key)
		for pw, iso := range doc.grants {
			q := "?window=" + pw.window + "&limit=1" + requiredQuery(t, s, pw.path)
			if rec := get(t, s, pw.path+q, "Authorization", "Bearer "+key); rec.Code != http.StatusOK {
				t.Errorf("%s: %s at %s is in the plan (%s) but answers HTTP %d", p, pw.path, pw.window, iso, rec.Code)
			}
			if iso == "P0D" || pw.window == "block" {
				continue
			}
			ep, _, _ := s.lookupEndpoint(pw.path)
			d, _ := p.reach(ep, pw.window)
			if d.String() != iso {
				t.Fatalf("%s: %s at %s: answer %s, refusals by %s", p, pw.path, pw.window, iso, d)
			}
			step := WindowDuration(pw.window)
			cut := floorTo(d.cutoff(t0), step)
			for from, want := range map[time.Time]int{cut: 200, cut.Add(-step): 403} {
				target := pw.path + q + "&from=" + from.Format("20060102T150405")
				if rec := get(t, s, target, "Authorization", "Bearer "+key); rec.Code != want {
					t.Errorf("%s: GET %s: HTTP %d, want %d", p, target, rec.Code, want)
				}
			}
		}
		for pw := range listedWindows(t, s, key) {
			if _, ok := doc.grants[pw]; ok {
				continue
			}
			target := pw.path + "?window=" + pw.window + "&limit=1" + requiredQuery(t, s, pw.path)
			if rec := get(t, s, target, "Authorization", "Bearer "+key); rec.Code != http.StatusForbidden {
				t.Errorf("%s: %s is outside the plan but answers HTTP %d", p, target, rec.Code)
			}
		}
	}
}

// requiredQuery is "&name=value" for each required parameter of a path,
// with the first value discovery lists.
func requiredQuery(t *testing.T, s *Server, path string) string {
	t.Helper()
	ep, _, ok := s.lookupEndpoint(path)
	if !ok {
		t.Fatalf("%s is not served", path)
	}
	q := ""
	for _, p := range ep.params {
		if p.required {
			q += "&" + p.name + "=" + p.values[0]
		}
	}
	return q
}
