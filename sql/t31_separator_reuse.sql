--
-- A multi-word key written again at the TID of an entry that was its
-- leaf's separator (src/README, "Multi-word keys"): the right page's first
-- entry when a leaf splits is its parent's separator, words, tail and TID.
-- VACUUM removes the entry and frees its TID; a new row with the same key
-- that gets that TID is an entry equal to the separator.  When its leaf is
-- full, the structure change descends to the page the separator starts.
-- Before, it took the page before, whose high key that is, and failed with
-- XX002 "a downlink to a page below the target".  Each case runs on a
-- gbtree table and on its btree twin; the rows that come back through each
-- index are compared, and the reused TIDs are shown (if the heap placed
-- the rows elsewhere, the case did not reach that state and the expected
-- output no longer matches).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
RESET client_min_messages;

-- rows that come back through the index, by (a, b), on one twin and not the other
CREATE FUNCTION sr_diff(g text, b text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
	only_g bigint;
	only_b bigint;
	n bigint;
BEGIN
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_bitmapscan = off;
	SET LOCAL enable_indexonlyscan = off;
	EXECUTE format('SELECT count(*) FROM (SELECT a, b, ctid FROM %I WHERE a IS NOT NULL '
				   'EXCEPT ALL SELECT a, b, ctid FROM %I WHERE a IS NOT NULL) x', g, b) INTO only_g;
	EXECUTE format('SELECT count(*) FROM (SELECT a, b, ctid FROM %I WHERE a IS NOT NULL '
				   'EXCEPT ALL SELECT a, b, ctid FROM %I WHERE a IS NOT NULL) x', b, g) INTO only_b;
	EXECUTE format('SELECT count(*) FROM %I WHERE a IS NOT NULL', g) INTO n;
	IF only_g = 0 AND only_b = 0 THEN
		RETURN 'same (' || n || ' rows)';
	END IF;
	RETURN 'DIFFERENT: ' || only_g || ' rows only from ' || g || ', ' || only_b || ' only from ' || b;
END $f$;

-- the twins t_g (gbtree) and t_b (btree) on (a, b)
CREATE FUNCTION sr_twins(t text) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
	EXECUTE format('CREATE TABLE %I (a int4, b varchar COLLATE "C") WITH (autovacuum_enabled = off)', t || '_g');
	EXECUTE format('CREATE TABLE %I (a int4, b varchar COLLATE "C") WITH (autovacuum_enabled = off)', t || '_b');
	EXECUTE format('CREATE INDEX %I ON %I USING gbtree (a, b)', t || '_g_k', t || '_g');
	EXECUTE format('CREATE INDEX %I ON %I USING btree (a, b)', t || '_b_k', t || '_b');
END $f$;

-- a statement (%1$I the table) on each twin in turn, n times
CREATE FUNCTION sr_both(t text, stmt text, n int DEFAULT 1) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
	FOR i IN 1..n LOOP
		EXECUTE format(stmt, t || '_g', i);
		EXECUTE format(stmt, t || '_b', i);
	END LOOP;
END $f$;

-- a row into each twin: the TIDs the heap gave it
CREATE FUNCTION sr_insert(t text, a int4, b text, OUT g tid, OUT bt tid) LANGUAGE plpgsql AS $f$
BEGIN
	EXECUTE format('INSERT INTO %I VALUES ($1, $2) RETURNING ctid', t || '_g') INTO g USING a, b;
	EXECUTE format('INSERT INTO %I VALUES ($1, $2) RETURNING ctid', t || '_b') INTO bt USING a, b;
END $f$;

-- Keys of words alone: 240 rows, one at a time; the root leaf (160 slots
-- at four words) splits at the 161st, halves: row 81 starts the right leaf,
-- which the next 79 rows fill.
SELECT sr_twins('sr');
SELECT sr_both('sr', 'INSERT INTO %1$I VALUES (%2$s, ''k'')', 240);
SELECT sr_both('sr', 'DELETE FROM %I WHERE a IN (5, 81)');
VACUUM (INDEX_CLEANUP ON) sr_g, sr_b;
-- a new session (no target block cached): the free space map's first page
\c
-- row 5's TID, a key of the right leaf, which is full again; then row 81's
-- key at row 81's TID, the separator itself
SELECT * FROM sr_insert('sr', 200, 'k2');
SELECT * FROM sr_insert('sr', 81, 'k');
SELECT sr_diff('sr_g', 'sr_b');
SELECT gbtree_check('sr_g_k', true);

-- Keys with tails, all one key (words and tail): entries order by TID and
-- a split keeps the right page's first entry whole as the separator, tail
-- and all.  A tailed leaf holds 80: the root splits at the 81st row, row
-- 41 starts the right leaf, and 120 rows fill it.
SELECT sr_twins('st');
SELECT sr_both('st', 'INSERT INTO %I VALUES (1, repeat(''x'', 40))', 120);
SELECT sr_both('st', 'DELETE FROM %I WHERE ctid IN (''(0,5)'', ''(0,41)'')');
VACUUM (INDEX_CLEANUP ON) st_g, st_b;
\c
SELECT * FROM sr_insert('st', 1, repeat('x', 40) || 'z');
SELECT * FROM sr_insert('st', 1, repeat('x', 40));
SELECT sr_diff('st_g', 'st_b');
SELECT gbtree_check('st_g_k', true);

DROP TABLE sr_g, sr_b, st_g, st_b;
DROP FUNCTION sr_diff(text, text), sr_twins(text), sr_both(text, text, int),
	sr_insert(text, int4, text);
