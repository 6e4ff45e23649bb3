--
-- Single-row inserts whose keys ascend where they go in: a non-unique
-- index on a serial or a creation time (the tree's right end), a key's
-- duplicates in heap order, a group's newest rows in an index on
-- (tenant, ts), a run in the middle of a one-word tree.  A one-row
-- statement's batch splits a leaf that grows at its end as a single insert
-- does (the fill factor's share kept, the right page packed), and the
-- pages that a run goes on in keep their free slots where it goes
-- (src/README, "Ascending runs").  Each part against its btree twin:
-- the sizes (once half full pages: 1.5x btree's) and the rows under
-- forced index, index-only, bitmap and sequential scans, then later
-- inserts at random into the packed pages, and gbtree_check.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
SET max_parallel_workers_per_gather = 0;
SET jit = off;
-- a transaction a row (ai_fill): no WAL flush at each commit
SET synchronous_commit = off;

-- the twins' functions (tw_one, tw_both, tw_shape, tw_diff)
\getenv abs_srcdir PG_ABS_SRCDIR
\set twins :abs_srcdir '/sql/helpers/twins.sql'
\i :twins

-- n single-row INSERTs into g and into b, each a transaction of its own
-- (before PostgreSQL 17 an insert batch spans the transaction: "Batched
-- insertion"), in turn; the values of row i: vals with # replaced by i
CREATE PROCEDURE ai_fill(g text, b text, vals text, n int, first int DEFAULT 1)
LANGUAGE plpgsql AS $f$
BEGIN
	FOR i IN first .. first + n - 1 LOOP
		EXECUTE format('INSERT INTO %I VALUES (%s)', g, replace(vals, '#', i::text));
		COMMIT;
	END LOOP;
	FOR i IN first .. first + n - 1 LOOP
		EXECUTE format('INSERT INTO %I VALUES (%s)', b, replace(vals, '#', i::text));
		COMMIT;
	END LOOP;
END
$f$;

-- 1. A serial key, non-unique: 12,000 rows at the tree's right end.
CREATE TABLE sk_g (k int8, pay int) WITH (autovacuum_enabled = off);
CREATE TABLE sk_b (k int8, pay int) WITH (autovacuum_enabled = off);
CREATE INDEX sk_g_idx ON sk_g USING gbtree (k);
CREATE INDEX sk_b_idx ON sk_b USING btree (k);
CALL ai_fill('sk_g', 'sk_b', '#, # % 7', 12000);
SELECT pg_relation_size('sk_g_idx') <= pg_relation_size('sk_b_idx') * 1.1 AS serial_as_dense_as_btree;
SELECT gbtree_check('sk_g_idx', true);
SELECT tw_diff('sk_g', 'sk_b', 'k, pay', 'k > 0', 'k', 100);
SELECT tw_diff('sk_g', 'sk_b', 'k, pay', 'k BETWEEN 3000 AND 9000');
SELECT tw_diff('sk_g', 'sk_b', 'k', 'k = ANY (ARRAY[1, 441, 442, 11999, 12000, 12001])');
SELECT tw_diff('sk_g', 'sk_b', 'k, pay', 'k < 20000', 'k DESC', 500);
-- then keys at random into its packed pages, as a later backfill would
CALL ai_fill('sk_g', 'sk_b', '(# * 7919) % 12000, -1', 1500, 1);
SELECT gbtree_check('sk_g_idx', true);
SELECT tw_diff('sk_g', 'sk_b', 'k, pay', 'true');
SELECT tw_diff('sk_g', 'sk_b', 'k, pay', 'k >= 5000', 'k, pay', 300, false);

-- 2. A key's duplicates in heap order: 50 rows a key, keys ascending.
CREATE TABLE dk_g (k int4, pay int) WITH (autovacuum_enabled = off);
CREATE TABLE dk_b (k int4, pay int) WITH (autovacuum_enabled = off);
CREATE INDEX dk_g_idx ON dk_g USING gbtree (k);
CREATE INDEX dk_b_idx ON dk_b USING btree (k);
CALL ai_fill('dk_g', 'dk_b', '# / 50, #', 8000);
SELECT gbtree_check('dk_g_idx', true);
SELECT tw_diff('dk_g', 'dk_b', 'k, pay', 'k = 42');
SELECT tw_diff('dk_g', 'dk_b', 'k, pay', 'k BETWEEN 10 AND 99');
SELECT tw_diff('dk_g', 'dk_b', 'k', 'k >= 150', 'k DESC', 400);

-- 3. (tenant, ts), 50 tenants, rows in time order: each tenant's keys
-- ascend inside the tree.
CREATE TABLE tt_g (tenant int4, ts timestamptz) WITH (autovacuum_enabled = off);
CREATE TABLE tt_b (tenant int4, ts timestamptz) WITH (autovacuum_enabled = off);
CREATE INDEX tt_g_idx ON tt_g USING gbtree (tenant, ts);
CREATE INDEX tt_b_idx ON tt_b USING btree (tenant, ts);
CALL ai_fill('tt_g', 'tt_b',
			   '# % 50, ''2026-01-01 00:00:00+00''::timestamptz + make_interval(secs => #)', 10000);
-- (within a tenth of btree's: splits by halves left such groups' leaves
-- half full for good)
SELECT pg_relation_size('tt_g_idx') <= pg_relation_size('tt_b_idx') * 1.1 AS groups_as_dense_as_btree;
SELECT gbtree_check('tt_g_idx', true);
SELECT tw_diff('tt_g', 'tt_b', 'tenant, ts', 'tenant = 7', 'ts DESC', 50);
SELECT tw_diff('tt_g', 'tt_b', 'tenant, ts', 'tenant BETWEEN 20 AND 24', 'tenant, ts');
SELECT tw_diff('tt_g', 'tt_b', 'tenant, ts',
			   'tenant = 33 AND ts > ''2026-01-01 01:00:00+00''');
-- (a row comparison is an index condition for btree alone: the planner's
-- match_rowcompare_to_indexcol; gbtree's plan filters, so plans differ)
SELECT tw_diff('tt_g', 'tt_b', 'tenant, ts', '(tenant, ts) > (48, ''2026-01-01 02:00:00+00'')',
			   'tenant, ts', 100, false);
-- a few tenants' rows at random times into the packed pages
CALL ai_fill('tt_g', 'tt_b',
			   '# % 3, ''2026-01-01 00:00:00+00''::timestamptz + make_interval(secs => (# * 7919) % 10000)',
			   900, 1);
SELECT gbtree_check('tt_g_idx', true);
SELECT tw_diff('tt_g', 'tt_b', 'tenant, ts', 'tenant < 3');
SELECT tw_diff('tt_g', 'tt_b', 'tenant, ts', 'true');

-- 4. Runs in the middle of a one-word tree: a built index over spread
-- keys, then for each of three places an ascending run of single-row
-- inserts (heap rows one after the other), interleaved, and keys at
-- random among them.
CREATE TABLE mr_g (k int8, pay int) WITH (autovacuum_enabled = off);
CREATE TABLE mr_b (k int8, pay int) WITH (autovacuum_enabled = off);
INSERT INTO mr_g SELECT i * 1000, 0 FROM generate_series(1, 20000) i;
INSERT INTO mr_b SELECT * FROM mr_g;
CREATE INDEX mr_g_idx ON mr_g USING gbtree (k);
CREATE INDEX mr_b_idx ON mr_b USING btree (k);
CALL ai_fill('mr_g', 'mr_b', '(ARRAY[2000000, 9000000, 17000000])[# % 3 + 1] + # / 3 + 1, #', 3000);
CALL ai_fill('mr_g', 'mr_b', '(# * 104729) % 20000000, -#', 1000, 1);
SELECT gbtree_check('mr_g_idx', true);
SELECT tw_diff('mr_g', 'mr_b', 'k, pay', 'k BETWEEN 1999000 AND 2002000');
SELECT tw_diff('mr_g', 'mr_b', 'k, pay', 'k BETWEEN 8990000 AND 9010000', 'k DESC, pay', 800, false);
SELECT tw_diff('mr_g', 'mr_b', 'k, pay', 'true');
-- the twins' functions go, for the tests after this one
DROP FUNCTION tw_one(text), tw_both(text, text, text), tw_shape(text, text),
	tw_diff(text, text, text, text, text, int, boolean), tw_order(text, text, text, text);
