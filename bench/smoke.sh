#!/usr/bin/env bash
# Run every benchmark in smoke mode (TNS_BENCH_SMOKE=1, see bench/lib.sh): seconds each, tiny
# sizes, the debug build. CI runs this after the tests, so a benchmark that no longer runs fails
# CI; the figures it prints mean nothing and nothing asserts them.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v wrk >/dev/null 2>&1; then
  echo "smoke: installing wrk" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null \
    || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
fi
if ! command -v pgbench >/dev/null 2>&1; then
  # Debian ships it with the server, outside PATH.
  for dir in /usr/lib/postgresql/*/bin; do [ -x "$dir/pgbench" ] && PATH="$PATH:$dir"; done
fi
command -v pgbench >/dev/null 2>&1 || {
  echo "smoke: installing postgresql-contrib (pgbench)" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-contrib >/dev/null
}

export TNS_BENCH_SMOKE=1
for bench in auth_quota operations submissions webhooks; do
  echo "== bench/$bench.sh (smoke)"
  start=$(date +%s)
  "bench/$bench.sh"
  echo "== bench/$bench.sh: ran in $(($(date +%s) - start)) s"
done
