package main

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	"gopkg.in/yaml.v3"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/demo"
	"github.com/onchain-exporter/onchain_exporter/internal/testtool"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// startFake runs `onchain_exporter fake` in process on a free port and
// returns the data API's address it printed; SIGTERM stops it at cleanup.
func startFake(t *testing.T) string {
	t.Helper()
	var stdout, stderr testtool.LogBuffer
	done := make(chan int, 1)
	go func() { done <- run([]string{"fake", "--fake.listen-address=127.0.0.1:0"}, &stdout, &stderr) }()
	t.Cleanup(func() {
		if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("the fake exited with %d:\n%s", code, stderr.String())
			}
		case <-time.After(15 * time.Second):
			t.Error("the fake did not stop after SIGTERM")
		}
	})
	addr := regexp.MustCompile(`data: +url: (http://127\.0\.0\.1:[0-9]+) `)
	deadline := time.Now().Add(15 * time.Second)
	for {
		if m := addr.FindStringSubmatch(stdout.String()); m != nil {
			for _, want := range []string{demo.DataToken, demo.IndicatorToken, demo.ConsensusKey, m[1] + "/indicator", m[1] + "/consensus"} {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("the fake's banner does not say %s:\n%s", want, stdout.String())
				}
			}
			return m[1]
		}
		select {
		case code := <-done:
			done <- code
			t.Fatalf("the fake exited with %d:\n%s", code, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fake printed no address:\n%s%s", stdout.String(), stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// fakeCredentials resolves every token_env to the credential the fake
// takes for that section's API.
func fakeCredentials(yml []byte) func(string) string {
	byVar := map[string]string{}
	var doc map[string]struct {
		TokenEnv string `yaml:"token_env"`
	}
	_ = yaml.Unmarshal(yml, &doc)
	for api, s := range doc {
		byVar[s.TokenEnv] = map[string]string{config.APIData: demo.DataToken, config.APIIndicator: demo.IndicatorToken,
			config.APIConsensus: demo.ConsensusKey}[api]
	}
	return func(name string) string { return byVar[name] }
}

// The standalone fake serves every series of the configurations a user
// starts from: examples/config-fake.yml as it is, and, pointed at the
// fake, those of README.md and docs/, of the Kubernetes example and of the
// Helm chart's values, through the real configuration loader and upstream
// client: each answers with rows.
func TestFakeCommandServesTheExamples(t *testing.T) {
	base := startFake(t)
	b, err := os.ReadFile("examples/config-fake.yml")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"examples/config-fake.yml": []byte(strings.ReplaceAll(string(b), "http://127.0.0.1:9800", base))}
	docs, _ := filepath.Glob("docs/*.md")
	for _, doc := range append([]string{"README.md"}, docs...) {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		block := regexp.MustCompile("(?ms)^```ya?ml\n(.*?)^```")
		for _, m := range block.FindAllSubmatchIndex(b, -1) {
			if yml := pointedAtFake(t, b[m[2]:m[3]], base); yml != nil {
				files[fmt.Sprintf("%s:%d", doc, bytes.Count(b[:m[0]], []byte("\n"))+2)] = yml
			}
		}
	}
	var cm struct{ Data map[string]string }
	decodeYAMLFile(t, "examples/kubernetes/configmap.yaml", &cm)
	var values struct{ Config string }
	decodeYAMLFile(t, "charts/onchain-exporter/values.yaml", &values)
	for name, yml := range map[string]string{"examples/kubernetes/configmap.yaml": cm.Data["config.yml"], "charts/onchain-exporter/values.yaml": values.Config} {
		if files[name] = pointedAtFake(t, []byte(yml), base); files[name] == nil {
			t.Errorf("%s: no configuration found", name)
		}
	}
	if len(files) < 5 {
		t.Fatalf("found only %v", slices.Sorted(maps.Keys(files)))
	}
	for name, yml := range files {
		t.Run(strings.ReplaceAll(name, "/", "_"), func(t *testing.T) {
			// A pool per file, as each file runs in an exporter of its
			// own: the files share the fake's url and credentials, so one
			// pool would give them one account, and a daily_budget one of
			// them sets would pace the calls of all the others.
			pool := upstream.NewPool(prometheus.NewRegistry(), time.Now, log.NewNopLogger())
			defer pool.Close()
			cfg, err := config.Parse(name, yml, fakeCredentials(yml))
			if err != nil {
				t.Fatal(err)
			}
			cfg, err = cfg.Resolve(listResolver(pool))
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Tuples) == 0 {
				t.Fatal("no tuples")
			}
			for _, tp := range cfg.Tuples {
				rows, err := fetchRows(pool.Client(cfg.APIs[tp.API]), tp)
				if err != nil || rows == 0 {
					t.Errorf("%s (%s line %d): %d rows, %v", tp.Key, tp.Entry.Key, tp.Entry.Line, rows, err)
				}
			}
		})
	}
}

func hasKey(m *yaml.Node, key string) bool {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return true
		}
	}
	return false
}

