#!/usr/bin/env bash
# test/bench/queue-pages.sh: a queue table on gbtree and on btree, side by
# side (src/README, "VACUUM": an empty leaf that is its parent's last
# child).  ROWS int8 ids (and, for two-word keys, (tenant, id) with one
# tenant) in twin tables; the first 95% deleted and VACUUMed; then ROUNDS
# rounds of churn (15% of ROWS in at the top, as many of the oldest out,
# VACUUM).  After each phase: the pages `ORDER BY ... LIMIT 1` reads (its
# plan's shared buffers, index-only scan forced) and both indexes' sizes.
# Pages read and sizes do not depend on timing, so one run says it.
#
#   PGHOST=... PGPORT=... [PGUSER=...] test/bench/queue-pages.sh [ROWS [ROUNDS]] > out.md
#
# needs a server with gbtree installed; makes and drops database gbt_queue.
set -eu
ROWS=${1:-2000000}
ROUNDS=${2:-6}
DB=gbt_queue
P() { psql -X -q -v ON_ERROR_STOP=1 -At "$@"; }

P -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
P -d $DB -c "CREATE EXTENSION gbtree"
ver=$(P -d $DB -c "SELECT extversion FROM pg_extension WHERE extname = 'gbtree'")
pgv=$(P -d $DB -c "SELECT version()")

pages() {  # pages(table, order by)
    P -d $DB -c "SET enable_seqscan = off" -c "SET enable_bitmapscan = off" -c "SET jit = off" \
      -c "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) SELECT $2 FROM $1 ORDER BY $2 LIMIT 1" |
      python3 -c 'import json,sys; p=json.load(sys.stdin)[0]["Plan"]; print(p["Shared Hit Blocks"] + p["Shared Read Blocks"])'
}
size() { P -d $DB -c "SELECT pg_relation_size('$1') / 8192"; }
row() {  # row(phase)
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$1" \
        "$(pages q1_g id)" "$(pages q1_b id)" "$(size q1_g_idx)" "$(size q1_b_idx)" \
        "$(pages q2_g 't, id')" "$(pages q2_b 't, id')" "$(size q2_g_idx)" "$(size q2_b_idx)"
}

P -d $DB <<SQL
SET max_parallel_maintenance_workers = 0;
CREATE TABLE q1_g (id int8) WITH (autovacuum_enabled = off);
CREATE TABLE q1_b (id int8) WITH (autovacuum_enabled = off);
CREATE TABLE q2_g (t int4, id int8) WITH (autovacuum_enabled = off);
CREATE TABLE q2_b (t int4, id int8) WITH (autovacuum_enabled = off);
INSERT INTO q1_g SELECT g FROM generate_series(1, $ROWS) g;
INSERT INTO q1_b SELECT * FROM q1_g;
INSERT INTO q2_g SELECT 7, g FROM generate_series(1, $ROWS) g;
INSERT INTO q2_b SELECT * FROM q2_g;
CREATE INDEX q1_g_idx ON q1_g USING gbtree (id);
CREATE INDEX q1_b_idx ON q1_b USING btree (id);
CREATE INDEX q2_g_idx ON q2_g USING gbtree (t, id);
CREATE INDEX q2_b_idx ON q2_b USING btree (t, id);
DELETE FROM q1_g WHERE id <= $ROWS * 95 / 100;
DELETE FROM q1_b WHERE id <= $ROWS * 95 / 100;
DELETE FROM q2_g WHERE id <= $ROWS * 95 / 100;
DELETE FROM q2_b WHERE id <= $ROWS * 95 / 100;
SQL
P -d $DB -c "VACUUM q1_g" -c "VACUUM q1_b" -c "VACUUM q2_g" -c "VACUUM q2_b"

echo "# Queue tables: gbtree and btree side by side, $ROWS rows"
echo
echo "- command: \`test/bench/queue-pages.sh $ROWS $ROUNDS\`"
echo "- gbtree extension $ver, git revision $(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo '?') of this script; $pgv"
echo "- machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs"
echo "- settings: PostgreSQL's defaults (autovacuum off on the tables, so that each VACUUM is the script's)"
echo
echo "Pages read by \`ORDER BY key LIMIT 1\` (index-only scan; shared buffers hit or read) and index sizes in pages."
echo
echo "| phase | int8: gbtree read | btree read | gbtree size | btree size | (t, id): gbtree read | btree read | gbtree size | btree size |"
echo "|---|---|---|---|---|---|---|---|---|"
row "first 95% deleted, VACUUM"
step=$((ROWS * 15 / 100))
for r in $(seq 1 "$ROUNDS"); do
    P -d $DB <<SQL
DO \$\$ DECLARE base int8; BEGIN
  SELECT max(id) INTO base FROM q1_b;
  INSERT INTO q1_g SELECT g FROM generate_series(base + 1, base + $step) g;
  INSERT INTO q1_b SELECT g FROM generate_series(base + 1, base + $step) g;
  INSERT INTO q2_g SELECT 7, g FROM generate_series(base + 1, base + $step) g;
  INSERT INTO q2_b SELECT 7, g FROM generate_series(base + 1, base + $step) g;
  DELETE FROM q1_g WHERE id <= base + $step - $ROWS * 5 / 100;
  DELETE FROM q1_b WHERE id <= base + $step - $ROWS * 5 / 100;
  DELETE FROM q2_g WHERE id <= base + $step - $ROWS * 5 / 100;
  DELETE FROM q2_b WHERE id <= base + $step - $ROWS * 5 / 100;
END \$\$;
SQL
    P -d $DB -c "VACUUM q1_g" -c "VACUUM q1_b" -c "VACUUM q2_g" -c "VACUUM q2_b"
    row "after churn round $r ($((r * step)) rows in and out)"
done
same=$(P -d $DB -c "SELECT (SELECT min(id) FROM q1_g) = (SELECT min(id) FROM q1_b) AND (SELECT count(*) FROM q1_g) = (SELECT count(*) FROM q1_b) AND (SELECT min(id) FROM q2_g) = (SELECT min(id) FROM q2_b)")
chk=$(P -d $DB -c "SELECT gbtree_check('q1_g_idx', true), gbtree_check('q2_g_idx', true)" >/dev/null && echo passed)
echo
echo "Checked: the twins' least id and row counts equal ($same); gbtree_check(index, true) $chk."
P -d postgres -c "DROP DATABASE $DB"
