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
