#!/usr/bin/env bash
# Benchmark (not a test): the operations data paths against PostgreSQL doing the same work raw.
#
#   1. POST /api/v1/portal/journeys throughput (wrk) against pgbench running the equivalent
#      single-row INSERT transaction at the same concurrency: ratio, target >= 0.7.
#   2. passengers:bulk-upsert of 1000 passengers, rows/s, against a raw
#      INSERT ... SELECT FROM unnest(...) of the same rows (psql): ratio, target >= 0.5.
#   3. GET /api/v1/portal/journeys first page, mean latency with 10 k journeys in the database
#      and again with 1 M (other organizations' rows included): ratio, target <= 1.5.
#
# Needs wrk and pgbench (apt-get install wrk postgresql-contrib), PostgreSQL and Redis on their
# default local ports. Usage: bench/operations.sh [duration-seconds] [connections]
# (TNS_BENCH_SMOKE=1: see bench/lib.sh; the tables then hold 200 and 2000 journeys.)
. "$(dirname "$0")/lib.sh"
load_args 10 16 "$@"
ROUNDS=20
SMALL=10000
BIG=1000000
WARMUP=2
[ "$SMOKE" = 1 ] && { DURATION=1; CONNS=4; ROUNDS=2; SMALL=200; BIG=2000; WARMUP=1; }
DB=tns_bench_ops
PORT=18191
PSQL=(psql -h 127.0.0.1 -U postgres -qAt)

need wrk "apt-get install wrk"
need pgbench "apt-get install postgresql-contrib"
bench_tns

bench_db "$DB"
export TNS_DB_MAX_CONNECTIONS=$CONNS
trap 'kill "${TNS_PIDS[@]}" 2>/dev/null || true' EXIT
tns_start $PORT "$OUT/tns-ops.log"
API=http://127.0.0.1:$PORT/api/v1
db() { "${PSQL[@]}" -d "$DB" "$@"; }

KEY=$(curl -s "$API/auth/register" -H 'content-type: application/json' \
  -d '{"organization_name":"Bench","tax_number":"1234567890","full_name":"B","email":"ops@example.com","password":"benchmark"}' \
  | sed -E 's/.*"api_key":"([^"]+)".*/\1/')
[[ $KEY == sk_live_* ]] || { echo "registration failed: $KEY" >&2; exit 1; }
db -c "UPDATE subscriptions SET plan_code = 'Y-999'" >/dev/null
ORG=$(db -c "SELECT id FROM organizations LIMIT 1")
VEHICLE=$(curl -s "$API/portal/vehicles" -H "Authorization: Bearer $KEY" -H 'content-type: application/json' \
  -d '{"plate":"34BEN001","vehicle_type":"otobus"}' | sed -E 's/.*"id":([0-9]+).*/\1/')
[[ $VEHICLE =~ ^[0-9]+$ ]] || { echo "vehicle creation failed: $VEHICLE" >&2; exit 1; }
# A non-scheduled trip: the same row as the raw INSERT below (no context to store).
JOURNEY_BODY='{"vehicle_id":"'$VEHICLE'","trip_kind":"tarifesiz","departure":{"date":"2026-12-01","time":"08:30","district_id":"1421"},"arrival":{"date":"2026-12-01","time":"20:15","district_id":"1219"}}'

# --- 1. journey creation vs pgbench -------------------------------------------------------
cat >"$OUT/post_journey.lua" <<LUA
wrk.method = "POST"
wrk.body = '$JOURNEY_BODY'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $KEY"
LUA
cat >"$OUT/insert_journey.sql" <<SQL
INSERT INTO journeys (org_id, vehicle_ref, plate, vehicle_record_id, departure_date, departure_time, departure_district_id,
                      arrival_date, arrival_time, arrival_district_id, trip_kind)
VALUES ($ORG, '$VEHICLE', '34BEN001', $VEHICLE, '2026-12-01', '08:30', 1421, '2026-12-01', '20:15', 1219, 'tarifesiz')
RETURNING *;
SQL
wrk -t2 -c4 -d${WARMUP}s -s "$OUT/post_journey.lua" "$API/portal/journeys" >/dev/null # warm-up
wrk -t2 -c"$CONNS" -d"${DURATION}s" -s "$OUT/post_journey.lua" "$API/portal/journeys" >"$OUT/wrk-post-journey.txt"
wrk_check "$OUT/wrk-post-journey.txt"
API_RPS=$(awk '/^Requests\/sec/ {print $2}' "$OUT/wrk-post-journey.txt")
pgbench -h 127.0.0.1 -U postgres -n -M prepared -c "$CONNS" -j 2 -T "$DURATION" -f "$OUT/insert_journey.sql" "$DB" \
  >"$OUT/pgbench-journey.txt" 2>&1 || { echo "pgbench failed:" >&2; tail -n 20 "$OUT/pgbench-journey.txt" >&2; exit 1; }
