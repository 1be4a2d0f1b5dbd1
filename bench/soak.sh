#!/usr/bin/env bash
# Benchmark (not a test): a soak. One API process and one scheduler (sandbox plugin, zero delay)
# take mixed traffic for DURATION seconds at half the capacity measured at the start of the same
# run, with submissions and webhooks flowing to a local receiver:
#
#   - mixed traffic: wrk, per 10 requests 7 reads (GET /portal/me ×4, the first pages of
#     journeys, submissions and webhook deliveries) and 3 writes (POST /portal/journeys, then
#     POST …/submit of a journey created earlier; each emits a webhook event);
#   - capacity: that mix at full speed for CAPACITY seconds; the soak runs it paced (a Lua
#     delay() per request, on a monotonic clock) at half that rate, one wrk run per window;
#   - per window: requests, failures (non-2xx, socket errors, timeouts), p99, RSS of the api
#     and scheduler processes at the window's end, the queues' backlog;
#   - after it, waits (bounded) until every submission is final and every webhook delivery is
#     recorded delivered and received;
#   - where PostgreSQL's autovacuum is off (these machines: conf.d/90-ci.conf), vacuums the
#     tables the traffic churns once a window, beside the traffic and throttled like autovacuum:
#     a deployment has autovacuum, and without it the submission queue's dead index entries
#     pile up until the scheduler falls behind (seen: ≈ 139 submissions/s in, 110/s falling to
#     16/s out; see bench/README.md).
#
# Figures, as ratios of the same run: achieved rate / capacity (≈ 0.5), errors (target 0), RSS
# last window / second window (flat: within 10 %), p99 last / second window and max / median of
# the windows' p99s (stable), submissions delivered / submitted, deliveries received / expected.
# Exits non-zero when the run cannot happen, a request failed, or a submission or a webhook
# delivery was lost; never for RSS or p99 figures.
#
# Needs wrk and python3, PostgreSQL and Redis on their default local ports.
# Usage: bench/soak.sh [seconds, default 600] [connections, default 16]
# (TNS_BENCH_SMOKE=1: see bench/lib.sh; 10 s in 2 s windows.)
. "$(dirname "$0")/lib.sh"
load_args 600 16 "$@"
CAPACITY=10
WARMUP=3
DRAIN_TIMEOUT=300
# One-minute windows; a shorter run gets five.
WINDOW=60
[ "$DURATION" -lt 300 ] && WINDOW=$(((DURATION + 4) / 5))
[ "$SMOKE" = 1 ] && { DURATION=10; CONNS=4; CAPACITY=2; WARMUP=1; WINDOW=2; DRAIN_TIMEOUT=60; }
WINDOWS=$((DURATION / WINDOW))
[ "$WINDOWS" -ge 2 ] || { echo "the soak needs at least two windows of $WINDOW s" >&2; exit 1; }
THREADS=2
DB=tns_bench_soak
PORT=18201
SCHED_PORT=18202

need wrk "apt-get install wrk"
need python3 "the webhook receiver is a Python script"
# The scheduler loads the sandbox plugin from next to the binary (the default TNS_ADAPTER_DIR).
bench_tns -p tns-adapter-sandbox
[ -f "$BUILD/libtns_adapter_sandbox.so" ] || { echo "no $BUILD/libtns_adapter_sandbox.so" >&2; exit 1; }

bench_db "$DB"
# The receiver is plain http on loopback.
export TNS_WEBHOOK_ALLOW_PRIVATE=true TNS_WEBHOOK_ALLOW_HTTP=true
trap 'kill "${TNS_PIDS[@]}" 2>/dev/null || true' EXIT
tns_start $PORT "$OUT/soak-api.log"
API_PID=${TNS_PIDS[-1]}
API=http://127.0.0.1:$PORT/api/v1
db() { psql -h 127.0.0.1 -U postgres -qAt -d "$DB" "$@"; }

