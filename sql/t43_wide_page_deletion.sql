--
-- VACUUM deletes the empty leaves of multi-word trees, as it does those of
-- one-word trees (src/README, "VACUUM"), and their splits reuse the pages
-- deleted: a table whose rows come and go by time (a rolling window on
-- (tenant, ts), keys with tails, uuids) keeps an index of bounded size,
-- where before every emptied leaf stayed in the tree for good.  Every
-- query runs on a gbtree table and on its btree twin, rows compared under
-- forced index, index-only, bitmap and sequential scans; every round ends
-- with gbtree_check(index, true).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
SET max_parallel_workers_per_gather = 0;
SET jit = off;

-- the twins' functions (tw_one, tw_both, tw_shape, tw_diff)
\getenv abs_srcdir PG_ABS_SRCDIR
\set twins :abs_srcdir '/sql/helpers/twins.sql'
\i :twins

CREATE TABLE pd_sizes (step text, g bigint, b bigint);

-- 1. A rolling window on (tenant, ts), two words a key: each round adds
-- 6,000 rows of later times spread over 20 tenants and keeps the last
-- three rounds, then VACUUM.  Each tenant's oldest leaves empty out; their
-- pages are unlinked, then reused by later splits.
CREATE TABLE rw_g (id int, tenant int4, ts timestamptz, pay int) WITH (autovacuum_enabled = off);
CREATE TABLE rw_b (id int, tenant int4, ts timestamptz, pay int) WITH (autovacuum_enabled = off);
CREATE INDEX rw_g_idx ON rw_g USING gbtree (tenant, ts);
CREATE INDEX rw_b_idx ON rw_b USING btree (tenant, ts);
CREATE FUNCTION rw_round(r int) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
	INSERT INTO rw_g SELECT r * 6000 + i, i % 20,
		'2026-01-01 00:00:00+00'::timestamptz + make_interval(secs => r * 6000 + i), i
	FROM generate_series(1, 6000) i;
	INSERT INTO rw_b SELECT * FROM rw_g WHERE id > r * 6000;
	DELETE FROM rw_g WHERE id <= (r - 2) * 6000;
	DELETE FROM rw_b WHERE id <= (r - 2) * 6000;
END
$f$;
SELECT rw_round(1);
VACUUM rw_g, rw_b;
SELECT rw_round(2);
VACUUM rw_g, rw_b;
SELECT rw_round(3);
VACUUM rw_g, rw_b;
SELECT gbtree_check('rw_g_idx', true);
SELECT rw_round(4);
VACUUM rw_g, rw_b;
SELECT gbtree_check('rw_g_idx', true);
SELECT rw_round(5);
VACUUM rw_g, rw_b;
SELECT rw_round(6);
VACUUM rw_g, rw_b;
SELECT rw_round(7);
VACUUM rw_g, rw_b;
INSERT INTO pd_sizes SELECT 'rw 7', pg_relation_size('rw_g_idx'), pg_relation_size('rw_b_idx');
SELECT gbtree_check('rw_g_idx', true);
SELECT rw_round(8);
VACUUM rw_g, rw_b;
SELECT rw_round(9);
VACUUM rw_g, rw_b;
SELECT rw_round(10);
VACUUM rw_g, rw_b;
SELECT rw_round(11);
VACUUM rw_g, rw_b;
INSERT INTO pd_sizes SELECT 'rw 11', pg_relation_size('rw_g_idx'), pg_relation_size('rw_b_idx');
SELECT gbtree_check('rw_g_idx', true);
-- both indexes stop growing once pages deleted come back for reuse (two
-- VACUUMs after their deletion, when no snapshot can reach them); until
-- then gbtree's grows by some 40 pages a round, as it would for good
-- without page deletion
SELECT (SELECT g FROM pd_sizes WHERE step = 'rw 11') <=
	   (SELECT g FROM pd_sizes WHERE step = 'rw 7') * 1.25 AS gbtree_stopped_growing,
	   (SELECT b FROM pd_sizes WHERE step = 'rw 11') <=
	   (SELECT b FROM pd_sizes WHERE step = 'rw 7') * 1.25 AS btree_stopped_growing;
SELECT tw_diff('rw_g', 'rw_b', 'tenant, ts', 'tenant = 7', 'ts DESC', 50);
SELECT tw_diff('rw_g', 'rw_b', 'tenant, ts', 'tenant = 7', 'tenant, ts', 50);
SELECT tw_diff('rw_g', 'rw_b', 'tenant, ts', 'tenant = 3 AND ts < ''2026-01-01 17:00:00+00''');
SELECT tw_diff('rw_g', 'rw_b', 'tenant, ts', 'tenant BETWEEN 5 AND 8', 'tenant DESC, ts DESC');
SELECT tw_diff('rw_g', 'rw_b', 'tenant, ts', 'tenant = ANY (''{0,4,19,20}'')');
SELECT tw_diff('rw_g', 'rw_b', 'tenant, ts', 'true', 'tenant, ts');
SELECT tw_diff('rw_g', 'rw_b', 'tenant, ts', 'true', 'tenant DESC, ts DESC');
-- the times deleted are gone from every plan
SELECT tw_diff('rw_g', 'rw_b', 'id', 'tenant = 11 AND ts < ''2026-01-01 14:00:00+00''');