func decodeYAMLFile(t *testing.T, file string, v any) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// pointedAtFake returns a YAML text that is a whole configuration (its
// keys are API sections, each with its metrics), pointed at the fake, or nil for any other text
// (a fragment, an alert). Each section's url becomes the fake's, its
// credential a variable fakeCredentials knows, and the transport keys
// that only make sense beside a real API (a CA file, a proxy) are left
// out.
func pointedAtFake(t *testing.T, text []byte, base string) []byte {
	t.Helper()
	var doc yaml.Node
	if yaml.Unmarshal(text, &doc) != nil || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	root := doc.Content[0]
	if len(root.Content) == 0 {
		return nil
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		api := root.Content[i].Value
		if !slices.Contains(config.APINames, api) || root.Content[i+1].Kind != yaml.MappingNode {
			return nil
		}
		if !hasKey(root.Content[i+1], "metrics") {
			return nil // a fragment showing some keys of a section
		}
		url := map[string]string{config.APIData: base, config.APIIndicator: base + "/indicator", config.APIConsensus: base + "/consensus"}[api]
		section := root.Content[i+1]
		var kept []*yaml.Node
		for j := 0; j+1 < len(section.Content); j += 2 {
			k, v := section.Content[j], section.Content[j+1]
			switch k.Value {
			case "tls_config", "proxy_url", "no_proxy", "proxy_connect_header", "proxy_from_environment":
				continue
			case "url":
				v.Value, v.Style = url, 0
			case "token_file":
				k.Value, v.Value, v.Style = "token_env", "FAKE_"+strings.ToUpper(api), 0
			}
			kept = append(kept, k, v)
		}
		section.Content = kept
	}
	yml, err := yaml.Marshal(&doc)
	if err != nil {
		t.Fatal(err)
	}
	return yml
}

// listResolver resolves `all` and Analyst Consensus asset names through
// the fake's listing endpoints, as the exporter does at start.
func listResolver(pool *upstream.Pool) config.Resolver {
	return func(a *config.API, e *config.Entry, p config.Param) (config.Param, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c := pool.Client(a)
		switch {
		case a.Name == config.APIConsensus && p.Name == "asset":
			items, err := c.List(ctx, "/assets", nil, false)
			if err != nil {
				return p, err
			}
			out := config.Param{Name: p.Name, Labels: map[string]string{}}
			for _, v := range p.Values {
				key := assetKeyOf(items, v)
				if key == "" {
					return p, fmt.Errorf("%q is not an asset of /assets", v)
				}
				out.Values = append(out.Values, key)
			}
			return out, nil
		case !p.HasAll():
			return p, nil
		case a.Name == config.APIIndicator:
			items, err := c.List(ctx, "/api/equities", nil, false)
			if err != nil {
				return p, err
			}
			out := config.Param{Name: p.Name}
			for _, it := range items {
				out.Values = append(out.Values, fmt.Sprint(it["id"]))
			}
			return out, nil
		}
		listing := "/v1/discovery/endpoints"
		if strings.HasPrefix(e.Path, "/v2/") {
			listing = "/v2/discovery/endpoints"
		}
		items, err := c.List(ctx, listing, nil, true)
		if err != nil {
			return p, err
		}
		for _, it := range items {
			if it["path"] != e.Path {
				continue
			}
			params, _ := it["parameters"].(map[string]any)
			values, _ := params[p.Name].([]any)
			out := config.Param{Name: p.Name}
			for _, v := range values {
				out.Values = append(out.Values, fmt.Sprint(v))
			}
			return out, nil
		}
		return p, fmt.Errorf("%s lists no %s", listing, e.Path)
	}
}

// assetKeyOf finds the key of the asset of /assets that v names by key,
// ticker, name or alias.
func assetKeyOf(items []map[string]any, v string) string {
	for _, it := range items {
		names := []any{it["key"], it["symbol"], it["name"]}
		if as, ok := it["aliases"].([]any); ok {
			names = append(names, as...)
		}
		for _, n := range names {
			if s, ok := n.(string); ok && strings.EqualFold(s, v) {
				return fmt.Sprint(it["key"])
			}
		}
	}
	return ""
}

// fetchRows asks for a tuple's series and counts the rows of the answer.
func fetchRows(c *upstream.Client, tp *config.Tuple) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	root, err := c.Fetch(ctx, tp.Path, tp.Query, tp.Keyed, 0)
	if err != nil {
		return 0, err
	}
	rows, _, err := decode.FindRows(root, tp.Rows, c.DefaultRows())
	return len(rows), err
}

// The exporter stays the default command: its flags work without naming
// it, and naming it works too.
func TestExporterIsTheDefaultCommand(t *testing.T) {
	file := filepath.Join(t.TempDir(), "onchain.yml")
	writeFile(t, file, "consensus:\n  url: http://127.0.0.1:1\n  metrics:\n    - path: /calls\n      asset: btc\n")
	for _, args := range [][]string{{"--config.file=" + file, "--config.check"}, {"exporter", "--config.file=" + file, "--config.check"}} {
		var stdout, stderr testtool.LogBuffer
		if code := run(args, &stdout, &stderr); code != 0 || !strings.HasPrefix(stdout.String(), "OK: ") {
			t.Errorf("%v: exit %d, %s%s", args, code, stdout.String(), stderr.String())
		}
	}
	var stdout, stderr testtool.LogBuffer
	if code := run([]string{"fake", "--fake.listen-address=127.0.0.1:notaport"}, &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "cannot start the fake upstream") {
		t.Errorf("a bad address: exit %d, %s", code, stderr.String())
	}
}
