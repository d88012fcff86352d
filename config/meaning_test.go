package config

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
)

// family is one family the catalog or the table of known fields names:
// where it comes from, and its field.
type family struct {
	group, from string
	f           *Field
}

// everyNamedFamily is every family the built-in catalog and the table of
// known fields give, by name.
func everyNamedFamily(t *testing.T) map[string][]family {
	t.Helper()
	out := map[string][]family{}
	for _, e := range Endpoints {
		group := e.API + " " + e.Template
		if c, ok := conceptOf(e.API, e.Template); ok {
			group = e.API + " " + c.String()
		}
		for field, f := range e.Fields {
			out[f.Name] = append(out[f.Name], family{group, e.Template + " " + field, f})
		}
	}
	for c, fields := range knownFields {
		for field, k := range fields {
			if k.sameAs != "" && (catalogByConcept[c] == nil || catalogByConcept[c].Fields[k.sameAs] == nil) {
				t.Errorf("%s %s: sameAs %s is no field of the catalog's %s", c, field, k.sameAs, c)
				continue
			}
			if catalogByConcept[c] != nil && catalogByConcept[c].Fields[field] != nil {
				t.Errorf("%s %s: described twice, in the catalog and the table", c, field)
			}
			f := conceptField(c, field)
			out[f.Name] = append(out[f.Name], family{APIData + " " + c.String(), c.String() + " " + field, f})
		}
	}
	return out
}

// One family, one meaning: wherever a family's name comes from (the
// catalog, the table, several fields of one concept), it has one HELP,
// unit and type, and belongs to one concept (one label set).
func TestOneMeaningPerFamily(t *testing.T) {
	for name, fams := range everyNamedFamily(t) {
		first := fams[0]
		for _, x := range fams[1:] {
			if x.group != first.group {
				t.Errorf("%s is named by %s (%s) and %s (%s)", name, first.from, first.group, x.from, x.group)
			}
			if x.f.Help != first.f.Help || x.f.Unit != first.f.Unit || x.f.Type != first.f.Type {
				t.Errorf("%s: %s and %s differ in HELP, unit or type", name, first.from, x.from)
			}
		}
	}
}

// Every family named by the catalog or the table is one Prometheus's
// conventions accept (promlint, the rules of promtool check metrics:
// no suffix of another type's samples, base units), says its unit at
// the end of its name, and has a HELP written for it: a sentence, not the
// rule's placeholder.
func TestEveryNamedFamilyIsConventional(t *testing.T) {
	var mfs []*dto.MetricFamily
	for name, fams := range everyNamedFamily(t) {
		f := fams[0].f
		if !nameRE.MatchString(name) {
			t.Errorf("%s (%s): not a metric name", name, fams[0].from)
		}
		if f.Unit != "" && !strings.HasSuffix(strings.TrimSuffix(name, "_total"), "_"+f.Unit) {
			t.Errorf("%s (%s): unit %s is not the end of its name", name, fams[0].from, f.Unit)
		}
		if !strings.HasSuffix(f.Help, ".") || strings.HasPrefix(f.Help, "Field ") {
			t.Errorf("%s (%s): HELP %q", name, fams[0].from, f.Help)
		}
		mfs = append(mfs, lintFamily("onchain_"+name, f))
	}
	problems, err := promlint.NewWithMetricFamilies(mfs).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}

// lintFamily is a family of one series as promlint reads it.
func lintFamily(name string, f *Field) *dto.MetricFamily {
	v := 1.0
	mf := &dto.MetricFamily{Name: &name, Help: &f.Help, Metric: []*dto.Metric{{}}}
	if f.Type == "counter" {
		mf.Type = dto.MetricType_COUNTER.Enum()
		mf.Metric[0].Counter = &dto.Counter{Value: &v}
	} else {
		mf.Type = dto.MetricType_GAUGE.Enum()
		mf.Metric[0].Gauge = &dto.Gauge{Value: &v}
	}
	return mf
}

