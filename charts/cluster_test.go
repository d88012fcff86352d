package charts

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kingpin/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/onchain-exporter/onchain_exporter/cluster"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// clusterMode says whether the container runs in cluster mode.
func clusterMode(c corev1.Container) bool {
	return slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--cluster.listen-address=") })
}

// flagValue returns the value of --name= among args, and whether it is
// there.
func flagValue(args []string, name string) (string, bool) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// clusterWant is what a rendering in cluster mode must hold.
type clusterWant struct {
	replicas    int32
	port        int32
	peerTimeout time.Duration
	keySecret   string // the Secret of the gossip key; "" for gossip in the clear
	keyName     string
	generated   bool   // the chart creates keySecret
	label       string // --cluster.label
	maxMembers  int
}

// generatedKey is the Secret the chart generates for the release markets.
const generatedKey = "markets-onchain-exporter-gossip"

// checkCluster checks a rendering in cluster mode: the replicas, rolled
// one at a time without going below their number; the gossip flags,
// valid as the exporter reads them, with the pod's IP advertised and the
// headless Service as the peer; that Service, which reaches every pod
// before it is ready on TCP and UDP and carries no scrape; the
// PodDisruptionBudget and the anti-affinity when there is more than one
// replica; the gossip key mounted where the flag names it.
func checkCluster(t *testing.T, m *manifests, want clusterWant) {
	t.Helper()
	checkPod(t, m)
	c := m.container(t)
	d := m.Deployment
	if !clusterMode(c) {
		t.Fatalf("args %q: no --cluster.listen-address, cluster mode is off", c.Args)
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas != want.replicas {
		t.Errorf("Deployment: replicas %v, want %d", d.Spec.Replicas, want.replicas)
	}
	// A rollout adds a member before it takes one away: the new pod
	// takes the state from a peer, and the cluster never shrinks.
	s := d.Spec.Strategy
	if s.Type != appsv1.RollingUpdateDeploymentStrategyType || s.RollingUpdate == nil ||
		s.RollingUpdate.MaxUnavailable == nil || s.RollingUpdate.MaxUnavailable.IntValue() != 0 ||
		s.RollingUpdate.MaxSurge == nil || s.RollingUpdate.MaxSurge.IntValue() != 1 {
		t.Errorf("Deployment: strategy %+v, want RollingUpdate with maxSurge 1 and maxUnavailable 0", s)
	}

	// Every $(VAR) of the args is a variable of the container: Kubernetes
	// leaves an unknown reference as it is, and the exporter would read
	// "$(POD_IP)" as a host.
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	for _, u := range testtool.UndefinedArgVars(c.Args, func(name string) bool { _, ok := env[name]; return ok }) {
		t.Errorf("arg %s: the container does not define that variable", u)
	}
	if e, ok := env["POD_IP"]; !ok || e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != "status.podIP" {
		t.Errorf("env POD_IP %+v: want the downward API's status.podIP", e)
	}

	// The gossip ports, TCP and UDP, in the container and the headless
	// Service.
	hs := m.ClusterService
	if hs == nil {
		t.Fatal("cluster mode: no headless Service rendered")
	}
	containerPorts := map[corev1.Protocol]corev1.ContainerPort{}
	for _, p := range c.Ports {
		if p.ContainerPort == want.port {
			containerPorts[p.Protocol] = p
		}
	}
	for _, proto := range []corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP} {
		cp, ok := containerPorts[proto]
		if !ok {
			t.Errorf("container ports %+v: no %s port %d for gossip", c.Ports, proto, want.port)
			continue
		}
		found := false
		for _, sp := range hs.Spec.Ports {
			found = found || sp.Protocol == proto && sp.Port == want.port && sp.TargetPort.String() == cp.Name
		}
		if !found {
			t.Errorf("headless Service ports %+v: no %s port %d targeting the container's %s", hs.Spec.Ports, proto, want.port, cp.Name)
		}
	}
	if hs.Spec.ClusterIP != corev1.ClusterIPNone || !hs.Spec.PublishNotReadyAddresses {
		t.Errorf("Service %s: clusterIP %q, publishNotReadyAddresses %v; want a headless Service that publishes pods before they are ready", hs.Name, hs.Spec.ClusterIP, hs.Spec.PublishNotReadyAddresses)
	}
	if hs.Namespace != namespace || len(hs.Spec.Selector) == 0 || !subset(hs.Spec.Selector, d.Spec.Template.Labels) {
		t.Errorf("headless Service: namespace %q, selector %v; want the release's namespace and a selector of the pod labels %v", hs.Namespace, hs.Spec.Selector, d.Spec.Template.Labels)
	}
	if hs.Name == m.Service.Name {
		t.Errorf("the headless Service and the exporter's Service are both named %s", hs.Name)
	}
	// Scrapes go through the exporter's Service: the ServiceMonitor's
	// port is not one the headless Service has.
	if sm := m.ServiceMonitor; sm != nil {
		for _, ep := range sm.Spec.Endpoints {
			for _, sp := range hs.Spec.Ports {
				if sp.Name == ep.Port {
					t.Errorf("the ServiceMonitor's port %s is the headless Service's too: every pod would be scraped twice", ep.Port)
				}
			}
		}
	}

	// The flags, read by the exporter's own flag parser and validated.
	peer := hs.Name + "." + namespace + ".svc:" + itoa(want.port)
	for name, value := range map[string]string{
		"cluster.listen-address":    "0.0.0.0:" + itoa(want.port),
		"cluster.advertise-address": "[$(POD_IP)]:" + itoa(want.port),
		"cluster.peer":              peer,
	} {
		if got, _ := flagValue(c.Args, name); got != value {
			t.Errorf("--%s=%q, want %q", name, got, value)
		}
	}
	// The key the exporter reads: the generated Secret's own content, or
	// a stand-in for a Secret made out of band.
	var key []byte
	switch {
	case want.generated:
		sec := m.GossipSecret
		if sec == nil || sec.Name != want.keySecret || sec.Namespace != namespace {
			t.Fatalf("no generated Secret %s/%s for the gossip key (%+v)", namespace, want.keySecret, sec)
		}
		key = sec.Data[want.keyName]
		if len(key) == 0 || len(sec.Data) != 1 {
			t.Fatalf("Secret %s: keys %v, want %s alone", sec.Name, keys(sec.Data), want.keyName)
		}
	case want.keySecret != "":
		if m.GossipSecret != nil {
			t.Errorf("a Secret %s rendered beside cluster.encryption.existingSecret", m.GossipSecret.Name)
		}
		key = []byte("MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=\n")
	default:
		if m.GossipSecret != nil {
			t.Errorf("a Secret %s rendered with gossip in the clear", m.GossipSecret.Name)
		}
	}
	cfg := parseClusterFlags(t, c.Args, key)
	if len(cfg.Peers) != 1 || cfg.PeerTimeout != want.peerTimeout {
		t.Errorf("peers %q, peer timeout %s; want one peer and %s", cfg.Peers, cfg.PeerTimeout, want.peerTimeout)
	}
	if cfg.ClusterName != want.label || cfg.MaxMembers != want.maxMembers {
		t.Errorf("--cluster.label=%q, --cluster.max-members=%d; want %q and %d", cfg.ClusterName, cfg.MaxMembers, want.label, want.maxMembers)
	}
	// A restarted container is the same member: the pod's name.
	if got, _ := flagValue(c.Args, "cluster.peer-name"); got != "$(POD_NAME)" {
		t.Errorf("--cluster.peer-name=%q, want $(POD_NAME)", got)
	}
	if e, ok := env["POD_NAME"]; !ok || e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != "metadata.name" {
		t.Errorf("env POD_NAME %+v: want the downward API's metadata.name", e)
	}
	checkNetworkPolicy(t, m, c)

	// The gossip key: a file of the Secret, mounted where the flag says.
	keyFile, hasKey := flagValue(c.Args, "cluster.encryption-key-file")
	switch {
	case want.keySecret == "" && hasKey:
		t.Errorf("--cluster.encryption-key-file=%s without cluster.encryption.existingSecret", keyFile)
	case want.keySecret != "":
		v := m.volume("gossip-key")
		if v == nil || v.Secret == nil || v.Secret.SecretName != want.keySecret {
			t.Fatalf("no volume gossip-key from the Secret %s", want.keySecret)
		}
		files := map[string]bool{}
		for _, it := range v.Secret.Items {
			if it.Key == want.keyName {
				files[filepath.Join(mountPath(c, "gossip-key"), it.Path)] = true
			}
		}
		if !files[keyFile] {
			t.Errorf("--cluster.encryption-key-file=%q is not the key %s of the mounted Secret (%v)", keyFile, want.keyName, files)
		}
	}

	// More than one replica: a drain takes one at a time, and the
	// scheduler spreads them over nodes unless the values set affinity.
	pdb := m.PDB
	if want.replicas == 1 {
		if pdb != nil {
			t.Error("one replica: a PodDisruptionBudget would block every drain")
		}
		return
	}
	if pdb == nil {
		t.Fatal("no PodDisruptionBudget rendered")
	}
	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 || pdb.Spec.MinAvailable != nil {
		t.Errorf("PodDisruptionBudget: maxUnavailable %v, minAvailable %v; want maxUnavailable 1", pdb.Spec.MaxUnavailable, pdb.Spec.MinAvailable)
	}
	if pdb.Namespace != namespace || pdb.Spec.Selector == nil || len(pdb.Spec.Selector.MatchLabels) == 0 || !subset(pdb.Spec.Selector.MatchLabels, d.Spec.Template.Labels) {
		t.Errorf("PodDisruptionBudget selector %+v does not select the pod labels %v", pdb.Spec.Selector, d.Spec.Template.Labels)
	}
}

