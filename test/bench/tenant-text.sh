#!/usr/bin/env bash
# test/bench/tenant-text.sh: a (tenant, URL) key, the URLs sharing their
# first 30 bytes, so that under "C" the 27 bytes the text keeps beside an
# int4 are equal for every row of a tenant, and under ICU (whose sort key
# is about three bytes a character) for every row: the case tail-bounded
# scans and unique checks are for (src/README, "What is left", item 4
# (c') and (d)).  gbtree against btree on the same rows, engines
# interleaved run by run, REPEAT runs, median (min-max):
#   - INSERT ... SELECT of all rows into a table with a (tenant, url) index;
#   - the same into a table with a UNIQUE (tenant, url) index (unique
#     inserts check each key at once, so they are not batched);
#   - 2,000 lookups WHERE tenant = $1 AND url = $2, each a PL/pgSQL query
#     (an index scan, as an application's prepared statement), and the plans;
#   - 3 x TENANTS lookups WHERE tenant = $1 AND url = ANY ($2) of ten of
#     the tenant's URLs, and whether the plans take url = ANY as an index
#     condition;
#   - an index-only scan of each tenant's URLs (count(url): the values
#     are formed from the index);
#   - the indexes' pages, and a range of one tenant through either index,
#     which must give the same rows in the same order.
#   The lookups and scans run after VACUUM ANALYZE, so that index-only
#   scans read no heap pages, as on a table autovacuum keeps.
#   Unique inserts log each leaf insert: with gbtree preloaded by its own
#   WINSERT record, otherwise by generic WAL (the header says which).
#   PGHOST=... PGPORT=... [ROWS=100000] [TENANTS=100] [REPEAT=3] [COLL=C] \
#       test/bench/tenant-text.sh [OUT.md]
set -eu
ROWS=${ROWS:-100000}
TENANTS=${TENANTS:-100}
REPEAT=${REPEAT:-3}
COLL=${COLL:-C}
OUT=${1:-}
PSQL="psql -qXAt -v ON_ERROR_STOP=1"
SET="SET client_min_messages = warning;"
ms() { sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1; }
stats() { sort -g | awk '{a[NR]=$1} END {m = NR % 2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2; printf "%.1f (%.1f-%.1f)", m, a[1], a[NR]}'; }
ratio() { awk -v a="${1%% *}" -v b="${2%% *}" 'BEGIN {printf "%.2f", a / b}'; }
tmp=/tmp/tenant-text.$$
mkdir -p $tmp

