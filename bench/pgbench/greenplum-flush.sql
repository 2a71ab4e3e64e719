-- What a 10,000-insert flush costs on Greenplum (or PostgreSQL), statement by statement, as psql
-- times them: BEGIN, the COPY, the positions' UPDATE where pgsink stores them last (Greenplum), COMMIT.
-- Three transactions without the UPDATE (a raw COPY), then three with it.
-- Usage: psql -h 127.0.0.1 -p 7000 -U gpadmin postgres -f bench/pgbench/greenplum-flush.sql
-- (awk writes the rows to /tmp/pgsink_flush_rows.csv on the client first). Creates and drops the
-- tables pgsink_flush_rows and pgsink_flush_offsets.
\timing on
DROP TABLE IF EXISTS pgsink_flush_rows;
DROP TABLE IF EXISTS pgsink_flush_offsets;
CREATE TABLE pgsink_flush_rows (id bigint PRIMARY KEY, qty int, label text, price numeric(12,2), active boolean);
CREATE TABLE pgsink_flush_offsets (sink_name text, source_partition text, source_offset text, updated_at timestamptz, PRIMARY KEY (sink_name, source_partition));
INSERT INTO pgsink_flush_offsets VALUES ('bench', 'p', '0', now());
\! awk 'BEGIN { for (i = 1; i <= 10000; i++) printf "%d,%d,\"label %d\",%d.%02d,t\n", i, i % 100, i, i % 1000, i % 100 }' > /tmp/pgsink_flush_rows.csv
\echo === raw COPY: BEGIN, COPY, COMMIT (three times)
BEGIN;
\copy pgsink_flush_rows FROM '/tmp/pgsink_flush_rows.csv' WITH (FORMAT csv)
COMMIT;
TRUNCATE pgsink_flush_rows;
BEGIN;
\copy pgsink_flush_rows FROM '/tmp/pgsink_flush_rows.csv' WITH (FORMAT csv)
COMMIT;
TRUNCATE pgsink_flush_rows;
BEGIN;
\copy pgsink_flush_rows FROM '/tmp/pgsink_flush_rows.csv' WITH (FORMAT csv)
COMMIT;
TRUNCATE pgsink_flush_rows;
\echo === with the positions: BEGIN, COPY, UPDATE, COMMIT (three times)
BEGIN;
\copy pgsink_flush_rows FROM '/tmp/pgsink_flush_rows.csv' WITH (FORMAT csv)
UPDATE pgsink_flush_offsets SET source_offset = '1', updated_at = now() WHERE sink_name = 'bench' AND source_partition = 'p';
COMMIT;
TRUNCATE pgsink_flush_rows;
BEGIN;
\copy pgsink_flush_rows FROM '/tmp/pgsink_flush_rows.csv' WITH (FORMAT csv)
UPDATE pgsink_flush_offsets SET source_offset = '2', updated_at = now() WHERE sink_name = 'bench' AND source_partition = 'p';
COMMIT;
TRUNCATE pgsink_flush_rows;
BEGIN;
\copy pgsink_flush_rows FROM '/tmp/pgsink_flush_rows.csv' WITH (FORMAT csv)
UPDATE pgsink_flush_offsets SET source_offset = '3', updated_at = now() WHERE sink_name = 'bench' AND source_partition = 'p';
COMMIT;
TRUNCATE pgsink_flush_rows;
DROP TABLE pgsink_flush_rows;
DROP TABLE pgsink_flush_offsets;
\! rm /tmp/pgsink_flush_rows.csv
