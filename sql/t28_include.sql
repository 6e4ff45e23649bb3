--
-- INCLUDE columns (src/README, "Multi-word keys"): carried in the entries
-- after the key columns, returned by index-only scans, never compared by
-- a unique check.  Every query runs on a gbtree table and on its btree
-- twin; rows are compared under forced index, index-only, bitmap and
-- sequential scans, and the plans of both under the same settings.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
SET max_parallel_workers_per_gather = 0;
SET jit = off;

-- the twins' functions (tw_one, tw_both, tw_shape, tw_diff)
\getenv abs_srcdir PG_ABS_SRCDIR
\set twins :abs_srcdir '/sql/helpers/twins.sql'
\i :twins

-- 1. One key column and INCLUDE columns of several widths, with NULLs in
-- any of them (all the columns' bits count against the 256 of a key); a build, then inserts, updates of INCLUDE columns only
-- and of the key, deletes, VACUUM.
CREATE TABLE ig (id serial, k int8, p int4, q uuid, r float8, s bool, t text);
CREATE TABLE ib (id serial, k int8, p int4, q uuid, r float8, s bool, t text);
INSERT INTO ig (k, p, q, r, s, t)
  SELECT g % 3000, CASE WHEN g % 13 = 0 THEN NULL ELSE g END, md5(g::text)::uuid,
		 CASE g % 7 WHEN 0 THEN 'NaN' WHEN 1 THEN '-0' ELSE g / 7.0 END, g % 2 = 0, 'x' || g
  FROM generate_series(1, 12000) g;
INSERT INTO ib SELECT * FROM ig ORDER BY id;
SELECT tw_both('CREATE INDEX %1$I_k ON %1$I USING %2$s (k) INCLUDE (p, r, s)', 'ig', 'ib');
SELECT tw_both('CREATE INDEX %1$I_kq ON %1$I USING %2$s (k) INCLUDE (q)', 'ig', 'ib');
VACUUM ANALYZE ig, ib;
SELECT tw_diff('ig', 'ib', 'k, p, r, s', 'k = 17');
SELECT tw_diff('ig', 'ib', 'k, p, r, s', 'k BETWEEN 100 AND 140');
SELECT tw_diff('ig', 'ib', 'k, p, r', 'k = ANY (''{1,5,2999,NULL,-1}'')');
SELECT tw_diff('ig', 'ib', 'k, q', 'k > 2990', 'k', 40);
SELECT tw_diff('ig', 'ib', 'k, q', 'k = 44');
SELECT tw_diff('ig', 'ib', 'k, q', 'k < 10', 'k DESC', 40);
SELECT tw_diff('ig', 'ib', 'k, p', 'k = 5 AND p IS NULL');
SELECT tw_diff('ig', 'ib', 'k, p', 'k = 5 AND p > 6000');
SELECT tw_diff('ig', 'ib', 'k, s', 'k IS NULL');
SELECT tw_both('INSERT INTO %1$I (k, p, q, r, s) SELECT mod(g, 4000), g, NULL, NULL, NULL FROM generate_series(1, 6000) g', 'ig', 'ib');
SELECT tw_both('UPDATE %1$I SET p = p + 1, q = NULL WHERE k = 17', 'ig', 'ib');
SELECT tw_both('UPDATE %1$I SET k = NULL WHERE k = 18', 'ig', 'ib');
SELECT tw_both('DELETE FROM %1$I WHERE k BETWEEN 200 AND 400', 'ig', 'ib');
VACUUM ANALYZE ig, ib;
SELECT tw_diff('ig', 'ib', 'k, p, r, s', 'k = 17');
SELECT tw_diff('ig', 'ib', 'k, p, r, s', 'k IS NULL');
SELECT tw_diff('ig', 'ib', 'k, p', 'k BETWEEN 150 AND 450');
SELECT tw_diff('ig', 'ib', 'k, q', 'k BETWEEN 150 AND 450');
SELECT tw_diff('ig', 'ib', 'k, p', 'k >= 3990', 'k', 100);
SELECT gbtree_check('ig_k', true), gbtree_check('ig_kq', true);
-- gbtree's count, array and join scans take one-column one-word indexes
-- only: on an index with INCLUDE columns the core's plans run instead
SET enable_seqscan = off;
SELECT (SELECT count(*) FROM ig WHERE k BETWEEN 100 AND 900) =
	   (SELECT count(*) FROM ib WHERE k BETWEEN 100 AND 900) AS count_same,
	   (SELECT sum(p) FROM ig WHERE k = ANY ('{3,5,7,3000,3999}')) =
	   (SELECT sum(p) FROM ib WHERE k = ANY ('{3,5,7,3000,3999}')) AS array_same,
	   (SELECT count(*) FROM generate_series(1, 50) x JOIN ig ON ig.k = x) =
	   (SELECT count(*) FROM generate_series(1, 50) x JOIN ib ON ib.k = x) AS join_same;
RESET enable_seqscan;

-- 2. Two key columns, DESC, and an INCLUDE column; conditions on the keys
-- only can use the index, ORDER BY the keys in either direction.
SELECT tw_both('CREATE INDEX %1$I_kp ON %1$I USING %2$s (k DESC, s) INCLUDE (r)', 'ig', 'ib');
VACUUM ANALYZE ig, ib;
SELECT tw_diff('ig', 'ib', 'k, s, r', 'k = 9 AND s > false');
SELECT tw_diff('ig', 'ib', 'k, s, r', 'k = 9', 'k DESC, s', 10);
SELECT tw_diff('ig', 'ib', 'k, s, r', 'k < 50', 'k, s DESC', 60);
SELECT gbtree_check('ig_kp', true);

-- 3. Unique over the key columns only: an equal key with other INCLUDE
-- values is a duplicate; NULL keys are distinct.
CREATE TABLE ug (id serial, k int4, pay int8);
CREATE TABLE ub (id serial, k int4, pay int8);
SELECT tw_both('CREATE UNIQUE INDEX %1$I_k ON %1$I USING %2$s (k) INCLUDE (pay)', 'ug', 'ub');
SELECT tw_both('INSERT INTO %1$I (k, pay) SELECT g, g * 10 FROM generate_series(1, 5000) g', 'ug', 'ub');
SELECT tw_both('INSERT INTO %1$I (k, pay) VALUES (77, 770)', 'ug', 'ub');
SELECT tw_both('INSERT INTO %1$I (k, pay) VALUES (77, 1)', 'ug', 'ub');
SELECT tw_both('INSERT INTO %1$I (k, pay) VALUES (77, NULL)', 'ug', 'ub');
SELECT tw_both('INSERT INTO %1$I (k, pay) VALUES (NULL, 1), (NULL, 1)', 'ug', 'ub');
SELECT tw_both('UPDATE %1$I SET pay = -pay WHERE k BETWEEN 10 AND 20', 'ug', 'ub');
SELECT tw_both('UPDATE %1$I SET k = 11 WHERE k = 12', 'ug', 'ub');
SELECT tw_both('INSERT INTO %1$I (k, pay) VALUES (5001, 0), (5002, 0), (5001, 9)', 'ug', 'ub');
SELECT tw_both('CREATE UNIQUE INDEX %1$I_kp2 ON %1$I USING %2$s (pay) INCLUDE (k)', 'ug', 'ub');
SELECT tw_both('INSERT INTO %1$I (k, pay) VALUES (6000, 1)', 'ug', 'ub');
SELECT tw_both('CREATE UNIQUE INDEX %1$I_kp3 ON %1$I USING %2$s (pay) INCLUDE (k)', 'ug', 'ub');
VACUUM ANALYZE ug, ub;
SELECT tw_diff('ug', 'ub', 'k, pay', 'k BETWEEN 5 AND 25');
SELECT tw_diff('ug', 'ub', 'k, pay', 'k IS NULL');
SELECT gbtree_check('ug_k', true);

-- 4. A text INCLUDE column takes the room the key leaves (t29_text);
-- refused: a key wider than 256 bits with its INCLUDE columns.
SELECT tw_one('CREATE INDEX ig_t ON ig USING gbtree (k) INCLUDE (t)');
SELECT tw_one('CREATE INDEX ig_w ON ig USING gbtree (q) INCLUDE (q, r)');

DROP TABLE ig, ib, ug, ub;
DROP FUNCTION tw_one(text), tw_both(text, text, text), tw_shape(text, text),
	tw_diff(text, text, text, text, text, int, boolean), tw_order(text, text, text, text);
