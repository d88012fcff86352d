package charts

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/onchain-exporter/onchain_exporter/testtool"
)

const (
	configFlag   = "--config.file=/etc/onchain_exporter/config.yml"
	storagePath  = "/var/lib/onchain_exporter"
	storageFlag  = "--storage.path=" + storagePath
	secretsDir   = "/run/secrets/onchain_exporter"
	portName     = "http-metrics"
	exporterPort = 9799 // the exporter's default --web.listen-address
)

// checkPod checks what every rendering must hold: one replica replaced,
// not rolled, unless the replicas share their calls in cluster mode
// (checkCluster then checks the rest), the exporter's port and probes, a
// locked-down container, a Service that reaches it and a ConfigMap mounted
// where --config.file points.
func checkPod(t *testing.T, m *manifests) {
	t.Helper()
	c := m.container(t)
	d := m.Deployment
	if !clusterMode(c) {
		if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
			t.Errorf("Deployment: replicas %v without cluster mode; each replica would spend the plan's quota on its own", d.Spec.Replicas)
		}
		if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
			t.Errorf("Deployment: strategy %q, want Recreate (never two lone pods calling the APIs at once)", d.Spec.Strategy.Type)
		}
	}
	if d.Namespace != namespace || m.Service.Namespace != namespace || m.ConfigMap.Namespace != namespace {
		t.Errorf("objects not in the release namespace %q", namespace)
	}
	if len(c.Args) == 0 || c.Args[0] != configFlag {
		t.Errorf("args %q: want %s first", c.Args, configFlag)
	}

	// Port and probes.
	if len(c.Ports) == 0 || c.Ports[0].Name != portName || c.Ports[0].ContainerPort != exporterPort || c.Ports[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("container ports %+v: want %s on %d first", c.Ports, portName, exporterPort)
	}
	for path, probe := range map[string]*corev1.Probe{"/-/healthy": c.LivenessProbe, "/-/ready": c.ReadinessProbe} {
		if probe == nil || probe.HTTPGet == nil {
			t.Errorf("no HTTP probe for %s", path)
		} else if probe.HTTPGet.Path != path || probe.HTTPGet.Port.String() != portName {
			t.Errorf("probe GET %s on port %s: want GET %s on port %s", probe.HTTPGet.Path, probe.HTTPGet.Port.String(), path, portName)
		}
	}

	// Security: non-root, read-only root filesystem, no escalation.
	pod := d.Spec.Template.Spec
	nonRoot := c.SecurityContext != nil && c.SecurityContext.RunAsNonRoot != nil && *c.SecurityContext.RunAsNonRoot ||
		pod.SecurityContext != nil && pod.SecurityContext.RunAsNonRoot != nil && *pod.SecurityContext.RunAsNonRoot
	if !nonRoot {
		t.Error("neither the pod nor the container sets runAsNonRoot: true")
	}
	sc := c.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Error("container: readOnlyRootFilesystem is not true")
	}
	if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Error("container: allowPrivilegeEscalation is not false")
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Error("pod: automountServiceAccountToken is not false; the exporter does not use the Kubernetes API")
	}
	if m.ServiceAccount != nil && pod.ServiceAccountName != m.ServiceAccount.Name {
		t.Errorf("pod runs as service account %q, the chart creates %q", pod.ServiceAccountName, m.ServiceAccount.Name)
	}
	if d.Spec.Template.Annotations["checksum/config"] == "" {
		t.Error("pod: no checksum/config annotation; a config change would not roll the pod")
	}

	// The Deployment selects its pods and the Service reaches them.
	podLabels := d.Spec.Template.Labels
	if !subset(d.Spec.Selector.MatchLabels, podLabels) || len(d.Spec.Selector.MatchLabels) == 0 {
		t.Errorf("Deployment selector %v does not select its pod labels %v", d.Spec.Selector.MatchLabels, podLabels)
	}
	svc := m.Service
	if !subset(svc.Spec.Selector, podLabels) || len(svc.Spec.Selector) == 0 {
		t.Errorf("Service selector %v does not select the pod labels %v", svc.Spec.Selector, podLabels)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != portName || svc.Spec.Ports[0].TargetPort.String() != portName {
		t.Errorf("Service ports %+v: want %s targeting the container's %s", svc.Spec.Ports, portName, portName)
	}

	// --config.file names a file of the mounted ConfigMap.
	v := m.volume("config")
	file := strings.TrimPrefix(configFlag, "--config.file=")
	if v == nil || v.ConfigMap == nil || v.ConfigMap.Name != m.ConfigMap.Name {
		t.Fatalf("no volume config from the ConfigMap %s", m.ConfigMap.Name)
	}
	if dir := mountPath(c, "config"); filepath.Join(dir, filepath.Base(file)) != file || m.ConfigMap.Data[filepath.Base(file)] == "" {
		t.Fatalf("%s is not a file of the ConfigMap mounted at %q (keys %v)", file, dir, slices.Sorted(maps.Keys(m.ConfigMap.Data)))
	}
}

// checkStorage checks the state volume: --storage.path and a mount there,
// from an emptyDir or from the claim named.
func checkStorage(t *testing.T, m *manifests, claim string) {
	t.Helper()
	c := m.container(t)
	if n := count(c.Args, storageFlag); n != 1 {
		t.Errorf("args %q: %s %d times, want once", c.Args, storageFlag, n)
	}
	if got := mountPath(c, "storage"); got != storagePath {
		t.Errorf("volume storage mounted at %q, want %s", got, storagePath)
	}
	v := m.volume("storage")
	switch {
	case v == nil:
		t.Error("no volume storage")
	case claim == "" && v.EmptyDir == nil:
		t.Errorf("volume storage %+v: want an emptyDir", v.VolumeSource)
	case claim != "" && (v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != claim):
		t.Errorf("volume storage %+v: want the claim %s", v.VolumeSource, claim)
	}
}

// checkConfigLoads follows the configuration's credentials to the pod:
// every token_env is set from the Secret, every token_file is a file of the
// mounted Secret. Then the exporter's own parser loads the configuration,
// with those files and variables stood in for.
func checkConfigLoads(t *testing.T, m *manifests, secret string) {
	t.Helper()
	c := m.container(t)
	env := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			continue // the downward API (POD_IP): not a credential
		}
		ref := e.ValueFrom.SecretKeyRef
		if ref == nil || ref.Name != secret || ref.Key == "" {
			t.Errorf("env %s: %+v, want a key of the Secret %s", e.Name, e.ValueFrom, secret)
			continue
		}
		env[e.Name] = "token-from-" + ref.Key
	}
	secretFiles := map[string]bool{}
	if v := m.volume("credentials"); v != nil {
		if v.Secret == nil || v.Secret.SecretName != secret {
			t.Errorf("volume credentials %+v: want the Secret %s", v.VolumeSource, secret)
		} else {
			dir := mountPath(c, "credentials")
			if dir != secretsDir {
				t.Errorf("volume credentials mounted at %q, want %s", dir, secretsDir)
			}
			for _, it := range v.Secret.Items {
				secretFiles[filepath.Join(dir, it.Path)] = true
			}
		}
	}

	cfg := testtool.LoadPodConfig(t, "the rendered ConfigMap's config.yml", m.ConfigMap.Data["config.yml"], env, secretFiles)
	if len(cfg.Tuples) == 0 {
		t.Error("the rendered configuration has no tuples")
	}
}

func subset(sub, of map[string]string) bool {
	for k, v := range sub {
		if of[k] != v {
			return false
		}
	}
	return true
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}
