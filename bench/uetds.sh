#!/usr/bin/env bash
# Benchmark (not a test): non-scheduled journeys notified to a fake U-ETDS answering each call
# after 50 ms, by one scheduler, as a ratio of the limit its adapter concurrency allows; CPU per
# journey. See bench/uetds.rs. Needs PostgreSQL and Redis on their default local ports.
# Usage: bench/uetds.sh [journeys, default 5000] [adapter concurrency, default 64]
# (TNS_BENCH_SMOKE=1: see bench/lib.sh; 100 journeys, concurrency 16.)
. "$(dirname "$0")/lib.sh"
ARGS=("$@")
[ "$SMOKE" = 1 ] && ARGS=(100 16)
# The plugins and the fake U-ETDS must sit next to the benchmark binary.
bench_build -p tns-adapter-sandbox -p tns-adapter-uetds
bench_build -p tns-uetds-fake -p tns-bench --bin uetds-sim --bin bench-uetds
RUST_LOG=${RUST_LOG:-warn} "$BUILD/bench-uetds" "${ARGS[@]}"
