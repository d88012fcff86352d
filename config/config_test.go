package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// testEnv resolves token_env in tests: T is set, everything else is unset.
func testEnv(name string) string {
	if name == "T" {
		return "s3cret-value"
	}
	return ""
}

// TestBadConfigs loads every testdata/bad_*.yml and compares the whole error
// text, so that messages keep naming file, line and key.
func TestBadConfigs(t *testing.T) {
	want := map[string]string{
		"bad_api_key_param.yml":        "testdata/bad_api_key_param.yml:6: data.metrics[0].api_key: parameter cannot be set: credentials come from token_env or token_file only",
		"bad_auth.yml":                 "testdata/bad_auth.yml:4: data.auth: must be header or query, got \"cookie\"",
		"bad_both_credentials.yml":     "testdata/bad_both_credentials.yml:4: data: set token_env or token_file, not both",
		"bad_chain.yml":                "testdata/bad_chain.yml:7: data.metrics[0].chain: \"tron\" is not a supported chain (allowed: ethereum)",
		"bad_chain_suffix.yml":         "testdata/bad_chain_suffix.yml:6: data.metrics[0].asset: \"usdt_eth\" carries a chain suffix; v2 takes the alias without it (and chain: ethereum where needed)",
		"bad_concurrency_range.yml":    "testdata/bad_concurrency_range.yml:4: data.concurrency: must be between 1 and 64, got 0",
		"bad_consensus_path.yml":       "testdata/bad_consensus_path.yml:5: consensus.metrics[0].path: \"consensus?asset=btc\" is not a valid path",
		"bad_daily_budget_type.yml":    "testdata/bad_daily_budget_type.yml:4: data.daily_budget: must be an integer, got \"1.5k\"",
		"bad_daily_budget_zero.yml":    "testdata/bad_daily_budget_zero.yml:4: consensus.daily_budget: must be between 1 and 100000000 calls per day, got 0 (leave it out for no budget)",
		"bad_duplicate_key.yml":        "testdata/bad_duplicate_key.yml:4: data.url: key is given twice",
		"bad_duplicate_list_value.yml": "testdata/bad_duplicate_list_value.yml:6: data.metrics[0].exchange[1]: \"binance\" is listed twice",
		"bad_duplicate_tuple.yml":      "testdata/bad_duplicate_tuple.yml:7: data.metrics[1]: the series /v1/btc/market-data/open-interest?exchange=bybit&window=day is listed twice (also by data.metrics[0] at line 5)",
		"bad_entry_errors_at_once.yml": `testdata/bad_entry_errors_at_once.yml:6: data.metrics[0].cache_tll: unknown key; did you mean "cache_ttl"? (to send cache_tll upstream as a parameter, list it under params:)
testdata/bad_entry_errors_at_once.yml:7: data.metrics[0].window: "week" is not allowed for /v1/btc/market-data/open-interest (allowed: day, hour, min)
testdata/bad_entry_errors_at_once.yml:8: data.metrics[0].symbl: unknown parameter for /v1/btc/market-data/open-interest (accepted: exchange, symbol); did you mean "symbol"?
testdata/bad_entry_errors_at_once.yml:9: data.metrics[1].asset: is required by /v2/indicator/valuation/mvrv-z-score
testdata/bad_entry_errors_at_once.yml:10: data.metrics[1].windw: unknown key; did you mean "window"? (to send windw upstream as a parameter, list it under params:)
testdata/bad_entry_errors_at_once.yml:14: data.metrics[2].fields.supply_total.nme: unknown key; did you mean "name"?
testdata/bad_entry_errors_at_once.yml:15: data.metrics[2].window: "week" is not allowed for /v1/btc/network-data/supply (allowed: day, hour, block)
testdata/bad_entry_errors_at_once.yml:17: data.metrics[3].asset: must be a value or a list of values, got a mapping`,
		"bad_duration.yml":             "testdata/bad_duration.yml:4: data.timeout: \"10 seconds\" is not a duration (use e.g. 30s, 10m, 2h, 1d)",
		"bad_empty_file.yml":           "testdata/bad_empty_file.yml:1: the file is empty: configure at least one of data, indicator, consensus",
		"bad_empty_list.yml":           "testdata/bad_empty_list.yml:6: data.metrics[0].exchange: must not be an empty list",
		"bad_empty_metrics.yml":        "testdata/bad_empty_metrics.yml:4: data.metrics: must not be an empty list",
		"bad_field_label_name.yml":     "testdata/bad_field_label_name.yml:9: data.metrics[0].fields.supply_total.labels.unit-name: \"unit-name\" is not a valid label name",
		"bad_field_label_repeated.yml": "testdata/bad_field_label_repeated.yml:7: data.metrics[0].fields.netflow_total: label \"window\" is already a label of the series",
		"bad_field_counter_name.yml": "testdata/bad_field_counter_name.yml:6: data.metrics[0].fields.loss_amount: a counter's name ends in _total: name it utxo_losses_total\n" +
			"testdata/bad_field_counter_name.yml:6: data.metrics[0].fields.profit_amount: utxo_profit_total is a gauge, whose name may not end in _total: rename it or give it type: counter",
		"bad_field_scale_zero.yml":          "testdata/bad_field_scale_zero.yml:8: data.metrics[0].fields.profit_percent.scale: must not be 0",
		"bad_field_spec.yml":                "testdata/bad_field_spec.yml:8: data.metrics[0].fields.supply_total.name: \"supply-total\" is not a valid metric name\ntestdata/bad_field_spec.yml:9: data.metrics[0].fields.supply_total.type: must be gauge or counter, got \"histogram\"",
		"bad_fields_empty.yml":              "testdata/bad_fields_empty.yml:6: data.metrics[0].fields: must list at least one field (leave it out to export every numeric field)",
		"bad_max_fields.yml":                "testdata/bad_max_fields.yml:7: data.metrics[0].max_fields: must be between 1 and 10000, got 0\ntestdata/bad_max_fields.yml:10: data.metrics[1].max_fields: does not apply beside fields:, which lists the fields exactly",
		"bad_forbidden_param.yml":           "testdata/bad_forbidden_param.yml:6: data.metrics[0].from: parameter cannot be set: the exporter always asks for the latest rows",
		"bad_indicator_query_auth.yml":      "testdata/bad_indicator_query_auth.yml:2: indicator.auth: the Indicator API takes its key only as a bearer header",
		"bad_indicator_window.yml":          "testdata/bad_indicator_window.yml:7: indicator.metrics[0].window: the indicator API takes no window",
		"bad_limit_out_of_range.yml":        "testdata/bad_limit_out_of_range.yml:7: data.metrics[0].limit: \"20000\" is out of range (1 to 10000)",
		"bad_max_staleness.yml":             "testdata/bad_max_staleness.yml:4: data.max_staleness: \"an hour\" is not a duration (use e.g. 30s, 10m, 2h, 1d)",
		"bad_max_tuples.yml":                "testdata/bad_max_tuples.yml:6: data.metrics[0]: expands to 3 series, more than max_tuples (2)",
		"bad_metrics_not_list.yml":          "testdata/bad_metrics_not_list.yml:5: data.metrics: must be a list, got a mapping",
		"bad_missing_credential.yml":        "testdata/bad_missing_credential.yml:1: data: a credential is required: set token_env or token_file",
		"bad_missing_credential_env.yml":    "testdata/bad_missing_credential_env.yml:3: data.token_env: environment variable ONCHAIN_TEST_UNSET_VARIABLE is not set or empty",
		"bad_missing_path.yml":              "testdata/bad_missing_path.yml:5: data.metrics[0].path: is required",
		"bad_missing_required.yml":          "testdata/bad_missing_required.yml:5: data.metrics[0].asset: is required by /v2/indicator/valuation/mvrv-z-score",
		"bad_missing_url.yml":               "testdata/bad_missing_url.yml:2: data.url: is required",
		"bad_negative_duration.yml":         "testdata/bad_negative_duration.yml:6: data.metrics[0].cache_ttl: must not be negative, got \"-5m\"",
		"bad_nested_param.yml":              "testdata/bad_nested_param.yml:6: data.metrics[0].exchange: must be a value or a list of values, got a mapping",
		"bad_no_metrics.yml":                "testdata/bad_no_metrics.yml:2: data.metrics: is required: list at least one metric",
		"bad_not_a_mapping.yml":             "testdata/bad_not_a_mapping.yml:1: must be a mapping, got a list",
		"bad_params_given_twice.yml":        "testdata/bad_params_given_twice.yml:8: data.metrics[0].params.exchange: parameter is given twice (as a key of the entry and under params:)",
		"bad_params_window.yml":             "testdata/bad_params_window.yml:7: data.metrics[0].params.window: the exporter sends the entry's window: set it with window:, not as a parameter",
		"bad_param_name.yml":                "testdata/bad_param_name.yml:6: data.metrics[0].exchange name: parameter name must match ^[a-zA-Z_][a-zA-Z0-9_]*$",
		"bad_path.yml":                      "testdata/bad_path.yml:5: data.metrics[0].path: \"/v3/btc/network-data/supply\" does not fit /v1/{asset}/{category}/{metric} or /v2/{domain}/{category}/{metric}",
		"bad_placeholder_without_param.yml": "testdata/bad_placeholder_without_param.yml:5: data.metrics[0].path: placeholder {asset} has no parameter asset in this entry",
		"bad_rate_limit.yml":                "testdata/bad_rate_limit.yml:4: consensus.rate_limit: must be between 0 and 100000 requests per minute (0 = no limit), got -60",
		"bad_rate_limit_huge.yml":           "testdata/bad_rate_limit_huge.yml:4: consensus.rate_limit: must be between 0 and 100000 requests per minute (0 = no limit), got 1e+13",
		"bad_rate_limit_inf.yml":            "testdata/bad_rate_limit_inf.yml:4: consensus.rate_limit: must be a number, got \".inf\"",
		"bad_daily_budget_huge.yml":         "testdata/bad_daily_budget_huge.yml:4: consensus.daily_budget: must be between 1 and 100000000 calls per day, got 100000001 (leave it out for no budget)",
		"bad_rate_limit_type.yml":           "testdata/bad_rate_limit_type.yml:4: consensus.rate_limit: must be a number, got \"60/min\"",
		"bad_reserved_param.yml":            "testdata/bad_reserved_param.yml:6: data.metrics[0].endpoint: parameter name is reserved: parameters become labels, and the exporter's series already carry a label of that name",
		"bad_row_label_name.yml":            "testdata/bad_row_label_name.yml:7: consensus.metrics[0].labels: \"direction-of-call\" is not a valid label name",
		"bad_row_label_repeated.yml":        "testdata/bad_row_label_repeated.yml:7: data.metrics[0].labels: \"exchange\" is already a label of the series",
		"bad_timeout_zero.yml":              "testdata/bad_timeout_zero.yml:4: data.timeout: must be greater than 0",
		"bad_unknown_api_key.yml":           "testdata/bad_unknown_api_key.yml:4: data.retries: unknown key (expected one of url, token_env, token_file, auth, timeout, concurrency, rate_limit, daily_budget, max_staleness, revalidate, max_tuples, metrics, tls_config, proxy_url, no_proxy, proxy_from_environment, proxy_connect_header, follow_redirects)",
		// Every problem of the file in one run: an unknown section key
		// does not hide the errors of the entries, nor one section those
		// of another.
		"bad_section_key_hides_entry_errors.yml": `testdata/bad_section_key_hides_entry_errors.yml:4: data.timout: unknown key; did you mean "timeout"?
testdata/bad_section_key_hides_entry_errors.yml:7: data.metrics[0].window: "block" is not allowed for /v1/btc/market-data/open-interest (allowed: day, hour, min)
testdata/bad_section_key_hides_entry_errors.yml:9: data.metrics[1].exchange: unknown parameter for /v1/btc/network-data/supply (accepted: none)
testdata/bad_section_key_hides_entry_errors.yml:11: data.metrics[2].windw: unknown key; did you mean "window"? (to send windw upstream as a parameter, list it under params:)
testdata/bad_section_key_hides_entry_errors.yml:14: consensus.max_tuples: must be an integer, got "many"
testdata/bad_section_key_hides_entry_errors.yml:16: consensus.metrics[0]: /consensus with days needs the key: set consensus.token_env or consensus.token_file`,
		// Expanding beside errors must not echo them: the entry whose
		// asset list is wrong has no placeholder error, the unreadable
		// token_env no "credential required", the wrong max_tuples no
		// comparison.
		"bad_errors_not_echoed.yml": `testdata/bad_errors_not_echoed.yml:3: data.token_env: must be a single value, got a list
testdata/bad_errors_not_echoed.yml:4: data.max_tuples: must be at least 1, got 0
testdata/bad_errors_not_echoed.yml:7: data.metrics[0].asset: must not be an empty list`,
		// Typos: outside the catalog a mistyped entry key would be sent
		// upstream as a parameter.
		"bad_typo_entry_keys.yml": `testdata/bad_typo_entry_keys.yml:6: data.metrics[0].cache_tll: unknown key; did you mean "cache_ttl"? (to send cache_tll upstream as a parameter, list it under params:)
testdata/bad_typo_entry_keys.yml:7: data.metrics[0].lables: unknown key; did you mean "labels"? (to send lables upstream as a parameter, list it under params:)
testdata/bad_typo_entry_keys.yml:8: data.metrics[0].timekey: unknown key; did you mean "time_key"? (to send timekey upstream as a parameter, list it under params:)
testdata/bad_typo_entry_keys.yml:9: data.metrics[0].feilds: unknown key; did you mean "fields"? (to send feilds upstream as a parameter, list it under params:)`,
		// Path patterns: their syntax, and keys only a pattern takes.
		"bad_pattern.yml": `testdata/bad_pattern.yml:5: data.metrics[0].path: pattern "/v1/btc/{asset}/*", segment 3 "{asset}": {asset} is a placeholder: patterns select paths by * and {a,b}, not by parameters
testdata/bad_pattern.yml:6: data.metrics[1].path: pattern "/v1/btc/**x/*", segment 3 "**x": ** stands alone in a segment
testdata/bad_pattern.yml:7: data.metrics[2].path: pattern "/v3/btc/*" must start with /v1/ or /v2/
testdata/bad_pattern.yml:8: data.metrics[3].path: pattern "/v1/btc/*/{reserve,}", segment 4 "{reserve,}": {reserve,}: each word of a {a,b} group is a-z, 0-9, _ . -
testdata/bad_pattern.yml:10: data.metrics[4].exclude: pattern "/v1/btc/Market*", segment 3 "Market*": only a-z, 0-9, _ . - besides * and {a,b}
testdata/bad_pattern.yml:11: data.metrics[4].window: "dya" is not a window of the data API (block, min, 10min, hour, day, or one of coarsest, finest, all)
testdata/bad_pattern.yml:13: data.metrics[5].window: "coarsest" chooses among the windows a path allows: give it alone (window: coarsest), not in a list`,
		"bad_pattern_named_path.yml": `testdata/bad_pattern_named_path.yml:6: data.metrics[0].exclude: applies to a path pattern only (a path with * or {a,b})
testdata/bad_pattern_named_path.yml:7: data.metrics[0].coarsen: applies to a path pattern only (a path with * or {a,b})
testdata/bad_pattern_named_path.yml:8: data.metrics[0].window: finest chooses among the windows a path pattern selects (a path with * or {a,b}): name the windows of /v1/btc/network-data/supply
testdata/bad_pattern_named_path.yml:12: consensus.metrics[0].path: path patterns select from the data API's discovery only; the consensus API takes a path named`,
		"bad_typo_field_key.yml":             "testdata/bad_typo_field_key.yml:8: data.metrics[0].fields.supply_total.nmae: unknown key; did you mean \"name\"?",
		"bad_typo_param_outside_catalog.yml": "testdata/bad_typo_param_outside_catalog.yml:6: data.metrics[0].windw: unknown key; did you mean \"window\"? (to send windw upstream as a parameter, list it under params:)",
		"bad_typo_section_key.yml":           "testdata/bad_typo_section_key.yml:4: data.timout: unknown key; did you mean \"timeout\"?",
		"bad_typo_top_key.yml":               "testdata/bad_typo_top_key.yml:6: indicater: unknown key; did you mean \"indicator\"?",
		"bad_unknown_parameter.yml":          "testdata/bad_unknown_parameter.yml:6: data.metrics[0].exchange: unknown parameter for /v1/btc/network-data/supply (accepted: none)",
		"bad_unknown_top_key.yml":            "testdata/bad_unknown_top_key.yml:1: datum: unknown key (expected one of data, indicator, consensus)",
		"bad_unknown_window.yml":             "testdata/bad_unknown_window.yml:6: data.metrics[0].window: \"week\" is not allowed for the data API (allowed: block, min, 10min, hour, day)",
		// Files are read relative to the configuration file's directory,
		// and the message says which path was tried.
		"bad_unreadable_token_file.yml": "testdata/bad_unreadable_token_file.yml:3: data.token_file: cannot read testdata/no-such-token-file: no such file or directory (no-such-token-file is relative to testdata/, the configuration file's directory)",
		"bad_token_file_absolute.yml":   "testdata/bad_token_file_absolute.yml:3: data.token_file: cannot read /nonexistent/onchain-exporter-test-token: no such file or directory",
		"bad_token_file_empty.yml":      "testdata/bad_token_file_empty.yml:3: data.token_file: testdata/token-empty is empty (token-empty is relative to testdata/, the configuration file's directory)",
		// A section of key-free entries needs no credential; one keyed
		// entry does, and the message names it.
		"bad_keyed_entry_credential_unset.yml": "testdata/bad_keyed_entry_credential_unset.yml:5: consensus.token_env: environment variable ONCHAIN_TEST_UNSET_VARIABLE is not set or empty (consensus.metrics[2] at line 11: /consensus with days needs the key)",
		"bad_keyless_section_broken_entry.yml": "testdata/bad_keyless_section_broken_entry.yml:5: consensus.token_env: environment variable ONCHAIN_TEST_UNSET_VARIABLE is not set or empty\ntestdata/bad_keyless_section_broken_entry.yml:8: consensus.metrics[0].asset: must be a value or a list of values, got a mapping",
		"bad_url_version_prefix.yml":           "testdata/bad_url_version_prefix.yml:2: data.url: \"https://data-api.example.com/v1/\" ends in /v1, but metrics paths already start with /v1 or /v2 (calls would go to /v1/v1/...): drop /v1, url: https://data-api.example.com",
		"bad_url_version_prefix_indicator.yml": "testdata/bad_url_version_prefix_indicator.yml:2: indicator.url: \"https://indicator.example.com/api\" ends in /api, but metrics paths already start with /api (calls would go to /api/api/...): drop /api, url: https://indicator.example.com",
		"bad_url.yml":                          "testdata/bad_url.yml:2: data.url: must be an absolute http(s) URL, got \"ftp://example.com\"",
		"bad_url_key_in_query.yml":             "testdata/bad_url_key_in_query.yml:2: data.url: must be an absolute http(s) URL, got \"data-api.example.com/v1?<redacted>\"",
		"bad_url_userinfo.yml":                 "testdata/bad_url_userinfo.yml:2: data.url: must be an absolute http(s) URL, got \"ftp://<redacted>@data-api.example.com\"",
		"bad_url_with_credentials.yml":         "testdata/bad_url_with_credentials.yml:2: data.url: must not carry credentials or a query; use token_env or token_file",
		"bad_url_empty_query.yml":              "testdata/bad_url_empty_query.yml:2: data.url: must not carry credentials or a query; use token_env or token_file",
		"bad_url_fragment.yml":                 "testdata/bad_url_fragment.yml:2: data.url: must not carry a #fragment: nothing after \"#\" is ever sent",
		"bad_token_file_two_lines.yml":         "testdata/bad_token_file_two_lines.yml:3: data.token_file: testdata/token_two_lines holds a line break; a credential is one line (a trailing line break is fine) (token_two_lines is relative to testdata/, the configuration file's directory)",
		"bad_window_not_allowed.yml":           "testdata/bad_window_not_allowed.yml:6: data.metrics[0].window: \"block\" is not allowed for /v1/btc/market-data/open-interest (allowed: day, hour, min)",
		"bad_wrong_type_concurrency.yml":       "testdata/bad_wrong_type_concurrency.yml:4: data.concurrency: must be an integer, got \"four\"",
		// YAML syntax errors name the line of the mistake, not that of
		// the collection yaml was parsing (line 1, 4, 4, 4, 6, 5 and none).
		"bad_yaml.yml":                       "testdata/bad_yaml.yml:2: invalid YAML: did not find expected ',' or ']'",
		"bad_yaml_indent.yml":                "testdata/bad_yaml_indent.yml:6: invalid YAML: did not find expected '-' indicator",
		"bad_yaml_after_multiline_value.yml": "testdata/bad_yaml_after_multiline_value.yml:8: invalid YAML: did not find expected '-' indicator",
		"bad_yaml_item_in_mapping.yml":       "testdata/bad_yaml_item_in_mapping.yml:7: invalid YAML: did not find expected key",
		"bad_yaml_unclosed_list.yml":         "testdata/bad_yaml_unclosed_list.yml:7: invalid YAML: did not find expected ',' or ']'",
		"bad_yaml_tab.yml":                   "testdata/bad_yaml_tab.yml:6: invalid YAML: found a tab character that violates indentation",
		"bad_yaml_unknown_alias.yml":         "testdata/bad_yaml_unknown_alias.yml:6: invalid YAML: unknown anchor 'exchanges' referenced",
		// yaml's own line is right for a key without its colon.
		"bad_yaml_missing_colon.yml": "testdata/bad_yaml_missing_colon.yml:6: invalid YAML: could not find expected ':'",
	}
	checkBadConfigs(t, "testdata/", want)
}

