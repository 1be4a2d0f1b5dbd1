{{/* Names and labels, as Helm's and Bitnami's charts shape them. */}}

{{- define "tns.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "tns.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "tns.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "tns.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tns.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "tns.labels" -}}
helm.sh/chart: {{ include "tns.chart" . }}
{{ include "tns.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: tns
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Labels of one component: (dict "root" $ "component" "api"). */}}
{{- define "tns.componentLabels" -}}
{{ include "tns.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "tns.componentSelectorLabels" -}}
{{ include "tns.selectorLabels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* The image: the tag follows the chart's appVersion unless set; a digest pins it. */}}
{{- define "tns.image" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion -}}
{{- if .Values.image.digest -}}
{{- printf "%s:%s@%s" .Values.image.repository $tag .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository $tag -}}
{{- end -}}
{{- end -}}

{{- define "tns.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "tns.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "tns.jobs.serviceAccountName" -}}
{{- if .Values.jobs.serviceAccount.create -}}
{{- default (printf "%s-jobs" (include "tns.fullname" .)) .Values.jobs.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.jobs.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "tns.jobs.leaseName" -}}
{{- default (printf "%s-jobs" (include "tns.fullname" .)) .Values.jobs.leaseName -}}
{{- end -}}

{{/* Where each secret lives: the existing Secret, else the chart's own. */}}
{{- define "tns.secretName" -}}
{{- $s := index .root.Values .value -}}
{{- if $s.existingSecret -}}
{{- $s.existingSecret -}}
{{- else -}}
{{- include "tns.fullname" .root -}}
{{- end -}}
{{- end -}}

{{- define "tns.secretKey" -}}
{{- $s := index .root.Values .value -}}
{{- if $s.existingSecret -}}
{{- $s.existingSecretKey -}}
{{- else -}}
{{- .key -}}
{{- end -}}
{{- end -}}

{{/* One env entry read from a secret: (dict "root" $ "name" "TNS_DATA_KEY" "value" "dataKey" "key" "data-key"). */}}
{{- define "tns.secretEnv" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ include "tns.secretName" . }}
      key: {{ include "tns.secretKey" . }}
{{- end -}}

{{/* Refuse to render without the secrets TNS cannot run without: there are no defaults. */}}
{{- define "tns.validate" -}}
{{- $missing := list -}}
{{- if not (or .Values.signingSecret.value .Values.signingSecret.existingSecret) -}}
{{- $missing = append $missing "signingSecret.existingSecret (or signingSecret.value)" -}}
{{- end -}}
{{- if not (or .Values.dataKey.value .Values.dataKey.existingSecret) -}}
{{- $missing = append $missing "dataKey.existingSecret (or dataKey.value)" -}}
{{- end -}}
{{- if not (or .Values.externalDatabase.url .Values.externalDatabase.existingSecret) -}}
{{- $missing = append $missing "externalDatabase.existingSecret (or externalDatabase.url)" -}}
{{- end -}}
{{- if not (or .Values.externalRedis.url .Values.externalRedis.existingSecret) -}}
{{- $missing = append $missing "externalRedis.existingSecret (or externalRedis.url)" -}}
{{- end -}}
{{- if $missing -}}
{{- fail (printf "\n\nTNS needs these values (the chart ships no secrets):\n  - %s\nSee the chart's README.md." (join "\n  - " $missing)) -}}
{{- end -}}
{{- if and .Values.migrations.enabled (not .Values.externalDatabase.existingSecret) -}}
{{- fail "\n\nmigrations.enabled runs `tns migrate` as a pre-install hook, before the chart's own Secrets exist: set externalDatabase.existingSecret, or migrations.enabled=false (the API then migrates at start-up)." -}}
{{- end -}}
{{- /* Without a NetworkPolicy every pod of the cluster reaches the admin port: only on request. */ -}}
{{- if and .Values.admin.enabled (not .Values.networkPolicy.enabled) (not .Values.admin.allowFromAnywhere) -}}
{{- fail "\n\nadmin.enabled serves the operators' admin API on the api pods' admin port, which without a NetworkPolicy every pod in the cluster can reach: set networkPolicy.enabled (then only the peers in networkPolicy.admin.from may), or admin.allowFromAnywhere=true to accept that it is open cluster-wide behind operator tokens alone." -}}
{{- end -}}
{{- if and .Values.admin.allowFromAnywhere .Values.networkPolicy.enabled -}}
{{- fail "\n\nadmin.allowFromAnywhere opens nothing while networkPolicy.enabled: name who may reach the admin API in networkPolicy.admin.from, and unset admin.allowFromAnywhere." -}}
{{- end -}}
{{- /* The alerts find this release's series by the labels its ServiceMonitor gives them. */ -}}
{{- if and .Values.metrics.prometheusRule.enabled (not .Values.metrics.serviceMonitor.enabled) -}}
{{- fail "\n\nmetrics.prometheusRule.enabled needs metrics.serviceMonitor.enabled: the alerts select this release's series by the job and namespace labels its ServiceMonitor gives them, and without it they would watch nothing." -}}
{{- end -}}
{{- if and .Values.metrics.prometheusRule.enabled (not .Values.metrics.prometheusRule.runbookBaseUrl) -}}
{{- fail "\n\nmetrics.prometheusRule.enabled needs metrics.prometheusRule.runbookBaseUrl: where this chart's README.md is read (e.g. https://git.example.com/tns/blob/main/charts/tns/README.md); each alert's runbook_url points at its section there." -}}
{{- end -}}
{{- end -}}

{{/* A value as an env string: YAML numbers arrive as floats, so whole ones are printed whole. */}}
{{- define "tns.envString" -}}
{{- if kindIs "float64" . -}}
{{- if eq (float64 (int64 .)) . -}}{{- int64 . | toString | quote -}}{{- else -}}{{- toString . | quote -}}{{- end -}}
{{- else -}}
{{- toString . | quote -}}
{{- end -}}
{{- end -}}

{{- define "tns.addr" -}}
{{- printf "0.0.0.0:%d" (int .) -}}
{{- end -}}

{{- define "tns.pluginsEnabled" -}}
{{- if .Values.plugins.extraImages -}}true{{- end -}}
{{- end -}}

{{/* Init containers that fill the shared plugin volume: the image's own plugins, then each extra image's. */}}
{{- define "tns.pluginInitContainers" -}}
{{- $root := . -}}
{{- if .Values.plugins.includeBuiltin }}
- name: plugins-builtin
  image: {{ include "tns.image" $root | quote }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  command: ["/bin/sh", "-c", {{ printf "cp %s/libtns_adapter_*.so %s/" .Values.plugins.builtinPath .Values.plugins.mountPath | quote }}]
  securityContext:
    {{- toYaml .Values.containerSecurityContext | nindent 4 }}
  resources:
    {{- toYaml .Values.plugins.resources | nindent 4 }}
  volumeMounts:
    - name: plugins
      mountPath: {{ .Values.plugins.mountPath }}
{{- end }}
{{- range .Values.plugins.extraImages }}
- name: {{ printf "plugin-%s" .name | trunc 63 | trimSuffix "-" }}
  image: {{ .image | quote }}
  imagePullPolicy: {{ .pullPolicy | default "IfNotPresent" }}
  command: ["/bin/sh", "-c", {{ printf "cp %s/libtns_adapter_*.so %s/" (.path | default "/plugins") $root.Values.plugins.mountPath | quote }}]
  securityContext:
    {{- toYaml $root.Values.containerSecurityContext | nindent 4 }}
  resources:
    {{- toYaml $root.Values.plugins.resources | nindent 4 }}
  volumeMounts:
    - name: plugins
      mountPath: {{ $root.Values.plugins.mountPath }}
{{- end }}
{{- end -}}

{{/* HTTP probes on the process's own port: liveness /healthz, readiness /readyz. */}}
{{- define "tns.probes" -}}
{{- with .livenessProbe }}{{ if .enabled }}
livenessProbe:
  httpGet:
    path: /healthz
    port: http
  {{- toYaml (omit . "enabled") | nindent 2 }}
{{- end }}{{ end }}
{{- with .readinessProbe }}{{ if .enabled }}
readinessProbe:
  httpGet:
    path: /readyz
    port: http
  {{- toYaml (omit . "enabled") | nindent 2 }}
{{- end }}{{ end }}
{{- with .startupProbe }}{{ if .enabled }}
startupProbe:
  httpGet:
    path: /healthz
    port: http
  {{- toYaml (omit . "enabled") | nindent 2 }}
{{- end }}{{ end }}
{{- end -}}

{{/*
A role's Deployment: (dict "root" $ "role" "api" "v" .Values.api "env" <list of env entries as
YAML> "ports" <extra container ports as YAML> "plugins" true|false "serviceAccount" name
"automountToken" true|false "terminationGracePeriodSeconds" n "replicas" n "hpa" bool).
*/}}
{{- define "tns.deployment" -}}
{{- $root := .root -}}
{{- $v := .v -}}
{{- $ctx := dict "root" $root "component" .role -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ printf "%s-%s" (include "tns.fullname" $root) .role }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "tns.componentLabels" $ctx | nindent 4 }}
spec:
  {{- if not .hpa }}
  {{- /* With an HPA, the HPA owns the replica count. */}}
  replicas: {{ .replicas }}
  {{- end }}
  revisionHistoryLimit: 5
  selector:
    matchLabels:
      {{- include "tns.componentSelectorLabels" $ctx | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "tns.componentLabels" $ctx | nindent 8 }}
        {{- with $v.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        checksum/config: {{ include (print $root.Template.BasePath "/configmap.yaml") $root | sha256sum }}
        checksum/secret: {{ include (print $root.Template.BasePath "/secret.yaml") $root | sha256sum }}
        {{- with $v.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ .serviceAccount }}
      automountServiceAccountToken: {{ .automountToken }}
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- toYaml $root.Values.podSecurityContext | nindent 8 }}
      terminationGracePeriodSeconds: {{ .terminationGracePeriodSeconds }}
      {{- with $v.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      {{- with $v.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.topologySpreadConstraints }}
      topologySpreadConstraints:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- if .plugins }}
      initContainers:
        {{- include "tns.pluginInitContainers" $root | nindent 8 }}
      {{- end }}
      containers:
        - name: {{ .role }}
          image: {{ include "tns.image" $root | quote }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          args: [{{ .role | quote }}]
          ports:
            - name: http
              containerPort: {{ $root.Values.ports.http }}
              protocol: TCP
            - name: metrics
              containerPort: {{ $root.Values.ports.metrics }}
              protocol: TCP
            {{- with .ports }}
            {{- . | nindent 12 }}
            {{- end }}
          envFrom:
            - configMapRef:
                name: {{ printf "%s-config" (include "tns.fullname" $root) }}
          env:
            {{- .env | nindent 12 }}
            {{- if .plugins }}
            - name: TNS_ADAPTER_DIR
              value: {{ $root.Values.plugins.mountPath | quote }}
            {{- end }}
            {{- range $name, $value := $v.env }}
            - name: {{ $name }}
              value: {{ include "tns.envString" $value }}
            {{- end }}
            {{- with $v.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          {{- include "tns.probes" $v | nindent 10 }}
          securityContext:
            {{- toYaml $root.Values.containerSecurityContext | nindent 12 }}
          resources:
            {{- toYaml $v.resources | nindent 12 }}
          {{- if or .plugins $v.extraVolumeMounts }}
          volumeMounts:
            {{- if .plugins }}
            - name: plugins
              mountPath: {{ $root.Values.plugins.mountPath }}
              readOnly: true
            {{- end }}
            {{- with $v.extraVolumeMounts }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          {{- end }}
      {{- if or .plugins $v.extraVolumes }}
      volumes:
        {{- if .plugins }}
        - name: plugins
          emptyDir:
            sizeLimit: {{ $root.Values.plugins.sizeLimit }}
        {{- end }}
        {{- with $v.extraVolumes }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- end }}
{{- end -}}

{{/* A PodDisruptionBudget, only when more than one pod can be counted on. */}}
{{- define "tns.pdb" -}}
{{- $ctx := dict "root" .root "component" .role -}}
{{- if and .v.pdb.enabled (gt (int .replicas) 1) }}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ printf "%s-%s" (include "tns.fullname" .root) .role }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "tns.componentLabels" $ctx | nindent 4 }}
spec:
  {{- if not (kindIs "invalid" .v.pdb.minAvailable) }}
  minAvailable: {{ .v.pdb.minAvailable }}
  {{- else }}
  maxUnavailable: {{ .v.pdb.maxUnavailable | default 1 }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "tns.componentSelectorLabels" $ctx | nindent 6 }}
{{- end }}
{{- end -}}

{{/* A headless Service in front of a role's metrics port, for the ServiceMonitor. */}}
{{- define "tns.metricsService" -}}
{{- $ctx := dict "root" .root "component" .role -}}
{{- if .root.Values.metrics.serviceMonitor.enabled }}
apiVersion: v1
kind: Service
metadata:
  name: {{ printf "%s-%s-metrics" (include "tns.fullname" .root) .role }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "tns.componentLabels" $ctx | nindent 4 }}
    tns.metrics: "true"
spec:
  clusterIP: None
  ports:
    - name: metrics
      port: {{ .root.Values.ports.metrics }}
      targetPort: metrics
      protocol: TCP
  selector:
    {{- include "tns.componentSelectorLabels" $ctx | nindent 4 }}
{{- end }}
{{- end -}}

{{/*
One egress rule as a one-item YAML list: (dict "ports" [n…] "to" [peers] "udp" bool). Empty ports:
every port; empty to: every destination.
*/}}
{{- define "tns.egressRule" -}}
{{- $rule := dict -}}
{{- $ports := list -}}
{{- range .ports -}}
{{- $ports = append $ports (dict "port" (int .) "protocol" "TCP") -}}
{{- end -}}
{{- if .udp -}}
{{- range .ports -}}
{{- $ports = append $ports (dict "port" (int .) "protocol" "UDP") -}}
{{- end -}}
{{- end -}}
{{- if $ports -}}
{{- $_ := set $rule "ports" $ports -}}
{{- end -}}
{{- with .to -}}
{{- $_ := set $rule "to" . -}}
{{- end -}}
{{- toYaml (list $rule) -}}
{{- end -}}


{{/*
The PromQL label matchers of one role's series as the ServiceMonitor scrapes them: the target's
namespace, and the job Prometheus names after the role's metrics Service.
(dict "root" $ "role" "api").
*/}}
{{- define "tns.metricsMatchers" -}}
{{- printf "namespace=%q,job=%q" .root.Release.Namespace (printf "%s-%s-metrics" (include "tns.fullname" .root) .role) -}}
{{- end -}}
