package charts

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestLint(t *testing.T) {
	for _, args := range [][]string{nil, {"-f", allValues}, {"-f", singleValues}} {
		if out, err := runHelm(t, append([]string{"lint", "--strict", chartDir}, args...)...); err != nil {
			t.Errorf("%v\n%s", err, out)
		}
	}
}

// TestAlertsFileIsExamples keeps the chart's copy of the rules identical to
// examples/alerts.yml; the mixin generates both (helm packages only files
// inside the chart).
func TestAlertsFileIsExamples(t *testing.T) {
	want, err := os.ReadFile(examplesDir + "/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(chartDir + "/files/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("charts/onchain-exporter/files/alerts.yml differs from examples/alerts.yml; run from the repository's root: jsonnet -J mixin -S -m . mixin/generate.jsonnet")
	}
}

func TestDefaultValues(t *testing.T) {
	m := render(t)
	checkPod(t, m)
	checkStorage(t, m, "")
	checkConfigLoads(t, m, "onchain-exporter")
	if m.ServiceAccount == nil {
		t.Error("no ServiceAccount rendered")
	}
	if m.ServiceMonitor != nil || m.PrometheusRule != nil || m.PVC != nil {
		t.Error("a ServiceMonitor, PrometheusRule or PersistentVolumeClaim rendered by default")
	}
	var own []string
	for _, a := range m.container(t).Args {
		if !strings.HasPrefix(a, "--cluster.") {
			own = append(own, a)
		}
	}
	if want := []string{configFlag, storageFlag}; !slices.Equal(own, want) {
		t.Errorf("args %q besides --cluster.*: want only %q", own, want)
	}
}

func TestEveryOption(t *testing.T) {
	m := render(t, "-f", allValues)
	checkPod(t, m)
	checkStorage(t, m, "") // a cluster: an emptyDir per pod (TestPersistenceNeedsOneReplica)
	checkConfigLoads(t, m, "onchain-exporter")
	checkServiceMonitor(t, m, []string{"1m", "25s", "2m", "1m"})
	checkPrometheusRule(t, m)
	for kind, labels := range map[string]map[string]string{"ServiceMonitor": m.ServiceMonitor.Labels, "PrometheusRule": m.PrometheusRule.Labels} {
		if labels["release"] != "kube-prometheus-stack" {
			t.Errorf("%s labels %v: the values' release label is missing", kind, labels)
		}
	}

	c := m.container(t)
	if want := []string{configFlag, storageFlag,
		"--cluster.listen-address=0.0.0.0:7946", "--cluster.advertise-address=[$(POD_IP)]:7946",
		"--cluster.peer=markets-onchain-exporter-cluster.monitoring.svc:7946", "--cluster.peer-timeout=20s",
		"--cluster.peer-name=$(POD_NAME)", "--cluster.label=markets-production", "--cluster.max-members=6",
		"--cluster.encryption-key-file=/run/secrets/onchain_exporter_cluster/key",
		"--log.format=json", "--log.level=debug"}; !slices.Equal(c.Args, want) {
		t.Errorf("args %q, want %q", c.Args, want)
	}
	if c.Image != "ghcr.io/onchain-exporter/onchain_exporter:v0.1.0" {
		t.Errorf("image %q", c.Image)
	}
	pod := m.Deployment.Spec.Template
	if pod.Labels["team"] != "markets" || pod.Annotations["example.com/team"] != "markets" {
		t.Errorf("pod labels %v, annotations %v: podLabels or podAnnotations missing", pod.Labels, pod.Annotations)
	}
	spec := pod.Spec
	if spec.NodeSelector["kubernetes.io/os"] != "linux" || len(spec.Tolerations) != 1 || spec.Affinity == nil || spec.Affinity.NodeAffinity == nil {
		t.Errorf("nodeSelector %v, tolerations %v, affinity %v: values not rendered", spec.NodeSelector, spec.Tolerations, spec.Affinity)
	}
	if len(spec.ImagePullSecrets) != 1 || spec.ImagePullSecrets[0].Name != "registry" {
		t.Errorf("imagePullSecrets %v", spec.ImagePullSecrets)
	}
	// Scrapes from the monitoring namespace alone.
	if np := m.NetworkPolicy; np == nil || len(np.Spec.Ingress) == 0 || len(np.Spec.Ingress[0].From) != 1 ||
		np.Spec.Ingress[0].From[0].NamespaceSelector == nil ||
		np.Spec.Ingress[0].From[0].NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"] != "monitoring" {
		t.Errorf("NetworkPolicy %+v: networkPolicy.metricsFrom not rendered", m.NetworkPolicy)
	}
}

// TestServiceMonitorDefaults checks the default intervals against
// examples/prometheus.yml.
func TestServiceMonitorDefaults(t *testing.T) {
	m := render(t, "--set", "serviceMonitor.enabled=true")
	checkServiceMonitor(t, m, nil)
}

func TestStorageDisabled(t *testing.T) {
	m := render(t, "--set", "storage.enabled=false", "--set", "persistence.enabled=true")
	checkPod(t, m)
	c := m.container(t)
	// The exporter's default (data/) would be on the read-only root
	// filesystem: state is turned off by an empty path.
	if !slices.Contains(c.Args, "--storage.path=") {
		t.Errorf("storage.enabled=false: args %v do not turn state off with --storage.path=", c.Args)
	}
	if m.volume("storage") != nil || mountPath(c, "storage") != "" || m.PVC != nil {
		t.Error("storage.enabled=false: a storage volume, mount or claim is still rendered")
	}
}

