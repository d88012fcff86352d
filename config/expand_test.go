package config

import "testing"

func TestLeftOutOfAll(t *testing.T) {
	for _, tc := range []struct{ api, param, value, want string }{
		{APIData, "exchange", "all_exchange", "aggregate"},
		{APIData, "symbol", "all_symbol", "aggregate"},
		{APIData, "exchange", "ftx", "deprecated"},
		{APIData, "exchange", "binance", ""},
		{APIData, "token", "ftx", ""}, // deprecated as an exchange only
		{APIIndicator, "equity", "all_x", ""},
	} {
		if got := LeftOutOfAll(tc.api, tc.param, tc.value); got != tc.want {
			t.Errorf("%s %s=%s: %q, want %q", tc.api, tc.param, tc.value, got, tc.want)
		}
	}
}