PG_TPS=$(awk '/^tps/ {print $3; exit}' "$OUT/pgbench-journey.txt")

# --- 2. bulk upsert of 1000 passengers vs raw unnest INSERT --------------------------------
python3 - "$OUT" "$ORG" <<'PY'
import json, sys
out, org = sys.argv[1], sys.argv[2]
def tckn(n):
    base = f"{100000000 + n:09d}"
    d = [int(c) for c in base]
    c1 = (10 - sum(x * (3 if i % 2 == 0 else 1) for i, x in enumerate(d))) % 10
    return f"{base}{c1}{(c1 + sum(d)) % 10}"
rows = [{"first_name": "Ali", "last_name": "Kaya", "identity_number": tckn(i), "gender": "E",
         "boarding_place_code": 1421, "destination_place_code": 1219, "amount": 450.5, "seat_no": str(i % 60)}
        for i in range(1000)]
json.dump({"passengers": rows}, open(f"{out}/bulk.json", "w"))
arr = lambda xs, t: "ARRAY[" + ",".join(xs) + f"]::{t}[]"
q = lambda s: "'" + s + "'"
sql = ("INSERT INTO passengers (org_id, journey_id, first_name, last_name, identity_number, gender, nationality, "
       "boarding_place_code, destination_place_code, ticket_serial_no, ticket_issue_date, amount, seat_no, phone) "
       f"SELECT {org}, :J, * FROM unnest("
       + ", ".join([arr([q(r["first_name"]) for r in rows], "text"), arr([q(r["last_name"]) for r in rows], "text"),
                    arr([q(r["identity_number"]) for r in rows], "text"), arr([q("E")] * 1000, "text"),
                    arr(["NULL"] * 1000, "text"), arr(["1421"] * 1000, "int"), arr(["1219"] * 1000, "int"),
                    arr(["NULL"] * 1000, "text"), arr(["NULL"] * 1000, "date"), arr(["450.5"] * 1000, "float8"),
                    arr([q(r["seat_no"]) for r in rows], "text"), arr(["NULL"] * 1000, "text")])
       + ") ON CONFLICT (journey_id, identity_number) DO NOTHING;\n")
open(f"{out}/bulk_raw.sql.tmpl", "w").write(sql)
PY
new_journeys() { # n -> ids, one per line
  for _ in $(seq 1 "$1"); do
    curl -s "$API/portal/journeys" -H "Authorization: Bearer $KEY" -H 'content-type: application/json' -d "$JOURNEY_BODY" \
      | sed -E 's/^\{"id":([0-9]+).*/\1/'
    echo
  done
}
mapfile -t API_J < <(new_journeys $ROUNDS)
mapfile -t RAW_J < <(new_journeys $ROUNDS)
: >"$OUT/bulk_raw.sql"
for j in "${RAW_J[@]}"; do sed "s/:J/$j/" "$OUT/bulk_raw.sql.tmpl" >>"$OUT/bulk_raw.sql"; done
now() { date +%s.%N; }
T0=$(now)
for j in "${API_J[@]}"; do
  code=$(curl -s -o /dev/null -w '%{http_code}' "$API/portal/journeys/$j/passengers:bulk-upsert" \
    -H "Authorization: Bearer $KEY" -H 'content-type: application/json' --data-binary @"$OUT/bulk.json")
  [ "$code" = 200 ] || { echo "bulk upsert answered $code" >&2; exit 1; }
done
T1=$(now)
db -f "$OUT/bulk_raw.sql" >/dev/null
T2=$(now)
STORED=$(db -c "SELECT count(*) FROM passengers")
[ "$STORED" = $((2 * ROUNDS * 1000)) ] || { echo "expected $((2 * ROUNDS * 1000)) passengers, found $STORED" >&2; exit 1; }
API_ROWS=$(awk -v a="$T0" -v b="$T1" -v n=$ROUNDS 'BEGIN {printf "%.0f", n * 1000 / (b - a)}')
RAW_ROWS=$(awk -v a="$T1" -v b="$T2" -v n=$ROUNDS 'BEGIN {printf "%.0f", n * 1000 / (b - a)}')