func TestExistingClaim(t *testing.T) {
	m := render(t, "--set", "cluster.enabled=false", "--set", "persistence.enabled=true", "--set", "persistence.existingClaim=kept-state")
	if m.PVC != nil {
		t.Errorf("persistence.existingClaim: the chart still creates the claim %s", m.PVC.Name)
	}
	checkStorage(t, m, "kept-state")
}

func TestNoSecret(t *testing.T) {
	m := render(t, "--set", "existingSecret=", "--set", "serviceAccount.create=false")
	checkPod(t, m)
	c := m.container(t)
	for _, e := range c.Env {
		if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef != nil {
			t.Errorf("existingSecret empty: env %s from %+v", e.Name, e.ValueFrom)
		}
	}
	if m.volume("credentials") != nil || mountPath(c, "credentials") != "" {
		t.Errorf("existingSecret empty: env %v or a credentials volume still rendered", c.Env)
	}
	if m.ServiceAccount != nil || m.Deployment.Spec.Template.Spec.ServiceAccountName != "default" {
		t.Error("serviceAccount.create=false: a ServiceAccount is rendered or the pod does not run as default")
	}
}

// TestConfigChangeRollsThePod: checksum/config follows the configuration
// and nothing else.
func TestConfigChangeRollsThePod(t *testing.T) {
	sum := func(args ...string) string {
		return render(t, args...).Deployment.Spec.Template.Annotations["checksum/config"]
	}
	base := sum()
	if other := sum("--set", "podLabels.team=markets"); other != base {
		t.Error("checksum/config changed with podLabels")
	}
	if other := sum("--set-string", "config=data: {}"); other == base {
		t.Error("checksum/config did not change with the configuration")
	}
}

// TestTypoInValuesFails: values.schema.json rejects unknown keys of the
// chart's own objects and values of the wrong type, so a typo fails helm
// lint and helm install instead of being ignored.
func TestTypoInValuesFails(t *testing.T) {
	for _, set := range []string{
		"serviceMonitr.enabled=true",
		"serviceMonitor.enable=true",
		"prometheusRule.labels.release=x",
		"persistence.existingclaim=x",
		"storage.enbled=false",
		"image.tga=v1",
		"service.port=http",
		"extraArgs=--log.level=debug",
		"existingSecrets=onchain",
		"serviceMonitor.interval=30",
		"securityContext.readOnlyRootFileSystem=true",
		"podSecurityContext.runAsUsr=1000",
		"resources.limit.memory=1Gi",
		"tolerations[0].efect=NoSchedule",
		"affinity.nodeAfinity.x=y",
		"replica=3",
		"replicas=two",
		"replicas=0",
		"cluster.enable=true",
		"cluster.port=gossip",
		"cluster.peerTimeout=15",
		"cluster.encryption.secret=gossip",
	} {
		if _, err := runHelm(t, "template", release, chartDir, "--set", set); err == nil {
			t.Errorf("helm template --set %s: rendered, want a schema error", set)
		} else if !strings.Contains(err.Error(), "schema") {
			t.Errorf("helm template --set %s: %v; want a schema error", set, err)
		}
		if _, err := runHelm(t, "lint", "--strict", chartDir, "--set", set); err == nil {
			t.Errorf("helm lint --strict --set %s: passed, want a schema error", set)
		}
	}
}

// TestTypoInKubernetesValueFails: the schema lists the first level of the
// Kubernetes objects passed through (securityContext, resources,
// affinity...); below that, the strict decoding of this test catches a
// typo.
func TestTypoInKubernetesValueFails(t *testing.T) {
	out, err := runHelm(t, "template", release, chartDir, "--set", "securityContext.seccompProfile.tpye=RuntimeDefault")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decode(out); err == nil || !strings.Contains(err.Error(), "tpye") {
		t.Errorf("decode: %v; want an unknown field error for tpye", err)
	}
}

// TestScrapeTimeoutLongerThanIntervalFails: Prometheus refuses a scrape
// timeout longer than its interval, so the chart does too, by name, for
// both jobs; equal durations written two ways pass.
func TestScrapeTimeoutLongerThanIntervalFails(t *testing.T) {
	for _, set := range [][]string{
		{"serviceMonitor.interval=10s"}, // the default timeout is 25s
		{"serviceMonitor.dailyInterval=30s"},
		{"serviceMonitor.interval=1m", "serviceMonitor.scrapeTimeout=1m0s500ms"},
	} {
		args := []string{"template", release, chartDir, "--set", "serviceMonitor.enabled=true"}
		for _, s := range set {
			args = append(args, "--set", s)
		}
		if _, err := runHelm(t, args...); err == nil || !strings.Contains(err.Error(), "Prometheus refuses a scrape timeout longer than the interval") {
			t.Errorf("--set %v: %v; want the chart to refuse it", set, err)
		}
	}
	if _, err := runHelm(t, "template", release, chartDir, "--set", "serviceMonitor.enabled=true",
		"--set", "serviceMonitor.interval=1m30s", "--set", "serviceMonitor.scrapeTimeout=90s"); err != nil {
		t.Errorf("a timeout equal to the interval: %v", err)
	}
}
