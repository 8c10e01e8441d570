{{- define "plexus.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "plexus.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "plexus.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "plexus.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "plexus.selectorLabels" -}}
app.kubernetes.io/name: {{ include "plexus.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* The Secret that holds the store key. */}}
{{- define "plexus.keySecret" -}}
{{- if .Values.store.key.existingSecret -}}
{{- .Values.store.key.existingSecret -}}
{{- else -}}
{{- printf "%s-store-key" (include "plexus.fullname" .) -}}
{{- end -}}
{{- end -}}
