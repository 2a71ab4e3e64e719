#!/usr/bin/env bash
# What the small-batch path's MERGE costs the server, statement against statement: one 100-row MERGE
# into a 500,000-row table per transaction (rolled back, so every transaction meets the same table),
# with the values bound as text arrays cast value by value, or as arrays of the columns' own types,
# each with and without the two SET LOCALs that turn hash and merge joins off. Server CPU is the
# postmaster's process tree's task-clock over the run (perf stat), divided by the transactions.
# The text arrays here are literals the server parses; pgjdbc sends pgsink's text arrays in binary,
# so this overstates what they cost a little.
#
# Usage: bench/pgbench/small-merge.sh [transactions per variant] [alternations]
# Needs: psql, pgbench and perf on the server's machine; PGHOST/PGPORT/PGUSER/PGDATABASE for the
# server (default 127.0.0.1:5432, postgres); POSTMASTER_PID if the data directory is not
# /var/lib/postgresql/15/main. Creates and drops the table pgsink_small_merge.
set -euo pipefail
transactions=${1:-4000}
alternations=${2:-3}
export PGHOST=${PGHOST:-127.0.0.1} PGUSER=${PGUSER:-postgres} PGDATABASE=${PGDATABASE:-postgres}
postmaster=${POSTMASTER_PID:-$(head -1 /var/lib/postgresql/15/main/postmaster.pid)}
dir=$(mktemp -d)
trap 'rm -rf "$dir"; psql -qc "DROP TABLE IF EXISTS pgsink_small_merge" >/dev/null' EXIT

psql -q <<'SQL'
DROP TABLE IF EXISTS pgsink_small_merge;
CREATE TABLE pgsink_small_merge (id bigint PRIMARY KEY, qty integer, label text, price numeric(12,2), active boolean);
INSERT INTO pgsink_small_merge SELECT g, g % 100, 'label ' || g, (g % 1000) / 7.0, g % 2 = 0 FROM generate_series(1, 500000) g;
VACUUM ANALYZE pgsink_small_merge;
SQL

# 100 rows: one in seven a delete, half of them keys new to the table; array literals by the server itself
IFS=$'\t' read -r flags ids qtys labels prices actives < <(psql -At -F $'\t' -c "
  SELECT quote_literal(array_agg(g % 7 <> 0 ORDER BY g)), quote_literal(array_agg(CASE WHEN g <= 50 THEN 600000 + g ELSE g * 4000 END ORDER BY g)),
         quote_literal(array_agg(g ORDER BY g)), quote_literal(array_agg('new label ' || g || ' with \"q\" \\ x' ORDER BY g)),
         quote_literal(array_agg(g * 1.25 ORDER BY g)), quote_literal(array_agg(true ORDER BY g))
  FROM generate_series(1, 100) g")

merge='MERGE INTO pgsink_small_merge AS t USING (SELECT * FROM rows ORDER BY id) AS s ON t.id = s.id
  WHEN MATCHED AND NOT s.ins THEN DELETE
  WHEN MATCHED THEN UPDATE SET qty = s.qty, label = s.label, price = s.price, active = s.active
  WHEN NOT MATCHED AND s.ins THEN INSERT (id, qty, label, price, active) VALUES (s.id, s.qty, s.label, s.price, s.active);'
text="WITH rows AS (SELECT u.c0::boolean AS ins, u.c1::bigint AS id, u.c2::integer AS qty, u.c3::text AS label, u.c4::numeric AS price, u.c5::boolean AS active
  FROM unnest($flags::text[], $ids::text[], $qtys::text[], $labels::text[], $prices::text[], $actives::text[]) AS u(c0, c1, c2, c3, c4, c5)) $merge"
typed="WITH rows AS (SELECT u.c0 AS ins, u.c1 AS id, u.c2 AS qty, u.c3 AS label, u.c4 AS price, u.c5 AS active
  FROM unnest($flags::boolean[], $ids::bigint[], $qtys::integer[], $labels::text[], $prices::numeric[], $actives::boolean[]) AS u(c0, c1, c2, c3, c4, c5)) $merge"
sets=$'SET LOCAL enable_hashjoin = off;\nSET LOCAL enable_mergejoin = off;'
printf 'BEGIN;\n%s\nROLLBACK;\n' "$(tr '\n' ' ' <<<"$text")" > "$dir/text.sql"
printf 'BEGIN;\n%s\n%s\nROLLBACK;\n' "$sets" "$(tr '\n' ' ' <<<"$text")" > "$dir/text-sets.sql"
printf 'BEGIN;\n%s\nROLLBACK;\n' "$(tr '\n' ' ' <<<"$typed")" > "$dir/typed.sql"
printf 'BEGIN;\n%s\n%s\nROLLBACK;\n' "$sets" "$(tr '\n' ' ' <<<"$typed")" > "$dir/typed-sets.sql"

for alternation in $(seq "$alternations"); do
  for variant in text text-sets typed typed-sets; do
    clock=$(perf stat -x, -e task-clock -p "$postmaster" -- pgbench -n -M prepared -t "$transactions" -f "$dir/$variant.sql" 2>&1 >"$dir/out" | awk -F, '/task-clock/ {print $1}')
    latency=$(awk '/latency average/ {print $4}' "$dir/out")
    printf 'alternation %d  %-10s  server CPU %.3f ms per transaction  latency %s ms\n' "$alternation" "$variant" "$(awk -v c="$clock" -v n="$transactions" 'BEGIN {print c / n}')" "$latency"
  done
done
