--
-- Dead entries (src/README, "Dead entries"): an index scan that finds a
-- heap tuple dead to every transaction marks its entry, later scans skip
-- it, and an insert into a full leaf removes the marked entries before it
-- splits.  btree does the same with LP_DEAD; every table has a btree twin,
-- and the answers and the index sizes are compared with it.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
SET max_parallel_workers_per_gather = 0;
-- Marking is the CPU scans' (a GPU batch's entries carry no leaf to mark
-- them on); the GPU suites run this file with every scan on the GPU.
SET gbtree.device = cpu;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_indexonlyscan = off;

-- 1. Rows inserted and deleted over and over in one key range, each round
-- in its own transaction, with an index scan over them in between, beside
-- 3,000 rows that stay.  Without marking and reuse each round would leave
-- its 100 entries behind (10,000 in all, about 20 more leaves).
CREATE TABLE churn_g (k int4, round int4);
CREATE TABLE churn_b (k int4, round int4);
CREATE INDEX churn_g_k ON churn_g USING gbtree (k);
CREATE INDEX churn_b_k ON churn_b (k);
INSERT INTO churn_g SELECT g * 3, 0 FROM generate_series(-1000, 1999) g;
INSERT INTO churn_b SELECT g * 3, 0 FROM generate_series(-1000, 1999) g;
CREATE TABLE sizes AS
SELECT pg_relation_size('churn_g_k') AS g0, pg_relation_size('churn_b_k') AS b0;

DO $$
BEGIN
	FOR r IN 1..100 LOOP
		INSERT INTO churn_g SELECT g, r FROM generate_series(1, 100) g;
		INSERT INTO churn_b SELECT g, r FROM generate_series(1, 100) g;
		DELETE FROM churn_g WHERE round = r AND k % 50 <> 0;
		DELETE FROM churn_b WHERE round = r AND k % 50 <> 0;
		COMMIT;
		-- the scans find the deleted rows dead and mark their entries
		PERFORM count(*) FROM churn_g WHERE k > 0 AND k <= 100;
		PERFORM count(*) FROM churn_b WHERE k > 0 AND k <= 100;
		COMMIT;
	END LOOP;
END;
$$;

-- 200 rows of the churn stay (k = 50 and 100): the index grows by about
-- as much as btree's, a page or two at most, and stays near its size
SELECT pg_relation_size('churn_g_k') - g0 <= greatest(pg_relation_size('churn_b_k') - b0, 0) + 2 * 8192
	AS growth_as_btree,
	pg_relation_size('churn_g_k') <= 1.5 * pg_relation_size('churn_b_k') AS size_near_btree
FROM sizes;
EXPLAIN (COSTS OFF) SELECT k, round FROM churn_g WHERE k BETWEEN -5 AND 200 ORDER BY k;
-- same rows as btree and as a sequential scan, both directions
SELECT count(*), sum(k), sum(round) FROM churn_g WHERE k BETWEEN -5 AND 200;
SELECT count(*), sum(k), sum(round) FROM churn_b WHERE k BETWEEN -5 AND 200;
(SELECT k, round FROM churn_g WHERE k BETWEEN -5 AND 200
 EXCEPT ALL SELECT k, round FROM churn_b WHERE k BETWEEN -5 AND 200)
UNION ALL
(SELECT k, round FROM churn_b WHERE k BETWEEN -5 AND 200
 EXCEPT ALL SELECT k, round FROM churn_g WHERE k BETWEEN -5 AND 200);
EXPLAIN (COSTS OFF) SELECT k FROM churn_g WHERE k > -100 ORDER BY k DESC;
SELECT array_agg(k) = (SELECT array_agg(k ORDER BY k DESC) FROM churn_b WHERE k > -100)
  AS backward_same
FROM (SELECT k FROM churn_g WHERE k > -100 ORDER BY k DESC) s;
SELECT k, count(*) FROM churn_g WHERE k IN (10, 50, 55, 100, 300) GROUP BY k ORDER BY k;
SELECT k, count(*) FROM churn_b WHERE k IN (10, 50, 55, 100, 300) GROUP BY k ORDER BY k;
SELECT gbtree_check('churn_g_k', true);

-- 2. PostgreSQL's mvcc test: keys inserted by subtransactions that abort,
-- with an index scan over them at the start of each round; the index must
-- not grow.  (Before 17 the aborted entries never leave the insert batch;
-- from 17 each INSERT flushes its batch when it ends, and the entries must
-- be marked and reused.)
CREATE TABLE aborted_g (key int, data text);
CREATE TABLE aborted_b (key int, data text);
CREATE INDEX aborted_g_key ON aborted_g USING gbtree (key);
CREATE INDEX aborted_b_key ON aborted_b (key);
INSERT INTO aborted_g VALUES (-1, 'just to allocate metapage');
INSERT INTO aborted_b VALUES (-1, 'just to allocate metapage');
SELECT pg_relation_size('aborted_g_key') AS aborted_g_before \gset

