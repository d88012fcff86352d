package config

import "testing"

// A value filled into a path placeholder is one escaped path segment; a
// value that could step out of it is refused with the parameter's line.
func TestPlaceholderValuesArePathSegments(t *testing.T) {
	const head = "indicator:\n  url: http://127.0.0.1:1\n  token_env: T\n  metrics:\n    - path: /api/equities/{equity}/pbr-band\n"
	for _, tc := range []struct {
		name, yml, path, err string
	}{
		{"escaped", head + "      equity: \"KRX:005 930?x#y\"\n", "/api/equities/KRX:005%20930%3Fx%23y/pbr-band", ""},
		{"colon stays", head + "      equity: KRX:005930\n", "/api/equities/KRX:005930/pbr-band", ""},
		{"slash", head + "      equity: [KRX:005930, NASDAQ/AAPL]\n", "",
			`x.yml:6: indicator.metrics[0].equity: "NASDAQ/AAPL" holds "/" or "..": it cannot fill the path segment {equity} of /api/equities/{equity}/pbr-band`},
		{"dot dot", head + "      equity: \"..\"\n", "",
			`x.yml:6: indicator.metrics[0].equity: ".." holds "/" or "..": it cannot fill the path segment {equity} of /api/equities/{equity}/pbr-band`},
		{"dot", head + "      equity: \".\"\n", "",
			`x.yml:6: indicator.metrics[0].equity: "." is the current directory: it cannot fill the path segment {equity} of /api/equities/{equity}/pbr-band`},
		{"handle", "consensus:\n  url: http://127.0.0.1:1\n  token_env: T\n  metrics:\n    - path: /analysts/{handle}\n      handle: ../../admin\n", "",
			`x.yml:6: consensus.metrics[0].handle: "../../admin" holds "/" or "..": it cannot fill the path segment {handle} of /analysts/{handle}`},
		{"data asset", "data:\n  url: http://127.0.0.1:1\n  token_env: T\n  metrics:\n    - path: /v1/{asset}/network-data/supply\n      asset: \"b c%2F\"\n", "/v1/b%20c%252F/network-data/supply", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse("x.yml", []byte(tc.yml), testEnv)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Errorf("error:\n got %v\nwant %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tp := cfg.Tuples[len(cfg.Tuples)-1]
			if tp.Path != tc.path {
				t.Errorf("path %q, want %q", tp.Path, tc.path)
			}
			// Labels carry the value as written, not its escaped form.
			if tc.name == "data asset" && tp.LabelValues[0] != "b c%2F" {
				t.Errorf("asset label %q", tp.LabelValues[0])
			}
		})
	}
}
