--
-- t17_insert_batch: the insert batch (batch.c).  Entries a transaction
-- makes wait in the backend and reach the pages before this backend reads
-- the table, before utility statements, at savepoints, at COMMIT and
-- PREPARE, or when gbtree.insert_batch_memory fills; they are dropped
-- with their (sub)transaction.  Every step compares a gbtree twin with a
-- btree twin and a sequential scan, inside the writing transaction too.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
CREATE SCHEMA t17;
SET search_path = t17, public;
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SET statement_timeout = '60s';

-- count and sums through one index (its plan checked), or a seq scan
CREATE FUNCTION idx_answer(tbl text, cond text) RETURNS text LANGUAGE plpgsql
SET enable_seqscan = off SET enable_bitmapscan = off SET enable_indexonlyscan = off
AS $f$
DECLARE
	q text := format('SELECT count(*) || '' rows, '' || coalesce(sum(k), 0) || '' '' || coalesce(sum(id), 0) FROM %I WHERE %s', tbl, cond);
	ln text;
	used bool := false;
	r text;
BEGIN
	FOR ln IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		IF ln ~ ('Index Scan using ' || tbl || '_idx ') THEN used := true; END IF;
	END LOOP;
	IF NOT used THEN RETURN 'no index scan of ' || tbl; END IF;
	EXECUTE q INTO r;
	RETURN r;
END
$f$;
CREATE FUNCTION seq_answer(tbl text, cond text) RETURNS text LANGUAGE plpgsql
SET enable_indexscan = off SET enable_bitmapscan = off SET enable_indexonlyscan = off
AS $f$
DECLARE r text;
BEGIN
	EXECUTE format('SELECT count(*) || '' rows, '' || coalesce(sum(k), 0) || '' '' || coalesce(sum(id), 0) FROM %I WHERE %s', tbl, cond) INTO r;
	RETURN r;
