#!/usr/bin/env bash
# Benchmark (not a test): the cost of authentication and quota metering per request.
#
#   1. Authenticated GET /api/v1/portal/me (API key lookup + one Redis quota script + 3 small
#      queries) against GET /healthz of the same server in the same run: throughput ratio,
#      target >= 0.5, and p99 latencies.
#   2. GET /api/v1/portal/me with metering on vs TNS_QUOTA_ENABLED=false: throughput ratio,
#      target >= 0.85, and how many metered calls one Redis script run counted.
#
# Needs wrk (apt-get install wrk), PostgreSQL and Redis on their default local ports.
# Usage: bench/auth_quota.sh [duration-seconds] [connections]   (TNS_BENCH_SMOKE=1: see bench/lib.sh)
. "$(dirname "$0")/lib.sh"
load_args 10 32 "$@"
WARMUP=2
[ "$SMOKE" = 1 ] && { DURATION=1; CONNS=4; WARMUP=1; }
DB=tns_bench_auth
PORT_ON=18181
PORT_OFF=18182

need wrk "apt-get install wrk"
bench_tns

bench_db "$DB"

# Servers started so far; stopped on any exit, also when the second one fails to start.
trap 'kill "${TNS_PIDS[@]}" 2>/dev/null || true' EXIT
TNS_QUOTA_ENABLED=true tns_start $PORT_ON "$OUT/tns-$PORT_ON.log"
TNS_QUOTA_ENABLED=false tns_start $PORT_OFF "$OUT/tns-$PORT_OFF.log"

KEY=$(curl -s "http://127.0.0.1:$PORT_ON/api/v1/auth/register" -H 'content-type: application/json' \
  -d '{"organization_name":"Bench","tax_number":"1234567890","full_name":"B","email":"bench@example.com","password":"benchmark"}' \
  | sed -E 's/.*"api_key":"([^"]+)".*/\1/')
[[ $KEY == sk_live_* ]] || { echo "registration failed: $KEY" >&2; exit 1; }
# Unlimited plan: the quota script still runs on every call, nothing is refused.
psql -h 127.0.0.1 -U postgres -d $DB -qc "UPDATE subscriptions SET plan_code = 'Y-999'" >/dev/null

# run <label> <url> [header] -> sets RPS and P99 (ms); fails on errors (see wrk_check)
run() {
  local args=(-t2 -c"$CONNS" -d"${DURATION}s" --latency)
  [ -n "${3:-}" ] && args+=(-H "$3")
  wrk "${args[@]}" "$2" >"$OUT/wrk-$1.txt"
  wrk_check "$OUT/wrk-$1.txt"
  RPS=$(awk '/^Requests\/sec/ {print $2}' "$OUT/wrk-$1.txt")
  P99=$(awk '$1=="99%" {v=$2; if (v ~ /us$/) {sub(/us/,"",v); v=v/1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v=v*1000}; print v}' "$OUT/wrk-$1.txt")
}

AUTH="Authorization: Bearer $KEY"
# Warm up caches and connection pools.
wrk -t1 -c4 -d${WARMUP}s -H "$AUTH" "http://127.0.0.1:$PORT_ON/api/v1/portal/me" >/dev/null
wrk -t1 -c4 -d${WARMUP}s -H "$AUTH" "http://127.0.0.1:$PORT_OFF/api/v1/portal/me" >/dev/null

run bare "http://127.0.0.1:$PORT_ON/healthz"
BARE_RPS=$RPS BARE_P99=$P99
# Redis's script runs during the metered run, against the calls it counted: the quota counts
# the calls of an organization that arrive together in one run.
evalsha() { redis-cli info commandstats | awk -F'[=,]' '/^cmdstat_evalsha:/ {print $2}'; }
RUNS_BEFORE=$(evalsha)
run me_quota_on "http://127.0.0.1:$PORT_ON/api/v1/portal/me" "$AUTH"
ME_RPS=$RPS ME_P99=$P99
RUNS=$(( $(evalsha) - ${RUNS_BEFORE:-0} ))
CALLS=$(awk '/ requests in / {print $1; exit}' "$OUT/wrk-me_quota_on.txt")
run me_quota_off "http://127.0.0.1:$PORT_OFF/api/v1/portal/me" "$AUTH"
OFF_RPS=$RPS OFF_P99=$P99

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
echo "connections=$CONNS duration=${DURATION}s (2 cores shared by wrk, tns, PostgreSQL and Redis)"
printf '%-36s %10s req/s  p99 %8s ms\n' "GET /healthz (bare)" "$BARE_RPS" "$BARE_P99"
printf '%-36s %10s req/s  p99 %8s ms\n' "GET /api/v1/portal/me (quota on)" "$ME_RPS" "$ME_P99"
printf '%-36s %10s req/s  p99 %8s ms\n' "GET /api/v1/portal/me (quota off)" "$OFF_RPS" "$OFF_P99"
echo "ratio authenticated/bare throughput: $(ratio "$ME_RPS" "$BARE_RPS") (target >= 0.5)"
echo "ratio quota on/off throughput:       $(ratio "$ME_RPS" "$OFF_RPS") (target >= 0.85)"
echo "metered calls per Redis script run:  $(ratio "$CALLS" "$((RUNS > 0 ? RUNS : 1))") ($RUNS runs for $CALLS calls)"
