#!/usr/bin/env bash
# Benchmark (not a test): webhook deliveries per second through the scheduler against a plain
# reqwest loop posting the same bodies. See bench/webhooks.rs. Needs PostgreSQL locally.
# Usage: bench/webhooks.sh [events per round, default 20000] [rounds, default 9]
set -euo pipefail
cd "$(dirname "$0")/.."
# The scheduler refuses to start without an adapter; the sandbox sits next to the binary.
cargo build --release -q -p tns-adapter-sandbox -p tns-bench
RUST_LOG=${RUST_LOG:-warn} cargo run --release -q -p tns-bench --bin bench-webhooks -- "$@"
