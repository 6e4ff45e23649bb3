--
-- batched inserts into a leaf of a multi-word index that VACUUM emptied,
-- with a run of entries too long for it (src/README, "Multi-word keys":
-- append and merge splits).  VACUUM deletes an emptied leaf unless it is
-- the last of its parent's (t43_wide_page_deletion): the wide rows' keys
-- here are the index's highest, so their last leaf, the rightmost, stays
-- and takes the key range of those deleted before it.
-- The leaf is cut as a merge split, never append-split: an append split
-- gives the leaf the run's first entry as its high key, and that entry
-- can equal the leaf's low key when its key is written again at the heap
-- TID VACUUM freed, which left a leaf with an empty key range and two
-- equal separators in its parent (found by the fuzzer, as "a downlink to
-- a page below the target").  Wide rows leave a heap page few TIDs; the
-- narrow ones that reuse the page get many more, all in the leaf's range.
-- Each index has a btree twin on the same table; every answer is checked
-- against it and a sequential scan, under forced plans.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
SET max_parallel_workers_per_gather = 0;
SET jit = off;

-- the same question under a sequential, an index and a bitmap scan: one
-- line each (count and a digest of the rows in order)
CREATE FUNCTION el_answers(q text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
	how text;
	r text;
BEGIN
	FOREACH how IN ARRAY ARRAY['seq', 'index', 'bitmap'] LOOP
		PERFORM set_config('enable_seqscan', (how = 'seq')::text, true);
		PERFORM set_config('enable_indexscan', (how = 'index')::text, true);
		PERFORM set_config('enable_indexonlyscan', (how = 'index')::text, true);
		PERFORM set_config('enable_bitmapscan', (how = 'bitmap')::text, true);
		EXECUTE format('SELECT count(*) || '' '' || md5(coalesce(string_agg(x::text, '','' ORDER BY x::text), '''')) FROM (%s) x', q)
			INTO r;
		RETURN NEXT how || ': ' || r;
	END LOOP;
	PERFORM set_config('enable_seqscan', 'on', true);
	PERFORM set_config('enable_indexscan', 'on', true);
	PERFORM set_config('enable_indexonlyscan', 'on', true);
	PERFORM set_config('enable_bitmapscan', 'on', true);
END;
$$;

-- one text column (the default four words: fewer rows than a fit needs)
-- and two int8 columns (two words), each with a btree twin
CREATE TABLE el (id int, s text COLLATE "C", a int8, b int8, pad text)
	WITH (autovacuum_enabled = off);
INSERT INTO el SELECT g, 'a', 1, g, '' FROM generate_series(1, 2000) g;
INSERT INTO el SELECT 2000 + g, 'b', 2, 0, repeat('x', 1000) FROM generate_series(1, 1400) g;
CREATE INDEX el_s_g ON el USING gbtree (s);
CREATE INDEX el_s_b ON el USING btree (s);
CREATE INDEX el_ab_g ON el USING gbtree (a, b);
CREATE INDEX el_ab_b ON el USING btree (a, b);

-- the wide rows go, and VACUUM frees their TIDs: their leaves are empty
DELETE FROM el WHERE s = 'b';
VACUUM el;
SELECT gbtree_check('el_s_g'), gbtree_check('el_ab_g');

-- narrow rows of the same keys take those TIDs again, in one batch each
INSERT INTO el SELECT 10000 + g, 'b', 2, 0, '' FROM generate_series(1, 3000) g;
SELECT gbtree_check('el_s_g', true), gbtree_check('el_ab_g', true);
BEGIN;
INSERT INTO el SELECT 20000 + g, 'b', 2, 0, '' FROM generate_series(1, 3000) g;
INSERT INTO el SELECT 30000 + g, 'a', 1, -g, '' FROM generate_series(1, 500) g;
COMMIT;
SELECT gbtree_check('el_s_g', true), gbtree_check('el_ab_g', true);

-- every answer through the gbtree indexes alone, then through the btree
-- twins alone, each under a sequential, an index and a bitmap scan
DROP INDEX el_s_b;
DROP INDEX el_ab_b;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM el WHERE s = 'b';
EXPLAIN (COSTS OFF) SELECT id FROM el WHERE a = 2 AND b = 0;
RESET enable_seqscan;
SELECT el_answers('SELECT id FROM el WHERE s = ''b''');
SELECT el_answers('SELECT id, s FROM el WHERE s >= ''a'' AND s < ''c''');
SELECT el_answers('SELECT id FROM el WHERE a = 2 AND b = 0');
SELECT el_answers('SELECT id, a, b FROM el WHERE a BETWEEN 1 AND 2 AND b <= 0');
CREATE INDEX el_s_b ON el USING btree (s);
CREATE INDEX el_ab_b ON el USING btree (a, b);
DROP INDEX el_s_g;
DROP INDEX el_ab_g;
SELECT el_answers('SELECT id FROM el WHERE s = ''b''');
SELECT el_answers('SELECT id, s FROM el WHERE s >= ''a'' AND s < ''c''');
SELECT el_answers('SELECT id FROM el WHERE a = 2 AND b = 0');
SELECT el_answers('SELECT id, a, b FROM el WHERE a BETWEEN 1 AND 2 AND b <= 0');

DROP TABLE el;
DROP FUNCTION el_answers(text);
