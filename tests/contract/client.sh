#!/usr/bin/env bash
# Generate a Python client from the OpenAPI document TNS serves at BASE_URL, with the mainstream
# generator openapi-python-client, and drive a whole flow through it (client_flow.py): nothing
# hand-written between the client and the server. A generator warning about the document fails
# too: a document that needs excuses is not true enough.
#
# Usage: tests/contract/client.sh BASE_URL
set -euo pipefail
cd "$(dirname "$0")"
BASE=${1:?usage: client.sh BASE_URL}
VENV=${TNS_CLIENT_VENV:-/tmp/tns-client-venv}
GENERATOR_VERSION=0.29.1

if [ ! -x "$VENV/bin/openapi-python-client" ] \
  || ! "$VENV/bin/openapi-python-client" --version | grep -q "$GENERATOR_VERSION"; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "openapi-python-client==$GENERATOR_VERSION"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
curl -sf "$BASE/api/v1/openapi.json" -o "$work/openapi.json"
# No post-generation hooks (formatters): the code is used as generated.
# The reports are PDFs and the data exports ZIP archives: the generator reads binary bodies as
# `application/octet-stream` (a File).
printf 'post_hooks: []\nproject_name_override: tns-client\npackage_name_override: tns_client\ncontent_type_overrides:\n  application/pdf: application/octet-stream\n  application/zip: application/octet-stream\n' >"$work/config.yaml"
# --fail-on-warning: the generator itself exits non-zero when it had to skip or guess anything
# (an endpoint or model it could not read is left out, with only a warning otherwise); the grep
# below also catches anything it reports without failing.
"$VENV/bin/openapi-python-client" generate --path "$work/openapi.json" --config "$work/config.yaml" \
  --output-path "$work/tns-client" --overwrite --fail-on-warning >"$work/generate.log" 2>&1 \
  || { cat "$work/generate.log"; echo "client.sh: openapi-python-client failed on the document" >&2; exit 1; }
cat "$work/generate.log"
if grep -qi "warning\|error" "$work/generate.log"; then
  echo "client.sh: the generator had something to say about the document" >&2
  exit 1
fi
"$VENV/bin/pip" install -q --force-reinstall --no-deps "$work/tns-client"
"$VENV/bin/python" client_flow.py "$BASE/api/v1"
