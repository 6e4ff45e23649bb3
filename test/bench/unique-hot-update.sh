#!/usr/bin/env bash
# test/bench/unique-hot-update.sh: one key of a unique index updated
# over and over (each update a new index entry: the other indexed column
# changes), gbtree and btree twins interleaved, ROUNDS rounds of N updates
# each.  Run against a server with gbtree installed:
#   PGHOST=... PGPORT=... [KEY_TYPE=uuid|int8] test/bench/unique-hot-update.sh [ROUNDS [N]]
# Prints each round's pgbench latency and the unique indexes' sizes: the
# latency must stay flat as dead versions pile up (src/README, "Dead
# entries").  KEY_TYPE=uuid (the default) makes a multi-word index,
# int8 a one-word one.
set -eu
ROUNDS=${1:-3}
N=${2:-3000}
KEY_TYPE=${KEY_TYPE:-uuid}
case $KEY_TYPE in
    uuid) KEY_OF="md5(g::text)::uuid"; KEY7="md5('7')::uuid" ;;
    int8) KEY_OF="g"; KEY7="7" ;;
    *) echo "KEY_TYPE: uuid or int8" >&2; exit 2 ;;
esac
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
psql -qX -v ON_ERROR_STOP=1 <<SQL
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
DROP TABLE IF EXISTS hu_g, hu_b;
CREATE TABLE hu_g (id $KEY_TYPE, n int8, pay int8) WITH (autovacuum_enabled = off);
CREATE TABLE hu_b (id $KEY_TYPE, n int8, pay int8) WITH (autovacuum_enabled = off);
INSERT INTO hu_g SELECT $KEY_OF, g, 0 FROM generate_series(1, 1000) g;
INSERT INTO hu_b SELECT * FROM hu_g;
CREATE UNIQUE INDEX hu_g_id ON hu_g USING gbtree (id);
CREATE INDEX hu_g_n ON hu_g USING gbtree (n);
CREATE UNIQUE INDEX hu_b_id ON hu_b (id);
CREATE INDEX hu_b_n ON hu_b (n);
SQL
for t in g b; do
    echo "UPDATE hu_$t SET n = n + 1000 WHERE id = $KEY7;" > "$DIR/$t.sql"
done
chmod -R a+rX "$DIR"
for r in $(seq "$ROUNDS"); do
    for t in b g; do
        lat=$(pgbench -n -M prepared -t "$N" -f "$DIR/$t.sql" 2>/dev/null | sed -n 's/^latency average = //p')
        echo "round $r $( [ $t = g ] && echo gbtree || echo btree ): $lat per update"
    done
done
psql -qXAt -c "SELECT 'index pages: gbtree ' || pg_relation_size('hu_g_id') / 8192 || ', btree ' || pg_relation_size('hu_b_id') / 8192"
psql -qX -c "DROP TABLE hu_g, hu_b"
