#!/usr/bin/env bash
# test/bench/multiword-dedup.sh: index sizes of multi-word keys that repeat,
# gbtree against btree (each with its own deduplication, the default),
# ROWS rows: built by CREATE INDEX after the load, and built by the load
# itself (INSERT ... SELECT into a table indexed while empty, then a COPY
# of a quarter as many rows more).  Answers are compared on a sample of
# keys.  Run against a server with gbtree installed:
#   PGHOST=... PGPORT=... test/bench/multiword-dedup.sh [ROWS]
set -eu
ROWS=${1:-1000000}
q() { psql -qXAt -v ON_ERROR_STOP=1 "$@"; }
q -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS gbtree"
# name | columns | index columns | row expression
SHAPES=(
    "tenant_kind|tenant int4, kind int4|tenant, kind|g % 1000, g % 7"
    "uuid_fk|fk uuid|fk|md5((g / 10)::text)::uuid"
    "status_day|status int2, day date|status, day|(g % 5)::int2, '2024-01-01'::date + (g % 30)"
    "tenant_ts|tenant int4, ts timestamptz|tenant, ts|g % 1000, '2024-01-01 UTC'::timestamptz + g * interval '1 second'"
    "status_text|status text COLLATE \"C\"|status|(ARRAY['active', 'pending', 'closed', 'archived', 'deleted'])[1 + g % 5]"
    "email_domain|domain text COLLATE \"C\"|domain|'mail' || (g % 300) || '.example.com'"
)
echo "multiword-dedup: ROWS=$ROWS; $(q -c 'SELECT version()' | cut -d, -f1)"
echo
echo "| keys | how | btree pages | gbtree pages | gbtree/btree | gbtree, deduplicate_items off | answers |"
echo "|---|---|---|---|---|---|---|"
for shape in "${SHAPES[@]}"; do
    IFS='|' read -r name cols icols expr <<< "$shape"
    for how in build load; do
        for am in btree gbtree gbtree_off; do
            t="md_${name}_$am"
            opt=""; realam=$am
            [ $am = gbtree_off ] && { opt=" WITH (deduplicate_items = off)"; realam=gbtree; }
            q -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS $t" -c "CREATE TABLE $t (id int8, $cols)"
            if [ $how = build ]; then
                q -c "INSERT INTO $t SELECT g, $expr FROM generate_series(1, $ROWS) g" \
                  -c "CREATE INDEX ${t}_k ON $t USING $realam ($icols)$opt"
            else
                q -c "CREATE INDEX ${t}_k ON $t USING $realam ($icols)$opt" \
                  -c "INSERT INTO $t SELECT g, $expr FROM generate_series(1, $ROWS) g" \
                  -c "INSERT INTO $t SELECT g, $expr FROM generate_series($ROWS + 1, $ROWS + $ROWS / 4) g"
            fi
        done
        pb=$(q -c "SELECT pg_relation_size('md_${name}_btree_k') / 8192")
        pg=$(q -c "SELECT pg_relation_size('md_${name}_gbtree_k') / 8192")
        po=$(q -c "SELECT pg_relation_size('md_${name}_gbtree_off_k') / 8192")
        first=${icols%%,*}
        chk="SELECT count(*) || ' ' || coalesce(sum(id), 0) FROM %s WHERE $first IN (SELECT $first FROM %s TABLESAMPLE SYSTEM (1) REPEATABLE (7) LIMIT 20)"
        ag=$(q -c "SET enable_seqscan = off" -c "SET enable_bitmapscan = off" -c "$(printf "$chk" "md_${name}_gbtree" "md_${name}_btree")")
        ab=$(q -c "SET enable_indexscan = off" -c "SET enable_bitmapscan = off" -c "$(printf "$chk" "md_${name}_btree" "md_${name}_btree")")
        same=$([ "$ag" = "$ab" ] && echo same || echo "DIFFERENT: $ag / $ab")
        echo "| $name ($icols) | $how | $pb | $pg | $(awk -v a="$pg" -v b="$pb" 'BEGIN {printf "%.2f", a / b}') | $po | $same |"
        for am in btree gbtree gbtree_off; do q -c "DROP TABLE md_${name}_$am"; done
    done
done