// checkBadConfigs loads every testdata bad_*.yml of dir, which the table
// want must list one for one, and compares the whole error text; no error
// may carry the test's credential.
func checkBadConfigs(t *testing.T, dir string, want map[string]string) {
	t.Helper()
	files, err := filepath.Glob(dir + "bad_*.yml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(want) {
		t.Errorf("testdata has %d bad configs, the table %d", len(files), len(want))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Parse(f, b, testEnv)
			if err == nil {
				t.Fatal("loaded without error")
			}
			if got := err.Error(); got != want[filepath.Base(f)] {
				t.Errorf("error:\n got %q\nwant %q", got, want[filepath.Base(f)])
			}
			if strings.Contains(err.Error(), "s3cret-value") {
				t.Error("error text carries the credential")
			}
		})
	}
}

func TestExampleConfigExpands(t *testing.T) {
	t.Setenv("ONCHAIN_DATA_TOKEN", "example-token")
	cfg, err := Load("../examples/config.yml")
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.APIs[APIData]
	if got := a.Token(); got != "example-token" {
		t.Errorf("token = %q", string(got))
	}
	if a.URL.String() != "https://data-api.example.com" || a.Concurrency != 4 || a.Auth != "header" {
		t.Errorf("section = %+v", a)
	}
	// 3 open interest + 4 reserves + 2 supply + netflow + 2 events-count + mvrv.
	if len(cfg.Tuples) != 13 {
		t.Fatalf("%d tuples, want 13", len(cfg.Tuples))
	}
	byKey := map[string]*Tuple{}
	for _, tp := range cfg.Tuples {
		byKey[tp.Key] = tp
	}
	oi := byKey["data /v1/btc/market-data/open-interest?exchange=bybit&window=hour"]
	if oi == nil {
		t.Fatalf("no open interest tuple for bybit; keys: %v", keys(byKey))
	}
	if got := oi.Query().Encode(); got != "exchange=bybit&limit=5&window=hour" {
		t.Errorf("query = %s", got)
	}
	if !reflect.DeepEqual(oi.LabelNames(), []string{"asset", "window", "exchange"}) ||
		!reflect.DeepEqual(oi.LabelValues, []string{"btc", "hour", "bybit"}) {
		t.Errorf("labels = %v %v", oi.LabelNames(), oi.LabelValues)
	}
	supply := byKey["data /v1/btc/network-data/supply?window=block"]
	if supply == nil || supply.Path != "/v1/btc/network-data/supply" || supply.Query().Has("asset") {
		t.Fatalf("placeholder tuple = %+v", supply)
	}
	if supply.Endpoint == nil || supply.Fields["supply_total"].Name != "supply" {
		t.Error("supply tuple did not find its catalog entry")
	}
	netflow := byKey["data /v1/btc/exchange-flows/netflow?exchange=binance&window=day"]
	if netflow == nil || netflow.Endpoint != nil || !netflow.AllNumeric || netflow.Window != "day" {
		t.Errorf("netflow tuple = %+v (default window must be day)", netflow)
	}
	events := byKey["data /v2/network/events-count?asset=usdt&window=block"]
	if events == nil || !reflect.DeepEqual(events.LabelValues, []string{"usdt", "block"}) {
		t.Errorf("events-count tuple = %+v", events)
	}
	mvrv := byKey["data /v2/indicator/valuation/mvrv-z-score?asset=btc&window=day"]
	if mvrv == nil || mvrv.CacheTTL != 3600 {
		t.Errorf("mvrv tuple = %+v", mvrv)
	}
	want := []string{"api", "endpoint", "asset", "window", "exchange", "token"}
	if !reflect.DeepEqual(cfg.TupleLabelNames, want) {
		t.Errorf("tuple labels = %v, want %v", cfg.TupleLabelNames, want)
	}
	if got := oi.TupleLabelValues; !reflect.DeepEqual(got, []string{"data", "/v1/btc/market-data/open-interest", "btc", "hour", "bybit", ""}) {
		t.Errorf("tuple label values = %v", got)
	}
}