# --- 3. first page with 10 k and with 1 M journeys ----------------------------------------
seed() { # org total: top the organization up to `total` journeys
  db -c "INSERT INTO journeys (org_id, vehicle_ref, plate, departure_date, departure_time, departure_district_id,
                               arrival_date, arrival_time, arrival_district_id, created_at, trip_kind)
         SELECT $1, '34BEN001', '34BEN001', DATE '2026-01-01' + (g % 300)::int, '08:00', 1421, DATE '2026-01-01' + (g % 300)::int,
                '18:00', 1219, now() - (g || ' seconds')::interval, 'tarifesiz'
           FROM generate_series(1, $2 - (SELECT count(*) FROM journeys WHERE org_id = $1)) g" >/dev/null
}
first_page() { # label -> mean latency in ms
  wrk -t1 -c1 -d${WARMUP}s -H "Authorization: Bearer $KEY" "$API/portal/journeys" >/dev/null
  wrk -t1 -c4 -d"${DURATION}s" --latency -H "Authorization: Bearer $KEY" "$API/portal/journeys" >"$OUT/wrk-list-$1.txt"
  wrk_check "$OUT/wrk-list-$1.txt" # exits this $(...) only: the assignment then fails the script
  awk '$1=="Latency" {v=$2; if (v ~ /us$/) {sub(/us/,"",v); v=v/1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v=v*1000}; print v; exit}' "$OUT/wrk-list-$1.txt"
}
# Start from an empty table: the rows the first two parts created would skew the sizes.
db -c "TRUNCATE journeys CASCADE" >/dev/null 2>&1
seed "$ORG" $SMALL
db -c "VACUUM ANALYZE journeys" >/dev/null
SMALL_N=$(db -c "SELECT count(*) FROM journeys")
SMALL_MS=$(first_page 10k)
# Grow to 1 M: the caller's organization to 100 k, 900 k more in 90 other organizations.
seed "$ORG" $((BIG / 10))
db -c "INSERT INTO organizations (name, tax_number) SELECT 'Other ' || g, lpad(g::text, 10, '0') FROM generate_series(1, 90) g" >/dev/null
db -c "INSERT INTO journeys (org_id, vehicle_ref, plate, departure_date, departure_time, departure_district_id,
                             arrival_date, arrival_time, arrival_district_id, trip_kind)
       SELECT o.id, '06OTH' || o.id, '06OTH' || o.id, DATE '2026-01-01' + (g % 300)::int, '08:00', 1421,
              DATE '2026-01-01' + (g % 300)::int, '18:00', 1219, 'tarifesiz'
         FROM organizations o, generate_series(1, 10000) g WHERE o.id <> $ORG
        LIMIT $BIG - (SELECT count(*) FROM journeys)" >/dev/null
db -c "VACUUM ANALYZE journeys" >/dev/null
BIG_N=$(db -c "SELECT count(*) FROM journeys")
BIG_MS=$(first_page 1m)

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
echo "connections=$CONNS duration=${DURATION}s (2 cores shared by the load generator, tns, PostgreSQL and Redis)"
printf '%-52s %10s /s\n' "POST /portal/journeys (wrk)" "$API_RPS"
printf '%-52s %10s /s\n' "pgbench single-row INSERT transaction" "$PG_TPS"
echo "ratio journey creation / pgbench insert:            $(ratio "$API_RPS" "$PG_TPS") (target >= 0.7)"
printf '%-52s %10s rows/s\n' "bulk-upsert, 1000 passengers x $ROUNDS calls" "$API_ROWS"
printf '%-52s %10s rows/s\n' "raw INSERT ... SELECT FROM unnest, same rows" "$RAW_ROWS"
echo "ratio bulk upsert / raw unnest insert:               $(ratio "$API_ROWS" "$RAW_ROWS") (target >= 0.5)"
printf '%-52s %10s ms\n' "GET /portal/journeys first page, $SMALL_N journeys" "$SMALL_MS"
printf '%-52s %10s ms\n' "GET /portal/journeys first page, $BIG_N journeys" "$BIG_MS"
echo "ratio list latency 1 M / 10 k:                       $(ratio "$BIG_MS" "$SMALL_MS") (target <= 1.5)"
