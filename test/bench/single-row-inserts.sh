#!/usr/bin/env bash
# test/bench/single-row-inserts.sh: N single-row INSERTs by pgbench (one
# transaction each) into a table whose only index is gbtree's, or its
# btree twin's, for key patterns users have:
#   serial    int8 from a sequence (a non-unique index on an id or a
#             creation time: keys ascend at the tree's right end)
#   random    int8 drawn at random (keys land anywhere)
#   t50       (tenant int4, ts timestamptz), 50 tenants, rows in time
#             order: each tenant's keys ascend inside the tree
#   t1000     the same with 1,000 tenants
#   uuid      random uuid (two words)
#   fk        int4 of 1,000 values (a foreign key): 200,000 rows loaded
#             before CREATE INDEX, so the leaves are deduplicated (posting
#             form), then the inserts, of random values, go into them
#   fk2       (tenant int4, kind int4), 1,000 x 7 values, the same way
#             (multi-word posting leaves)
# For each: the WAL the inserts wrote (heap, index and commit records,
# pg_current_wal_insert_lsn before and after), the index's pages and the
# tps; the engines interleaved, the order alternating, REPEAT times;
# medians, min-max and ratios; the twins' rows compared.  Whether gbtree
# is preloaded decides how it logs (its own WAL records, or generic WAL:
# src/README, "WAL"), so that is printed.  Run against a server with gbtree
# installed:
#   PGHOST=... PGPORT=... test/bench/single-row-inserts.sh [PATTERNS [N [REPEAT]]]
set -eu
PATTERNS=${1:-serial,random,t50,t1000,uuid}
N=${2:-20000}
REPEAT=${3:-3}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
chmod a+rx "$DIR"
psql -qX -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS gbtree"

median() { sort -n | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
spread() { sort -n "$1" | awk '{v[NR] = $1} END {printf "%s-%s", v[1], v[NR]}'; }

# the table's columns, the index's, the INSERT of row :n, the rows' order,
# and rows loaded before CREATE INDEX (pre)
pattern() {
    pre=""
    case $1 in
        serial) cols="k int8"; icols="(k)"; ins="INSERT INTO @T@ SELECT nextval('@S@');"; ord="k";;
        random) cols="k int8"; icols="(k)"; ins="INSERT INTO @T@ VALUES ((random() * 9e18)::int8);"; ord="k";;
        t50|t1000)
            cols="tenant int4, ts timestamptz"; icols="(tenant, ts)"; ord="tenant, ts"
            ins="INSERT INTO @T@ SELECT n % ${1#t}, '2026-01-01 00:00:00+00'::timestamptz + make_interval(secs => n) FROM nextval('@S@') n;";;
        uuid) cols="k uuid"; icols="(k)"; ins="INSERT INTO @T@ VALUES (gen_random_uuid());"; ord="k";;
        fk) cols="k int4"; icols="(k)"; ord="k"
            pre="INSERT INTO @T@ SELECT g % 1000 FROM generate_series(1, 200000) g;"
            ins="INSERT INTO @T@ VALUES ((random() * 999)::int4);";;
        fk2) cols="tenant int4, kind int4"; icols="(tenant, kind)"; ord="tenant, kind"
            pre="INSERT INTO @T@ SELECT g % 1000, g % 7 FROM generate_series(1, 200000) g;"
            ins="INSERT INTO @T@ VALUES ((random() * 999)::int4, (random() * 6)::int4);";;
        *) echo "unknown pattern $1" >&2; exit 2;;
    esac
}