$PSQL -c "CREATE EXTENSION IF NOT EXISTS gbtree"
$PSQL -c "$SET DROP TABLE IF EXISTS tt_src, tt_g, tt_b, tt_ug, tt_ub, tt_arr, tt_any;
    CREATE TABLE tt_src AS SELECT g % $TENANTS AS tenant,
        ('https://example.com/some/path/' || md5(g::text) || repeat('x', g % 30)) COLLATE \"$COLL\" AS url
        FROM generate_series(1, $ROWS) g ORDER BY md5(g::text || 'o');
    CREATE TABLE tt_g (tenant int, url text COLLATE \"$COLL\");
    CREATE TABLE tt_b (tenant int, url text COLLATE \"$COLL\");
    CREATE TABLE tt_ug (tenant int, url text COLLATE \"$COLL\");
    CREATE TABLE tt_ub (tenant int, url text COLLATE \"$COLL\");
    CREATE INDEX tt_g_x ON tt_g USING gbtree (tenant, url);
    CREATE INDEX tt_b_x ON tt_b USING btree (tenant, url);
    CREATE UNIQUE INDEX tt_ug_x ON tt_ug USING gbtree (tenant, url);
    CREATE UNIQUE INDEX tt_ub_x ON tt_ub USING btree (tenant, url)"
$PSQL -c "VACUUM ANALYZE tt_src"
for r in $(seq "$REPEAT"); do
    for e in g b ug ub; do
        $PSQL -c "$SET TRUNCATE tt_$e; CHECKPOINT"
        printf '%s\n\\timing on\nINSERT INTO tt_%s SELECT * FROM tt_src;\n' "$SET" $e |
            psql -qX -v ON_ERROR_STOP=1 | ms >> $tmp/i$e
    done
done
pages() { $PSQL -c "SELECT pg_relation_size('tt_$1_x') / 8192"; }
pg=$(pages g); pb=$(pages b); pug=$(pages ug); pub=$(pages ub)
$PSQL -c "SELECT gbtree_check('tt_g_x', true), gbtree_check('tt_ug_x', true)" > /dev/null
q="SET enable_seqscan = off; SET enable_bitmapscan = off;
   SELECT md5(string_agg(url, ',' ORDER BY url)) || count(*) FROM (SELECT url FROM tt_%s
     WHERE tenant = 7 AND url > (SELECT url FROM tt_src WHERE tenant = 7 ORDER BY url OFFSET 100 LIMIT 1)
     ORDER BY tenant, url) s"
same=same
for e in g ug; do
    a=$($PSQL -c "$(printf "$q" $e)" | tail -1); b=$($PSQL -c "$(printf "$q" ${e/g/b})" | tail -1)
    [ "$a" = "$b" ] || { same=DIFFER; echo "tenant-text: tt_$e $a, its btree twin $b" >&2; }
done
$PSQL -c "VACUUM ANALYZE tt_g, tt_b"
$PSQL -c "CREATE TABLE tt_arr AS
    SELECT array_agg(tenant) tn, array_agg(url) u FROM (SELECT * FROM tt_src ORDER BY md5(url) LIMIT 2000) s"
aq='DO $lookups$ DECLARE n int8; m int8 := 0; tn int[]; u text[];
    BEGIN SELECT a.tn, a.u INTO tn, u FROM tt_arr a;
    FOR i IN 1 .. 2000 LOOP
        SELECT count(*) INTO n FROM tt_@ WHERE tenant = tn[i] AND url = u[i]; m := m + n; END LOOP;
    IF m < 2000 THEN RAISE EXCEPTION $m$lookups found %$m$, m; END IF; END $lookups$;'
for r in $(seq $((REPEAT * 3))); do
    for e in g b; do
        printf '%s\n\\timing on\n%s\n' "$SET" "${aq//tt_@/tt_$e}" | psql -qX -v ON_ERROR_STOP=1 | ms >> $tmp/a$e
    done
done
# = ANY of ten URLs of one tenant, 300 times; every tenant's URLs read
# back by index-only scans (count(url) needs the values)
$PSQL -c "CREATE TABLE tt_any AS SELECT tenant, (array_agg(url ORDER BY md5(url)))[1:10] u
    FROM tt_src GROUP BY tenant"
yq='DO $lookups$ DECLARE n int8; m int8 := 0; r record;
    BEGIN FOR i IN 1 .. 3 LOOP FOR r IN SELECT * FROM tt_any LOOP
        SELECT count(*) INTO n FROM tt_@ WHERE tenant = r.tenant AND url = ANY (r.u); m := m + n;
        END LOOP; END LOOP;
    IF m <> 30 * (SELECT count(*) FROM tt_any) THEN RAISE EXCEPTION $m$= ANY found %$m$, m; END IF;
    END $lookups$;'
oq='DO $scans$ DECLARE n int8; m int8 := 0;
    BEGIN FOR t IN 0 .. '$((TENANTS - 1))' LOOP
        SELECT count(url) INTO n FROM tt_@ WHERE tenant = t; m := m + n; END LOOP;
    IF m <> '$ROWS' THEN RAISE EXCEPTION $m$index-only scans found %$m$, m; END IF; END $scans$;'
for r in $(seq $((REPEAT * 3))); do
    for e in g b; do
        printf '%s\n\\timing on\n%s\n' "$SET" "${yq//tt_@/tt_$e}" | psql -qX -v ON_ERROR_STOP=1 | ms >> $tmp/y$e
        printf '%s\n\\timing on\n%s\n' "$SET" "${oq//tt_@/tt_$e}" | psql -qX -v ON_ERROR_STOP=1 | ms >> $tmp/o$e
    done
done
anyplans=$(for e in g b; do
    $PSQL -c "PREPARE ya(int, text[]) AS SELECT count(*) FROM tt_$e WHERE tenant = \$1 AND url = ANY (\$2);
              SET plan_cache_mode = force_generic_plan; EXPLAIN (COSTS OFF) EXECUTE ya(1, '{x}')" |
    grep -q 'Index Cond: .*url = ANY' && echo "index condition" || echo "filter"; done | paste -sd/ -)
plans=$(for e in g b; do
    $PSQL -c "PREPARE lk(int, text) AS SELECT count(*) FROM tt_$e WHERE tenant = \$1 AND url = \$2;
              SET plan_cache_mode = force_generic_plan; EXPLAIN (COSTS OFF) EXECUTE lk(1, 'x')" |
    grep -o 'Index Only Scan\|Bitmap Index Scan\|Index Scan\|Seq Scan' | head -1; done | paste -sd/ -)
ig=$(stats < $tmp/ig); ib=$(stats < $tmp/ib); iug=$(stats < $tmp/iug); iub=$(stats < $tmp/iub)
ag=$(stats < $tmp/ag); ab=$(stats < $tmp/ab)
yg=$(stats < $tmp/yg); yb=$(stats < $tmp/yb); og=$(stats < $tmp/og); ob=$(stats < $tmp/ob)
{
echo "# (tenant, URL) keys: gbtree against btree, COLLATE \"$COLL\""
echo
echo "\`ROWS=$ROWS TENANTS=$TENANTS REPEAT=$REPEAT COLL=$COLL test/bench/tenant-text.sh\`, $(date -u +%Y-%m-%d), revision ${GIT_REV:-$(git rev-parse --short HEAD 2>/dev/null || echo '?')},"
PRELOAD=$(psql -qXAt -c 'SHOW shared_preload_libraries')
case ",$PRELOAD," in
    *,gbtree,*|*,\ gbtree,*) WALNOTE="gbtree preloaded: its own WAL records (a leaf insert is a WINSERT record)" ;;
    *) WALNOTE="gbtree not preloaded: generic WAL (a leaf insert logs the page's diff)" ;;
esac
echo "$(nproc) cores, $(psql -qXAt -c 'SHOW server_version'), default settings but the harness's; $WALNOTE."
echo "Times in ms, median (min-max) of $REPEAT runs ($((REPEAT * 3)) for the lookups), engines interleaved."
echo
echo "| measure | gbtree | btree | gbtree/btree |"
echo "|---|---|---|---|"
echo "| INSERT ... SELECT, (tenant, url) index | $ig | $ib | $(ratio "$ig" "$ib") |"
echo "| INSERT ... SELECT, UNIQUE (tenant, url) | $iug | $iub | $(ratio "$iug" "$iub") |"
echo "| 2,000 lookups tenant = \$1 AND url = \$2 | $ag | $ab | $(ratio "$ag" "$ab") |"
echo "| $((TENANTS * 3)) lookups tenant = \$1 AND url = ANY (10 URLs) | $yg | $yb | $(ratio "$yg" "$yb") |"
echo "| index-only scans of every tenant's URLs (count(url), $TENANTS scans) | $og | $ob | $(ratio "$og" "$ob") |"
echo "| index pages after the inserts | $pg | $pb | $(ratio "$pg" "$pb") |"
echo "| UNIQUE index pages | $pug | $pub | $(ratio "$pug" "$pub") |"
echo
echo "Plans of the lookup (gbtree/btree): $plans; url = ANY as: $anyplans. A range of one tenant through either index: $same."
} > $tmp/out.md
$PSQL -c "DROP TABLE tt_src, tt_g, tt_b, tt_ug, tt_ub, tt_arr, tt_any"
cat $tmp/out.md
[ -n "$OUT" ] && cp $tmp/out.md "$OUT"
rm -rf $tmp
