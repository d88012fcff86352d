package config

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Seeds: every YAML file of testdata and the shipped configurations, and
// testdata/fuzz/FuzzParse. To fuzz longer than CI does:
//
//	go test -run '^$' -fuzz FuzzParse -fuzztime 10m -parallel 1 ./config

const fuzzSecret = "fuzz-secret-value-4b1e"

var legacyLabelRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// FuzzParse loads any file: it must not panic; a refusal names the file
// on every line and never shows the credential; what it accepts must be a
// configuration the exporter can serve: every tuple's labels valid and
// distinct, so that its per-tuple series can be built, and no more tuples
// than max_tuples. What it accepts is then resolved as discovery would,
// "all" becoming a list drawn from the input, under the same checks: the
// whole path from a file to the tuples served.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.yml")
	seeds = append(seeds, "../examples/config.yml", "../demo/demo.yml")
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if touchesDevices(b) {
			t.Skip("token_file may name a device that never ends")
		}
		cfg, err := Parse("fuzz.yml", b, func(string) string { return fuzzSecret })
		if err != nil {
			if cfg != nil {
				t.Fatal("Parse returned both a configuration and an error")
			}
			msg := err.Error()
			if strings.Contains(msg, fuzzSecret) {
				t.Fatalf("error shows the credential:\n%s", msg)
			}
			if !strings.HasPrefix(msg, "fuzz.yml") {
				t.Fatalf("error does not start with the file name:\n%s", msg)
			}
			return
		}
		checkServable(t, cfg)
		resolved, err := cfg.Resolve(fuzzResolver(b))
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "fuzz.yml") || strings.Contains(msg, fuzzSecret) {
				t.Fatalf("resolving: %s", msg)
			}
			return
		}
		checkServable(t, resolved)
	})
}

// fuzzResolver resolves "all" to a list whose length and values come from
// the input (up to 255 values, some repeating other entries' values), and
// everything else to itself.
func fuzzResolver(b []byte) Resolver {
	n := 0
	if len(b) > 0 {
		n = int(b[len(b)-1])
	}
	return func(_ *API, _ *Entry, p Param) (Param, error) {
		if !p.HasAll() {
			return p, nil
		}
		out := make([]string, 0, n)
		for i := range n {
			out = append(out, fmt.Sprintf("v%d", i%(1+n/2)))
		}
		p.Values = out
		return p, nil
	}
}

// touchesDevices reports input that could make token_file read a device
// or a special file: fuzzing must not hang on /dev/zero.
func touchesDevices(b []byte) bool {
	s := string(b)
	for _, p := range []string{"dev", "proc", "sys", "fd"} {
		if strings.Contains(s, p) {
			return strings.Contains(s, "token_file")
		}
	}
	return false
}

// checkServable fails the test for a loaded configuration the exporter
// could not serve as promised.
func checkServable(t *testing.T, cfg *Config) {
	t.Helper()
	for _, a := range cfg.APIs {
		if len(a.Tuples) > a.MaxTuples || a.MaxTuples > MaxMaxTuples {
			t.Fatalf("%s: %d tuples for max_tuples %d", a.Name, len(a.Tuples), a.MaxTuples)
		}
	}
	names := cfg.TupleLabelNames
	checkLabelNames(t, "tuple labels", names)
	desc := prometheus.NewDesc("onchain_exporter_query_success", "h", names, nil)
	keys := map[string]bool{}
	for _, tp := range cfg.Tuples {
		if keys[tp.Key] {
			t.Fatalf("two tuples with key %q", tp.Key)
		}
		keys[tp.Key] = true
		if len(tp.TupleLabelValues) != len(names) {
			t.Fatalf("tuple %s has %d tuple label values for %d names", tp.Key, len(tp.TupleLabelValues), len(names))
		}
		m, err := prometheus.NewConstMetric(desc, prometheus.GaugeValue, 1, tp.TupleLabelValues...)
		if err != nil {
			t.Fatalf("tuple %s: its query_success series cannot be built: %v", tp.Key, err)
		}
		if err := m.Write(&dto.Metric{}); err != nil {
			t.Fatalf("tuple %s: %v", tp.Key, err)
		}
		if len(tp.LabelNames()) != len(tp.LabelValues) {
			t.Fatalf("tuple %s: labels %v for values %v", tp.Key, tp.LabelNames(), tp.LabelValues)
		}
		checkLabelNames(t, "data labels of "+tp.Key, append(append([]string(nil), tp.LabelNames()...), tp.LabelFields()...))
		for _, v := range tp.LabelValues {
			if !utf8.ValidString(v) {
				t.Fatalf("tuple %s: label value %q is not UTF-8", tp.Key, v)
			}
		}
		for name, fl := range tp.Fields {
			if fl == nil || !legacyLabelRE.MatchString(fl.Name) {
				t.Fatalf("tuple %s: field %s has no valid family name: %+v", tp.Key, name, fl)
			}
			// The labels of the field's series: the tuple's, the row
			// labels, the field's constant labels and its key label.
			all := append(append([]string(nil), tp.LabelNames()...), tp.LabelFields()...)
			for k := range fl.Labels {
				all = append(all, k)
			}
			if fl.KeyLabel != "" {
				all = append(all, fl.KeyLabel)
			}
			checkLabelNames(t, "labels of field "+name+" of "+tp.Key, all)
		}
	}
}

func checkLabelNames(t *testing.T, what string, names []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, n := range names {
		if !legacyLabelRE.MatchString(n) || strings.HasPrefix(n, "__") {
			t.Fatalf("%s: %q is not a valid label name (%v)", what, n, names)
		}
		if seen[n] {
			t.Fatalf("%s: label %q twice (%v)", what, n, names)
		}
		seen[n] = true
	}
}
