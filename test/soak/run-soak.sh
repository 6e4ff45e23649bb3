#!/usr/bin/env bash
# test/soak/run-soak.sh: concurrency soak.  pgbench drives CLIENTS (default
# 8) sessions of mixed inserts, index scans (ranges both ways, = ANY,
# float keys), deletes, updates and VACUUM against a table with two
# gbtree indexes for SECONDS, on a throwaway cluster; then every index
# must pass gbtree_check(idx, true) and answer like a sequential scan,
# key by key.
#
# batch.sql writes in batches: multi-row INSERT ... SELECTs (up to 5000
# rows) in transactions with a savepoint that is sometimes rolled back,
# some rolled back whole, under a small, a default or a zero
# gbtree.insert_batch_memory (when the installed gbtree has it), and
# checks inside the transaction that both indexes count the ranges it
# wrote like a sequential scan (soak_batch_check raises otherwise, which
# aborts pgbench).  Its rolled-back batches leave empty pages at the end
# of the table; VACUUM does not truncate them (vacuum_truncate = false):
# each VACUUM would retry the truncation for 5 s against the VACUUMs queued
# behind it, until every client waited in VACUUM.
#
#   test/soak/run-soak.sh [SECONDS]           (make soak SOAK_MINUTES=N)
#
# The extension must be installed.  Exit status 0 only if all is well.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=test/lib.sh
. "$HERE/../lib.sh"

