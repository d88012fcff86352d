package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The version is written once, in VERSION; everything a release is made
// of agrees with it: the chart's version and appVersion (the image tag it
// pulls by default), goreleaser's snapshot version and the image tags, and
// the release workflow refuses a tag that is not v<VERSION>.
func TestReleaseAgreesWithVERSION(t *testing.T) {
	b, err := os.ReadFile("VERSION")
	if err != nil {
		t.Fatal(err)
	}
	v := string(b)
	if !regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?\n$`).MatchString(v) {
		t.Fatalf("VERSION is %q: want one semantic version (0.1.0, 0.2.0-rc.1) and a newline", v)
	}
	v = strings.TrimSpace(v)

	var chart struct {
		Version    string `yaml:"version"`
		AppVersion string `yaml:"appVersion"`
	}
	readYAML(t, "charts/onchain-exporter/Chart.yaml", &chart)
	if chart.Version != v || chart.AppVersion != v {
		t.Errorf("Chart.yaml: version %q, appVersion %q; VERSION says %s", chart.Version, chart.AppVersion, v)
	}

	dep, err := os.ReadFile("examples/kubernetes/deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if want := "image: ghcr.io/onchain-exporter/onchain_exporter:" + v + "\n"; !strings.Contains(string(dep), want) {
		t.Errorf("examples/kubernetes/deployment.yaml does not pull the release's image (%s)", strings.TrimSpace(want))
	}

	var gr struct {
		Version  int `yaml:"version"`
		Snapshot struct {
			VersionTemplate string `yaml:"version_template"`
		} `yaml:"snapshot"`
		Builds []struct {
			ID      string   `yaml:"id"`
			GOOS    []string `yaml:"goos"`
			GOARCH  []string `yaml:"goarch"`
			Ldflags []string `yaml:"ldflags"`
		} `yaml:"builds"`
		Archives []struct {
			Files []string `yaml:"files"`
		} `yaml:"archives"`
		Dockers []struct {
			Dockerfile string   `yaml:"dockerfile"`
			Tags       []string `yaml:"tags"`
			Platforms  []string `yaml:"platforms"`
			ExtraFiles []string `yaml:"extra_files"`
		} `yaml:"dockers_v2"`
	}
	readYAML(t, ".goreleaser.yml", &gr)
	if gr.Version != 2 || !strings.Contains(gr.Snapshot.VersionTemplate, `readFile "VERSION"`) {
		t.Errorf(".goreleaser.yml: version %d, snapshot version %q: want version 2 and the snapshot named after VERSION", gr.Version, gr.Snapshot.VersionTemplate)
	}
	if len(gr.Builds) != 1 {
		t.Fatalf(".goreleaser.yml: %d builds, want 1", len(gr.Builds))
	}
	bd := gr.Builds[0]
	for _, goos := range []string{"linux", "darwin", "windows"} {
		if !slices.Contains(bd.GOOS, goos) {
			t.Errorf(".goreleaser.yml: no %s build", goos)
		}
	}
	for _, arch := range []string{"amd64", "arm64"} {
		if !slices.Contains(bd.GOARCH, arch) {
			t.Errorf(".goreleaser.yml: no %s build", arch)
		}
	}
	ldflags := strings.Join(bd.Ldflags, " ")
	for _, field := range []string{"Version={{ .Version }}", "Revision=", "Branch=", "BuildUser=", "BuildDate="} {
		if !strings.Contains(ldflags, "-X github.com/prometheus/common/version."+field) {
			t.Errorf(".goreleaser.yml: ldflags do not set version.%s", field)
		}
	}
	for _, a := range gr.Archives {
		for _, f := range a.Files {
			if m, _ := filepath.Glob(f); len(m) == 0 {
				t.Errorf(".goreleaser.yml: archive file %s matches nothing", f)
			}
		}
	}
	if len(gr.Dockers) != 1 {
		t.Fatalf(".goreleaser.yml: %d images, want 1", len(gr.Dockers))
	}
	d := gr.Dockers[0]
	if !slices.Contains(d.Tags, "{{ .Version }}") {
		t.Errorf(".goreleaser.yml: image tags %v lack {{ .Version }}, the tag the chart pulls (its appVersion)", d.Tags)
	}
	if !slices.Contains(d.Platforms, "linux/amd64") || !slices.Contains(d.Platforms, "linux/arm64") {
		t.Errorf(".goreleaser.yml: image platforms %v", d.Platforms)
	}
	dockerfile, err := os.ReadFile(d.Dockerfile)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range d.ExtraFiles {
		if !strings.Contains(string(dockerfile), "COPY "+f+" ") {
			t.Errorf("%s does not use the extra file %s", d.Dockerfile, f)
		}
	}
	if !strings.Contains(string(dockerfile), "COPY $TARGETPLATFORM/onchain_exporter ") {
		t.Errorf("%s does not copy the binary of its platform", d.Dockerfile)
	}

	wf, err := os.ReadFile(".github/workflows/release.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"${GITHUB_REF_NAME}" != "v${version}"`, "< VERSION", "goreleaser/goreleaser-action", "args: release --clean",
		`helm package charts/onchain-exporter --version "$VERSION" --app-version "$VERSION"`} {
		if !strings.Contains(string(wf), want) {
			t.Errorf("release.yml does not hold %s", want)
		}
	}
	cl, err := os.ReadFile("CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cl), "\n## [Unreleased]\n") && !strings.Contains(string(cl), "\n## ["+v+"] - ") {
		t.Errorf("CHANGELOG.md has neither an Unreleased section nor one for %s", v)
	}
}

func readYAML(t *testing.T, file string, v any) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}
