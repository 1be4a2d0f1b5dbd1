#!/usr/bin/env bash
# Benchmark (not a test): webhook deliveries per second through the scheduler against a plain
# reqwest loop posting the same bodies. See bench/webhooks.rs. Needs PostgreSQL locally.
# Usage: bench/webhooks.sh [events per round, default 20000] [rounds, default 9]
# (TNS_BENCH_SMOKE=1: see bench/lib.sh; one round of 300 events.)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
ARGS=("$@")
[ "$SMOKE" = 1 ] && ARGS=(300 1)
# The scheduler refuses to start without an adapter; the sandbox sits next to the binary.
bench_build -p tns-adapter-sandbox -p tns-bench
RUST_LOG=${RUST_LOG:-warn} "$BUILD/bench-webhooks" "${ARGS[@]}"
