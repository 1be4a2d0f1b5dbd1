#!/usr/bin/env bash
# Run every benchmark in smoke mode (TNS_BENCH_SMOKE=1, see bench/lib.sh): seconds each, tiny
# sizes, the debug build. CI runs this after the tests, so a benchmark that no longer runs fails
# CI; the figures it prints mean nothing and nothing asserts them.
# Every benchmark runs even when an earlier one failed (one CI run shows all that are broken);
# the exit status is non-zero if any failed. Each output line starts with [benchmark].
set -euo pipefail
cd "$(dirname "$0")/.."

log() { echo "smoke: $*" >&2; }

apt_install() {
  log "installing $*"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq "$@" >/dev/null
}

command -v wrk >/dev/null 2>&1 || apt_install wrk
command -v curl >/dev/null 2>&1 || apt_install curl
command -v python3 >/dev/null 2>&1 || apt_install python3 # operations.sh writes its bulk bodies with it; soak.sh receives webhooks with it

# pgbench (operations.sh). Debian ships it with the server package, in
# /usr/lib/postgresql/<version>/bin, outside PATH; /usr/bin/pgbench is a wrapper that exists
# even when no pgbench is installed, so try running it rather than looking for it.
pgbench_ok() { pgbench --version >/dev/null 2>&1; }
find_pgbench() { # put the newest installed version's directory first on PATH
  local newest
  newest=$(printf '%s\n' /usr/lib/postgresql/*/bin/pgbench | sort -V | tail -n 1)
  if [ -x "$newest" ]; then PATH="$(dirname "$newest"):$PATH"; fi
}
pgbench_ok || find_pgbench
pgbench_ok || { apt_install postgresql-contrib && find_pgbench; }
pgbench_ok || { log "pgbench not found, even after installing postgresql-contrib"; exit 1; }
export PATH

export TNS_BENCH_SMOKE=1
failed=()
total_start=$(date +%s)
# portal.sh: Lighthouse in Debian's chromium.
if [ ! -x /usr/bin/chromium ]; then apt_install chromium; fi
command -v npm >/dev/null 2>&1 || apt_install npm

for bench in auth_quota operations submissions webhooks uetds soak portal; do
  log "bench/$bench.sh"
  start=$(date +%s)
  # Inside `if`, a failure does not stop this script; pipefail gives the benchmark's status.
  if "bench/$bench.sh" 2>&1 | sed -u "s/^/[$bench] /"; then
    log "bench/$bench.sh ran in $(($(date +%s) - start)) s"
  else
    log "bench/$bench.sh FAILED after $(($(date +%s) - start)) s"
    failed+=("$bench")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  log "failed: ${failed[*]}"
  exit 1
fi
log "all benchmarks ran in $(($(date +%s) - total_start)) s"