# --- the webhook receiver: answers 204 at once, counts deliveries and distinct event ids ---
rm -f "$OUT/soak-receiver.port"
python3 - "$OUT/soak-receiver.port" >"$OUT/soak-receiver.log" 2>&1 <<'PY' &
import http.server, json, os, sys, threading
lock, seen, total = threading.Lock(), set(), [0]
class Hook(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the scheduler's pooled client expects
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        with lock:
            total[0] += 1
            seen.add(self.headers.get("x-webhook-id"))
        self.send_response(204)
        self.end_headers()
    def do_GET(self):
        with lock:
            body = json.dumps({"received": total[0], "distinct": len(seen)}).encode()
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hook)
server.daemon_threads = True
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
server.serve_forever()
PY
TNS_PIDS+=($!)
for _ in $(seq 1 100); do [ -s "$OUT/soak-receiver.port" ] && break; sleep 0.1; done
[ -s "$OUT/soak-receiver.port" ] || { echo "the webhook receiver did not start:" >&2; cat "$OUT/soak-receiver.log" >&2; exit 1; }
HOOK=http://127.0.0.1:$(cat "$OUT/soak-receiver.port")
received() { curl -sf "$HOOK/count" | sed -E 's/.*"received": ([0-9]+).*/\1/'; }
distinct() { curl -sf "$HOOK/count" | sed -E 's/.*"distinct": ([0-9]+).*/\1/'; }

# --- the scheduler ------------------------------------------------------------------------
tns_start "$SCHED_PORT" "$OUT/soak-scheduler.log" scheduler
SCHED_PID=${TNS_PIDS[-1]}

# --- an organization on the unlimited plan, a vehicle, a driver, webhook subscriptions -----
KEY=$(curl -s "$API/auth/register" -H 'content-type: application/json' \
  -d '{"organization_name":"Soak","tax_number":"1234567890","full_name":"S","email":"soak@example.com","password":"benchmark"}' \
  | sed -E 's/.*"api_key":"([^"]+)".*/\1/')
[[ $KEY == sk_live_* ]] || { echo "registration failed: $KEY" >&2; exit 1; }
# Unlimited plan: metering runs on every call, nothing is refused.
db -c "UPDATE subscriptions SET plan_code = 'Y-999'" >/dev/null
# post PATH BODY -> the answer's "id"; fails unless the answer has one
post() {
  local a
  a=$(curl -s "$API$1" -H "Authorization: Bearer $KEY" -H 'content-type: application/json' -d "$2")
  [[ $a =~ \"id\":([0-9]+) ]] || { echo "POST $1 failed: $a" >&2; exit 1; }
  echo "${BASH_REMATCH[1]}"
}
VEHICLE=$(post /portal/vehicles '{"plate":"34SOAK01","vehicle_type":"otobus"}')
DRIVER=$(post /portal/personnel '{"identity_number":"10000000146","first_name":"Ali","last_name":"Kaya","gender":"E","role_type":"driver"}')
for event in journey.created submission.delivered submission.failed; do
  post /portal/webhooks '{"event_type":"'$event'","endpoint_url":"'$HOOK'/hook"}' >/dev/null
done
# An ordinary plate: the sandbox accepts at once.
JOURNEY_BODY='{"vehicle_id":"'$VEHICLE'","personnel_ids":['$DRIVER'],"trip_kind":"tarifesiz","departure":{"date":"2026-12-01","time":"08:30","district_id":"1421"},"arrival":{"date":"2026-12-01","time":"20:15","district_id":"1219"}}'

# --- the mixed traffic --------------------------------------------------------------------
# mixed_lua RATE: the wrk script; RATE 0 = full speed (no delay() at all, so wrk sends each
# request as soon as the previous answer is in, as in the other benchmarks).
mixed_lua() {
  cat <<LUA
-- Generated by bench/soak.sh. Per thread: a cycle of 10 requests; journeys created are
-- queued and submitted later by the same thread (the answer's id).
local key, journey_body = "$KEY", '$JOURNEY_BODY'
local cycle = {"me", "journeys", "me", "post", "submissions", "me", "submit", "journeys", "me", "events"}
local fixed, queue, head, tail, step = {}, {}, 1, 0, 0

-- wrk.format adds the Host header of the URL given to wrk.
local function get(path)
  return wrk.format("GET", path, {["Authorization"] = "Bearer " .. key})
end

function init(args)
  fixed.me = get("/api/v1/portal/me")
  fixed.journeys = get("/api/v1/portal/journeys?limit=20")
  fixed.submissions = get("/api/v1/portal/submissions?limit=20")
  fixed.events = get("/api/v1/portal/webhooks/events?limit=20")
  fixed.post = wrk.format("POST", "/api/v1/portal/journeys",
    {["Authorization"] = "Bearer " .. key, ["Content-Type"] = "application/json"}, journey_body)
end

local function submit()
  local id = queue[head]
  queue[head] = nil
  head = head + 1
  return wrk.format("POST", "/api/v1/portal/journeys/" .. id .. "/submit",
    {["Authorization"] = "Bearer " .. key}, "")
end

function request()
  step = step % #cycle + 1
  local what = cycle[step]
  -- A journey's answer may not be in yet when its submit's turn comes (another connection
  -- of this thread): then a read now, and the submit instead of the next creation.
  if what == "submit" then
    if head <= tail then return submit() end
    return fixed.me
  end
  if what == "post" and tail - head >= 1 then return submit() end
  return fixed[what]
end

function response(status, headers, body)
  -- Only a created journey's answer starts with its id (lists start with "data", /me with
  -- its user, a submit with "submission_id").
  local id = body:match('^{"id":(%d+)')
  if id and status == 201 then
    tail = tail + 1
    queue[tail] = id
  end
end
LUA
  if [ "$1" != 0 ]; then
    cat <<LUA

-- Pacing: each request takes the thread's next send slot (one every 1/rate per thread) and
-- waits for it, so the rate holds whatever the latency (within the connections' reach). Slots
-- more than a second late are dropped rather than caught up in a burst.
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } soak_timespec;
int clock_gettime(int clock, soak_timespec *ts);
]]
local ts = ffi.new("soak_timespec")
local interval = 1000 * $THREADS / $1
local next_slot = 0
local function now_ms()
  ffi.C.clock_gettime(1, ts) -- CLOCK_MONOTONIC
  return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end
function delay()
  local now = now_ms()
  if next_slot < now - 1000 then next_slot = now end
  local wait = next_slot - now
  next_slot = next_slot + interval
  if wait < 0 then return 0 end
  return wait
end
LUA
  fi
}