DO $$
BEGIN
	FOR i IN 1..100 LOOP
		BEGIN
			IF EXISTS(SELECT * FROM aborted_g WHERE key > 0 AND key < 100) OR
			   EXISTS(SELECT * FROM aborted_b WHERE key > 0 AND key < 100) THEN
				RAISE data_corrupted USING MESSAGE = 'these rows should not exist';
			END IF;
			INSERT INTO aborted_g SELECT g.i, 'rolling back in a sec' FROM generate_series(1, 100) g(i);
			INSERT INTO aborted_b SELECT g.i, 'rolling back in a sec' FROM generate_series(1, 100) g(i);
			RAISE reading_sql_data_not_permitted USING MESSAGE = 'round and round again';
		EXCEPTION WHEN reading_sql_data_not_permitted THEN
		END;
	END LOOP;
END;
$$;

SELECT count(*) FROM aborted_g WHERE key > -10;
SELECT pg_relation_size('aborted_g_key') = :aborted_g_before AS size_unchanged,
	pg_relation_size('aborted_g_key') <= 1.5 * pg_relation_size('aborted_b_key') AS size_near_btree;

-- 3. Index-only scans and a backward cursor over marked entries: the scan
-- keeps its pin on the leaf (index-only), or moves both ways (cursor).
SET enable_indexonlyscan = on;
DELETE FROM churn_g WHERE k = 50;
DELETE FROM churn_b WHERE k = 50;
EXPLAIN (COSTS OFF) SELECT k FROM churn_g WHERE k BETWEEN 40 AND 60;
SELECT k, count(*) FROM churn_g WHERE k BETWEEN 40 AND 60 GROUP BY k ORDER BY k;
SELECT k, count(*) FROM churn_g WHERE k BETWEEN 40 AND 60 GROUP BY k ORDER BY k;
SELECT k, count(*) FROM churn_b WHERE k BETWEEN 40 AND 60 GROUP BY k ORDER BY k;
SET enable_indexonlyscan = off;
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT k FROM churn_g WHERE k BETWEEN 1 AND 100 ORDER BY k;
FETCH 3 FROM c;
FETCH BACKWARD 2 FROM c;
FETCH LAST FROM c;
FETCH BACKWARD 3 FROM c;
COMMIT;

-- 4. An index scan inside a nested loop, rescanned per outer row, over
-- rows deleted in between.
CREATE TABLE outer_keys (k int4);
INSERT INTO outer_keys VALUES (10), (30), (60), (90);
DELETE FROM churn_g WHERE k = 60;
DELETE FROM churn_b WHERE k = 60;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
-- a nested loop, not GbtreeJoin (t22_join), rescans the inner index scan
SET gbtree.enable_join = off;
-- the plan: a nested loop over an index scan of churn_g (checked by a
-- function, since the display of the rest of the plan differs by major)
CREATE FUNCTION plan_has(q text, what text) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE
	l text;
BEGIN
	FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		IF l LIKE '%' || what || '%' THEN
			RETURN true;
		END IF;
	END LOOP;
	RETURN false;
END;
$$;
SELECT plan_has(q, 'Nested Loop Left Join') AS nested_loop,
	plan_has(q, 'Index Scan using churn_g_k on churn_g') AS inner_index_scan
FROM (VALUES ('SELECT o.k, count(g.k) FROM outer_keys o LEFT JOIN churn_g g ON g.k = o.k GROUP BY o.k ORDER BY o.k')) v(q);
SELECT o.k, count(g.k) FROM outer_keys o LEFT JOIN churn_g g ON g.k = o.k GROUP BY o.k ORDER BY o.k;
SELECT o.k, count(g.k) FROM outer_keys o LEFT JOIN churn_g g ON g.k = o.k GROUP BY o.k ORDER BY o.k;
SELECT o.k, count(b.k) FROM outer_keys o LEFT JOIN churn_b b ON b.k = o.k GROUP BY o.k ORDER BY o.k;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;
RESET gbtree.enable_join;

-- 5. VACUUM removes the marked entries like any dead one, and the index
-- still answers as btree does.
VACUUM churn_g;
VACUUM churn_b;
SELECT count(*), sum(k) FROM churn_g WHERE k BETWEEN -5 AND 200;
SELECT count(*), sum(k) FROM churn_b WHERE k BETWEEN -5 AND 200;
SELECT gbtree_check('churn_g_k', true);

