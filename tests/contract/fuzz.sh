#!/usr/bin/env bash
# Fuzz the served OpenAPI document with schemathesis (every phase, the stateful one included)
# against a running TNS at BASE_URL; any finding fails. Every check runs but one,
# positive_data_acceptance ("schema-valid data is accepted"): rules JSON Schema cannot state —
# check digits beyond the formats the hooks teach, records that must exist (404), a record's
# state (409) — refuse data the document's schemas admit, by design.
#
# Each run draws a fresh random seed and prints it first: TNS_FUZZ_SEED=<seed> replays that run
# (with the same max-examples).
#
# It signs up an organization on the unlimited plan and authenticates as its owner's portal
# session (cookie + X-CSRF-Token): the fuzzer revokes API keys and changes plans as it explores,
# and a session survives both. Logout is left out: fuzzing it ends that session, and every
# later request would only meet 401 (tests/it/security.rs tests it).
#
# Usage: tests/contract/fuzz.sh BASE_URL [max-examples]
set -euo pipefail
cd "$(dirname "$0")"
BASE=${1:?usage: fuzz.sh BASE_URL [max-examples]}
EXAMPLES=${2:-${TNS_FUZZ_EXAMPLES:-25}}
SEED=${TNS_FUZZ_SEED:-$(python3 -c 'import secrets; print(secrets.randbits(63))')}
echo "schemathesis seed: $SEED (replay with TNS_FUZZ_SEED=$SEED TNS_FUZZ_EXAMPLES=$EXAMPLES)"
VENV=${TNS_FUZZ_VENV:-/tmp/tns-fuzz-venv}
ST_VERSION=4.32.5

if [ ! -x "$VENV/bin/st" ] || ! "$VENV/bin/st" --version | grep -q "$ST_VERSION"; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "schemathesis==$ST_VERSION"
fi

api="$BASE/api/v1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
email="fuzz-$(date +%s)-$$@example.com"
curl -sf "$api/auth/register" -H 'content-type: application/json' \
  -d "{\"organization_name\":\"Fuzz\",\"tax_number\":\"1234567890\",\"full_name\":\"Fuzz\",\"email\":\"$email\",\"password\":\"correct horse\"}" \
  -o "$work/register.json"
key=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["api_key"])' "$work/register.json")
curl -sf "$api/portal/billing/subscription/change" -H "Authorization: Bearer $key" \
  -H 'content-type: application/json' -d '{"plan_code":"Y-999"}' >/dev/null
curl -sf -c "$work/jar" "$api/auth/login" -H 'content-type: application/json' \
  -d "{\"email\":\"$email\",\"password\":\"correct horse\"}" -o "$work/login.json"
csrf=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["csrf_token"])' "$work/login.json")
session=$(awk '$6 == "tns_session" {print $7}' "$work/jar")

"$VENV/bin/st" --config-file schemathesis.toml run "$api/openapi.json" --url "$api" \
  -H "Cookie: tns_session=$session" -H "X-CSRF-Token: $csrf" \
  --exclude-operation-id logout \
  --checks all --exclude-checks positive_data_acceptance --seed "$SEED" \
  --phases examples,coverage,fuzzing,stateful --max-examples "$EXAMPLES" \
  --suppress-health-check too_slow,filter_too_much