SECS=${1:-60}
CLIENTS=${SOAK_CLIENTS:-8}
gb_resolve_pg_config
BINDIR=$("$PG_CONFIG" --bindir)
gb_ensure_test_user
gb_make_scratch gbtree-soak
PORT=$((20000 + RANDOM % 20000))
DATA=$GB_SCRATCH/data
cp "$HERE"/*.sql "$GB_SCRATCH/"
[ "$GB_IS_ROOT" = 1 ] && chown "$GB_TEST_USER:" "$GB_SCRATCH"/*.sql

stop() {
    gb_run_as "$BINDIR/pg_ctl" -D "$DATA" -m immediate stop >/dev/null 2>&1
    rm -rf "$GB_SCRATCH"
}
trap stop EXIT

gb_run_as "$BINDIR/initdb" -D "$DATA" --no-locale -A trust >/dev/null || gb_die "initdb failed"
gb_run_as "$BINDIR/pg_ctl" -D "$DATA" -l "$GB_SCRATCH/server.log" -w \
    -o "-p $PORT -k $GB_SCRATCH -c listen_addresses= -c fsync=off -c max_connections=40 -c autovacuum_naptime=2s" \
    start >/dev/null || { tail -20 "$GB_SCRATCH/server.log"; gb_die "server start failed"; }
PSQL=("$BINDIR/psql" -X -v ON_ERROR_STOP=1 -h "$GB_SCRATCH" -p "$PORT" -d postgres -qAt)

gb_run_as "${PSQL[@]}" -c "
    CREATE EXTENSION gbtree;
    CREATE TABLE soak (id bigserial, k int8, f float8) WITH (vacuum_truncate = false);
    INSERT INTO soak (k, f) SELECT CASE WHEN g % 97 = 0 THEN NULL ELSE g % 50000 END, (g % 1000) / 3.0
      FROM generate_series(1, 100000) g;
    CREATE INDEX soak_k ON soak USING gbtree (k);
    CREATE INDEX soak_f ON soak USING gbtree (f DESC);" -c "VACUUM ANALYZE soak" || gb_die "setup failed"
# One statement, one snapshot (READ COMMITTED): counts through soak_k and
# soak_f (selective ranges, which the planner answers with the indexes)
# against the same counts from one seq scan (no index serves id > 0), the
# calling transaction's own rows included.  Planned with constants.
BATCH_CHECK_SQL="SELECT (SELECT count(*) FROM soak WHERE k BETWEEN %1\$s AND %2\$s),
               (SELECT count(*) FROM soak WHERE k IS NULL),
               (SELECT count(*) FROM soak WHERE f BETWEEN %1\$s / 7.0 AND %1\$s / 7.0 + 1),
               s.*
          FROM (SELECT count(*) FILTER (WHERE k BETWEEN %1\$s AND %2\$s),
                       count(*) FILTER (WHERE k IS NULL),
                       count(*) FILTER (WHERE f BETWEEN %1\$s / 7.0 AND %1\$s / 7.0 + 1)
                  FROM soak WHERE id > 0) s"
gb_run_as "${PSQL[@]}" -c "
    CREATE FUNCTION soak_batch_check(lo int8, hi int8) RETURNS void LANGUAGE plpgsql AS \$\$
    DECLARE n1 bigint; n2 bigint; n3 bigint; n4 bigint; n5 bigint; n6 bigint;
    BEGIN
        EXECUTE format('$BATCH_CHECK_SQL', lo, hi) INTO n1, n2, n3, n4, n5, n6;
        IF n1 <> n4 OR n2 <> n5 OR n3 <> n6 THEN
            RAISE EXCEPTION 'soak_batch_check(%, %): through the indexes: k range % rows, k NULL %, f range %; by a seq scan: % % %',
                lo, hi, n1, n2, n3, n4, n5, n6;
        END IF;
    END \$\$;" || gb_die "setup failed"
q=$(gb_run_as "${PSQL[@]}" -c "SELECT format('$BATCH_CHECK_SQL', 1000, 1300)") &&
    plan=$(gb_run_as "${PSQL[@]}" -c "EXPLAIN (COSTS OFF) $q") || gb_die "setup failed"
grep -q soak_k <<<"$plan" && grep -q soak_f <<<"$plan" && grep -q "Seq Scan" <<<"$plan" ||
    gb_die "soak_batch_check's query does not use both indexes and a seq scan: $plan"
# gbtree.insert_batch_memory exists once the library is loaded, if this
# gbtree has it
HAVE_BATCH_GUC=$(gb_run_as "${PSQL[@]}" -c "LOAD 'gbtree'" \
    -c "SELECT count(*) FROM pg_settings WHERE name = 'gbtree.insert_batch_memory'") || gb_die "setup failed"
gb_say "soak: gbtree.insert_batch_memory $([ "$HAVE_BATCH_GUC" = 1 ] && echo present || echo absent)"

gb_say "soak: $CLIENTS clients for ${SECS}s"
gb_run_as "$BINDIR/pgbench" -n -h "$GB_SCRATCH" -p "$PORT" -c "$CLIENTS" -j 2 -T "$SECS" \
    -D have_batch_guc="$HAVE_BATCH_GUC" \
    -f "$GB_SCRATCH/insert.sql@10" -f "$GB_SCRATCH/select.sql@10" -f "$GB_SCRATCH/delete.sql@3" \
    -f "$GB_SCRATCH/update.sql@3" -f "$GB_SCRATCH/vacuum.sql@1" -f "$GB_SCRATCH/batch.sql@1" postgres 2>&1 |
    grep -E "transactions|failed|tps|ERROR|error|SQL script|soak_batch_check" | head -40
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] || { gb_say "pgbench failed ($rc)"; grep -E "ERROR|PANIC|TRAP" "$GB_SCRATCH/server.log" | head; exit 1; }

gb_say "soak: verifying"
out=$(gb_run_as "${PSQL[@]}" -c "
    SELECT gbtree_check('soak_k', true);
    SELECT gbtree_check('soak_f', true);
    CREATE TEMP TABLE seq_k AS SELECT k, count(*) AS n FROM soak GROUP BY k;
    CREATE TEMP TABLE seq_f AS SELECT f::text AS f, count(*) AS n FROM soak GROUP BY f::text;
    SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_hashagg = off;
    CREATE TEMP TABLE idx_k AS SELECT k, count(*) AS n FROM soak WHERE k IS NOT NULL OR k IS NULL GROUP BY k;
    CREATE TEMP TABLE idx_f AS SELECT f::text AS f, count(*) AS n FROM soak WHERE f IS NOT NULL OR f IS NULL GROUP BY f::text;
    SELECT 'k differences: ' || count(*) FROM ((TABLE seq_k EXCEPT TABLE idx_k) UNION ALL (TABLE idx_k EXCEPT TABLE seq_k)) d;
    SELECT 'f differences: ' || count(*) FROM ((TABLE seq_f EXCEPT TABLE idx_f) UNION ALL (TABLE idx_f EXCEPT TABLE seq_f)) d;
    SELECT 'rows: ' || count(*) FROM soak;
    EXPLAIN (COSTS OFF) SELECT k, count(*) FROM soak WHERE k IS NOT NULL OR k IS NULL GROUP BY k;" 2>&1)
rc=$?
echo "$out"
if [ "$rc" -ne 0 ] || ! grep -q "k differences: 0" <<<"$out" || ! grep -q "f differences: 0" <<<"$out" ||
   ! grep -q "soak_k" <<<"$out"; then
    gb_say "soak: FAILED"
    exit 1
fi
if grep -qE "PANIC|TRAP|terminated by signal" "$GB_SCRATCH/server.log"; then
    grep -E -A5 "PANIC|TRAP|terminated by signal" "$GB_SCRATCH/server.log" | head -30
    exit 1
fi
gb_say "soak: ok"
