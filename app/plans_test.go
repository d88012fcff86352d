package app

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/plan"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// The exporter as a user runs it, with a key on the professional plan
// and an entry the plan refuses (the market indicators at hour): the
// plan is read once at start and shown, the refused entry is never
// called, its series say so and the others are served; a reload reads
// the plan again; so does a restart on the same storage: the plan the
// last run saved is never believed over the provider's answer.
func TestThePlanAsTheExporterReadsIt(t *testing.T) {
	const key = "pro-key"
	up := newFakeUpstream(t, fakeapi.Options{DataKeys: map[string]fakeapi.Tier{key: fakeapi.TierProfessional}, Catalog: fakeapi.CatalogFull})
	dir := t.TempDir()
	cfgFile, tokenFile, storage := filepath.Join(dir, "onchain.yml"), filepath.Join(dir, "token"), filepath.Join(dir, "state")
	writeFile(t, tokenFile, key+"\n")
	writeFile(t, cfgFile, fmt.Sprintf(`
data:
  url: %q
  token_file: %q
  metrics:
    - path: /v1/btc/market-indicator/mvrv
      window: hour
    - path: /v1/btc/market-indicator/mvrv
      window: day
`, up.URL, tokenFile))
	const refused = `endpoint="/v1/btc/market-indicator/mvrv",window="hour"`
	e := startRunIn(t, http.DefaultClient, "http", flags{config: cfgFile, storage: new(storage)})
	// A start that runs past its budget (expand.StartBudget: a loaded
	// machine, a slow disk under the day's budget) reads the plan in the
	// background instead; what is counted is the same.
	testtool.Until(t, 10*time.Second, "the plan read", func() bool { return len(up.credentials(plan.Path)) > 0 })
	body := e.metrics()
	if n := len(up.credentials(plan.Path)); n != 1 {
		t.Errorf("%d reads of the plan at start, want 1", n)
	}
	if !strings.Contains(body, `onchain_exporter_plan_info{api="data",plan="PROFESSIONAL"} 1`) {
		t.Errorf("no plan_info for the professional plan:\n%s", grepLines(body, "plan_"))
	}
	if n := up.fake.CallsFor("/v1/btc/market-indicator/mvrv"); n != 1 {
		t.Errorf("%d calls of mvrv, want the day series' one: the hour series is refused by the plan", n)
	}
	if l := grepLines(body, "onchain_exporter_query_refused"); !strings.Contains(l, refused) || strings.Count(l, "\n") != 1 {
		t.Errorf("query_refused:\n%s\nwant the hour series alone", l)
	}
	if !strings.Contains(e.stderr.String(), "your plan (PROFESSIONAL) reads /v1/btc/market-indicator/mvrv at day only") {
		t.Errorf("the log does not say what the plan refuses in its words:\n%s", e.stderr.String())
	}

	if code, answer := e.get(http.MethodPost, "/-/reload"); code != http.StatusOK {
		t.Fatalf("reload: %d %s", code, answer)
	}
	if n := len(up.credentials(plan.Path)); n != 2 {
		t.Errorf("%d reads of the plan after a reload, want 2", n)
	}
	e.stop()

	// The provider now answers the key's plan as premium: the restart
	// reads it and puts it in force, whatever the state file saved (the
	// professional plan: as a state file edited to hold another would).
	up.fake.SetDataKey(key, fakeapi.TierPremium)
	again := startRunIn(t, http.DefaultClient, "http", flags{config: cfgFile, storage: new(storage)})
	testtool.Until(t, 10*time.Second, "the plan read again", func() bool { return len(up.credentials(plan.Path)) > 2 })
	body = again.metrics()
	if n := len(up.credentials(plan.Path)); n != 3 {
		t.Errorf("%d reads of the plan after a restart on the same storage, want 3", n)
	}
	if !strings.Contains(body, `onchain_exporter_plan_info{api="data",plan="PREMIUM"} 1`) {
		t.Errorf("the plan the provider answers is not in force after the restart:\n%s", grepLines(body, "plan_"))
	}
	// The series the last run saved as refused is asked again at once.
	testtool.Until(t, 10*time.Second, "the series refused by the old plan served", func() bool {
		return grepLines(again.metrics(), "onchain_exporter_query_refused") == "" && up.fake.CallsFor("/v1/btc/market-indicator/mvrv") == 2
	})
}

// grepLines is the lines of body that contain s, each ending in a newline.
func grepLines(body, s string) string {
	var b strings.Builder
	for _, l := range strings.Split(body, "\n") {
		if strings.Contains(l, s) && !strings.HasPrefix(l, "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