// checkAntiAffinity checks the chart's own anti-affinity: preferred, on
// the node, among the release's pods.
func checkAntiAffinity(t *testing.T, m *manifests) {
	t.Helper()
	a := m.Deployment.Spec.Template.Spec.Affinity
	if a == nil || a.PodAntiAffinity == nil || len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 ||
		len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 0 {
		t.Fatalf("affinity %+v: want one preferred pod anti-affinity term", a)
	}
	term := a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm
	if term.TopologyKey != corev1.LabelHostname || term.LabelSelector == nil ||
		len(term.LabelSelector.MatchLabels) == 0 || !subset(term.LabelSelector.MatchLabels, m.Deployment.Spec.Template.Labels) {
		t.Errorf("anti-affinity term %+v: want the pod labels on %s", term, corev1.LabelHostname)
	}
}

// parseClusterFlags reads the --cluster.* args with the exporter's own
// flags and validates them, with the pod's IP stood in for $(POD_IP) and,
// when there is a key, a key file of that content stood in for the
// mounted one.
func parseClusterFlags(t *testing.T, args []string, key []byte) cluster.Config {
	t.Helper()
	app := kingpin.New("onchain_exporter", "")
	cfg := cluster.AddFlags(app)
	var flags []string
	for _, a := range args {
		if !strings.HasPrefix(a, "--cluster.") {
			continue
		}
		a = strings.ReplaceAll(a, "$(POD_IP)", "10.1.2.3")
		a = strings.ReplaceAll(a, "$(POD_NAME)", "markets-onchain-exporter-5d8f7-x2k9p")
		if _, ok := strings.CutPrefix(a, "--cluster.encryption-key-file="); ok && key != nil {
			f := filepath.Join(t.TempDir(), "key")
			if err := os.WriteFile(f, key, 0o600); err != nil {
				t.Fatal(err)
			}
			a = "--cluster.encryption-key-file=" + f
		}
		flags = append(flags, a)
	}
	if _, err := app.Parse(flags); err != nil {
		t.Fatalf("the exporter does not take the chart's cluster flags %q: %v", flags, err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("the chart's cluster flags %q: %v", flags, err)
	}
	return *cfg
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

// TestClusterByDefault: two replicas share their calls, spread over nodes,
// in a cluster named after the release, with gossip encrypted by a key the
// chart generates and reachable from the release's pods alone.
func TestClusterByDefault(t *testing.T) {
	m := render(t)
	checkCluster(t, m, clusterWant{replicas: 2, port: 9094, peerTimeout: 15 * time.Second,
		keySecret: generatedKey, keyName: "gossip-key", generated: true, label: "monitoring/markets", maxMembers: 4})
	checkAntiAffinity(t, m)
}

// TestGossipKeyGenerated: each rendering without a cluster to look the
// Secret up in makes a new random key (an upgrade keeps the one in the
// cluster: lookup), and the key is one the exporter reads as AES-256.
func TestGossipKeyGenerated(t *testing.T) {
	a, b := render(t).GossipSecret, render(t).GossipSecret
	if a == nil || b == nil {
		t.Fatal("no gossip key Secret rendered")
	}
	ka, kb := string(a.Data["gossip-key"]), string(b.Data["gossip-key"])
	if ka == kb {
		t.Errorf("two renderings made the same key: it is not random")
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(ka))
	if err != nil || len(raw) != 32 {
		t.Errorf("the generated key is %d bytes (%v), want base64 of 32", len(raw), err)
	}
	tmpl, err := os.ReadFile(filepath.Join(chartDir, "templates", "secret-gossip.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(tmpl), `lookup "v1" "Secret" .Release.Namespace $name`) {
		t.Error("secret-gossip.yaml does not look the Secret up: an upgrade would replace the key and split the cluster")
	}
}

// TestClusterInTheClear: cluster.encryption.enabled false is gossip in the
// clear: no key, no Secret; the NetworkPolicy still keeps others out.
func TestClusterInTheClear(t *testing.T) {
	m := render(t, "--set", "cluster.encryption.enabled=false", "--set", "cluster.name=prod", "--set", "cluster.maxMembers=7")
	checkCluster(t, m, clusterWant{replicas: 2, port: 9094, peerTimeout: 15 * time.Second, label: "prod", maxMembers: 7})
}

// TestNoNetworkPolicy: networkPolicy.enabled false renders none.
func TestNoNetworkPolicy(t *testing.T) {
	if m := render(t, "--set", "networkPolicy.enabled=false"); m.NetworkPolicy != nil {
		t.Error("a NetworkPolicy rendered with networkPolicy.enabled false")
	}
}

// checkNetworkPolicy checks the pods' ingress: the metrics port from
// networkPolicy.metricsFrom (anyone when empty), the gossip ports, TCP
// and UDP, from the release's pods alone, nothing else.
func checkNetworkPolicy(t *testing.T, m *manifests, c corev1.Container) {
	t.Helper()
	np := m.NetworkPolicy
	if np == nil {
		t.Fatal("no NetworkPolicy rendered")
	}
	pod := m.Deployment.Spec.Template.Labels
	if np.Namespace != namespace || !subset(np.Spec.PodSelector.MatchLabels, pod) || len(np.Spec.PodSelector.MatchLabels) == 0 {
		t.Errorf("NetworkPolicy selects %v, want the pod labels %v", np.Spec.PodSelector.MatchLabels, pod)
	}
	if len(np.Spec.PolicyTypes) != 1 || np.Spec.PolicyTypes[0] != networkingv1.PolicyTypeIngress {
		t.Errorf("NetworkPolicy policyTypes %v, want Ingress", np.Spec.PolicyTypes)
	}
	named := map[string]corev1.ContainerPort{}
	for _, p := range c.Ports {
		named[p.Name] = p
	}
	gossip := 0
	for _, rule := range np.Spec.Ingress {
		for _, p := range rule.Ports {
			cp, ok := named[p.Port.String()]
			if !ok || p.Protocol == nil || *p.Protocol != cp.Protocol {
				t.Errorf("NetworkPolicy port %v/%v is no port of the container", p.Port, p.Protocol)
				continue
			}
			if cp.Name == "http-metrics" {
				continue
			}
			gossip++
			if len(rule.From) != 1 || rule.From[0].PodSelector == nil || rule.From[0].NamespaceSelector != nil ||
				!reflectEqual(rule.From[0].PodSelector.MatchLabels, m.Deployment.Spec.Selector.MatchLabels) {
				t.Errorf("gossip port %s open to %+v; want the release's pods alone", cp.Name, rule.From)
			}
		}
	}
	if gossip != 2 {
		t.Errorf("NetworkPolicy lets in %d gossip ports, want TCP and UDP", gossip)
	}
}

func reflectEqual(a, b map[string]string) bool { return subset(a, b) && subset(b, a) }

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestClusterEveryOption: three replicas, another port and peer timeout,
// encrypted gossip; the values' affinity replaces the chart's.
func TestClusterEveryOption(t *testing.T) {
	m := render(t, "-f", allValues)
	checkCluster(t, m, clusterWant{replicas: 3, port: 7946, peerTimeout: 20 * time.Second, keySecret: "onchain-exporter-gossip", keyName: "key",
		label: "markets-production", maxMembers: 6})
	if a := m.Deployment.Spec.Template.Spec.Affinity; a == nil || a.NodeAffinity == nil || a.PodAntiAffinity != nil {
		t.Errorf("affinity %+v: want the values' own, in place of the chart's", a)
	}
}

// TestClusterOfOne: cluster mode with one replica gossips (more can be
// added later) but has nothing to spread and no budget of disruptions.
func TestClusterOfOne(t *testing.T) {
	m := render(t, "--set", "replicas=1")
	checkCluster(t, m, clusterWant{replicas: 1, port: 9094, peerTimeout: 15 * time.Second,
		keySecret: generatedKey, keyName: "gossip-key", generated: true, label: "monitoring/markets", maxMembers: 3})
	if a := m.Deployment.Spec.Template.Spec.Affinity; a != nil {
		t.Errorf("one replica: affinity %+v, want none", a)
	}
}

// TestSingleReplica: cluster.enabled false is one lone pod, whatever
// replicas says, replaced rather than rolled, with no gossip at all.
func TestSingleReplica(t *testing.T) {
	for _, args := range [][]string{{"--set", "cluster.enabled=false"}, {"--set", "cluster.enabled=false", "--set", "replicas=3"}, {"-f", singleValues}} {
		m := render(t, args...)
		checkPod(t, m)
		c := m.container(t)
		for _, a := range c.Args {
			if strings.HasPrefix(a, "--cluster.") {
				t.Errorf("%v: arg %s with cluster mode off", args, a)
			}
		}
		if len(c.Ports) != 1 || m.ClusterService != nil || m.PDB != nil || m.Deployment.Spec.Template.Spec.Affinity != nil {
			t.Errorf("%v: ports %+v, headless Service %v, PodDisruptionBudget %v, affinity %v; want none of the cluster's", args, c.Ports, m.ClusterService != nil, m.PDB != nil, m.Deployment.Spec.Template.Spec.Affinity)
		}
		if len(c.Env) != 1 || c.Env[0].Name != "ONCHAIN_DATA_TOKEN" {
			t.Errorf("%v: env %+v, want only the data token", args, c.Env)
		}
	}
	m := render(t, "-f", singleValues)
	if m.PVC == nil {
		t.Fatal("single-values.yaml: no PersistentVolumeClaim rendered")
	}
	checkStorage(t, m, m.PVC.Name)
	if got := m.PVC.Spec.Resources.Requests.Storage().String(); got != "2Gi" {
		t.Errorf("PersistentVolumeClaim: size %s, want 2Gi", got)
	}
}

// TestPersistenceNeedsOneReplica: one claim cannot hold the state of
// several replicas; the chart says so rather than rendering pods that
// would fight over a ReadWriteOnce volume or one state directory.
func TestPersistenceNeedsOneReplica(t *testing.T) {
	for _, set := range [][]string{
		{"persistence.enabled=true"},
		{"persistence.enabled=true", "persistence.existingClaim=kept"},
	} {
		args := []string{"template", release, chartDir}
		for _, s := range set {
			args = append(args, "--set", s)
		}
		if _, err := runHelm(t, args...); err == nil || !strings.Contains(err.Error(), "persistence.enabled needs one replica") {
			t.Errorf("--set %v with two replicas: %v; want the chart to refuse it", set, err)
		}
	}
	for _, set := range []string{"replicas=1", "cluster.enabled=false"} {
		if _, err := runHelm(t, "template", release, chartDir, "--set", "persistence.enabled=true", "--set", set); err != nil {
			t.Errorf("persistence with %s: %v", set, err)
		}
	}
}
