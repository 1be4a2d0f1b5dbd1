#!/usr/bin/env python3
"""Print the reference-data migration (provinces, districts, airports) from U-ETDS's
MERNIS list, to check it against a new list:
`python3 scripts/gen_reference_migration.py locations.json > /tmp/ref.sql && diff /tmp/ref.sql
migrations/20261122000002_reference_data.sql` (a changed list goes into a new migration).
The ids are the downstream's own codes, so they are stored as given."""
import json
import sys
from pathlib import Path

MIGRATION = Path(__file__).resolve().parent.parent / "migrations" / "20261122000002_reference_data.sql"

rows = json.load(open(sys.argv[1], encoding="utf-8"))
q = lambda s: "'" + s.replace("'", "''") + "'"
cities = sorted({(int(r["city_code"]), r["city"]) for r in rows})
districts = sorted((int(r["district_code"]), int(r["city_code"]), r["district"], r["kind"]) for r in rows)
assert len({c for c, _ in cities}) == len(cities) == 81
assert len({d[0] for d in districts}) == len(districts)

# The schema part (comments, tables, index) is the migration's own, as applied: a migration
# never changes once released, so only its rows are generated.
with open(MIGRATION, encoding="utf-8") as f:
    print(f.read().split("INSERT INTO", 1)[0], end="")
print("INSERT INTO ref_cities (id, name) VALUES")
print(",\n".join(f"    ({c}, {q(n)})" for c, n in cities) + ";\n")
print("INSERT INTO ref_districts (id, city_id, name, kind) VALUES")
print(",\n".join(f"    ({d}, {c}, {q(n)}, {q(k)})" for d, c, n, k in districts) + ";")