END
$f$;
-- twins <base>_g / <base>_b agree with each other and with a seq scan, on
-- the values, a range and the NULLs; returns the row counts or the difference
CREATE FUNCTION same(base text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
	conds text[] := ARRAY['k >= -9223372036854775808', 'k BETWEEN -1000 AND 400000', 'k IS NULL'];
	c text;
	g text; b text; s text;
	res text := '';
BEGIN
	FOREACH c IN ARRAY conds LOOP
		g := idx_answer(base || '_g', c);
		b := idx_answer(base || '_b', c);
		s := seq_answer(base || '_g', c);
		IF g IS DISTINCT FROM b OR b IS DISTINCT FROM s THEN
			RETURN format('DIFFERENT for %s: gbtree %s, btree %s, seq %s', c, g, b, s);
		END IF;
		res := res || split_part(g, ',', 1) || '; ';
	END LOOP;
	RETURN 'same: ' || res;
END
$f$;
-- run a statement on both twins (@t is the table name)
CREATE FUNCTION on_twins(stmt text, base text DEFAULT 'w') RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
	EXECUTE replace(stmt, '@t', base || '_g');
	EXECUTE replace(stmt, '@t', base || '_b');
END
$f$;

CREATE TABLE w_g (id int, k int8);
CREATE TABLE w_b (id int, k int8);
CREATE INDEX w_g_idx ON w_g USING gbtree (k);
CREATE INDEX w_b_idx ON w_b USING btree (k);
-- keys spread over int8, some NULLs, some duplicates
CREATE FUNCTION rows_sql(lo int, hi int) RETURNS text LANGUAGE sql AS $f$
	SELECT format('INSERT INTO @t SELECT i, CASE WHEN i %% 97 = 0 THEN NULL WHEN i %% 5 = 0 THEN i %% 1000 ELSE hashint8extended(i, 17) END FROM generate_series(%s, %s) i', lo, hi)
$f$;

-- 1. the transaction reads its own rows, between and after batches
BEGIN;
SELECT on_twins(rows_sql(1, 20000));
SELECT same('w');
SELECT on_twins(rows_sql(20001, 30000));
SELECT on_twins('UPDATE @t SET k = k + 1 WHERE id % 10 = 3');
SELECT same('w');
COMMIT;
SELECT same('w');

-- 2. ROLLBACK TO drops the subtransaction's entries, keeps the parent's
BEGIN;
SELECT on_twins(rows_sql(30001, 35000));
SAVEPOINT a;
SELECT on_twins(rows_sql(35001, 40000));
SELECT same('w');
ROLLBACK TO a;
SELECT same('w');
SAVEPOINT b;
SELECT on_twins(rows_sql(40001, 42000));
RELEASE b;
SELECT on_twins(rows_sql(42001, 43000));
COMMIT;
SELECT same('w');

-- 3. a statement failing midway, alone and under a savepoint
BEGIN;
SELECT on_twins(rows_sql(43001, 44000));
SAVEPOINT c;
INSERT INTO w_g SELECT i, 10 / (i - 44500) FROM generate_series(44001, 46000) i;
ROLLBACK TO c;
INSERT INTO w_b SELECT i, 10 / (i - 44500) FROM generate_series(44001, 46000) i;
ROLLBACK TO c;
SELECT on_twins(rows_sql(46001, 47000));
COMMIT;
SELECT same('w');
BEGIN;
SELECT on_twins(rows_sql(47001, 48000));
INSERT INTO w_g SELECT i, 10 / (i - 48500) FROM generate_series(48001, 49000) i;
ROLLBACK;
SELECT same('w');

-- 4. errors inside PL/pgSQL exception blocks (a subtransaction per block)
CREATE FUNCTION add_rows(tbl text, lo int, hi int) RETURNS int LANGUAGE plpgsql AS $f$
DECLARE
	failed int := 0;
BEGIN
	FOR i IN lo .. hi LOOP
		BEGIN
			EXECUTE format('INSERT INTO %I VALUES ($1, $2)', tbl) USING i, 100 / (i % 50);
		EXCEPTION WHEN division_by_zero THEN
			failed := failed + 1;
		END;
	END LOOP;
	-- and read them back in the same function
	EXECUTE format('SELECT count(*) FROM %I WHERE id BETWEEN $1 AND $2 AND k >= 0', tbl) USING lo, hi INTO failed;
	RETURN failed;
END
$f$;
BEGIN;
SELECT add_rows('w_g', 50001, 50500), add_rows('w_b', 50001, 50500);
SELECT same('w');
COMMIT;

-- 5. TRUNCATE and REINDEX in the transaction that has pending entries
BEGIN;
SELECT on_twins(rows_sql(60001, 61000));
TRUNCATE w_g, w_b;
SELECT on_twins(rows_sql(61001, 64000));
SELECT same('w');
COMMIT;
SELECT same('w');
SELECT gbtree_check('w_g_idx', true);
BEGIN;
SELECT on_twins(rows_sql(64001, 66000));
REINDEX INDEX w_g_idx;
SELECT on_twins(rows_sql(66001, 67000));
COMMIT;
SELECT same('w');
SELECT gbtree_check('w_g_idx', true);
BEGIN;
SELECT on_twins(rows_sql(67001, 68000));
ROLLBACK;
BEGIN;
SELECT on_twins(rows_sql(68001, 69000));
TRUNCATE w_g, w_b;
SELECT on_twins(rows_sql(69001, 70000));
ROLLBACK;
SELECT same('w');
SELECT gbtree_check('w_g_idx', true);

-- 6. PREPARE TRANSACTION: flushed before it; invisible until COMMIT PREPARED
BEGIN;
SELECT on_twins(rows_sql(70001, 75000));
PREPARE TRANSACTION 't17_commit';
SELECT same('w');
COMMIT PREPARED 't17_commit';
SELECT same('w');
BEGIN;
SELECT on_twins(rows_sql(75001, 78000));
PREPARE TRANSACTION 't17_rollback';
ROLLBACK PREPARED 't17_rollback';
SELECT same('w');
SELECT gbtree_check('w_g_idx', true);

-- 7. a small gbtree.insert_batch_memory: flushes in the middle of statements
SET gbtree.insert_batch_memory = 64;
BEGIN;
SELECT on_twins(rows_sql(80001, 100000));
SAVEPOINT d;
SELECT on_twins(rows_sql(100001, 110000));
ROLLBACK TO d;
SELECT on_twins('UPDATE @t SET k = -k WHERE id % 7 = 1');
COMMIT;
SELECT same('w');
SET gbtree.insert_batch_memory = 0;
SELECT on_twins(rows_sql(110001, 111000));
SELECT same('w');
RESET gbtree.insert_batch_memory;

-- 8. a cursor opened before the rows: FETCH flushes, answers as btree
BEGIN;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
DECLARE cg CURSOR FOR SELECT id, k FROM w_g WHERE k BETWEEN 0 AND 999 ORDER BY k, id;
DECLARE cb CURSOR FOR SELECT id, k FROM w_b WHERE k BETWEEN 0 AND 999 ORDER BY k, id;
FETCH 3 FROM cg;
FETCH 3 FROM cb;
SELECT on_twins(rows_sql(120001, 125000));
FETCH 3 FROM cg;
FETCH 3 FROM cb;
MOVE FORWARD ALL IN cg;
MOVE FORWARD ALL IN cb;
COMMIT;
SELECT same('w');

-- 9. a data-modifying CTE does not see its own rows, on either
WITH ins AS (INSERT INTO w_g SELECT i, i FROM generate_series(130001, 131000) i RETURNING 1)
SELECT (SELECT count(*) FROM ins) AS inserted, (SELECT count(*) FROM w_g WHERE k BETWEEN 130001 AND 131000) AS seen;
WITH ins AS (INSERT INTO w_b SELECT i, i FROM generate_series(130001, 131000) i RETURNING 1)
SELECT (SELECT count(*) FROM ins) AS inserted, (SELECT count(*) FROM w_b WHERE k BETWEEN 130001 AND 131000) AS seen;
SELECT same('w');

-- 10. an INSERT ... SELECT reading its own target sees the rows before it
BEGIN;
INSERT INTO w_g SELECT id + 1000000, k FROM w_g WHERE k BETWEEN 0 AND 400000;
INSERT INTO w_b SELECT id + 1000000, k FROM w_b WHERE k BETWEEN 0 AND 400000;
INSERT INTO w_g SELECT id + 1000000, k FROM w_g WHERE k BETWEEN 0 AND 400000;
INSERT INTO w_b SELECT id + 1000000, k FROM w_b WHERE k BETWEEN 0 AND 400000;
SELECT same('w');
COMMIT;

-- 11. two gbtree indexes on one table, a partitioned table, a temp table
CREATE TABLE m_g (id int, k int8, k2 int8);
CREATE TABLE m_b (id int, k int8, k2 int8);
CREATE INDEX m_g_idx ON m_g USING gbtree (k);
CREATE INDEX m_b_idx ON m_b USING btree (k);
CREATE INDEX m_g_k2 ON m_g USING gbtree (k2 DESC);
BEGIN;
INSERT INTO m_g SELECT i, hashint8extended(i, 3), -i FROM generate_series(1, 5000) i;
INSERT INTO m_b SELECT i, hashint8extended(i, 3), -i FROM generate_series(1, 5000) i;
SELECT same('m');
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
SELECT count(*), sum(id) FROM m_g WHERE k2 BETWEEN -3000 AND -1000;
COMMIT;

CREATE TABLE p_g (id int, k int8) PARTITION BY RANGE (id);
CREATE TABLE p_g1 PARTITION OF p_g FOR VALUES FROM (0) TO (5000);
CREATE TABLE p_g2 PARTITION OF p_g FOR VALUES FROM (5000) TO (10001);
CREATE TABLE p_b (id int, k int8);
CREATE INDEX p_g_idx ON p_g USING gbtree (k);
CREATE INDEX p_b_idx ON p_b USING btree (k);
BEGIN;
SELECT on_twins(rows_sql(1, 10000), 'p');
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
SELECT (SELECT count(*) || ' ' || sum(id) FROM p_g WHERE k BETWEEN -1000 AND 400000) =
	   (SELECT count(*) || ' ' || sum(id) FROM p_b WHERE k BETWEEN -1000 AND 400000) AS partitions_agree;
COMMIT;

CREATE TEMP TABLE tt_g (id int, k int8);
CREATE TEMP TABLE tt_b (id int, k int8);
CREATE INDEX tt_g_idx ON tt_g USING gbtree (k);
CREATE INDEX tt_b_idx ON tt_b USING btree (k);
BEGIN;
SELECT on_twins(rows_sql(1, 8000), 'tt');
SELECT same('tt');
COMMIT;

-- 12. DROP INDEX with entries pending: nothing left to flush, no error
BEGIN;
SELECT on_twins(rows_sql(1, 3000), 'm');
DROP INDEX m_g_k2;
COMMIT;
SELECT same('m');

-- 13. exclusion constraints are checked against uncommitted rows, so
-- their indexes are never batched: a conflict inside one statement is found
CREATE TABLE ex (k int8, EXCLUDE USING gbtree (k WITH =));
INSERT INTO ex SELECT g FROM generate_series(1, 1000) g;
INSERT INTO ex VALUES (5000), (5001), (5000);
BEGIN;
INSERT INTO ex SELECT g FROM generate_series(2001, 3000) g;
INSERT INTO ex VALUES (2500);
ROLLBACK;
SELECT count(*) FROM ex;

SELECT gbtree_check('w_g_idx', true), gbtree_check('m_g_idx', true), gbtree_check('tt_g_idx', true);

RESET search_path;
DROP SCHEMA t17 CASCADE;