func keys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// A label group shares one label set: a second entry of the same endpoint
// that adds a parameter adds that label to the first entry's series too.
func TestLabelGroupUnion(t *testing.T) {
	cfg, err := Parse("x.yml", []byte(`
data:
  url: http://127.0.0.1:1
  token_env: T
  metrics:
    - path: /v1/btc/market-data/open-interest
      exchange: binance
    - path: /v1/btc/market-data/open-interest
      exchange: okx
      symbol: btc_usdt
`), testEnv)
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range cfg.Tuples {
		if !reflect.DeepEqual(tp.LabelNames(), []string{"asset", "window", "exchange", "symbol"}) {
			t.Errorf("%s: labels %v", tp.Key, tp.LabelNames())
		}
	}
	if got := cfg.Tuples[0].LabelValues; !reflect.DeepEqual(got, []string{"btc", "day", "binance", ""}) {
		t.Errorf("values = %v", got)
	}
}

func TestFieldsOverrideCatalog(t *testing.T) {
	cfg, err := Parse("x.yml", []byte(`
data:
  url: http://127.0.0.1:1
  token_file: testdata/token
  auth: query
  metrics:
    - path: /v1/btc/network-indicator/pnl-utxo
      fields:
        profit_percent: {help: Share in profit.}
        loss_amount: {name: utxo_losses_total, type: counter, scale: 2}
`), testEnv)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.APIs[APIData].Token() != "file-token" {
		t.Error("token_file not read and trimmed")
	}
	tp := cfg.Tuples[0]
	if tp.AllNumeric || len(tp.Fields) != 2 {
		t.Fatalf("fields = %v (AllNumeric %v)", tp.Fields, tp.AllNumeric)
	}
	if f := tp.Fields["profit_percent"]; f.Name != "utxo_profit_ratio" || f.Scale != 0.01 || f.Help != "Share in profit." {
		t.Errorf("profit_percent = %+v", f)
	}
	if f := tp.Fields["loss_amount"]; f.Name != "utxo_losses_total" || f.Type != "counter" || f.Scale != 2 {
		t.Errorf("loss_amount = %+v", f)
	}
}

