# Sourced by the benchmark scripts: the build to measure, and the smoke mode.
#
# TNS_BENCH_SMOKE=1 runs a benchmark for seconds on tiny sizes with the debug build the tests
# already made, so CI notices a benchmark that no longer runs (bench/smoke.sh runs them all).
# Its figures mean nothing; no benchmark asserts a figure either way.

SMOKE=${TNS_BENCH_SMOKE:-0}
if [ "$SMOKE" = 1 ]; then
  PROFILE=debug
else
  PROFILE=release
fi

# bench_build CARGO_ARGS... : build in the benchmark's profile (quietly).
bench_build() {
  if [ "$PROFILE" = release ]; then
    cargo build --release -q "$@"
  else
    cargo build -q "$@"
  fi
}

# The same data key on every process of a benchmark (TNS_DATA_KEY is required by api and
# scheduler; benchmark data is not secret).
export TNS_DATA_KEY=${TNS_DATA_KEY:-$(printf '5e%.0s' $(seq 32))}
