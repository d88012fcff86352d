package demo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
	"gopkg.in/yaml.v3"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/demo"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/testtool"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// run is the command line as package main reads it for the fake
// command, which serves until ctx is done.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	a := kingpin.New("onchain_exporter", "")
	a.UsageWriter(stdout)
	a.ErrorWriter(stderr)
	c := demo.AddCommand(a)
	if _, err := a.Parse(args); err != nil {
		fmt.Fprintf(stderr, "onchain_exporter: %v (try --help)\n", err)
		return 2
	}
	if !c.Chosen() {
		panic(fmt.Sprintf("not the fake command: %q", args))
	}
	logger := level.NewFilter(log.NewLogfmtLogger(log.NewSyncWriter(stderr)), level.AllowInfo())
	return c.Run(ctx, logger, stdout)
}

// startFake runs `onchain_exporter fake` in process on a free port and
// returns the data API's address it printed; it is stopped, as SIGTERM
// stops it, at cleanup.
func startFake(t *testing.T) string {
	t.Helper()
	url, _ := startFakeWith(t)
	return url
}

// startFakeWith is startFake with more arguments of the fake command; it
// returns the banner too.
func startFakeWith(t *testing.T, args ...string) (url, banner string) {
	t.Helper()
	var stdout, stderr testtool.LogBuffer
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"fake", "--fake.listen-address=127.0.0.1:0"}, args...), &stdout, &stderr)
	}()
	t.Cleanup(func() {
		stop()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("the fake exited with %d:\n%s", code, stderr.String())
			}
		case <-time.After(15 * time.Second):
			t.Error("the fake did not stop")
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
			return m[1], stdout.String()
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
// Helm chart's values, through the real configuration loader, expansion
// (all, assets, patterns: from the fake's discovery and plan) and upstream
// client: each answers with rows.
func TestFakeCommandServesTheExamples(t *testing.T) {
	t.Chdir("..") // the files are named from the repository's root
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
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cfg, err = expand.New(log.NewNopLogger(), expand.Options{Clients: pool}).Expand(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Tuples) == 0 {
				t.Fatal("no tuples")
			}
			t.Logf("%d tuples", len(cfg.Tuples))
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

// fetchRows asks for a tuple's series and counts the rows of the answer.
func fetchRows(c *upstream.Client, tp *config.Tuple) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	root, err := c.Fetch(ctx, tp.Path, tp.Query().URL(), tp.Keyed, 0)
	if err != nil {
		return 0, err
	}
	rows, _, err := decode.FindRows(root, tp.Rows(), c.DefaultRows())
	return len(rows), err
}

// The fake gives data API keys their plans: by default one key per plan
// below premium, which the banner names, or those --fake.key names; each
// key reads its own plan, the demo token stays premium, and a plan the
// fake does not know is refused before anything listens. It serves the
// full catalog unless --fake.catalog=small.
func TestFakeCommandPlanKeys(t *testing.T) {
	// ask GETs a data API path with a key and decodes the answer into v;
	// it returns the HTTP status.
	ask := func(base, path, key string, v any) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil && resp.StatusCode == http.StatusOK {
			t.Fatal(err)
		}
		return resp.StatusCode
	}
	planName := func(base, key string) string {
		var doc struct{ Plan struct{ Name string } }
		code := ask(base, "/v1/my/discovery/endpoints", key, &doc)
		return fmt.Sprintf("%d %s", code, doc.Plan.Name)
	}
	paths := func(base string) int {
		var doc struct{ Result struct{ Data []any } }
		ask(base, "/v1/discovery/endpoints", demo.DataToken, &doc)
		return len(doc.Result.Data)
	}
	t.Run("default", func(t *testing.T) {
		base, banner := startFakeWith(t)
		if n := paths(base); n < 180 {
			t.Errorf("the fake lists %d v1 paths, want the full catalog", n)
		}
		for key, want := range map[string]string{"demo-basic-token": "200 BASIC", "demo-advanced-token": "200 ADVANCED",
			"demo-professional-token": "200 PROFESSIONAL", demo.DataToken: "200 PREMIUM", "other": "401 "} {
			if got := planName(base, key); got != want {
				t.Errorf("%s: %s, want %s", key, got, want)
			}
			if want != "401 " && !regexp.MustCompile(`(?m)^  `+strings.ToLower(strings.Fields(want)[1])+`: +`+key+`$`).MatchString(banner) {
				t.Errorf("the banner does not give %s its plan:\n%s", key, banner)
			}
		}
	})
	t.Run("flag", func(t *testing.T) {
		base, _ := startFakeWith(t, "--fake.key=k1=BASIC", "--fake.key=k2=premium", "--fake.catalog=small", "--fake.plan-answer=404")
		if n := paths(base); n != 18 {
			t.Errorf("--fake.catalog=small lists %d v1 paths, want 18", n)
		}
		for key, want := range map[string]string{"k1": "404 ", "k2": "404 ", demo.DataToken: "404 ", "demo-basic-token": "401 "} {
			if got := planName(base, key); got != want {
				t.Errorf("%s: %s, want %s", key, got, want)
			}
		}
		for key, want := range map[string]int{"k1": 403, "k2": 200, demo.DataToken: 200} {
			if code := ask(base, "/v1/btc/network-indicator/pnl-utxo?limit=1", key, &struct{}{}); code != want {
				t.Errorf("%s reads pnl-utxo: HTTP %d, want %d", key, code, want)
			}
		}
	})
	for arg, want := range map[string]string{
		"--fake.key=k1=gold":     `--fake.key for key \"k1\": unknown plan \"gold\" (basic, advanced, professional, premium)`,
		"--fake.key==basic":      `--fake.key==basic: the key is empty (KEY=PLAN)`,
		"--fake.plan-answer=200": `--fake.plan-answer: unknown plan answer \"200\" (current, nested, or an error status such as 404, 403 or 500)`,
	} {
		var stdout, stderr testtool.LogBuffer
		if code := run(context.Background(), []string{"fake", "--fake.listen-address=127.0.0.1:0", arg}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), want) {
			t.Errorf("%s: exit %d, %s", arg, code, stderr.String())
		}
	}
}
