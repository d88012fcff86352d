package examples

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/onchain-exporter/onchain_exporter/budget"
	"github.com/onchain-exporter/onchain_exporter/config"
)

// exampleConfigs returns every exporter configuration of the directory by
// name: the config*.yml files and the config.yml of the Kubernetes
// ConfigMap.
func exampleConfigs(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	files, err := filepath.Glob("config*.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = b
	}
	var cm configMap
	decodeK8s(t, "configmap.yaml", &cm)
	if cm.Data["config.yml"] == "" {
		t.Fatal("kubernetes/configmap.yaml: no config.yml")
	}
	out["kubernetes/configmap.yaml"] = []byte(cm.Data["config.yml"])
	if len(out) < 3 {
		t.Fatalf("found only %d example configurations", len(out))
	}
	return out
}

// tokenFile matches a token_file line; the test reads the credential from
// the environment instead, as the files this one names exist only in a pod.
var tokenFile = regexp.MustCompile(`(?m)^(\s*)token_file: .*$`)

// backfillShare is the least share of an example's daily_budget that must
// stay free for `onchain_exporter backfill`, which spends what the live
// exporter leaves (package backfill: the daily budget less the forecast and
// the reserve). Half leaves a month of history of every series of the
// example to be fetched within a day or two.
const backfillShare = 0.5

// Every example fits its own daily_budget: --config.check, the start and
// every reload print no coarsening warning, and a backfill with the file
// has calls left to make (with examples/config.yml costing 154 % of its
// budget, `backfill` made no data-API call at all).
func TestExamplesFitTheirDailyBudget(t *testing.T) {
	for name, b := range exampleConfigs(t) {
		b = tokenFile.ReplaceAll(b, []byte("${1}token_env: T"))
		cfg, err := config.Parse(name, b, func(string) string { return "example-token" })
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, f := range budget.Forecast(cfg).APIs {
			if f.OverBudget() || f.Allotment.Cut() {
				t.Errorf("%s: %s API: the forecast, %.0f calls a day, exceeds daily_budget %d (the plan cuts: %s)",
					name, f.API, f.AtLeast(), f.DailyBudget, f.Allotment.Summary(3))
			}
			if f.OverRateLimit() {
				t.Errorf("%s: %s API: the forecast exceeds rate_limit %g a minute", name, f.API, f.RateLimit)
			}
			if f.DailyBudget <= 0 || f.API == config.APIConsensus { // no backfill share to keep
				continue
			}
			live := int(math.Ceil(f.AtLeast() / (1 - budget.Reserve)))
			if left := f.DailyBudget - live; float64(left) < backfillShare*float64(f.DailyBudget) {
				t.Errorf("%s: %s API: the live exporter needs %d of daily_budget %d a day (forecast and reserve), leaving %d for backfill; keep at least %.0f %% free",
					name, f.API, live, f.DailyBudget, left, 100*backfillShare)
			}
		}
	}
}
