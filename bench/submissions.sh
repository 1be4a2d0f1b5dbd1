#!/usr/bin/env bash
# Benchmark (not a test): the submission pipeline — scheduler throughput against a raw loop of
# the same claim/complete statements, and submit-to-delivered latency. See bench/submissions.rs.
# Needs PostgreSQL and Redis on their default local ports.
# Usage: bench/submissions.sh [submissions, default 20000] [latency samples, default 200]
# (TNS_BENCH_SMOKE=1: see bench/lib.sh; 300 submissions, 5 samples.)
. "$(dirname "$0")/lib.sh"
bench_rust submissions "300 5" "$@"
