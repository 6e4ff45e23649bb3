#!/usr/bin/env bash
# test/bench/prefix-join.sh: a join on the leading column of an index of
# two columns, as orders(customer_id, created_at) joined to a list of
# customers: ROWS orders of CUSTOMERS customers (about ROWS/CUSTOMERS
# rows each, in time order, so a customer's rows spread over the heap),
# a gbtree table and its btree twin with the same rows, each with its
# access method's index on (customer_id, created_at), then probe tables of
# PROBES customers (comma list) joined to each:
#   SELECT count(*), sum(o.amount) FROM probe p JOIN orders o ON o.customer_id = p.id
# under the planner's own plans (PostgreSQL's defaults: no enable_*), the
# engines interleaved REPEAT times, EXPLAIN (ANALYZE, TIMING OFF)'s
# execution time; prints the medians (min-max), their ratio, both plans
# and whether the answers agree.  Run against a server with gbtree
# installed:
#   PGHOST=... PGPORT=... test/bench/prefix-join.sh [ROWS [CUSTOMERS [PROBES [REPEAT]]]]
set -eu
ROWS=${1:-1000000}
CUSTOMERS=${2:-100000}
PROBES=${3:-100,1000,10000,100000}
REPEAT=${4:-7}
q() { psql -qXAt -v ON_ERROR_STOP=1 "$@"; }
q -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS gbtree"
for t in g b; do
    am=$([ $t = g ] && echo gbtree || echo btree)
    q <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS pj_$t;
CREATE TABLE pj_$t (id int8, customer_id int4, created_at timestamptz, amount numeric(10,2));
INSERT INTO pj_$t SELECT g, (hashint8(g) & 2147483647) % $CUSTOMERS,
       '2024-01-01 UTC'::timestamptz + g * interval '1 second', (g % 10000) / 100.0
  FROM generate_series(1, $ROWS) g;
CREATE INDEX pj_${t}_k ON pj_$t USING $am (customer_id, created_at);
VACUUM ANALYZE pj_$t;
SQL
done
for n in ${PROBES//,/ }; do
    q <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS pj_probe_$n;
CREATE TABLE pj_probe_$n AS SELECT (hashint4(g) & 2147483647) % $CUSTOMERS AS id FROM generate_series(1, $n) g;
VACUUM ANALYZE pj_probe_$n;
SQL
done
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)] " (" v[1] "-" v[NR] ")"}'; }
echo "prefix-join: ROWS=$ROWS CUSTOMERS=$CUSTOMERS PROBES=$PROBES REPEAT=$REPEAT; $(q -c 'SELECT version()' | cut -d, -f1)"
echo "gbtree index $(q -c "SELECT pg_relation_size('pj_g_k') / 8192") pages, btree $(q -c "SELECT pg_relation_size('pj_b_k') / 8192")"
echo
echo "| probe customers | rows joined | btree ms | gbtree ms | gbtree/btree | btree plan | gbtree plan | answers |"
echo "|---|---|---|---|---|---|---|---|"
for n in ${PROBES//,/ }; do
    : > /tmp/pj_g.$$; : > /tmp/pj_b.$$
    for r in $(seq "$REPEAT"); do
        if [ $((r % 2)) -eq 1 ]; then order="b g"; else order="g b"; fi
        for t in $order; do
            q -c "SET jit = off" -c "EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) SELECT count(*), sum(o.amount) FROM pj_probe_$n p JOIN pj_$t o ON o.customer_id = p.id" |
                grep -o '"Execution Time": [0-9.]*' | awk '{print $3}' >> /tmp/pj_$t.$$
        done
    done
    mb=$(median < /tmp/pj_b.$$); mg=$(median < /tmp/pj_g.$$)
    ratio=$(awk -v g="${mg%% *}" -v b="${mb%% *}" 'BEGIN {printf "%.2f", g / b}')
    plan() { q -c "SET jit = off" -c "EXPLAIN SELECT count(*), sum(o.amount) FROM pj_probe_$n p JOIN pj_$1 o ON o.customer_id = p.id" |
        grep -o "GbtreeJoin\|Hash Join\|Merge Join\|Nested Loop\|Index Scan\|Bitmap Heap Scan\|Seq Scan on pj_$1\|Index Only Scan" | sort -u | paste -sd+; }
    ag=$(q -c "SELECT count(*) || ' ' || sum(o.amount) FROM pj_probe_$n p JOIN pj_g o ON o.customer_id = p.id")
    ab=$(q -c "SELECT count(*) || ' ' || sum(o.amount) FROM pj_probe_$n p JOIN pj_b o ON o.customer_id = p.id")
    same=$([ "$ag" = "$ab" ] && echo same || echo "DIFFERENT: $ag / $ab")
    echo "| $n | ${ab%% *} | $mb | $mg | $ratio | $(plan b) | $(plan g) | $same |"
done
rm -f /tmp/pj_g.$$ /tmp/pj_b.$$
