{{/* The chart's name, or nameOverride. */}}
{{- define "onchain-exporter.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The release's full name: fullnameOverride, or the release name, suffixed
with the chart's name unless it already contains it. 63 characters at most
(the DNS label limit of Service names).
*/}}
{{- define "onchain-exporter.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "onchain-exporter.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels of every object. */}}
{{- define "onchain-exporter.labels" -}}
helm.sh/chart: {{ include "onchain-exporter.chart" . }}
{{ include "onchain-exporter.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Labels that select the pod, and the Service for the ServiceMonitor. */}}
{{- define "onchain-exporter.selectorLabels" -}}
app.kubernetes.io/name: {{ include "onchain-exporter.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "onchain-exporter.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "onchain-exporter.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The PersistentVolumeClaim holding the exporter's state. */}}
{{- define "onchain-exporter.claimName" -}}
{{- default (include "onchain-exporter.fullname" .) .Values.persistence.existingClaim }}
{{- end }}

{{/*
A Prometheus duration (1m30s, 2h, 500ms) in milliseconds, so that two can
be compared; the schema has already checked its form.
*/}}
{{- define "onchain-exporter.milliseconds" -}}
{{- $units := dict "ms" 1 "s" 1000 "m" 60000 "h" 3600000 "d" 86400000 "w" 604800000 "y" 31536000000 -}}
{{- $total := 0 -}}
{{- range regexFindAll "[0-9]+(ms|s|m|h|d|w|y)" (toString .) -1 -}}
{{- $unit := regexReplaceAll "^[0-9]+" . "" -}}
{{- $total = add $total (mul (regexFind "^[0-9]+" . | atoi) (get $units $unit)) -}}
{{- end -}}
{{- $total -}}
{{- end }}

{{/*
Fails the render when a scrape timeout is longer than its interval, which
Prometheus refuses: (list timeoutValueName intervalValueName timeout interval).
*/}}
{{- define "onchain-exporter.checkTimeout" -}}
{{- $timeout := include "onchain-exporter.milliseconds" (index . 2) | atoi -}}
{{- $interval := include "onchain-exporter.milliseconds" (index . 3) | atoi -}}
{{- if gt $timeout $interval -}}
{{- fail (printf "%s (%s) is longer than %s (%s): Prometheus refuses a scrape timeout longer than the interval" (index . 0) (index . 2) (index . 1) (index . 3)) -}}
{{- end -}}
{{- end }}

{{/*
Pods of the Deployment: replicas in cluster mode, one without it (replicas
that do not share would each pay for every call).
*/}}
{{- define "onchain-exporter.replicas" -}}
{{- if .Values.cluster.enabled }}{{ .Values.replicas }}{{ else }}1{{ end }}
{{- end }}

{{/* The headless Service the replicas find each other through. */}}
{{- define "onchain-exporter.clusterServiceName" -}}
{{- printf "%s-cluster" (include "onchain-exporter.fullname" . | trunc 55 | trimSuffix "-") }}
{{- end }}

{{/* Where the gossip key of cluster.encryption is mounted. */}}
{{- define "onchain-exporter.clusterKeyDir" -}}
/run/secrets/onchain_exporter_cluster
{{- end }}

{{/*
Fails the render on settings that cannot work together: one claim for
several replicas (a ReadWriteOnce volume attaches to one node, and two
exporters must not share one state directory).
*/}}
{{- define "onchain-exporter.checkValues" -}}
{{- if and .Values.storage.enabled .Values.persistence.enabled (gt (include "onchain-exporter.replicas" . | atoi) 1) -}}
{{- fail "persistence.enabled needs one replica (replicas: 1, or cluster.enabled: false): one claim cannot hold the state of several replicas. A cluster keeps its state in its members: each pod has an emptyDir and a pod that starts takes the state from a peer (docs/operations.md, High availability)" -}}
{{- end -}}
{{- end }}

{{/*
The Secret of the gossip key: existingSecret, or the one the chart creates;
empty when gossip is in the clear.
*/}}
{{- define "onchain-exporter.gossipSecretName" -}}
{{- if and .Values.cluster.enabled .Values.cluster.encryption.enabled -}}
{{- default (printf "%s-gossip" (include "onchain-exporter.fullname" . | trunc 56 | trimSuffix "-")) .Values.cluster.encryption.existingSecret -}}
{{- end -}}
{{- end }}

{{/*
--cluster.label: cluster.name, or the release's namespace and name, so
that two releases (or one name in two namespaces) whose pod addresses
meet never merge.
*/}}
{{- define "onchain-exporter.clusterName" -}}
{{- default (printf "%s/%s" .Release.Namespace .Release.Name) .Values.cluster.name -}}
{{- end }}

{{/* --cluster.max-members: cluster.maxMembers, or replicas + 2. */}}
{{- define "onchain-exporter.maxMembers" -}}
{{- if .Values.cluster.maxMembers }}{{ .Values.cluster.maxMembers }}{{ else }}{{ add (include "onchain-exporter.replicas" . | atoi) 2 }}{{ end -}}
{{- end }}