func TestSecretNeverPrints(t *testing.T) {
	s := Secret("abc123")
	for _, got := range []string{s.String(), fmt.Sprintf("%v %s %+v %#v", s, s, s, s)} {
		if strings.Contains(got, "abc123") {
			t.Errorf("secret printed: %s", got)
		}
	}
	b, _ := json.Marshal(struct{ S Secret }{s})
	if strings.Contains(string(b), "abc123") {
		t.Errorf("secret marshalled: %s", b)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load("testdata/does-not-exist.yml")
	if err == nil || !strings.Contains(err.Error(), "testdata/does-not-exist.yml") {
		t.Errorf("err = %v", err)
	}
}

// A credential with a line break or another control character inside
// would fail every call at run time (or split its header): it is refused
// at load, without being shown. A trailing line break is trimmed.
func TestCredentialIsOneLine(t *testing.T) {
	const yml = "data:\n  url: http://127.0.0.1:1\n  token_env: K\n  metrics:\n    - path: /v1/btc/network-data/supply\n"
	for value, want := range map[string]string{
		"s3cret-value\n":              "",
		"s3cret\nvalue":               "x.yml:3: data.token_env: environment variable K holds a line break; a credential is one line",
		"s3cret\r\nvalue\n":           "x.yml:3: data.token_env: environment variable K holds a line break; a credential is one line",
		"s3cret\x00value":             "x.yml:3: data.token_env: environment variable K holds a control character; a credential is one line",
		" s3cret-value\t\r\n":         "",
		"Bearer s3cret-value\nsecond": "x.yml:3: data.token_env: environment variable K holds a line break; a credential is one line",
	} {
		cfg, err := Parse("x.yml", []byte(yml), func(string) string { return value })
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", value, err)
		case want == "" && strings.Contains(string(cfg.APIs[APIData].Token()), "\n"):
			t.Errorf("%q: not trimmed", value)
		case want != "" && (err == nil || err.Error() != want):
			t.Errorf("%q: error\n got %v\nwant %s", value, err, want)
		}
	}
	big := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(big, []byte(strings.Repeat("s3cret-value", 6000)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Parse("x.yml", []byte(strings.Replace(yml, "token_env: K", "token_file: "+big, 1)), testEnv)
	if want := "x.yml:3: data.token_file: " + big + " is larger than 64 KiB; a credential is one line"; err == nil || err.Error() != want {
		t.Errorf("token file of 72 000 bytes: error\n got %v\nwant %s", err, want)
	}
}
