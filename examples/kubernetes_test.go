package examples

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// The subset of the Kubernetes objects the checks read.
type (
	k8sMeta struct {
		Name string `yaml:"name"`
	}
	// secret is the Secret the user creates with the command that
	// kustomization.yaml documents.
	secret struct {
		Metadata   k8sMeta
		StringData map[string]string
	}
	configMap struct {
		Metadata k8sMeta           `yaml:"metadata"`
		Data     map[string]string `yaml:"data"`
	}
	deployment struct {
		Metadata k8sMeta `yaml:"metadata"`
		Spec     struct {
			Replicas int `yaml:"replicas"`
			Template struct {
				Spec struct {
					Containers []container `yaml:"containers"`
					Volumes    []volume    `yaml:"volumes"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	container struct {
		Args []string `yaml:"args"`
		Env  []struct {
			Name      string `yaml:"name"`
			ValueFrom struct {
				SecretKeyRef struct{ Name, Key string } `yaml:"secretKeyRef"`
				FieldRef     *struct {
					FieldPath string `yaml:"fieldPath"`
				} `yaml:"fieldRef"`
			} `yaml:"valueFrom"`
		} `yaml:"env"`
		Ports []struct {
			Name          string `yaml:"name"`
			ContainerPort int    `yaml:"containerPort"`
		} `yaml:"ports"`
		VolumeMounts []struct {
			Name      string `yaml:"name"`
			MountPath string `yaml:"mountPath"`
			ReadOnly  bool   `yaml:"readOnly"`
		} `yaml:"volumeMounts"`
	}
	volume struct {
		Name                  string         `yaml:"name"`
		EmptyDir              map[string]any `yaml:"emptyDir"`
		PersistentVolumeClaim map[string]any `yaml:"persistentVolumeClaim"`
		ConfigMap             *struct {
			Name string `yaml:"name"`
		} `yaml:"configMap"`
		Secret *struct {
			SecretName string `yaml:"secretName"`
			Items      []struct{ Key, Path string }
		} `yaml:"secret"`
	}
	service struct {
		Spec struct {
			Ports []struct {
				Name string `yaml:"name"`
				Port int    `yaml:"port"`
			} `yaml:"ports"`
		} `yaml:"spec"`
	}
	serviceMonitor struct {
		Spec struct {
			Endpoints []struct {
				Port        string              `yaml:"port"`
				Params      map[string][]string `yaml:"params"`
				Relabelings []struct {
					TargetLabel string `yaml:"targetLabel"`
					Replacement string `yaml:"replacement"`
				} `yaml:"relabelings"`
			} `yaml:"endpoints"`
		} `yaml:"spec"`
	}
)

// documentedSecret reads the Secret that kustomization.yaml tells the
// user to create: its name and keys, from the kubectl command it gives.
// The directory ships no Secret, so applying it never overwrites the
// user's.
func documentedSecret(t *testing.T) secret {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("kubernetes", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(b), "\\\n#", "")
	m := regexp.MustCompile(`kubectl -n \S+ create secret generic (\S+)((?: +--from-(?:literal|file)=[^=\s]+=\S*)+)`).FindStringSubmatch(text)
	if m == nil {
		t.Fatal("kustomization.yaml does not say how to create the Secret (kubectl -n <namespace> create secret generic <name> --from-literal=<key>=...)")
	}
	sec := secret{Metadata: k8sMeta{Name: m[1]}, StringData: map[string]string{}}
	for _, kv := range regexp.MustCompile(`--from-(?:literal|file)=([^=\s]+)=`).FindAllStringSubmatch(m[2], -1) {
		sec.StringData[kv[1]] = "documented"
	}
	return sec
}

// No manifest of the example is a Secret: kubectl apply -k would replace
// the user's credentials with placeholders.
func TestKubernetesShipsNoSecret(t *testing.T) {
	files, _ := filepath.Glob("kubernetes/*.yaml")
	for _, f := range files {
		for i, d := range documents(t, f) {
			if d["kind"] == "Secret" {
				t.Errorf("%s: document %d is a Secret", f, i)
			}
		}
	}
	var kus struct {
		SecretGenerator []any `yaml:"secretGenerator"`
	}
	decodeK8s(t, "kustomization.yaml", &kus)
	if len(kus.SecretGenerator) > 0 {
		t.Error("kustomization.yaml generates a Secret")
	}
}

func decodeK8s(t *testing.T, name string, v any) {
	t.Helper()
	decodeFile(t, filepath.Join("kubernetes", name), v)
}

// TestKubernetesManifestsFitTogether follows the references between the
// manifests: the Secret's keys, the ConfigMap's file, the port, and the
// configuration inside, which must load.
func TestKubernetesManifestsFitTogether(t *testing.T) {
	var (
		sec secret
		cm  configMap
		dep deployment
		svc service
		sm  serviceMonitor
		kus struct {
			Resources []string `yaml:"resources"`
		}
	)
	sec = documentedSecret(t)
	decodeK8s(t, "configmap.yaml", &cm)
	decodeK8s(t, "deployment.yaml", &dep)
	decodeK8s(t, "service.yaml", &svc)
	decodeK8s(t, "servicemonitor.yaml", &sm)
	decodeK8s(t, "kustomization.yaml", &kus)

	files, _ := filepath.Glob("kubernetes/*.yaml")
	for _, f := range files {
		if base := filepath.Base(f); base != "kustomization.yaml" && !slices.Contains(kus.Resources, base) {
			t.Errorf("kustomization.yaml does not list %s", base)
		}
	}
	if len(dep.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("deployment: want one container")
	}
	c := dep.Spec.Template.Spec.Containers[0]
	if len(c.Ports) == 0 || c.Ports[0].ContainerPort != 9799 || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 9799 {
		t.Fatalf("deployment and service must expose port %s", exporterPort)
	}
	portName := c.Ports[0].Name
	for _, ep := range sm.Spec.Endpoints {
		if ep.Port != portName || svc.Spec.Ports[0].Name != portName {
			t.Errorf("servicemonitor port %q, service port %q, container port %q: must be one name", ep.Port, svc.Spec.Ports[0].Name, portName)
		}
	}

	// Volumes and where they are mounted.
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	secretFiles := map[string]bool{} // token_file paths the Secret provides
	configFiles := map[string]bool{}
	for _, v := range dep.Spec.Template.Spec.Volumes {
		switch {
		case v.Secret != nil:
			if v.Secret.SecretName != sec.Metadata.Name {
				t.Errorf("volume %s: secret %q, the Secret is %q", v.Name, v.Secret.SecretName, sec.Metadata.Name)
			}
			for _, it := range v.Secret.Items {
				if _, ok := sec.StringData[it.Key]; !ok {
					t.Errorf("volume %s: the Secret has no key %q", v.Name, it.Key)
				}
				secretFiles[mounts[v.Name]+"/"+it.Path] = true
			}
		case v.ConfigMap != nil:
			if v.ConfigMap.Name != cm.Metadata.Name {
				t.Errorf("volume %s: configMap %q, the ConfigMap is %q", v.Name, v.ConfigMap.Name, cm.Metadata.Name)
			}
			for k := range cm.Data {
				configFiles[mounts[v.Name]+"/"+k] = true
			}
		}
	}
	env := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom.FieldRef != nil {
			continue // the downward API (POD_IP): not a credential
		}
		ref := e.ValueFrom.SecretKeyRef
		if ref.Name != sec.Metadata.Name {
			t.Errorf("env %s: secret %q, the Secret is %q", e.Name, ref.Name, sec.Metadata.Name)
		}
		if _, ok := sec.StringData[ref.Key]; !ok {
			t.Errorf("env %s: the Secret has no key %q", e.Name, ref.Key)
		}
		env[e.Name] = "token-from-" + ref.Key
	}
	var configFile string
	for _, a := range c.Args {
		if f, ok := strings.CutPrefix(a, "--config.file="); ok {
			configFile = f
		}
	}
	// --storage.path is a writable volume of its own: the root file
	// system is read-only.
	var storage string
	for _, a := range c.Args {
		if p, ok := strings.CutPrefix(a, "--storage.path="); ok {
			storage = p
		}
	}
	stateVolume := ""
	for _, m := range c.VolumeMounts {
		if m.MountPath == storage && !m.ReadOnly {
			stateVolume = m.Name
		}
	}
	// Each replica has its own: an emptyDir (a pod that starts takes the
	// state from its peer; one ReadWriteOnce claim cannot serve two pods).
	for _, v := range dep.Spec.Template.Spec.Volumes {
		if v.Name == stateVolume && (v.EmptyDir == nil || v.PersistentVolumeClaim != nil) {
			stateVolume = ""
		}
	}
	if storage == "" || stateVolume == "" {
		t.Errorf("deployment: --storage.path=%q must be a writable mount of an emptyDir of each pod", storage)
	}
	if !configFiles[configFile] {
		t.Fatalf("deployment: --config.file=%q is not a file of the mounted ConfigMap (%v)", configFile, configFiles)
	}

	// The configuration loads, with its credentials where the pod has them.
	cfg := testtool.LoadPodConfig(t, "configmap.yaml config.yml", cm.Data[filepath.Base(configFile)], env, secretFiles)
	for _, api := range config.APINames {
		if cfg.APIs[api] == nil {
			t.Errorf("the ConfigMap's configuration has no %s section: the example should show every API", api)
		}
	}
}

func TestServiceMonitorJobs(t *testing.T) {
	var sm serviceMonitor
	decodeK8s(t, "servicemonitor.yaml", &sm)
	var svc struct {
		Metadata k8sMeta `yaml:"metadata"`
	}
	decodeK8s(t, "service.yaml", &svc)
	jobRE := jobMatcher(t)
	var params []map[string][]string
	jobs := map[string]bool{}
	for i, ep := range sm.Spec.Endpoints {
		job := svc.Metadata.Name // the Operator's default job label
		for _, r := range ep.Relabelings {
			if r.TargetLabel == "job" {
				job = r.Replacement
			}
		}
		if !jobRE.MatchString(job) {
			t.Errorf("servicemonitor endpoint %d: job %q escapes OnchainExporterDown's matcher %s", i, job, jobRE)
		}
		// Two endpoints scrape one pod: with one job label their series
		// would collide.
		if jobs[job] {
			t.Errorf("servicemonitor endpoint %d: job %q is already another endpoint's; relabel job", i, job)
		}
		jobs[job] = true
		params = append(params, ep.Params)
	}
	checkCollect(t, "servicemonitor.yaml", params)
}
