#!/usr/bin/env bash
# Benchmark (not a test): webhook deliveries per second through the scheduler against a plain
# reqwest loop posting the same bodies. See bench/webhooks.rs. Needs PostgreSQL locally.
# Usage: bench/webhooks.sh [events per round, default 20000] [rounds, default 9]
# (TNS_BENCH_SMOKE=1: see bench/lib.sh; one round of 300 events.)
. "$(dirname "$0")/lib.sh"
bench_rust webhooks "300 1" "$@"
