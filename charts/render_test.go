package charts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/onchain-exporter/onchain_exporter/testtool"
)

const (
	chartDir     = "onchain-exporter"
	allValues    = chartDir + "/ci/all-values.yaml"
	singleValues = chartDir + "/ci/single-values.yaml"
	release      = "markets"
	namespace    = "monitoring"
)

// helm returns the path of the helm binary, or skips (fails under CI=true).
func helm(t *testing.T) string {
	t.Helper()
	return testtool.Require(t, "go install helm.sh/helm/v3/cmd/helm@v3.22.0", "helm")
}

// runHelm runs helm with args and returns its standard output, or the
// error with standard error.
func runHelm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(helm(t), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// manifests are the objects of one rendering, decoded into their types.
type manifests struct {
	Deployment *appsv1.Deployment
	// Service is the exporter's (scrapes), ClusterService the headless
	// one of the gossip port (cluster mode).
	Service        *corev1.Service
	ClusterService *corev1.Service
	PDB            *policyv1.PodDisruptionBudget
	ConfigMap      *corev1.ConfigMap
	ServiceAccount *corev1.ServiceAccount
	PVC            *corev1.PersistentVolumeClaim
	ServiceMonitor *monitoringv1.ServiceMonitor
	PrometheusRule *monitoringv1.PrometheusRule
	// GossipSecret is the gossip key the chart generates, NetworkPolicy
	// the pods' ingress (cluster mode).
	GossipSecret  *corev1.Secret
	NetworkPolicy *networkingv1.NetworkPolicy
	// Raw holds each object as JSON by kind (the headless Service as
	// "Service/cluster"), for comparisons the typed form would blur
	// (omitted against empty fields).
	Raw map[string][]byte
}

// render runs helm template with the extra args (-f, --set) and decodes
// the output.
func render(t *testing.T, args ...string) *manifests {
	t.Helper()
	out, err := runHelm(t, append([]string{"template", release, chartDir, "--namespace", namespace}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	m, err := decode(out)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var docSeparator = regexp.MustCompile(`(?m)^---\s*$`)

// decode splits helm's output into documents and decodes each strictly
// into the type of its kind, as the API server would: an unknown field (in
// any case but the field's own), a field of the wrong type, a duplicate key
// or an unexpected kind or apiVersion is an error.
func decode(out string) (*manifests, error) {
	m := &manifests{Raw: map[string][]byte{}}
	for _, doc := range docSeparator.Split(out, -1) {
		if strings.TrimSpace(stripComments(doc)) == "" {
			continue
		}
		js, err := yaml.YAMLToJSONStrict([]byte(doc))
		if err != nil {
			return nil, fmt.Errorf("%v in\n%s", err, doc)
		}
		var head struct {
			APIVersion, Kind string
			Spec             struct{ ClusterIP string }
		}
		if err := json.Unmarshal(js, &head); err != nil {
			return nil, err
		}
		var into any
		wantAPI, key := "v1", head.Kind
		switch head.Kind {
		case "Deployment":
			wantAPI, m.Deployment = "apps/v1", &appsv1.Deployment{}
			into = m.Deployment
		case "Service":
			if head.Spec.ClusterIP == corev1.ClusterIPNone {
				key, m.ClusterService = "Service/cluster", &corev1.Service{}
				into = m.ClusterService
				break
			}
			m.Service = &corev1.Service{}
			into = m.Service
		case "PodDisruptionBudget":
			wantAPI, m.PDB = "policy/v1", &policyv1.PodDisruptionBudget{}
			into = m.PDB
		case "ConfigMap":
			m.ConfigMap = &corev1.ConfigMap{}
			into = m.ConfigMap
		case "ServiceAccount":
			m.ServiceAccount = &corev1.ServiceAccount{}
			into = m.ServiceAccount
		case "PersistentVolumeClaim":
			m.PVC = &corev1.PersistentVolumeClaim{}
			into = m.PVC
		case "ServiceMonitor":
			wantAPI, m.ServiceMonitor = "monitoring.coreos.com/v1", &monitoringv1.ServiceMonitor{}
			into = m.ServiceMonitor
		case "PrometheusRule":
			wantAPI, m.PrometheusRule = "monitoring.coreos.com/v1", &monitoringv1.PrometheusRule{}
			into = m.PrometheusRule
		case "Secret":
			m.GossipSecret = &corev1.Secret{}
			into = m.GossipSecret
		case "NetworkPolicy":
			wantAPI, m.NetworkPolicy = "networking.k8s.io/v1", &networkingv1.NetworkPolicy{}
			into = m.NetworkPolicy
		default:
			return nil, fmt.Errorf("unexpected kind %q in\n%s", head.Kind, doc)
		}
		if head.APIVersion != wantAPI {
			return nil, fmt.Errorf("%s: apiVersion %q, want %q", head.Kind, head.APIVersion, wantAPI)
		}
		if _, dup := m.Raw[key]; dup {
			return nil, fmt.Errorf("two objects of kind %s", key)
		}
		m.Raw[key] = js
		// The API server's decoder: unlike encoding/json, it matches field
		// names case-sensitively, so readOnlyRootFileSystem is unknown.
		strict, err := kjson.UnmarshalStrict(js, into, kjson.DisallowUnknownFields, kjson.DisallowDuplicateFields)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", head.Kind, err)
		}
		if len(strict) > 0 {
			return nil, fmt.Errorf("%s: %v", head.Kind, errors.Join(strict...))
		}
	}
	return m, nil
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// container returns the Deployment's only container.
func (m *manifests) container(t *testing.T) corev1.Container {
	t.Helper()
	if m.Deployment == nil {
		t.Fatal("no Deployment rendered")
	}
	cs := m.Deployment.Spec.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("Deployment: %d containers, want 1", len(cs))
	}
	return cs[0]
}

// volume returns the pod's volume of that name, or nil.
func (m *manifests) volume(name string) *corev1.Volume {
	for i, v := range m.Deployment.Spec.Template.Spec.Volumes {
		if v.Name == name {
			return &m.Deployment.Spec.Template.Spec.Volumes[i]
		}
	}
	return nil
}

// mountPath returns where the container mounts a volume, or "".
func mountPath(c corev1.Container, volume string) string {
	for _, vm := range c.VolumeMounts {
		if vm.Name == volume {
			return vm.MountPath
		}
	}
	return ""
}
