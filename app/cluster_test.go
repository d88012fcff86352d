package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// digestFile loads a configuration written to a file and returns its
// digest.
func digestFile(t *testing.T, yml string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "config.yml")
	if err := os.WriteFile(file, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(file)
	if err != nil {
		t.Fatalf("%v\n%s", err, yml)
	}
	return configDigest(c)
}

// TestConfigDigest: the digest members compare is the same for files
// that ask the same calls (comments, the order of keys, the credential's
// source, the budget's limits apart) and differs for files that do not
// (a path, a parameter's values, a window, the URL, a field). It holds
// nothing of the credential.
func TestConfigDigest(t *testing.T) {
	t.Setenv("DIGEST_TOKEN", "s3cr3t-token-value")
	t.Setenv("OTHER_TOKEN", "another-s3cr3t")
	base := `
data:
  url: https://data.example.com
  token_env: DIGEST_TOKEN
  daily_budget: 1000
  metrics:
    - path: /v1/btc/market-data/open-interest
      window: hour
      exchange: [binance, bybit]
    - path: /v2/network/events-count
      asset: [usdt, usdc]
      window: 10min
`
	d := digestFile(t, base)
	if len(d) == 0 || len(d) > 128 {
		t.Fatalf("digest %q: want 1 to 128 bytes (a heartbeat's bound)", d)
	}
	if strings.Contains(d, "s3cr3t") {
		t.Fatalf("digest %q holds the credential", d)
	}
	same := map[string]string{
		"comments and the order of keys": `
# a comment
data:
  daily_budget: 1000
  token_env: DIGEST_TOKEN
  url: https://data.example.com
  metrics:
    - window: hour
      path: /v1/btc/market-data/open-interest   # open interest
      exchange: [binance, bybit]
    - path: /v2/network/events-count
      window: 10min
      asset: [usdt, usdc]
`,
		"another credential and budget": strings.NewReplacer("DIGEST_TOKEN", "OTHER_TOKEN", "daily_budget: 1000", "daily_budget: 500").Replace(base),
	}
	for name, yml := range same {
		if got := digestFile(t, yml); got != d {
			t.Errorf("%s: digest %s, want the same as the file's, %s", name, got, d)
		}
	}
	other := map[string]string{
		"a value more":   strings.Replace(base, "[binance, bybit]", "[binance, bybit, okx]", 1),
		"another window": strings.Replace(base, "window: 10min", "window: hour", 1),
		"another path":   strings.Replace(base, "/v1/btc/market-data/open-interest", "/v1/eth/market-data/open-interest", 1),
		"another URL":    strings.Replace(base, "data.example.com", "data2.example.com", 1),
		"an entry less":  strings.Split(base, "    - path: /v2/")[0],
		"a cache_ttl":    base + "      cache_ttl: 5m\n",
	}
	for name, yml := range other {
		if got := digestFile(t, yml); got == d {
			t.Errorf("%s: the same digest as the file's, %s", name, d)
		}
	}
}
