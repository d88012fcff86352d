package examples

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/alecthomas/kingpin/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/onchain-exporter/onchain_exporter/cluster"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// decodeTyped decodes a single-document manifest of kubernetes/ strictly
// into its Kubernetes type, as the API server would: an unknown field (in
// any case but the field's own), a field of the wrong type or a duplicate
// key is an error.
func decodeTyped(t *testing.T, name string, into any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("kubernetes", name))
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSONStrict(b)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	strict, err := kjson.UnmarshalStrict(js, into, kjson.DisallowUnknownFields, kjson.DisallowDuplicateFields)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(strict) > 0 {
		t.Fatalf("%s: %v", name, errors.Join(strict...))
	}
}

func subsetOf(sub, of map[string]string) bool {
	for k, v := range sub {
		if of[k] != v {
			return false
		}
	}
	return len(sub) > 0
}

// TestKubernetesCluster: the two replicas of the example find each other
// through the headless Service (its name in the kustomization's
// namespace, publishing pods before they are ready, TCP and UDP), with
// gossip flags the exporter accepts and the pod's own IP advertised; they
// roll one at a time without the cluster shrinking, are spread over
// nodes, and are drained one at a time.
func TestKubernetesCluster(t *testing.T) {
	var (
		dep  appsv1.Deployment
		hs   corev1.Service
		svc  corev1.Service
		pdb  policyv1.PodDisruptionBudget
		kust struct {
			Namespace string `yaml:"namespace"`
		}
	)
	decodeTyped(t, "deployment.yaml", &dep)
	decodeTyped(t, "service-cluster.yaml", &hs)
	decodeTyped(t, "service.yaml", &svc)
	decodeTyped(t, "pdb.yaml", &pdb)
	decodeK8s(t, "kustomization.yaml", &kust)
	if dep.Kind != "Deployment" || hs.Kind != "Service" || pdb.Kind != "PodDisruptionBudget" || pdb.APIVersion != "policy/v1" {
		t.Fatalf("kinds %s, %s, %s %s", dep.Kind, hs.Kind, pdb.APIVersion, pdb.Kind)
	}
	podLabels := dep.Spec.Template.Labels

	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 2 {
		t.Errorf("deployment: replicas %v, want 2 in cluster mode", dep.Spec.Replicas)
	}
	s := dep.Spec.Strategy
	if s.Type != appsv1.RollingUpdateDeploymentStrategyType || s.RollingUpdate == nil ||
		s.RollingUpdate.MaxUnavailable == nil || s.RollingUpdate.MaxUnavailable.IntValue() != 0 ||
		s.RollingUpdate.MaxSurge == nil || s.RollingUpdate.MaxSurge.IntValue() != 1 {
		t.Errorf("deployment: strategy %+v, want RollingUpdate with maxSurge 1 and maxUnavailable 0", s)
	}
	c := dep.Spec.Template.Spec.Containers[0]

	// $(POD_IP) is the downward API's pod IP; every $(VAR) is defined.
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	for _, u := range testtool.UndefinedArgVars(c.Args, func(name string) bool { _, ok := env[name]; return ok }) {
		t.Errorf("arg %s: the container does not define that variable", u)
	}
	if e := env["POD_IP"]; e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != "status.podIP" {
		t.Errorf("env POD_IP %+v: want the downward API's status.podIP", e)
	}

	if e := env["POD_NAME"]; e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != "metadata.name" {
		t.Errorf("env POD_NAME %+v: want the downward API's metadata.name", e)
	}

	// The gossip key: the documented Secret's gossip-key, mounted where
	// the flag names it, as a directory (a rotation reaches the pod).
	keyFile := ""
	for _, a := range c.Args {
		if f, ok := strings.CutPrefix(a, "--cluster.encryption-key-file="); ok {
			keyFile = f
		}
	}
	sec := documentedSecret(t)
	if _, ok := sec.StringData["gossip-key"]; !ok {
		t.Error("kustomization.yaml's Secret has no gossip-key: gossip would go in the clear")
	}
	mounted := false
	for _, v := range dep.Spec.Template.Spec.Volumes {
		if v.Secret == nil {
			continue
		}
		for _, m := range c.VolumeMounts {
			for _, it := range v.Secret.Items {
				if m.Name == v.Name && m.SubPath == "" && it.Key == "gossip-key" && m.MountPath+"/"+it.Path == keyFile {
					mounted = true
				}
			}
		}
	}
	if keyFile == "" || !mounted {
		t.Errorf("--cluster.encryption-key-file=%q is not the Secret's gossip-key mounted as a directory", keyFile)
	}
	key := filepath.Join(t.TempDir(), "gossip-key")
	if err := os.WriteFile(key, []byte("MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	// The flags, read by the exporter's own flag parser and validated.
	app := kingpin.New("onchain_exporter", "")
	cfg := cluster.AddFlags(app)
	var flags []string
	for _, a := range c.Args {
		if strings.HasPrefix(a, "--cluster.") {
			a = strings.ReplaceAll(a, "$(POD_IP)", "10.1.2.3")
			a = strings.ReplaceAll(a, "$(POD_NAME)", "onchain-exporter-5d8f7-x2k9p")
			if strings.HasPrefix(a, "--cluster.encryption-key-file=") {
				a = "--cluster.encryption-key-file=" + key
			}
			flags = append(flags, a)
		}
	}
	if _, err := app.Parse(flags); err != nil {
		t.Fatalf("the exporter does not take the example's cluster flags %q: %v", flags, err)
	}
	if err := cfg.Validate(); err != nil || !cfg.Enabled() {
		t.Fatalf("the example's cluster flags %q: %v (cluster mode on: %v)", flags, err, cfg.Enabled())
	}
	_, port, _ := strings.Cut(cfg.ListenAddress, ":")
	if want := hs.Name + "." + kust.Namespace + ".svc:" + port; len(cfg.Peers) != 1 || cfg.Peers[0] != want {
		t.Errorf("--cluster.peer %q, want the headless Service in the kustomization's namespace, %s", cfg.Peers, want)
	}
	if cfg.AdvertiseAddress != "10.1.2.3:"+port && cfg.AdvertiseAddress != "[10.1.2.3]:"+port {
		t.Errorf("--cluster.advertise-address %q: want the pod's IP and the gossip port %s", cfg.AdvertiseAddress, port)
	}
	if cfg.ClusterName != kust.Namespace+"/onchain-exporter" || cfg.Name == "" {
		t.Errorf("--cluster.label %q, --cluster.peer-name %q: want the cluster named %s/onchain-exporter and the pod's name", cfg.ClusterName, cfg.Name, kust.Namespace)
	}

	// The gossip port from the exporter's pods alone.
	var np networkingv1.NetworkPolicy
	decodeTyped(t, "networkpolicy.yaml", &np)
	if !subsetOf(np.Spec.PodSelector.MatchLabels, podLabels) || len(np.Spec.PolicyTypes) != 1 || np.Spec.PolicyTypes[0] != networkingv1.PolicyTypeIngress {
		t.Errorf("networkpolicy.yaml: podSelector %v, policyTypes %v; want the pods' ingress", np.Spec.PodSelector.MatchLabels, np.Spec.PolicyTypes)
	}
	gossip := 0
	for _, rule := range np.Spec.Ingress {
		for _, p := range rule.Ports {
			if !strings.HasPrefix(p.Port.String(), "gossip-") {
				continue
			}
			gossip++
			if len(rule.From) != 1 || rule.From[0].PodSelector == nil || rule.From[0].NamespaceSelector != nil || !subsetOf(rule.From[0].PodSelector.MatchLabels, podLabels) {
				t.Errorf("networkpolicy.yaml: gossip port %s open to %+v; want the exporter's pods alone", p.Port.String(), rule.From)
			}
		}
	}
	if gossip != 2 {
		t.Errorf("networkpolicy.yaml lets in %d gossip ports, want TCP and UDP", gossip)
	}

	// The headless Service reaches the gossip ports, TCP and UDP.
	if hs.Spec.ClusterIP != corev1.ClusterIPNone || !hs.Spec.PublishNotReadyAddresses || !subsetOf(hs.Spec.Selector, podLabels) {
		t.Errorf("service-cluster.yaml: clusterIP %q, publishNotReadyAddresses %v, selector %v; want a headless Service of the pods that publishes them before they are ready",
			hs.Spec.ClusterIP, hs.Spec.PublishNotReadyAddresses, hs.Spec.Selector)
	}
	for _, proto := range []corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP} {
		found := false
		for _, cp := range c.Ports {
			if cp.Protocol != proto || strconv.Itoa(int(cp.ContainerPort)) != port {
				continue
			}
			for _, sp := range hs.Spec.Ports {
				found = found || sp.Protocol == proto && strconv.Itoa(int(sp.Port)) == port && sp.TargetPort.String() == cp.Name
			}
		}
		if !found {
			t.Errorf("no %s gossip port %s from the headless Service %+v to the container %+v", proto, port, hs.Spec.Ports, c.Ports)
		}
	}
	// Scrapes go through service.yaml: the ServiceMonitor's port is not
	// the headless Service's.
	var sm serviceMonitor
	decodeK8s(t, "servicemonitor.yaml", &sm)
	for _, ep := range sm.Spec.Endpoints {
		for _, sp := range hs.Spec.Ports {
			if sp.Name == ep.Port {
				t.Errorf("the ServiceMonitor's port %s is the headless Service's too", ep.Port)
			}
		}
	}
	if hs.Name == svc.Name {
		t.Errorf("the headless Service and the exporter's are both named %s", hs.Name)
	}

	// Drained one at a time, spread over nodes.
	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 || pdb.Spec.Selector == nil || !subsetOf(pdb.Spec.Selector.MatchLabels, podLabels) {
		t.Errorf("pdb.yaml: maxUnavailable %v, selector %+v; want 1 of the pods %v", pdb.Spec.MaxUnavailable, pdb.Spec.Selector, podLabels)
	}
	a := dep.Spec.Template.Spec.Affinity
	if a == nil || a.PodAntiAffinity == nil || len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 {
		t.Fatalf("deployment: affinity %+v, want one preferred pod anti-affinity term", a)
	}
	term := a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm
	if term.TopologyKey != corev1.LabelHostname || term.LabelSelector == nil || !subsetOf(term.LabelSelector.MatchLabels, podLabels) {
		t.Errorf("deployment: anti-affinity term %+v, want the pods on %s", term, corev1.LabelHostname)
	}
}