-- 6. Multi-word indexes (several columns, uuid) mark and reuse the same
-- way: sections 1 and 2 on (k, round) and on a uuid key.
CREATE TABLE wchurn_g (k int4, round int4);
CREATE TABLE wchurn_b (k int4, round int4);
CREATE INDEX wchurn_g_k ON wchurn_g USING gbtree (k, round);
CREATE INDEX wchurn_b_k ON wchurn_b (k, round);
INSERT INTO wchurn_g SELECT g * 3, 0 FROM generate_series(-1000, 1999) g;
INSERT INTO wchurn_b SELECT g * 3, 0 FROM generate_series(-1000, 1999) g;
CREATE TABLE wsizes AS
SELECT pg_relation_size('wchurn_g_k') AS g0, pg_relation_size('wchurn_b_k') AS b0;
DO $$
BEGIN
	FOR r IN 1..100 LOOP
		INSERT INTO wchurn_g SELECT g, r FROM generate_series(1, 100) g;
		INSERT INTO wchurn_b SELECT g, r FROM generate_series(1, 100) g;
		DELETE FROM wchurn_g WHERE round = r AND k % 50 <> 0;
		DELETE FROM wchurn_b WHERE round = r AND k % 50 <> 0;
		COMMIT;
		PERFORM count(*) FROM wchurn_g WHERE k > 0 AND k <= 100;
		PERFORM count(*) FROM wchurn_b WHERE k > 0 AND k <= 100;
		COMMIT;
	END LOOP;
END;
$$;
-- without the marks: 9,800 dead entries, about 50 more leaves
SELECT pg_relation_size('wchurn_g_k') - g0 <= greatest(pg_relation_size('wchurn_b_k') - b0, 0) + 3 * 8192
	AS growth_as_btree,
	pg_relation_size('wchurn_g_k') <= 1.5 * pg_relation_size('wchurn_b_k') AS size_near_btree
FROM wsizes;
SELECT count(*), sum(k), sum(round) FROM wchurn_g WHERE k BETWEEN -5 AND 200;
SELECT count(*), sum(k), sum(round) FROM wchurn_b WHERE k BETWEEN -5 AND 200;
SELECT array_agg(k ORDER BY k DESC, round DESC) = (SELECT array_agg(k ORDER BY k DESC, round DESC)
	FROM wchurn_b WHERE k > -100) AS backward_same
FROM (SELECT k, round FROM wchurn_g WHERE k > -100 ORDER BY k DESC, round DESC) s;
SELECT gbtree_check('wchurn_g_k', true);

CREATE TABLE waborted_g (key uuid, data text);
CREATE TABLE waborted_b (key uuid, data text);
CREATE INDEX waborted_g_key ON waborted_g USING gbtree (key);
CREATE INDEX waborted_b_key ON waborted_b (key);
INSERT INTO waborted_g VALUES ('00000000-0000-0000-0000-000000000000', 'just to allocate metapage');
INSERT INTO waborted_b VALUES ('00000000-0000-0000-0000-000000000000', 'just to allocate metapage');
SELECT pg_relation_size('waborted_g_key') AS waborted_g_before \gset
DO $$
BEGIN
	FOR i IN 1..100 LOOP
		BEGIN
			IF EXISTS(SELECT * FROM waborted_g WHERE key > '00000000-0000-0000-0000-000000000000') OR
			   EXISTS(SELECT * FROM waborted_b WHERE key > '00000000-0000-0000-0000-000000000000') THEN
				RAISE data_corrupted USING MESSAGE = 'these rows should not exist';
			END IF;
			INSERT INTO waborted_g SELECT md5(g.i::text)::uuid, 'rolling back in a sec' FROM generate_series(1, 100) g(i);
			INSERT INTO waborted_b SELECT md5(g.i::text)::uuid, 'rolling back in a sec' FROM generate_series(1, 100) g(i);
			RAISE reading_sql_data_not_permitted USING MESSAGE = 'round and round again';
		EXCEPTION WHEN reading_sql_data_not_permitted THEN
		END;
	END LOOP;
END;
$$;
SELECT count(*) FROM waborted_g WHERE key >= '00000000-0000-0000-0000-000000000000';
SELECT pg_relation_size('waborted_g_key') = :waborted_g_before AS size_unchanged,
	pg_relation_size('waborted_g_key') <= 1.5 * pg_relation_size('waborted_b_key') AS size_near_btree;
SELECT gbtree_check('waborted_g_key', true);

RESET enable_seqscan;
RESET enable_bitmapscan;
RESET enable_indexonlyscan;
RESET gbtree.device;
DROP TABLE churn_g, churn_b, aborted_g, aborted_b, outer_keys, sizes;
DROP TABLE wchurn_g, wchurn_b, wsizes, waborted_g, waborted_b;
DROP FUNCTION plan_has(text, text);
