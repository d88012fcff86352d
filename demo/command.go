package demo

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/alecthomas/kingpin/v2"
	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

// Command is `onchain_exporter fake`: the fake upstream on a fixed
// address with fixed credentials, to try a configuration before pointing
// it at the paid APIs. Without a command name the arguments are the
// exporter's.
type Command struct {
	chosen   bool
	listen   *string
	dialect  *string
	timeless *bool
	keys     *map[string]string
	catalog  *string
	answer   *string
}

// fakePlanKeys are the data API keys the fake gives a plan when
// --fake.key names none: one per plan below premium, the plan of
// DataToken. Like the demo's, they are fixed and public.
var fakePlanKeys = map[string]fakeapi.Tier{
	"demo-basic-token":        fakeapi.TierBasic,
	"demo-advanced-token":     fakeapi.TierAdvanced,
	"demo-professional-token": fakeapi.TierProfessional,
}

// fakeDefaultAddress is where `onchain_exporter fake` listens unless told
// otherwise; examples/config-fake.yml points at it.
const fakeDefaultAddress = "127.0.0.1:9800"

// AddCommand adds the fake command to app.
func AddCommand(app *kingpin.Application) *Command {
	f := &Command{}
	cmd := app.Command("fake", "Serve the fake upstream (all three APIs, generated data, the demo credentials) to try a configuration against; see examples/config-fake.yml.").
		Action(func(*kingpin.ParseContext) error { f.chosen = true; return nil })
	f.listen = cmd.Flag("fake.listen-address", "Address the fake upstream listens on.").Default(fakeDefaultAddress).String()
	f.dialect = cmd.Flag("fake.dialect", "Payload dialect of the fake Indicator and Analyst Consensus APIs: a or b (see fakeapi.Dialect).").
		Default("a").Envar(DialectEnv).Enum("a", "b")
	f.timeless = cmd.Flag("fake.timeless", "Serve the Indicator and Analyst Consensus answers without any time (no date, timestamp, updated_at or as_of), as an API whose rows carry none.").
		Envar(TimelessEnv).Bool()
	f.keys = cmd.Flag("fake.key", "A data API key and its plan, KEY=PLAN (basic, advanced, professional or premium); repeatable. Without it: demo-basic-token, demo-advanced-token and demo-professional-token. "+DataToken+" is premium.").
		PlaceHolder("KEY=PLAN").StringMap()
	f.catalog = cmd.Flag("fake.catalog", "Data API endpoints served and listed by discovery: full (about 200 paths over the provider's categories and assets) or small (the built-in catalog's and the BTC and ETH exchange flows, as --demo and the tests serve).").
		Default("full").Enum("full", "small")
	f.answer = cmd.Flag("fake.plan-answer", "How /v1/my/discovery/endpoints answers: current, nested (the older dialect: each metric's windows under \"window\", beside \"limit\"), or an error status: 404 (an upstream without it), 403 or 500 (read as the basic plan by the provider's client).").
		Default("current").String()
	return f
}

// Chosen says whether the command line named the command.
func (f *Command) Chosen() bool { return f.chosen }

// Run serves the fake upstream until ctx is done (package main: SIGINT
// or SIGTERM) and returns the process's exit code. What to point a
// configuration at is printed on out.
func (f *Command) Run(ctx context.Context, logger log.Logger, out io.Writer) int {
	fail := func(code int, err error) int {
		level.Error(logger).Log("msg", "cannot start the fake upstream", "err", err)
		return code
	}
	dialect, err := fakeapi.ParseDialect(*f.dialect)
	if err != nil {
		return fail(2, err)
	}
	keys, err := f.planKeys()
	if err != nil {
		return fail(2, err)
	}
	catalog, err := fakeapi.ParseCatalog(*f.catalog)
	if err != nil {
		return fail(2, err)
	}
	answer, err := fakeapi.ParsePlanAnswer(*f.answer)
	if err != nil {
		return fail(2, fmt.Errorf("--fake.plan-answer: %w", err))
	}
	d, err := Listen(logger, *f.listen, fakeapi.Options{Dialect: dialect, Timeless: *f.timeless, Catalog: catalog, PlanAnswer: answer, DataKeys: keys})
	if err != nil {
		return fail(1, err)
	}
	defer d.Close()
	fmt.Fprint(out, fakeBanner(d.URL), fakePlansBanner(d.URL, keys))
	<-ctx.Done()
	level.Info(logger).Log("msg", "fake upstream stopped")
	return 0
}

// planKeys reads --fake.key: each key's plan, or fakePlanKeys when the
// flag is not given.
func (f *Command) planKeys() (map[string]fakeapi.Tier, error) {
	if len(*f.keys) == 0 {
		return fakePlanKeys, nil
	}
	keys := make(map[string]fakeapi.Tier, len(*f.keys))
	for k, name := range *f.keys {
		if k == "" {
			return nil, fmt.Errorf("--fake.key==%s: the key is empty (KEY=PLAN)", name)
		}
		p, err := fakeapi.ParseTier(name)
		if err != nil {
			return nil, fmt.Errorf("--fake.key for key %q: %w", k, err)
		}
		keys[k] = p
	}
	return keys, nil
}

// fakePlansBanner says which data API key is on which plan, cheapest
// plan first, and where a key reads its plan.
func fakePlansBanner(url string, keys map[string]fakeapi.Tier) string {
	all := map[string]fakeapi.Tier{DataToken: fakeapi.TierPremium}
	maps.Copy(all, keys)
	names := slices.SortedFunc(maps.Keys(all), func(a, b string) int {
		return cmp.Or(cmp.Compare(all[a], all[b]), cmp.Compare(a, b))
	})
	var b strings.Builder
	b.WriteString("Data API plans (a key reads its own at " + url + "/v1/my/discovery/endpoints):\n")
	for _, k := range names {
		fmt.Fprintf(&b, "  %-13s %s\n", all[k].String()+":", k)
	}
	return b.String()
}

// fakeBanner says where each API of the fake is and which credential it
// takes. The credentials are the demo's, fixed and public: they open
// nothing but the fake.
func fakeBanner(url string) string {
	return fmt.Sprintf(`Fake upstream (generated data, not a real API). Point a configuration at it:
  data:       url: %[1]s            credential: %[2]s
  indicator:  url: %[1]s/indicator  credential: %[3]s
  consensus:  url: %[1]s/consensus  credential: %[4]s (premium plan)
Faults:  curl -X POST '%[1]s%[5]s?api=data&kind=Status500'   (kind=None clears)
Try:     ONCHAIN_DATA_TOKEN=%[2]s ONCHAIN_INDICATOR_KEY=%[3]s ONCHAIN_CONSENSUS_KEY=%[4]s \
           onchain_exporter --config.file=examples/config-fake.yml
`, url, DataToken, IndicatorToken, ConsensusKey, FaultPath)
}
