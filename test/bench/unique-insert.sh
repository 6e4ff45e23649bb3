#!/usr/bin/env bash
# test/bench/unique-insert.sh: inserts into a table whose key is a unique
# gbtree index (as a primary key would be: PostgreSQL makes constraints of
# btree indexes only, README.md), against its btree twin: ROWS rows by one INSERT ... SELECT
# (each row checked as it comes; the index batches the entries after the
# first, checked again at the statement's end) and N single-row
# INSERTs by pgbench, REPEAT times, the engines interleaved (the order
# alternating).  Prints each run's time and WAL, the medians and their
# ratio, and checks that both tables hold the same rows.  Run against a
# server with gbtree installed, as is (PostgreSQL's defaults) or with it
# preloaded:
#   PGHOST=... PGPORT=... [KEY_TYPE=uuid|int8] test/bench/unique-insert.sh [ROWS [REPEAT [N]]]
# KEY_TYPE=uuid (the default) makes a multi-word index, int8 a one-word
# one; keys arrive in an order unrelated to the key (md5 of the row
# number, or a scramble of it).
set -eu
ROWS=${1:-100000}
REPEAT=${2:-5}
N=${3:-20000}
KEY_TYPE=${KEY_TYPE:-uuid}
case $KEY_TYPE in
    uuid) KEY_OF="md5(g::text)::uuid"; KEY_NEW="md5(random()::text)::uuid" ;;
    int8) KEY_OF="hashint8(g) * 4294967296 + g"; KEY_NEW="(random() * 9e18)::int8" ;;
    *) echo "KEY_TYPE: uuid or int8" >&2; exit 2 ;;
esac
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
psql -qX -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS gbtree"
for t in g b; do
    # random new keys: a clash is as unlikely as a uuid's
    echo "INSERT INTO ui_$t VALUES ($KEY_NEW, 0, 'new row');" > "$DIR/$t.sql"
done
chmod -R a+rX "$DIR"

median() { sort -n | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "unique-insert: KEY_TYPE=$KEY_TYPE ROWS=$ROWS REPEAT=$REPEAT N=$N"
echo "gbtree preloaded: $(psql -qXAt -c "SELECT current_setting('shared_preload_libraries') LIKE '%gbtree%'")"
for r in $(seq "$REPEAT"); do
    if [ $((r % 2)) -eq 1 ]; then order="b g"; else order="g b"; fi
    for t in $order; do
        am=$([ $t = g ] && echo gbtree || echo btree)
        psql -qX -v ON_ERROR_STOP=1 <<SQL >/dev/null
SET client_min_messages = warning;
DROP TABLE IF EXISTS ui_$t;
CREATE TABLE ui_$t (id $KEY_TYPE NOT NULL, n int8, pay text) WITH (autovacuum_enabled = off);
CREATE UNIQUE INDEX ui_${t}_id ON ui_$t USING $am (id);
CHECKPOINT;
SQL
        out=$(psql -qXAt -v ON_ERROR_STOP=1 <<SQL
SELECT pg_current_wal_lsn() AS w0 \gset
SELECT clock_timestamp() AS t0 \gset
INSERT INTO ui_$t SELECT $KEY_OF, g, 'row ' || g FROM generate_series(1, $ROWS) g;
SELECT round(extract(epoch FROM clock_timestamp() - :'t0') * 1000, 1),
       pg_current_wal_lsn() - :'w0'::pg_lsn;
SQL
)
        ms=${out%%|*}
        wal=${out##*|}
        tps=$(pgbench -n -M prepared -t "$N" -f "$DIR/$t.sql" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p')
        echo "run $r $am: INSERT ... SELECT $ms ms, WAL $wal bytes; pgbench single-row inserts $tps tps"
        echo "$ms" >> "$DIR/ms_$t"
        echo "$wal" >> "$DIR/wal_$t"
        echo "$tps" >> "$DIR/tps_$t"
    done
done
for t in b g; do
    eval "ms_$t=$(median < "$DIR/ms_$t")"
    eval "wal_$t=$(median < "$DIR/wal_$t")"
    eval "tps_$t=$(median < "$DIR/tps_$t")"
done
echo "median btree:  INSERT ... SELECT $ms_b ms (min $(sort -n "$DIR/ms_b" | head -1), max $(sort -n "$DIR/ms_b" | tail -1)), WAL $wal_b bytes, $tps_b tps"
echo "median gbtree: INSERT ... SELECT $ms_g ms (min $(sort -n "$DIR/ms_g" | head -1), max $(sort -n "$DIR/ms_g" | tail -1)), WAL $wal_g bytes, $tps_g tps"
awk -v a="$ms_g" -v b="$ms_b" -v wa="$wal_g" -v wb="$wal_b" -v ta="$tps_g" -v tb="$tps_b" 'BEGIN {
    printf "gbtree/btree: INSERT ... SELECT time %.2fx, its WAL %.2fx; single-row insert tps %.2fx (above 1: gbtree faster)\n", a / b, wa / wb, ta / tb }'
same=$(psql -qXAt -c "SELECT (SELECT count(*) FROM ui_g WHERE n > 0) = (SELECT count(*) FROM ui_b WHERE n > 0)
    AND NOT EXISTS (SELECT id, n FROM ui_g WHERE n > 0 EXCEPT SELECT id, n FROM ui_b WHERE n > 0)")
echo "same rows (the INSERT ... SELECT's): $same"
psql -qXAt -c "SELECT 'index pages: gbtree ' || pg_relation_size('ui_g_id') / 8192 || ', btree ' || pg_relation_size('ui_b_id') / 8192"
psql -qX -c "DROP TABLE ui_g, ui_b"
[ "$same" = t ]