// The rule keeps the names it derives as conventional as the table's, for
// the fields nobody has described yet: what the provider calls a count
// or a sum, a duration in days, coin-days.
func TestDerivedNamesAreConventional(t *testing.T) {
	var mfs []*dto.MetricFamily
	for _, tc := range []struct {
		path, field, name, unit string
		scale                   float64
	}{
		{"/v1/btc/network-data/transactions-count", "transactions_count_total", "network_transactions", "", 1},
		{"/v1/btc/exchange-flows/transactions-count", "transactions_count_inflow", "exchange_transactions_count_inflow", "", 1},
		{"/v1/btc/network-data/fees", "fees_sum", "network_fees", "", 1},
		{"/v1/btc/x/y", "tokens_created", "x_y_tokens_created_value", "", 1},
		{"/v1/btc/x/y", "block_info", "x_y_block_info_value", "", 1},
		{"/v1/btc/x/y", "z_bucket", "x_y_z_bucket_value", "", 1},
		{"/v1/btc/network-indicator/mean-coin-age", "mca_days", "network_indicator_mean_coin_age_mca_seconds", unitSeconds, 86400},
		{"/v1/btc/network-indicator/coin-days-destroyed", "sa_cdd", "network_indicator_coindays_destroyed_sa_cdd", "", 1},
		{"/v1/btc/network-indicator/coin-days-destroyed", "value", "network_indicator_coindays_destroyed", "", 1},
		{"/v1/btc/network-data/days-destroyed", "days_destroyed", "network_coindays_destroyed", "", 1},
		{"/v1/btc/x/y", "hours", "x_y_seconds", unitSeconds, 3600},
		{"/v1/btc/network-data/fees", "fees_total_usd", "network_fees_total_usd", unitUSD, 1},
		{"/v1/btc/network-data/block-bytes", "block_bytes", "network_block_bytes", unitBytes, 1},
		{"/v1/btc/network-data/fees", "fees_reward_percent", "network_fees_reward_ratio", unitRatio, 0.01},
		{"/v1/btc/x/count", "count", "x", "", 1},
	} {
		name, scale, unit := derivedName(APIData, tc.path, tc.field)
		if name != tc.name || scale != tc.scale || unit != tc.unit {
			t.Errorf("%s %s: %s scale %g unit %q, want %s scale %g unit %q", tc.path, tc.field, name, scale, unit, tc.name, tc.scale, tc.unit)
		}
		mfs = append(mfs, lintFamily("onchain_"+name, &Field{Help: fmt.Sprint("Field ", tc.field, "."), Type: "gauge"}))
	}
	problems, err := promlint.NewWithMetricFamilies(mfs).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}

var updateFamilies = flag.Bool("update", false, "rewrite docs/families.md from the built-in catalog and the table of known fields")

// docs/families.md lists every family the catalog and the table name,
// with its unit and HELP, as the code has them (-update rewrites it).
func TestFamiliesDocIsCurrent(t *testing.T) {
	var b strings.Builder
	b.WriteString(familiesDocHead)
	var rows []string
	for name, fams := range everyNamedFamily(t) {
		var from []string
		for _, x := range fams {
			from = append(from, "`"+x.from+"`")
		}
		slices.Sort(from)
		f := fams[0].f
		typ, unit := f.Type, f.Unit
		if unit == "" {
			unit = "–"
		}
		rows = append(rows, fmt.Sprintf("| `onchain_%s` | %s | %s | %s | %s |\n", name, typ, unit, strings.Join(from, ", "), strings.ReplaceAll(f.Help, "|", `\|`)))
	}
	slices.Sort(rows)
	b.WriteString(strings.Join(rows, ""))
	const file = "../docs/families.md"
	if *updateFamilies {
		if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != b.String() {
		t.Errorf("%s is not what the catalog and the table say (go test ./config -run TestFamiliesDocIsCurrent -update rewrites it)", file)
	}
}

const familiesDocHead = `# Every family the catalogs name

Generated from the built-in catalog (config/endpoints.go) and the table of known fields
(config/meaning.go) by ` + "`go test ./config -run TestFamiliesDocIsCurrent -update`" + `; do not edit by hand.
How the names are made: [naming.md](naming.md). Each family's HELP ends, in the exposition, with
"Cached: refreshed from upstream when a new row is due." The unit is the family's ` + "`# UNIT`" + ` in
OpenMetrics; "–" where the value has none (a count, an index) or none is known (the HELP then says
how the provider publishes it). "In the window" is the row's interval (the ` + "`window`" + ` label); a value
without it is a level as of the row. A field of any other path, or not listed here, is named by the
rule and its HELP says so.

| family | type | unit | from (path or category/metric, and row field) | HELP |
|---|---|---|---|---|
`
