--
-- Queue tables: rows come in at the high end of the key and go from the
-- low end.  VACUUM deletes a leaf it empties; one that is the only child
-- of its parent goes with the parent (gbt_give_only_child: the parent's
-- right sibling takes the leaf's downlink), so no empty leaf stays in
-- front of the live ones, and ORDER BY key LIMIT 1 reads as many pages as
-- btree's (src/README, "VACUUM").  Before, each parent kept its last
-- empty leaf, and that LIMIT 1 read one more page per parent the queue
-- had passed through.  Fill factor 10 gives trees of three levels at
-- 100,000 rows; every query runs on a gbtree table and on its btree twin,
-- and each step ends with gbtree_check(index, true).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
SET max_parallel_workers_per_gather = 0;
SET jit = off;

-- the twins' functions (tw_one, tw_both, tw_shape, tw_diff)
\getenv abs_srcdir PG_ABS_SRCDIR
\set twins :abs_srcdir '/sql/helpers/twins.sql'
\i :twins

-- pages one index scan reads (its plan's shared buffers, hit or read),
-- on the CPU path: where a GPU serves it (the GPU suites), a scan's first
-- batch ships the whole index to the device
CREATE FUNCTION qp_pages(q text) RETURNS int LANGUAGE plpgsql AS $f$
DECLARE
	j json;
BEGIN
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_bitmapscan = off;
	PERFORM set_config('gbtree.device', 'cpu', true);
	EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO j;
	RETURN (j -> 0 -> 'Plan' ->> 'Shared Hit Blocks')::int +
		(j -> 0 -> 'Plan' ->> 'Shared Read Blocks')::int;
END
$f$;

-- gbtree's query reads no more than one page more than btree's (the
-- metapage); the plans must be index scans of the index named
CREATE FUNCTION qp_compare(qg text, qb text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
	g int := qp_pages(qg);
	b int := qp_pages(qb);
BEGIN
	IF g <= b + 1 THEN
		RETURN 'pages: as btree';
	END IF;
	RETURN format('pages: gbtree %s, btree %s', g, b);
END
$f$;

-- 1. A queue of one-word keys: 100,000 ids, the first 95,000 deleted.
CREATE TABLE qq_g (id int8, pay int) WITH (autovacuum_enabled = off);
CREATE TABLE qq_b (id int8, pay int) WITH (autovacuum_enabled = off);
INSERT INTO qq_g SELECT g, g % 97 FROM generate_series(1, 100000) g;
INSERT INTO qq_b SELECT * FROM qq_g;
CREATE INDEX qq_g_idx ON qq_g USING gbtree (id) WITH (fillfactor = 10);
CREATE INDEX qq_b_idx ON qq_b USING btree (id) WITH (fillfactor = 10);
DELETE FROM qq_g WHERE id <= 95000;
DELETE FROM qq_b WHERE id <= 95000;
VACUUM qq_g, qq_b;
SELECT gbtree_check('qq_g_idx', true);
SELECT qp_compare('SELECT id FROM qq_g ORDER BY id LIMIT 1', 'SELECT id FROM qq_b ORDER BY id LIMIT 1');
SELECT tw_diff('qq_g', 'qq_b', 'id, pay', 'true', 'id', 10);
SELECT tw_diff('qq_g', 'qq_b', 'id', 'id < 95100', 'id DESC');
-- churn: 20,000 in at the top, the oldest 20,000 out, three times
CREATE FUNCTION qq_round(r int) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
	INSERT INTO qq_g SELECT g, g % 97 FROM generate_series(100000 + (r - 1) * 20000 + 1, 100000 + r * 20000) g;
	INSERT INTO qq_b SELECT * FROM qq_g WHERE id > 100000 + (r - 1) * 20000;
	DELETE FROM qq_g WHERE id <= 95000 + r * 20000;
	DELETE FROM qq_b WHERE id <= 95000 + r * 20000;
END
$f$;
SELECT qq_round(1);
VACUUM qq_g, qq_b;
SELECT qq_round(2);
VACUUM qq_g, qq_b;
SELECT qq_round(3);
VACUUM qq_g, qq_b;
SELECT gbtree_check('qq_g_idx', true);
SELECT qp_compare('SELECT id FROM qq_g ORDER BY id LIMIT 1', 'SELECT id FROM qq_b ORDER BY id LIMIT 1');
SELECT qp_compare('SELECT min(id) FROM qq_g', 'SELECT min(id) FROM qq_b');
SELECT tw_diff('qq_g', 'qq_b', 'id, pay', 'true', 'id', 10);
SELECT tw_diff('qq_g', 'qq_b', 'id, pay', 'id BETWEEN 150000 AND 156000');
SELECT tw_diff('qq_g', 'qq_b', 'id', 'true', 'id DESC', 25);
-- the pages deleted come back for later splits
SELECT tw_both('INSERT INTO %s SELECT g, 0 FROM generate_series(200001, 260000) g', 'qq_g', 'qq_b');
SELECT gbtree_check('qq_g_idx', true);
SELECT tw_diff('qq_g', 'qq_b', 'id', 'id > 159990', 'id', 30);

-- 2. A range in the middle emptied: ids 20,001 to 80,000 of 100,000.
-- The parents it empties have siblings on both sides, and the parent
-- where it starts keeps its other children: its last child moves to its
-- right sibling, which takes the range from there, and is then deleted.
CREATE TABLE qm_g (id int8) WITH (autovacuum_enabled = off);
CREATE TABLE qm_b (id int8) WITH (autovacuum_enabled = off);
INSERT INTO qm_g SELECT g FROM generate_series(1, 100000) g;
INSERT INTO qm_b SELECT * FROM qm_g;
CREATE INDEX qm_g_idx ON qm_g USING gbtree (id) WITH (fillfactor = 10);
CREATE INDEX qm_b_idx ON qm_b USING btree (id) WITH (fillfactor = 10);
DELETE FROM qm_g WHERE id BETWEEN 20001 AND 80000;
DELETE FROM qm_b WHERE id BETWEEN 20001 AND 80000;
VACUUM qm_g, qm_b;
SELECT gbtree_check('qm_g_idx', true);
SELECT qp_compare('SELECT id FROM qm_g WHERE id > 20000 ORDER BY id LIMIT 3',
				  'SELECT id FROM qm_b WHERE id > 20000 ORDER BY id LIMIT 3');
-- no empty leaf is left in the range: a count of every entry from the
-- range's start reads no more leaves than the entries fill
SELECT qp_pages('SELECT count(*) FROM (SELECT id FROM qm_g WHERE id > 19000 ORDER BY id LIMIT 3000) s') <=
	   qp_pages('SELECT count(*) FROM (SELECT id FROM qm_b WHERE id > 19000 ORDER BY id LIMIT 3000) s') + 1
	AS no_more_pages_than_btree;
SELECT tw_diff('qm_g', 'qm_b', 'id', 'id BETWEEN 19990 AND 80010', 'id');
SELECT tw_diff('qm_g', 'qm_b', 'id', 'id BETWEEN 19990 AND 80010', 'id DESC');
SELECT tw_diff('qm_g', 'qm_b', 'id', 'id = ANY (''{1,20000,20001,50000,80000,80001,100000}'')');
-- written again into the emptied range
SELECT tw_both('INSERT INTO %s SELECT g FROM generate_series(30001, 70000, 3) g', 'qm_g', 'qm_b');
SELECT gbtree_check('qm_g_idx', true);
SELECT tw_diff('qm_g', 'qm_b', 'id', 'id BETWEEN 19990 AND 80010', 'id');

-- 3. A queue of two-word keys (a constant tenant and an id), and its NULLs.
CREATE TABLE qw_g (t int4, id int8) WITH (autovacuum_enabled = off);
CREATE TABLE qw_b (t int4, id int8) WITH (autovacuum_enabled = off);
INSERT INTO qw_g SELECT 7, CASE WHEN g % 1000 = 0 THEN NULL ELSE g END FROM generate_series(1, 100000) g;
INSERT INTO qw_b SELECT * FROM qw_g;
CREATE INDEX qw_g_idx ON qw_g USING gbtree (t, id) WITH (fillfactor = 10);
CREATE INDEX qw_b_idx ON qw_b USING btree (t, id) WITH (fillfactor = 10);
DELETE FROM qw_g WHERE id <= 95000;
DELETE FROM qw_b WHERE id <= 95000;
VACUUM qw_g, qw_b;
SELECT gbtree_check('qw_g_idx', true);
SELECT qp_compare('SELECT t, id FROM qw_g ORDER BY t, id LIMIT 1', 'SELECT t, id FROM qw_b ORDER BY t, id LIMIT 1');
SELECT tw_diff('qw_g', 'qw_b', 't, id', 't = 7', 't, id', 10);
SELECT tw_diff('qw_g', 'qw_b', 't, id', 't = 7 AND id IS NULL');
SELECT tw_both('INSERT INTO %s SELECT 7, g FROM generate_series(100001, 150000) g', 'qw_g', 'qw_b');
SELECT tw_both('DELETE FROM %s WHERE id <= 140000', 'qw_g', 'qw_b');
VACUUM qw_g, qw_b;
SELECT gbtree_check('qw_g_idx', true);
SELECT qp_compare('SELECT t, id FROM qw_g ORDER BY t, id LIMIT 1', 'SELECT t, id FROM qw_b ORDER BY t, id LIMIT 1');
SELECT tw_diff('qw_g', 'qw_b', 't, id', 't = 7', 't, id', 10);
SELECT tw_diff('qw_g', 'qw_b', 't, id', 't = 7', 't DESC, id DESC', 10);

DROP TABLE qq_g, qq_b, qm_g, qm_b, qw_g, qw_b;
DROP FUNCTION qp_pages(text), qp_compare(text, text), qq_round(int);
-- the twins' functions go, for the tests after this one
DROP FUNCTION tw_one(text), tw_both(text, text, text), tw_shape(text, text),
	tw_diff(text, text, text, text, text, int, boolean), tw_order(text, text, text, text);
