package backfill

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	keyplan "github.com/onchain-exporter/onchain_exporter/plan"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// basicPlan puts the env's key on the fake's basic plan (BTC supply at
// day, 90 days back; no hour) and returns the plan as the key reads it.
func basicPlan(t *testing.T, e *env) *keyplan.Plan {
	t.Helper()
	e.fake.SetDataKey(testtool.DataToken, fakeapi.TierBasic)
	req, _ := http.NewRequest(http.MethodGet, e.url+"/v1/my/discovery/endpoints", nil)
	req.Header.Set("Authorization", "Bearer "+testtool.DataToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	p, err := keyplan.Parse(body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the plan: HTTP %d, %v\n%s", resp.StatusCode, err, body)
	}
	return p
}

const planConfigEntries = `    - path: /v1/btc/network-data/supply
      window: [day, hour]
`

// TestBackfillByThePlan: on a key whose plan reads the day window 90 days
// back and not the hour window, a backfill from 200 days back starts the
// day series where the plan's history starts and does not call the hour
// series: the upstream refuses none of its calls. The dry run says both,
// and the run counts the series clamped. Without the plan known, the
// same run is refused by the upstream.
func TestBackfillByThePlan(t *testing.T) {
	e := newEnv(t, dataConfig(planConfigEntries), nil)
	p := basicPlan(t, e)
	o := e.options(200)
	o.Plan = p

	var dry bytes.Buffer
	if err := DryRun(&dry, e.cfg, o); err != nil {
		t.Fatal(err)
	}
	start := now.AddDate(0, 0, -90).Add(time.Minute).Truncate(24 * time.Hour).Add(24 * time.Hour)
	for _, want := range []string{
		"# the key's plan: BASIC",
		"# from " + start.Format(time.RFC3339) + ": the key's plan (BASIC) reads /v1/btc/network-data/supply at day back to P90D",
		"data GET /v1/btc/network-data/supply?from=" + start.Format(boundLayout),
		"# not called, the key's plan refuses it: data /v1/btc/network-data/supply?limit=5&window=hour: your plan (BASIC)",
		"# 2 series, 1 calls",
	} {
		if !strings.Contains(dry.String(), want) {
			t.Errorf("the dry run does not say %q:\n%s", want, dry.String())
		}
	}
	if n := e.fake.Calls("data"); n != 1 { // the plan's read above
		t.Errorf("the dry run made %d calls", n-1)
	}

	sum := e.run(o)
	if sum.Clamped != 1 || sum.Written != 1 || sum.Refused != 1 || !sum.Complete {
		t.Errorf("%+v\n%s", sum, e.logs.String())
	}
	if n := e.fake.Refused(); n != 0 {
		t.Errorf("the upstream refused %d calls by the plan", n)
	}
	if n := e.logs.Count("reads this history from a later time than --from", "P90D"); n != 1 {
		t.Errorf("%d lines say the clamp:\n%s", n, e.logs.String())
	}
	day := parseOM(t, o.Output).find(t, "onchain_supply", map[string]string{"window": "day"})
	// Samples carry the end of their row's day.
	if first := time.UnixMilli(day[0].ms).UTC(); !first.Equal(start.Add(24 * time.Hour)) {
		t.Errorf("the day series starts at %s, want the plan's first day %s", first, start)
	}

	// Without the plan the upstream is asked from --from, and refuses.
	plain := newEnv(t, dataConfig(planConfigEntries), nil)
	plain.fake.SetDataKey(testtool.DataToken, fakeapi.TierBasic)
	po := plain.options(200)
	sum, _ = Run(context.Background(), plain.cfg, plain.pool, po)
	if plain.fake.Refused() == 0 || sum.Complete {
		t.Errorf("without the plan: %d refused by the upstream, %+v", plain.fake.Refused(), sum)
	}
}
