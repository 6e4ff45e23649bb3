#!/usr/bin/env bash
# test/bench/group-inserts.sh: an index on (tenant, ts), rows arriving in
# time order over TENANTS tenants, so each tenant's keys ascend inside the
# tree rather than at its right end; gbtree against its btree twin, the
# engines interleaved (the order alternating), REPEAT times:
#   1. N single-row INSERTs by pgbench (one transaction each): time, WAL
#      and the index's pages;
#   2. a rolling window: ROUNDS rounds of one INSERT ... SELECT of
#      ROUND_ROWS rows, the rows of the round before last deleted, VACUUM:
#      the index's pages at the end (VACUUM's page deletion and the
#      splits' reuse of deleted pages keep it bounded) and the time of
#      all rounds.
# Prints each run, the medians and their ratios, and checks that the
# twins hold the same rows.  Run against a server with gbtree installed:
#   PGHOST=... PGPORT=... test/bench/group-inserts.sh [TENANTS [N [ROUNDS [ROUND_ROWS [REPEAT]]]]]
set -eu
TENANTS=${1:-50}
N=${2:-30000}
ROUNDS=${3:-10}
ROUND_ROWS=${4:-6000}
REPEAT=${5:-3}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
psql -qX -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS gbtree"
for t in g b; do
    echo "INSERT INTO gi_$t SELECT n % $TENANTS, '2026-01-01 00:00:00+00'::timestamptz + make_interval(secs => n), n FROM nextval('gi_${t}_seq') n;" > "$DIR/$t.sql"
done
chmod -R a+rX "$DIR"

median() { sort -n | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
spread() { sort -n "$1" | awk '{v[NR] = $1} END {printf "%s-%s", v[1], v[NR]}'; }

setup() {
    local t=$1 am=$2
    psql -qX -v ON_ERROR_STOP=1 <<SQL >/dev/null
SET client_min_messages = warning;
DROP TABLE IF EXISTS gi_$t;
DROP SEQUENCE IF EXISTS gi_${t}_seq;
CREATE SEQUENCE gi_${t}_seq;
CREATE TABLE gi_$t (tenant int4, ts timestamptz, n int8) WITH (autovacuum_enabled = off);
CREATE INDEX gi_${t}_idx ON gi_$t USING $am (tenant, ts);
CHECKPOINT;
SQL
}

echo "group-inserts: TENANTS=$TENANTS N=$N ROUNDS=$ROUNDS ROUND_ROWS=$ROUND_ROWS REPEAT=$REPEAT"
echo "server: $(psql -qXAt -c 'SELECT version()')"
echo "machine: $(nproc) CPUs, $(uname -m); git revision $(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo unknown)"
for r in $(seq "$REPEAT"); do
    if [ $((r % 2)) -eq 1 ]; then order="b g"; else order="g b"; fi
    for t in $order; do
        am=$([ $t = g ] && echo gbtree || echo btree)
        setup $t $am
        w0=$(psql -qXAt -c "SELECT pg_current_wal_lsn()")
        tps=$(pgbench -n -M prepared -t "$N" -f "$DIR/$t.sql" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p')
        out=$(psql -qXAt -c "SELECT pg_current_wal_lsn() - '$w0'::pg_lsn, pg_relation_size('gi_${t}_idx') / 8192")
        echo "run $r $am: $N single-row inserts $tps tps, WAL ${out%%|*} bytes, index ${out##*|} pages"
        echo "$tps" >> "$DIR/tps_$t"
        echo "${out%%|*}" >> "$DIR/wal_$t"
        echo "${out##*|}" >> "$DIR/pages_$t"
        psql -qXAt -c "SELECT md5(string_agg(tenant || ',' || ts, ';' ORDER BY tenant, ts)) FROM gi_$t" > "$DIR/sum1_$t"

        setup $t $am
        t0=$(date +%s%N)
        for k in $(seq "$ROUNDS"); do
            psql -qX -v ON_ERROR_STOP=1 <<SQL >/dev/null
INSERT INTO gi_$t SELECT g % $TENANTS, '2026-01-01 00:00:00+00'::timestamptz + make_interval(secs => g), g
  FROM generate_series($k * $ROUND_ROWS + 1, ($k + 1) * $ROUND_ROWS) g;
DELETE FROM gi_$t WHERE n <= ($k - 2) * $ROUND_ROWS;
VACUUM gi_$t;
SQL
        done
        ms=$(( ($(date +%s%N) - t0) / 1000000 ))
        pages=$(psql -qXAt -c "SELECT pg_relation_size('gi_${t}_idx') / 8192")
        echo "run $r $am: rolling window, $ROUNDS rounds in $ms ms, index $pages pages"
        echo "$ms" >> "$DIR/rms_$t"
        echo "$pages" >> "$DIR/rpages_$t"
        psql -qXAt -c "SELECT md5(string_agg(tenant || ',' || ts, ';' ORDER BY tenant, ts)) FROM gi_$t" > "$DIR/sum2_$t"
    done
done
for t in b g; do
    for m in tps wal pages rms rpages; do
        eval "${m}_$t=$(median < "$DIR/${m}_$t")"
    done
done
echo "median btree:  single-row $tps_b tps ($(spread "$DIR/tps_b")), WAL $wal_b, index $pages_b pages; rolling $rms_b ms ($(spread "$DIR/rms_b")), index $rpages_b pages"
echo "median gbtree: single-row $tps_g tps ($(spread "$DIR/tps_g")), WAL $wal_g, index $pages_g pages; rolling $rms_g ms ($(spread "$DIR/rms_g")), index $rpages_g pages"
awk -v a="$tps_g" -v b="$tps_b" -v wa="$wal_g" -v wb="$wal_b" -v pa="$pages_g" -v pb="$pages_b" \
    -v ra="$rms_g" -v rb="$rms_b" -v qa="$rpages_g" -v qb="$rpages_b" 'BEGIN {
    printf "gbtree/btree: single-row inserts tps %.2fx (above 1: gbtree faster), WAL %.2fx, index pages %.2fx; rolling window time %.2fx, index pages %.2fx\n",
        a / b, wa / wb, pa / pb, ra / rb, qa / qb }'
echo "same rows: single-row $(cmp -s "$DIR/sum1_g" "$DIR/sum1_b" && echo yes || echo NO), rolling $(cmp -s "$DIR/sum2_g" "$DIR/sum2_b" && echo yes || echo NO)"
psql -qX -c "DROP TABLE gi_g, gi_b" -c "DROP SEQUENCE gi_g_seq, gi_b_seq"
