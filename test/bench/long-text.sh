#!/usr/bin/env bash
# test/bench/long-text.sh: text longer than gbtree's key field (32 bytes
# for a text column alone; src/README, "Text keys" and "What is left",
# item 4), against btree on the same rows, under the
# collation COLL ("C" unless given; an ICU one such as und-x-icu needs a
# UTF8 database: src/README, "Collations").  For each data
# set: CREATE INDEX and INSERT ... SELECT into an indexed table, gbtree
# and btree interleaved run by run, REPEAT runs, median and spread; the
# indexes' pages; 2,000 point lookups, each a query of one parameter
# (its plans shown); and a range count and an ORDER BY through
# either index that must agree:
#   PGHOST=... PGPORT=... [ROWS=100000] [REPEAT=3] [DATASETS="urls words long shared"] \
#       [COLL=C] test/bench/long-text.sh [OUT.md]
# Data sets (all COLLATE "$COLL"):
#   urls    'https://example.com/some/path/' || md5 || 0-29 'x': 62-91 bytes
#   words   2-12 random words of 3-9 letters: 8-120 bytes, half within 32
#   long    200-700 bytes of random letters
#   shared  800 equal bytes, then 1-4 digits (1,000 values)
set -eu
ROWS=${ROWS:-100000}
REPEAT=${REPEAT:-3}
OUT=${1:-}
PSQL="psql -qXAt -v ON_ERROR_STOP=1"
COLL=${COLL:-C}
SET="SET client_min_messages = warning;"

$PSQL -c "CREATE EXTENSION IF NOT EXISTS gbtree"
gen() {
    case $1 in
        urls) echo "'https://example.com/some/path/' || md5(g::text) || repeat('x', g % 30)" ;;
        words) echo "(SELECT string_agg(substr(md5(g::text || w::text), 1, 3 + (g + w) % 7), ' ')
                       FROM generate_series(1, 2 + g % 11) w)" ;;
        long) echo "(SELECT string_agg(md5(g::text || w::text), '')
                      FROM generate_series(1, 7 + g % 16) w)" ;;
        shared) echo "repeat('p', 800) || (g % 1000)::text" ;;
    esac
}
ms() { sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1; }
stats() { sort -g | awk '{a[NR]=$1} END {m = NR % 2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2; printf "%.1f (%.1f-%.1f)", m, a[1], a[NR]}'; }

{
echo "# Long text: gbtree against btree, COLLATE \"$COLL\""
echo
echo "\`ROWS=$ROWS REPEAT=$REPEAT COLL=$COLL test/bench/long-text.sh\`, $(date -u +%Y-%m-%d), revision ${GIT_REV:-$(git rev-parse --short HEAD 2>/dev/null || echo '?')},"
echo "$(nproc) cores, $(psql -qXAt -c 'SHOW server_version'), default settings but the harness's."
echo "Times in ms, median (min-max) of $REPEAT runs, engines interleaved."
echo
echo "| data | avg bytes | build gbtree | build btree | ratio | pages gbtree | pages btree | insert gbtree | insert btree | ratio | pages after insert gbtree | btree | 2,000 lookups gbtree | btree | ratio | plans | answers |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
} > /tmp/long-text.$$.md

