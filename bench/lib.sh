# Sourced by the benchmark scripts (`. "$(dirname "$0")/lib.sh"`): strict mode and the
# repository's root as the directory, the build to measure, and the smoke mode.
#
# TNS_BENCH_SMOKE=1 runs a benchmark for seconds on tiny sizes with the debug build the tests
# already made, so CI notices a benchmark that no longer runs (bench/smoke.sh runs them all).
# Its figures mean nothing; no benchmark asserts a figure either way.

# Strict, and run from the repository's root whatever the caller's directory.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

SMOKE=${TNS_BENCH_SMOKE:-0}
if [ "$SMOKE" = 1 ]; then
  PROFILE=debug
else
  PROFILE=release
fi
# Where cargo puts the build: CARGO_TARGET_DIR when set (a shared target directory), else ./target.
BUILD=${CARGO_TARGET_DIR:-target}/$PROFILE

# Where the benchmarks write their logs and reports (ignored by git).
OUT=bench/out
mkdir -p "$OUT"

# need COMMAND HINT: stop unless COMMAND is installed (HINT says how to get it).
need() {
  command -v "$1" >/dev/null || { echo "$1 is required: $2" >&2; exit 1; }
}

# bench_build CARGO_ARGS... : build in the benchmark's profile (quietly).
bench_build() {
  if [ "$PROFILE" = release ]; then
    cargo build --release -q "$@"
  else
    cargo build -q "$@"
  fi
}

# bench_tns [CARGO_ARGS...]: build the tns binary (and the packages named) and set BIN to it.
bench_tns() {
  bench_build -p tns "$@"
  BIN=$BUILD/tns
}

# bench_rust NAME "SMOKE ARGS" ARGS...: run the Rust benchmark bench-NAME (bench/NAME.rs) with
# ARGS, or with SMOKE ARGS in smoke mode. The sandbox plugin is built beside it: the scheduler
# it runs loads its plugins from next to the binary (the default TNS_ADAPTER_DIR).
bench_rust() {
  local name=$1 args
  read -ra args <<<"$2"
  shift 2
  [ "$SMOKE" = 1 ] || args=("$@")
  bench_build -p tns-adapter-sandbox -p tns-bench
  RUST_LOG=${RUST_LOG:-warn} "$BUILD/bench-$name" "${args[@]}"
}

# The same data key on every process of a benchmark (TNS_DATA_KEY is required by api and
# scheduler; benchmark data is not secret).
export TNS_DATA_KEY=${TNS_DATA_KEY:-$(printf '5e%.0s' $(seq 32))}

# bench_db DB: a fresh database DB, and the environment an API process of a benchmark runs
# with on it (a throw-away signing secret, no per-address limit to speak of, plain cookies,
# quiet logs; Redis keys under a prefix of this run).
bench_db() {
  psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS $1 WITH (FORCE)" >/dev/null
  psql -h 127.0.0.1 -U postgres -qc "CREATE DATABASE $1" >/dev/null
  export TNS_DATABASE_URL=postgres://postgres@127.0.0.1:5432/$1
  export TNS_REDIS_PREFIX="bench:$1:$$:"
  export TNS_SIGNING_SECRET=bench-signing-secret-0123456789abcdefghij
  export TNS_AUTH_RATE_LIMIT=100000000
  export TNS_COOKIE_SECURE=false
  export RUST_LOG=warn
}

# tns_start PORT LOG [ROLE]: start "$BIN ROLE" (default api) on 127.0.0.1:PORT in the background with the caller's
# environment, add its pid to TNS_PIDS (the caller's EXIT trap kills them) and wait for
# /healthz. A server that exits or never answers fails the benchmark, with the end of its log
# (where a configuration error names its variable) on stderr: otherwise the failure would
# surface later as an unexplained curl or wrk error, or not at all.
TNS_PIDS=()
tns_start() {
  local port=$1 log=$2 role=${3:-api} pid
  # Something already answering there would be measured instead of the server started here.
  if curl -s -o /dev/null "http://127.0.0.1:$port/healthz"; then
    echo "port $port is already in use; stop what serves it first" >&2
    exit 1
  fi
  TNS_LISTEN_ADDR=127.0.0.1:$port TNS_METRICS_ADDR=127.0.0.1:0 "$BIN" "$role" >"$log" 2>&1 &
  pid=$!
  TNS_PIDS+=("$pid")
  for _ in $(seq 1 300); do
    curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" && return 0
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "tns $role on port $port exited at start-up; end of $log:" >&2
      tail -n 20 "$log" >&2
      exit 1
    fi
    sleep 0.1
  done
  echo "tns $role on port $port did not answer /healthz within 30 s; end of $log:" >&2
  tail -n 20 "$log" >&2
  exit 1
}

# wrk_check FILE: fail unless the wrk run saved in FILE completed requests, all answered 2xx,
# without connection errors: a figure made of failures means nothing, and a smoke run must
# notice a server that broke or died. Timeouts are only reported (an overloaded 2-core
# machine may see a few in a long run).
wrk_check() {
  local f=$1 n non2xx errs
  n=$(awk '/ requests in / {print $1; exit}' "$f")
  if [ "${n:-0}" -le 0 ]; then
    echo "no request completed, see $f:" >&2
    cat "$f" >&2
    exit 1
  fi
  non2xx=$(awk '/Non-2xx/ {print $NF}' "$f")
  if [ -n "$non2xx" ]; then
    echo "$non2xx non-2xx answers, see $f" >&2
    exit 1
  fi
  # "Socket errors: connect 0, read 0, write 0, timeout 0"
  errs=$(awk '/Socket errors/ {gsub(",", ""); print $4 + $6 + $8; exit}' "$f")
  if [ "${errs:-0}" -gt 0 ]; then
    echo "$errs connection errors, see $f" >&2
    exit 1
  fi
  if grep -q 'Socket errors:.*timeout [1-9]' "$f"; then
    echo "note: $(grep -o 'timeout [0-9]*' "$f") in $f" >&2
  fi
  return 0
}

# load_args SECONDS CONNECTIONS "$@": a load benchmark's DURATION and CONNS, its first two
# arguments or these defaults.
load_args() {
  DURATION=${3:-$1}
  CONNS=${4:-$2}
}