# wrk_stats FILE -> "requests rps non2xx socket_errors timeouts p99_ms" (0 where wrk prints nothing)
wrk_stats() {
  awk '
    / requests in / { n = $1 }
    /^Requests\/sec/ { rps = $2 }
    /Non-2xx/ { non = $NF }
    /Socket errors/ { gsub(",", ""); err = $4 + $6 + $8; to = $10 }
    $1 == "99%" { v = $2
      if (v ~ /us$/) { sub(/us/, "", v); v = v / 1000 } else if (v ~ /ms$/) { sub(/ms/, "", v) }
      else if (v ~ /m$/) { sub(/m/, "", v); v = v * 60000 } else if (v ~ /s$/) { sub(/s/, "", v); v = v * 1000 }
      p99 = v }
    END { printf "%d %.1f %d %d %d %.2f\n", n, rps, non, err, to, p99 }' "$1"
}
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
alive() {
  kill -0 "$API_PID" 2>/dev/null || { echo "tns api died; end of $OUT/soak-api.log:" >&2; tail -n 20 "$OUT/soak-api.log" >&2; exit 1; }
  kill -0 "$SCHED_PID" 2>/dev/null || { echo "tns scheduler died; end of $OUT/soak-scheduler.log:" >&2; tail -n 20 "$OUT/soak-scheduler.log" >&2; exit 1; }
}
# PostgreSQL's autovacuum keeps the queues' indexes clean in a deployment. Where it is off, the
# soak stands in for it: VACUUM (ANALYZE) of the churned tables, at most once per WINDOW and
# never two at once, in the background beside the traffic, with autovacuum's cost delay (2 ms)
# and cost limit (200, the default).
AUTOVACUUM=$(db -c "SHOW autovacuum")
CHURNED="submissions, submission_attempts, journeys, webhook_queue, webhook_claims, webhook_deliveries, webhook_events"
VACUUM_PID=
LAST_VACUUM=-100000
VACUUMS=0
vacuum_churned() {
  [ "$AUTOVACUUM" = off ] || return 0
  [ $((SECONDS - LAST_VACUUM)) -ge "$WINDOW" ] || return 0
  if [ -n "$VACUUM_PID" ] && kill -0 "$VACUUM_PID" 2>/dev/null; then return 0; fi
  db -c "SET vacuum_cost_delay = '2ms'" \
    -c "VACUUM (ANALYZE) $CHURNED" >/dev/null &
  VACUUM_PID=$! # left to finish on exit: it is short, and the next run drops the database
  LAST_VACUUM=$SECONDS
  VACUUMS=$((VACUUMS + 1))
}

