package config

import (
	"os"
	"path/filepath"
	"testing"
)

// A relative token_file is read from the configuration file's directory,
// as tls_config files are, whatever the working directory.
func TestTokenFileRelativeToConfigFile(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "etc")
	if err := os.MkdirAll(filepath.Join(sub, "secrets"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "secrets", "data-token"), []byte("tok-in-etc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The same relative name under the working directory holds another
	// value: reading it would be the old, working-directory behaviour.
	t.Chdir(dir)
	if err := os.MkdirAll("secrets", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("secrets", "data-token"), []byte("tok-in-cwd"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(sub, "onchain.yml")
	yml := "data:\n  url: http://127.0.0.1:1\n  token_file: secrets/data-token\n  metrics:\n    - path: /v1/btc/network-data/supply\n"
	if err := os.WriteFile(file, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.APIs[APIData]
	if got := a.Token(); got != "tok-in-etc" {
		t.Errorf("token read from the wrong file (%d bytes)", len(got))
	}
	if got, want := a.CredentialSource(), "file "+filepath.Join(sub, "secrets", "data-token"); got != want {
		t.Errorf("credential source %q, want %q", got, want)
	}
}

// A section whose entries all read key-free endpoints runs without a
// credential, even with token_env naming a variable that is not set; the
// data API always needs one.
func TestKeylessSectionNeedsNoCredential(t *testing.T) {
	cfg, err := Parse("x.yml", []byte(`
consensus:
  url: http://127.0.0.1:2
  token_env: ONCHAIN_TEST_UNSET_VARIABLE
  metrics:
    - path: /consensus
      asset: [btc, eth]
    - path: /analyst-views
      asset: btc
    - path: /analysts/top
      asset: btc
`), testEnv)
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.APIs[APIConsensus]
	if a.Token() != "" || len(a.Tuples) != 4 {
		t.Errorf("token set %v, %d tuples", a.Token() != "", len(a.Tuples))
	}
	for _, tp := range a.Tuples {
		if tp.Keyed {
			t.Errorf("%s is keyed", tp.Key)
		}
	}
	if got := a.CredentialSource(); got != "environment variable ONCHAIN_TEST_UNSET_VARIABLE" {
		t.Errorf("credential source %q", got)
	}
	// The same section without any credential key loads too.
	if _, err := Parse("x.yml", []byte("consensus:\n  url: http://127.0.0.1:2\n  metrics:\n    - path: /calls\n      asset: btc\n"), testEnv); err != nil {
		t.Errorf("key-free section without credential: %v", err)
	}
	_, err = Parse("x.yml", []byte("data:\n  url: http://127.0.0.1:1\n  token_env: ONCHAIN_TEST_UNSET_VARIABLE\n  metrics:\n    - path: /v1/btc/network-data/supply\n"), testEnv)
	if want := "x.yml:3: data.token_env: environment variable ONCHAIN_TEST_UNSET_VARIABLE is not set or empty"; err == nil || err.Error() != want {
		t.Errorf("data API without its credential: %v", err)
	}
}

// The url check refuses only a version prefix as the url's last segment.
func TestURLVersionPrefix(t *testing.T) {
	for _, tc := range []struct {
		api, url string
		refused  bool
	}{
		{APIData, "https://host/v1", true},
		{APIData, "https://host/V2/", true},
		{APIData, "https://host/proxy/v1", true},
		{APIData, "https://host/v1/proxy", false},
		{APIData, "https://host/datav1", false},
		{APIData, "https://host/api", false},
		{APIIndicator, "https://host/api", true},
		{APIIndicator, "https://host/indicator", false},
		{APIConsensus, "https://host/v1", false},
	} {
		entry := map[string]string{
			APIData:      "  token_env: T\n  metrics:\n    - path: /v1/btc/network-data/supply\n",
			APIIndicator: "  token_env: T\n  metrics:\n    - path: /api/equities/{equity}/pbr-band\n      equity: KRX:005930\n",
			APIConsensus: "  metrics:\n    - path: /calls\n      asset: btc\n",
		}[tc.api]
		yml := tc.api + ":\n  url: " + tc.url + "\n" + entry
		_, err := Parse("x.yml", []byte(yml), testEnv)
		if (err != nil) != tc.refused {
			t.Errorf("%s url %s: err %v, want refused %v", tc.api, tc.url, err, tc.refused)
		}
	}
}

// The hint after a refused credential can be followed: a token_file is
// read again at reload, a token_env variable is not (the environment of a
// running process never changes), so that hint asks for a restart or a
// token_file rather than a reload alone.
func TestCredentialHintFollowable(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "key"), []byte("k\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ credential, want string }{
		{"  token_file: key\n", "write the new key to file " + filepath.Join(dir, "key") +
			" (read again at every reload), or fix the plan upstream, then POST /-/reload or send SIGHUP: a reload lifts the pause"},
		{"  token_env: T\n", "a reload reads environment variable T unchanged (a running process's environment never changes): " +
			"restart the exporter with the new key in T, or put the key in a file named by token_file (read again at every reload) " +
			"and POST /-/reload or send SIGHUP; a plan fixed upstream needs only the reload"},
		{"", "no credential is set: put the key in a file named by token_file (read at every reload) and POST /-/reload or send SIGHUP"},
	} {
		yml := "consensus:\n  url: http://127.0.0.1:2\n" + tc.credential + "  metrics:\n    - path: /calls\n      asset: btc\n"
		cfg, err := Parse(filepath.Join(dir, "x.yml"), []byte(yml), testEnv)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.APIs[APIConsensus].CredentialHint(); got != tc.want {
			t.Errorf("%q: hint\n%s\nwant\n%s", tc.credential, got, tc.want)
		}
	}
}
