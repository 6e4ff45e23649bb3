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

-- Keys of words alone: 240 rows, one at a time; the root leaf (160 slots
-- at four words) splits at the 161st, halves: row 81 starts the right leaf,
-- which the next 79 rows fill.
CREATE TABLE sr_g (a int4, b varchar COLLATE "C") WITH (autovacuum_enabled = off);
CREATE TABLE sr_b (a int4, b varchar COLLATE "C") WITH (autovacuum_enabled = off);
CREATE INDEX sr_g_k ON sr_g USING gbtree (a, b);
CREATE INDEX sr_b_k ON sr_b USING btree (a, b);
DO $$ BEGIN
	FOR i IN 1..240 LOOP
		INSERT INTO sr_g VALUES (i, 'k');
		INSERT INTO sr_b VALUES (i, 'k');
	END LOOP;
END $$;
DELETE FROM sr_g WHERE a IN (5, 81);
DELETE FROM sr_b WHERE a IN (5, 81);
VACUUM (INDEX_CLEANUP ON) sr_g, sr_b;
-- a new session (no target block cached): the free space map's first page
\c
-- row 5's TID, a key of the right leaf, which is full again; then row 81's
-- key at row 81's TID, the separator itself
INSERT INTO sr_g VALUES (200, 'k2') RETURNING ctid;
INSERT INTO sr_g VALUES (81, 'k') RETURNING ctid;
INSERT INTO sr_b VALUES (200, 'k2') RETURNING ctid;
INSERT INTO sr_b VALUES (81, 'k') RETURNING ctid;
SELECT sr_diff('sr_g', 'sr_b');
SELECT gbtree_check('sr_g_k', true);

-- Keys with tails, all one key (words and tail): entries order by TID and
-- a split keeps the right page's first entry whole as the separator, tail
-- and all.  A tailed leaf holds 80: the root splits at the 81st row, row
-- 41 starts the right leaf, and 120 rows fill it.
CREATE TABLE st_g (a int4, b varchar COLLATE "C") WITH (autovacuum_enabled = off);
CREATE TABLE st_b (a int4, b varchar COLLATE "C") WITH (autovacuum_enabled = off);
CREATE INDEX st_g_k ON st_g USING gbtree (a, b);
CREATE INDEX st_b_k ON st_b USING btree (a, b);
DO $$ BEGIN
	FOR i IN 1..120 LOOP
		INSERT INTO st_g VALUES (1, repeat('x', 40));
		INSERT INTO st_b VALUES (1, repeat('x', 40));
	END LOOP;
END $$;
DELETE FROM st_g WHERE ctid IN ('(0,5)', '(0,41)');
DELETE FROM st_b WHERE ctid IN ('(0,5)', '(0,41)');
VACUUM (INDEX_CLEANUP ON) st_g, st_b;
\c
INSERT INTO st_g VALUES (1, repeat('x', 40) || 'z') RETURNING ctid;
INSERT INTO st_g VALUES (1, repeat('x', 40)) RETURNING ctid;
INSERT INTO st_b VALUES (1, repeat('x', 40) || 'z') RETURNING ctid;
INSERT INTO st_b VALUES (1, repeat('x', 40)) RETURNING ctid;
SELECT sr_diff('st_g', 'st_b');
SELECT gbtree_check('st_g_k', true);

DROP TABLE sr_g, sr_b, st_g, st_b;
DROP FUNCTION sr_diff(text, text);