# drain LABEL: wait, polling, until no submission is pending or unknown, no delivery is pending
# and the receiver has every delivery; returns 1 after DRAIN_TIMEOUT, saying what is left.
drain() {
  local t0=$SECONDS open hooks_open rec done_
  while :; do
    alive
    vacuum_churned
    open=$(db -c "SELECT count(*) FROM submissions WHERE state IN ('pending', 'unknown')")
    hooks_open=$(db -c "SELECT count(*) FROM webhook_deliveries WHERE state = 'pending'")
    done_=$(db -c "SELECT count(*) FROM webhook_deliveries WHERE state = 'delivered'")
    rec=$(received)
    [ "$open" = 0 ] && [ "$hooks_open" = 0 ] && [ "$rec" -ge "$done_" ] && return 0
    if [ $((SECONDS - t0)) -ge "$DRAIN_TIMEOUT" ]; then
      echo "$1: after ${DRAIN_TIMEOUT} s, $open submissions still open, $hooks_open deliveries pending, receiver has $rec of $done_ recorded delivered" >&2
      return 1
    fi
    sleep 0.5
  done
}

mixed_lua 0 >"$OUT/soak-full.lua"
wrk -t$THREADS -c"$CONNS" -d${WARMUP}s -s "$OUT/soak-full.lua" "http://127.0.0.1:$PORT" >"$OUT/soak-warmup.txt"
wrk_check "$OUT/soak-warmup.txt"
wrk -t$THREADS -c"$CONNS" -d${CAPACITY}s --latency -s "$OUT/soak-full.lua" "http://127.0.0.1:$PORT" >"$OUT/soak-capacity.txt"
wrk_check "$OUT/soak-capacity.txt"
read -r _ CAP_RPS _ _ _ CAP_P99 < <(wrk_stats "$OUT/soak-capacity.txt")
# The soak starts with empty queues (what the full-speed runs queued is delivered first) and,
# where autovacuum is off, clean tables.
drain "after the capacity run" || exit 1
if [ "$AUTOVACUUM" = off ]; then
  [ -n "$VACUUM_PID" ] && wait "$VACUUM_PID"
  db -c "VACUUM (ANALYZE) $CHURNED" >/dev/null
fi
TARGET=$(awk -v c="$CAP_RPS" 'BEGIN {printf "%.0f", c / 2}')
mixed_lua "$TARGET" >"$OUT/soak-paced.lua"

J0=$(db -c "SELECT count(*) FROM journeys")
S0=$(db -c "SELECT coalesce(max(id), 0) FROM submissions")
R0=$(received)
RSS_API0=$(rss_kb "$API_PID") RSS_SCHED0=$(rss_kb "$SCHED_PID")

echo "soak: ${DURATION}s in $WINDOWS windows of ${WINDOW}s, $CONNS connections, target $TARGET req/s"
echo "  (half of the capacity measured just before: $CAP_RPS req/s, p99 $CAP_P99 ms; 2 cores shared by wrk, tns, PostgreSQL, Redis and the receiver)"
echo "  RSS before the soak: api $((RSS_API0 / 1024)) MB, scheduler $((RSS_SCHED0 / 1024)) MB"
[ "$AUTOVACUUM" = off ] && echo "  autovacuum is off on this PostgreSQL: the soak vacuums the churned tables once a window instead"
# load: the 1-minute load average at the window's end (2 cores; another job on the machine shows).
printf '%6s %9s %8s %7s %6s %9s %10s %10s %9s %9s %9s %6s\n' window requests 'req/s' non2xx sockerr timeouts 'p99 ms' 'api MB' 'sched MB' 'sub open' 'hook open' load
REQ=() RPS=() P99=() RSS_API=() RSS_SCHED=()
ERRORS=0 TIMEOUTS=0 TIME=0
for w in $(seq 1 "$WINDOWS"); do
  f=$OUT/soak-window-$w.txt
  LAST_VACUUM=-100000 # one at each window's start
  vacuum_churned
  # Timeouts at 10 s: at half capacity an answer that slow is a failure, not load.
  wrk -t$THREADS -c"$CONNS" -d${WINDOW}s --timeout 10s --latency -s "$OUT/soak-paced.lua" "http://127.0.0.1:$PORT" >"$f"
  read -r n rps non err to p99 < <(wrk_stats "$f")
  api_kb=$(rss_kb "$API_PID" 2>/dev/null || echo 0) sched_kb=$(rss_kb "$SCHED_PID" 2>/dev/null || echo 0)
  alive
  [ "$n" -gt 0 ] || { echo "window $w: no request completed, see $f" >&2; cat "$f" >&2; exit 1; }
  open=$(db -c "SELECT count(*) FROM submissions WHERE state IN ('pending', 'unknown')")
  hooks_open=$(db -c "SELECT count(*) FROM webhook_deliveries WHERE state = 'pending'")
  printf '%6s %9s %8s %7s %6s %9s %10s %10.1f %9.1f %9s %9s %6s\n' "$w" "$n" "$rps" "$non" "$err" "$to" "$p99" \
    "$(awk -v k="$api_kb" 'BEGIN {print k / 1024}')" "$(awk -v k="$sched_kb" 'BEGIN {print k / 1024}')" "$open" "$hooks_open" \
    "$(cut -d' ' -f1 /proc/loadavg)"
  REQ+=("$n") RPS+=("$rps") P99+=("$p99") RSS_API+=("$api_kb") RSS_SCHED+=("$sched_kb")
  ERRORS=$((ERRORS + non + err)) TIMEOUTS=$((TIMEOUTS + to))
  TIME=$(awk -v t="$TIME" -v n="$n" -v r="$rps" 'BEGIN {print t + n / r}')