echo "single-row-inserts: PATTERNS=$PATTERNS N=$N REPEAT=$REPEAT"
echo "server: $(psql -qXAt -c 'SELECT version()')"
echo "shared_preload_libraries: '$(psql -qXAt -c 'SHOW shared_preload_libraries')'"
echo "machine: $(nproc) CPUs, $(uname -m); git revision $(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo unknown)"
for pat in ${PATTERNS//,/ }; do
    pattern "$pat"
    for r in $(seq "$REPEAT"); do
        if [ $((r % 2)) -eq 1 ]; then order="btree gbtree"; else order="gbtree btree"; fi
        for am in $order; do
            t=sri_$am
            psql -qX -v ON_ERROR_STOP=1 <<SQL >/dev/null
SET client_min_messages = warning;
DROP TABLE IF EXISTS $t;
DROP SEQUENCE IF EXISTS ${t}_seq;
CREATE SEQUENCE ${t}_seq;
CREATE TABLE $t ($cols) WITH (autovacuum_enabled = off);
${pre//@T@/$t}
CREATE INDEX ${t}_idx ON $t USING $am $icols;
CHECKPOINT;
SQL
            sql=${ins//@T@/$t}
            echo "${sql//@S@/${t}_seq}" > "$DIR/ins.sql"
            chmod a+r "$DIR/ins.sql"
            w0=$(psql -qXAt -c "SELECT pg_current_wal_insert_lsn()")
            tps=$(pgbench -n -M prepared -t "$N" -f "$DIR/ins.sql" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p')
            out=$(psql -qXAt -c "SELECT pg_current_wal_insert_lsn() - '$w0'::pg_lsn, pg_relation_size('${t}_idx') / 8192")
            wal=${out%%|*}
            pages=${out##*|}
            echo "$pat run $r $am: $tps tps, WAL $wal bytes ($((wal / N)) a row), index $pages pages"
            echo "$tps" >> "$DIR/${pat}_tps_$am"
            echo "$wal" >> "$DIR/${pat}_wal_$am"
            echo "$pages" >> "$DIR/${pat}_pages_$am"
            # the rows an index-order scan returns, for the twins' comparison
            # (random keys differ between the twins: counted only)
            if [ "$pat" = serial ] || [ "$pat" = t50 ] || [ "$pat" = t1000 ]; then
                psql -qXAt -c "SET enable_seqscan = off" -c "SET enable_bitmapscan = off" \
                    -c "SELECT count(*), md5(string_agg(($ord)::text, ';' ORDER BY $ord)) FROM $t" > "$DIR/${pat}_sum_$am"
            else
                psql -qXAt -c "SELECT count(*) FROM $t" > "$DIR/${pat}_sum_$am"
            fi
            [ "$am" = btree ] || psql -qXAt -c "SELECT gbtree_check('${t}_idx', true)" >/dev/null
        done
    done
    for am in btree gbtree; do
        printf "median %-6s %-6s: %s tps (%s), WAL %s bytes (%s), index %s pages (%s)\n" "$pat" "$am" \
            "$(median < "$DIR/${pat}_tps_$am")" "$(spread "$DIR/${pat}_tps_$am")" \
            "$(median < "$DIR/${pat}_wal_$am")" "$(spread "$DIR/${pat}_wal_$am")" \
            "$(median < "$DIR/${pat}_pages_$am")" "$(spread "$DIR/${pat}_pages_$am")"
    done
    awk -v p="$pat" -v tg="$(median < "$DIR/${pat}_tps_gbtree")" -v tb="$(median < "$DIR/${pat}_tps_btree")" \
        -v wg="$(median < "$DIR/${pat}_wal_gbtree")" -v wb="$(median < "$DIR/${pat}_wal_btree")" \
        -v pg="$(median < "$DIR/${pat}_pages_gbtree")" -v pb="$(median < "$DIR/${pat}_pages_btree")" \
        'BEGIN {printf "gbtree/btree %-6s: tps %.2fx (above 1: gbtree faster), WAL %.2fx, index pages %.2fx\n", p, tg / tb, wg / wb, pg / pb}'
    if cmp -s "$DIR/${pat}_sum_btree" "$DIR/${pat}_sum_gbtree"; then
        echo "same rows $pat: yes"
    else
        echo "same rows $pat: NO"; exit 1
    fi
done
psql -qX -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS sri_btree, sri_gbtree" -c "DROP SEQUENCE IF EXISTS sri_btree_seq, sri_gbtree_seq" >/dev/null
