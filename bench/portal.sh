#!/usr/bin/env bash
# Benchmark (not a test): the web portal's pages as Lighthouse scores them on first load, in
# Debian's chromium (headless, CHROME_PATH=/usr/bin/chromium), Lighthouse's default mobile
# profile (simulated slow 4G and CPU).
#
#   The dashboard, the new-vehicle form, the new-journey form and the journey editor (a
#   journey's page with its 20 passengers in the table) of a signed-in session (the session
#   cookie passed with --extra-headers) against the sign-in page in the same run: performance,
#   accessibility and best-practices scores (0-100) and total transfer bytes of each page,
#   each a ratio to the sign-in page's. Targets per page: performance >= 90,
#   accessibility >= 95, best practices >= 95, < 150 KB transferred.
#
# Each figure is the median of RUNS runs (default 3). Needs chromium, node and npm; installs
# Lighthouse from the npm registry once under ${TNS_BENCH_TOOLS:-/tmp/tns-bench-tools}.
# Usage: bench/portal.sh [runs]   (TNS_BENCH_SMOKE=1: the dashboard and the journey
# editor, one run each; see bench/lib.sh)
. "$(dirname "$0")/lib.sh"
RUNS=${1:-3}
PAGES=(/dashboard /vehicles/new /journeys/new /journeys/JOURNEY)
if [ "$SMOKE" = 1 ]; then
  RUNS=1
  PAGES=(/dashboard /journeys/JOURNEY)
fi
DB=tns_bench_portal
PORT=18191
OUT=bench/out/portal
mkdir -p "$OUT"
export CHROME_PATH=${CHROME_PATH:-/usr/bin/chromium}
[ -x "$CHROME_PATH" ] || { echo "chromium is required: apt-get install chromium" >&2; exit 1; }
need npm "apt-get install npm"

LH_VERSION=12.8.2
TOOLS=${TNS_BENCH_TOOLS:-/tmp/tns-bench-tools}/lighthouse
LH=$TOOLS/node_modules/.bin/lighthouse
if [ ! -x "$LH" ] || [ "$("$LH" --version)" != "$LH_VERSION" ]; then
  echo "installing lighthouse $LH_VERSION under $TOOLS" >&2
  mkdir -p "$TOOLS"
  [ -f "$TOOLS/package.json" ] || echo '{"private": true}' >"$TOOLS/package.json"
  (cd "$TOOLS" && npm install --silent --no-audit --no-fund "lighthouse@$LH_VERSION")
fi

bench_tns
bench_db "$DB"
PROFILES=()
trap 'kill "${TNS_PIDS[@]}" 2>/dev/null || true; rm -rf "${PROFILES[@]}"' EXIT
tns_start $PORT "$OUT/tns.log"
ROOT=http://127.0.0.1:$PORT

# An organization and its owner's session (the cookie the portal's pages take).
KEY=$(curl -sf "$ROOT/api/v1/auth/register" -H 'content-type: application/json' \
  -d '{"organization_name":"Bench","tax_number":"1234567890","full_name":"B","email":"bench@example.com","password":"benchmark"}' \
  | sed -nE 's/.*"api_key":"([^"]+)".*/\1/p')
[ -n "$KEY" ] || { echo "registration failed" >&2; exit 1; }
# A journey with 20 passengers for the editor (what a dispatcher's bus looks like).
api() { curl -sf "$ROOT/api/v1$1" -H "Authorization: Bearer $KEY" -H 'content-type: application/json' -d "$2"; }
api /portal/vehicles '{"plate":"34BEN001","vehicle_type":"otobus","capacity":46}' >/dev/null \
  || { echo "creating the vehicle failed" >&2; exit 1; }
JOURNEY=$(api /portal/journeys '{"vehicle_id":"34BEN001","trip_kind":"tarifesiz",
  "departure":{"date":"2026-12-01","time":"08:30","district_id":"1421"},
  "arrival":{"date":"2026-12-01","time":"20:15","district_id":"1219"}}' | sed -nE 's/.*"id":([0-9]+).*/\1/p')
[ -n "$JOURNEY" ] || { echo "creating the journey failed" >&2; exit 1; }
PASSENGERS=$(python3 - <<'PY'
import json
def tckn(n):
    base = f"{100000000 + n:09d}"
    d = [int(c) for c in base]
    c1 = (10 - sum(x * (3 if i % 2 == 0 else 1) for i, x in enumerate(d))) % 10
    return f"{base}{c1}{(c1 + sum(d)) % 10}"
print(json.dumps({"passengers": [{"first_name": f"Yolcu{i}", "last_name": "Kaya", "identity_number": tckn(i),
    "gender": "E", "boarding_place_code": 1421, "destination_place_code": 1219, "seat_no": str(i + 1)} for i in range(20)]}))
PY
)
api "/portal/journeys/$JOURNEY/passengers:bulk-upsert" "$PASSENGERS" >/dev/null \
  || { echo "adding the passengers failed" >&2; exit 1; }