done

drain "after the soak" || true # the figures below say what was lost
SUBMITTED=$(db -c "SELECT count(*) FROM submissions WHERE id > $S0")
DELIVERED=$(db -c "SELECT count(*) FROM submissions WHERE id > $S0 AND state = 'delivered'")
FINAL=$(db -c "SELECT count(*) FROM submissions WHERE id > $S0 AND state IN ('delivered', 'failed')")
JOURNEYS=$(($(db -c "SELECT count(*) FROM journeys") - J0))
# One subscription per event type: one delivery per journey created and per submission that
# ended delivered or failed.
EXPECTED=$((JOURNEYS + FINAL))
RECEIVED=$(($(received) - R0))
HOOKS_FAILED=$(db -c "SELECT count(*) FROM webhook_deliveries WHERE state <> 'delivered'")
HOOKS_RETRIED=$(db -c "SELECT count(*) FROM webhook_deliveries WHERE attempts > 1")
DUPLICATES=$(($(received) - $(distinct)))

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "n/a"}'; }
total_req=0
for n in "${REQ[@]}"; do total_req=$((total_req + n)); done
ACHIEVED=$(awk -v n="$total_req" -v t="$TIME" 'BEGIN {printf "%.1f", n / t}')
P99_MAX=$(printf '%s\n' "${P99[@]}" | sort -g | tail -n 1)
P99_MED=$(printf '%s\n' "${P99[@]}" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}')
last=$((WINDOWS - 1))
echo
echo "rate achieved / capacity:          $(ratio "$ACHIEVED" "$CAP_RPS") ($ACHIEVED of $CAP_RPS req/s; target 0.5)"
echo "failed requests:                   $ERRORS non-2xx or socket errors, $TIMEOUTS timeouts (> 10 s) of $total_req (target 0)"
echo "RSS api, last / second window:     $(ratio "${RSS_API[$last]}" "${RSS_API[1]}") ($((RSS_API[1] / 1024)) -> $((RSS_API[last] / 1024)) MB; flat: within 0.90-1.10)"
echo "RSS scheduler, last / second:      $(ratio "${RSS_SCHED[$last]}" "${RSS_SCHED[1]}") ($((RSS_SCHED[1] / 1024)) -> $((RSS_SCHED[last] / 1024)) MB; flat: within 0.90-1.10)"
echo "p99 last / second window:          $(ratio "${P99[$last]}" "${P99[1]}") (${P99[1]} -> ${P99[$last]} ms)"
echo "p99 max / median of the windows:   $(ratio "$P99_MAX" "$P99_MED") (max $P99_MAX ms, median $P99_MED ms)"
echo "submissions delivered / submitted: $DELIVERED / $SUBMITTED ($((FINAL - DELIVERED)) failed)"
echo "webhooks received / expected:      $RECEIVED / $EXPECTED ($JOURNEYS journey.created + $FINAL submission.*; $HOOKS_RETRIED needed a retry, $DUPLICATES received twice)"
[ "$AUTOVACUUM" = off ] && echo "vacuums run by the soak (autovacuum off): $VACUUMS"

fail=0
[ "$ERRORS" -eq 0 ] && [ "$TIMEOUTS" -eq 0 ] || { echo "requests failed: see $OUT/soak-window-*.txt" >&2; fail=1; }
[ "$SUBMITTED" -gt 0 ] || { echo "no submission was made during the soak" >&2; fail=1; }
[ "$DELIVERED" = "$SUBMITTED" ] || { echo "$((SUBMITTED - DELIVERED)) submissions not delivered" >&2; fail=1; }
[ "$RECEIVED" -ge "$EXPECTED" ] && [ "$HOOKS_FAILED" = 0 ] \
  || { echo "webhooks lost: $RECEIVED received of $EXPECTED expected, $HOOKS_FAILED not delivered" >&2; fail=1; }
exit $fail