for ds in ${DATASETS:-urls words long shared}; do
    $PSQL -c "$SET DROP TABLE IF EXISTS lt_src, lt_g, lt_b;
        CREATE TABLE lt_src AS SELECT $(gen $ds) COLLATE \"$COLL\" AS t FROM generate_series(1, $ROWS) g;
        CREATE TABLE lt_g (t text COLLATE \"$COLL\"); CREATE TABLE lt_b (t text COLLATE \"$COLL\");
        "
    $PSQL -c "VACUUM ANALYZE lt_src"
    avg=$($PSQL -c "SELECT round(avg(octet_length(t))) FROM lt_src")
    : > /tmp/lt-bg.$$; : > /tmp/lt-bb.$$; : > /tmp/lt-ig.$$; : > /tmp/lt-ib.$$
    for r in $(seq "$REPEAT"); do
        for e in g b; do
            am=$([ $e = g ] && echo gbtree || echo btree)
            $PSQL -c "$SET DROP INDEX IF EXISTS lt_x_$e; TRUNCATE lt_$e; INSERT INTO lt_$e SELECT t FROM lt_src; CHECKPOINT"
            printf '%s\n\\timing on\nCREATE INDEX lt_x_%s ON lt_%s USING %s (t);\n' "$SET" $e $e $am |
                psql -qX -v ON_ERROR_STOP=1 | ms >> /tmp/lt-b$e.$$
        done
        pg_b=$($PSQL -c "SELECT pg_relation_size('lt_x_g') / 8192"); pb_b=$($PSQL -c "SELECT pg_relation_size('lt_x_b') / 8192")
        for e in g b; do
            $PSQL -c "$SET TRUNCATE lt_$e; CHECKPOINT"
            printf '%s\n\\timing on\nINSERT INTO lt_%s SELECT t FROM lt_src;\n' "$SET" $e |
                psql -qX -v ON_ERROR_STOP=1 | ms >> /tmp/lt-i$e.$$
        done
    done
    pg_i=$($PSQL -c "SELECT pg_relation_size('lt_x_g') / 8192"); pb_i=$($PSQL -c "SELECT pg_relation_size('lt_x_b') / 8192")
    $PSQL -c "SELECT gbtree_check('lt_x_g', true)" > /dev/null
    # the same rows through either index, in order
    q="SET enable_seqscan = off; SET enable_bitmapscan = off;
       SELECT md5(string_agg(t, ',' ORDER BY t)) || count(*) FROM (SELECT t FROM lt_%s WHERE t > (SELECT t FROM lt_src ORDER BY t OFFSET $ROWS / 3 LIMIT 1) ORDER BY t) s"
    ag=$($PSQL -c "$(printf "$q" g)" | tail -1); ab=$($PSQL -c "$(printf "$q" b)" | tail -1)
    same=$([ "$ag" = "$ab" ] && echo same || echo "DIFFER")
    # point lookups: 2,000 of the values, each a plpgsql query of one
    # parameter (an index scan under default settings, as an application's
    # prepared statement), REPEAT * 3 runs interleaved; the plans' nodes
    $PSQL -c "ANALYZE lt_g, lt_b; DROP TABLE IF EXISTS lt_arr; CREATE TABLE lt_arr AS
        SELECT array_agg(t) a FROM (SELECT t FROM lt_src ORDER BY md5(t) LIMIT 2000) s"
    aq='DO $lookups$ DECLARE v text; n int8; m int8 := 0;
        BEGIN FOREACH v IN ARRAY (SELECT a FROM lt_arr) LOOP
            SELECT count(*) INTO n FROM lt_@ WHERE t = v; m := m + n; END LOOP;
        IF m < 2000 THEN RAISE EXCEPTION $m$lookups found %$m$, m; END IF; END $lookups$;'
    : > /tmp/lt-ag.$$; : > /tmp/lt-ab.$$
    for r in $(seq $((REPEAT * 3))); do
        for e in g b; do
            printf '%s\n\\timing on\n%s\n' "$SET" "${aq//lt_@/lt_$e}" | psql -qX -v ON_ERROR_STOP=1 | ms >> /tmp/lt-a$e.$$
        done
    done
    plans=$(for e in g b; do
        $PSQL -c "PREPARE lk(text) AS SELECT count(*) FROM lt_$e WHERE t = \$1;
                  SET plan_cache_mode = force_generic_plan; EXPLAIN (COSTS OFF) EXECUTE lk('x')" |
        grep -o 'Index Only Scan\|Bitmap Index Scan\|Index Scan\|Seq Scan' | head -1; done | paste -sd/ -)
    bg=$(stats < /tmp/lt-bg.$$); bb=$(stats < /tmp/lt-bb.$$); ig=$(stats < /tmp/lt-ig.$$); ib=$(stats < /tmp/lt-ib.$$)
    ag_=$(stats < /tmp/lt-ag.$$); ab_=$(stats < /tmp/lt-ab.$$)
    ra=$(awk -v a="${ag_%% *}" -v b="${ab_%% *}" 'BEGIN {printf "%.2f", a / b}')
    rb=$(awk -v a="${bg%% *}" -v b="${bb%% *}" 'BEGIN {printf "%.2f", a / b}')
    ri=$(awk -v a="${ig%% *}" -v b="${ib%% *}" 'BEGIN {printf "%.2f", a / b}')
    echo "| $ds | $avg | $bg | $bb | $rb | $pg_b | $pb_b | $ig | $ib | $ri | $pg_i | $pb_i | $ag_ | $ab_ | $ra | $plans | $same |" >> /tmp/long-text.$$.md
    [ "$same" = same ] || { echo "long-text: $ds: gbtree $ag, btree $ab" >&2; }
done
$PSQL -c "DROP TABLE lt_src, lt_g, lt_b, lt_arr"
cat /tmp/long-text.$$.md
[ -n "$OUT" ] && cp /tmp/long-text.$$.md "$OUT"
rm -f /tmp/long-text.$$.md /tmp/lt-[bia][gb].$$