PAGES=("${PAGES[@]/JOURNEY/$JOURNEY}")
SESSION=$(curl -sf -D - -o /dev/null "$ROOT/api/v1/auth/login" -H 'content-type: application/json' \
  -d '{"email":"bench@example.com","password":"benchmark"}' | sed -nE 's/^set-cookie: (tns_session=[^;]+);.*/\1/ip' | head -n 1)
[[ $SESSION == tns_session=* ]] || { echo "signing in failed" >&2; exit 1; }
# A session that is not sent to the sign-in form would measure the redirect instead.
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "Cookie: $SESSION" -H 'Accept: text/html' "$ROOT/dashboard")" = 200 ] \
  || { echo "the session does not open the dashboard" >&2; exit 1; }

# lighthouse_run NAME PATH [HEADERS_JSON] -> OUT/NAME-N.json for N in 1..RUNS
lighthouse_run() {
  local name=$1 path=$2 headers=${3:-} profile i args
  for i in $(seq 1 "$RUNS"); do
    profile=$(mktemp -d /tmp/tns-bench-chromium.XXXXXX)
    PROFILES+=("$profile")
    # The machine has no internet: without these flags chromium waits on the network.
    args=(--quiet --output=json --output-path="$OUT/$name-$i.json"
      --only-categories=performance,accessibility,best-practices
      "--chrome-flags=--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking --disable-component-update --disable-sync --user-data-dir=$profile")
    [ -n "$headers" ] && args+=("--extra-headers=$headers")
    "$LH" "$ROOT$path" "${args[@]}" 2>"$OUT/$name-$i.log" || {
      echo "lighthouse failed on $path; end of $OUT/$name-$i.log:" >&2
      tail -n 20 "$OUT/$name-$i.log" >&2
      exit 1
    }
  done
}

# summary NAME -> "perf a11y best bytes" (medians over the runs); fails when a page did not load
# as itself (a runtime error, or the sign-in form instead of the page asked for).
summary() {
  node - "$OUT" "$1" "$RUNS" "$2" <<'JS'
const [dir, name, runs, path] = process.argv.slice(2);
const fs = require("fs");
const median = (xs) => { xs.sort((a, b) => a - b); return xs[Math.floor(xs.length / 2)]; };
const rows = [];
for (let i = 1; i <= Number(runs); i++) {
  const r = JSON.parse(fs.readFileSync(`${dir}/${name}-${i}.json`, "utf8"));
  if (r.runtimeError) { console.error(`${name}: ${r.runtimeError.code} ${r.runtimeError.message}`); process.exit(1); }
  if (!new URL(r.finalDisplayedUrl).pathname.startsWith(path)) {
    console.error(`${name}: ended on ${r.finalDisplayedUrl}, not ${path}`); process.exit(1);
  }
  const score = (c) => Math.round(r.categories[c].score * 100);
  rows.push([score("performance"), score("accessibility"), score("best-practices"),
    r.audits["total-byte-weight"].numericValue]);
  // What cost points, for whoever reads the output files.
  for (const [id, a] of Object.entries(r.audits)) {
    if (a.score !== null && a.score < 1 && a.scoreDisplayMode === "binary") console.error(`${name}: ${id}: ${a.title}`);
  }
}
console.log([0, 1, 2, 3].map((k) => median(rows.map((r) => r[k]))).join(" "));
JS
}

COOKIE_HEADERS="{\"Cookie\": \"$SESSION\"}"
lighthouse_run signin /login
figures=$(summary signin /login 2>"$OUT/signin-findings.txt") || { cat "$OUT/signin-findings.txt" >&2; exit 1; }
read -r B_PERF B_A11Y B_BEST B_BYTES <<<"$figures"
echo "baseline /login: performance $B_PERF, accessibility $B_A11Y, best practices $B_BEST, ${B_BYTES} bytes (median of $RUNS)"
for path in "${PAGES[@]}"; do
  name=$(echo "$path" | tr -c 'a-z0-9\n' '-' | sed 's/^-//; s/-$//')
  lighthouse_run "$name" "$path" "$COOKIE_HEADERS"
  figures=$(summary "$name" "$path" 2>"$OUT/$name-findings.txt") || { cat "$OUT/$name-findings.txt" >&2; exit 1; }
  read -r PERF A11Y BEST BYTES <<<"$figures"
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
  echo "$path: performance $PERF (x$(ratio "$PERF" "$B_PERF") of /login; target >= 90)," \
    "accessibility $A11Y (x$(ratio "$A11Y" "$B_A11Y"); target >= 95)," \
    "best practices $BEST (x$(ratio "$BEST" "$B_BEST"); target >= 95)," \
    "$BYTES bytes (x$(ratio "$BYTES" "$B_BYTES"); target < 153600), median of $RUNS"
  if [ -s "$OUT/$name-findings.txt" ]; then
    echo "  failed audits ($OUT/$name-findings.txt): $(cut -d: -f2 "$OUT/$name-findings.txt" | sort -u | tr '\n' ' ')"
  fi
done