-- 2. Text keys longer than the key's words (their tails on tailed pages):
-- the right sibling of a deleted leaf takes its low key, tail included.
CREATE TABLE tl_g (id int, s text COLLATE "C") WITH (autovacuum_enabled = off);
CREATE TABLE tl_b (id int, s text COLLATE "C") WITH (autovacuum_enabled = off);
CREATE INDEX tl_g_idx ON tl_g USING gbtree (s);
CREATE INDEX tl_b_idx ON tl_b USING btree (s);
CREATE FUNCTION tl_round(r int) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
	INSERT INTO tl_g SELECT r * 3000 + i,
		'key/' || lpad((r * 3000 + i)::text, 9, '0') || repeat('/tail', 8 + i % 5)
	FROM generate_series(1, 3000) i;
	INSERT INTO tl_b SELECT * FROM tl_g WHERE id > r * 3000;
	DELETE FROM tl_g WHERE id <= (r - 2) * 3000;
	DELETE FROM tl_b WHERE id <= (r - 2) * 3000;
END
$f$;
SELECT tl_round(1);
VACUUM tl_g, tl_b;
SELECT tl_round(2);
VACUUM tl_g, tl_b;
SELECT tl_round(3);
VACUUM tl_g, tl_b;
SELECT tl_round(4);
VACUUM tl_g, tl_b;
SELECT gbtree_check('tl_g_idx', true);
SELECT tl_round(5);
VACUUM tl_g, tl_b;
SELECT tl_round(6);
VACUUM tl_g, tl_b;
SELECT tl_round(7);
VACUUM tl_g, tl_b;
INSERT INTO pd_sizes SELECT 'tl 7', pg_relation_size('tl_g_idx'), pg_relation_size('tl_b_idx');
SELECT tl_round(8);
VACUUM tl_g, tl_b;
SELECT tl_round(9);
VACUUM tl_g, tl_b;
SELECT tl_round(10);
VACUUM tl_g, tl_b;
SELECT tl_round(11);
VACUUM tl_g, tl_b;
INSERT INTO pd_sizes SELECT 'tl 11', pg_relation_size('tl_g_idx'), pg_relation_size('tl_b_idx');
SELECT gbtree_check('tl_g_idx', true);
SELECT (SELECT g FROM pd_sizes WHERE step = 'tl 11') <=
	   (SELECT g FROM pd_sizes WHERE step = 'tl 7') * 1.25 AS gbtree_stopped_growing,
	   (SELECT b FROM pd_sizes WHERE step = 'tl 11') <=
	   (SELECT b FROM pd_sizes WHERE step = 'tl 7') * 1.25 AS btree_stopped_growing;
SELECT tw_diff('tl_g', 'tl_b', 'id, s', 's >= ''key/000031000'' AND s < ''key/000032000''');
SELECT tw_diff('tl_g', 'tl_b', 's', 'true', 's DESC', 400);
SELECT tw_diff('tl_g', 'tl_b', 's', 'true', 's');
SELECT tw_diff('tl_g', 'tl_b', 'id', 's = ''key/000031999'' || repeat(''/tail'', 12)');
SELECT tw_diff('tl_g', 'tl_b', 'id', 's < ''key/000030999''');

-- 3. uuid with NULLs (the NULL tree), and a unique twin of two columns:
-- a range of keys and every NULL deleted, then written again into the
-- unlinked ranges.
CREATE TABLE uu_g (id int, u uuid, t int4) WITH (autovacuum_enabled = off);
CREATE TABLE uu_b (id int, u uuid, t int4) WITH (autovacuum_enabled = off);
CREATE INDEX uu_g_u ON uu_g USING gbtree (u);
CREATE INDEX uu_b_u ON uu_b USING btree (u);
CREATE UNIQUE INDEX uu_g_tu ON uu_g USING gbtree (t, u);
CREATE UNIQUE INDEX uu_b_tu ON uu_b USING btree (t, u);
INSERT INTO uu_g SELECT g, CASE WHEN g % 4 = 0 THEN NULL ELSE md5(g::text)::uuid END, g % 3
FROM generate_series(1, 20000) g;
INSERT INTO uu_b SELECT * FROM uu_g;
DELETE FROM uu_g WHERE u < '60000000-0000-0000-0000-000000000000' OR u IS NULL;
DELETE FROM uu_b WHERE u < '60000000-0000-0000-0000-000000000000' OR u IS NULL;
VACUUM uu_g, uu_b;
SELECT gbtree_check('uu_g_u', true), gbtree_check('uu_g_tu', true);
SELECT tw_diff('uu_g', 'uu_b', 'u', 'u < ''80000000-0000-0000-0000-000000000000''', 'u DESC', 300);
SELECT tw_diff('uu_g', 'uu_b', 'u', 'u IS NULL');
SELECT tw_diff('uu_g', 'uu_b', 't, u', 't = 1', 't, u', 300);
-- the deleted range and the NULLs written again (splits reuse the pages),
-- then a key the unique index holds
SELECT tw_both('INSERT INTO %s SELECT 100000 + g, CASE WHEN g %% 5 = 0 THEN NULL ELSE md5(''n'' || g)::uuid END, g %% 3 FROM generate_series(1, 12000) g', 'uu_g', 'uu_b');
SELECT tw_both('INSERT INTO %s SELECT 200000, u, t FROM %1$s WHERE id = 100007', 'uu_g', 'uu_b');
SELECT gbtree_check('uu_g_u', true), gbtree_check('uu_g_tu', true);
SELECT tw_diff('uu_g', 'uu_b', 'u', 'u < ''60000000-0000-0000-0000-000000000000''', 'u', 300);
SELECT tw_diff('uu_g', 'uu_b', 'id, u', 'u IS NULL');
SELECT tw_diff('uu_g', 'uu_b', 'id, t, u', 't = 2 AND u < ''30000000-0000-0000-0000-000000000000''');
SELECT tw_diff('uu_g', 'uu_b', 'u', 'true', 'u DESC NULLS LAST');
-- the twins' functions go, for the tests after this one
DROP FUNCTION tw_one(text), tw_both(text, text, text), tw_shape(text, text),
	tw_diff(text, text, text, text, text, int, boolean), tw_order(text, text, text, text);
