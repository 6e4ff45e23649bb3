--
-- CLUSTER ... USING a gbtree index rewrites the heap in index order, as
-- with btree: twins clustered on a btree and a gbtree index end up with
-- the same rows at the same TIDs (equal keys in their old TID order, NULLs
-- where the index puts them), DESC and NULLS FIRST included; CLUSTER
-- without USING reuses the index marked clustered; and the rebuilt gbtree
-- index answers as btree's.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
SET max_parallel_workers_per_gather = 0;
SET max_parallel_maintenance_workers = 0;

-- the twins are made by the same statements, so their rows have the same
-- TIDs (dead ones included: CLUSTER copies only the live ones)
CREATE TABLE cl_g (id int, k int8, f float8, pad text);
CREATE TABLE cl_b (LIKE cl_g);
CREATE FUNCTION fill(t regclass) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format($q$
	INSERT INTO %s
	SELECT i,
	       CASE WHEN i %% 31 = 0 THEN NULL WHEN i %% 7 = 0 THEN 42 ELSE hashint4(i) %% 1000 END,
	       CASE WHEN i %% 37 = 0 THEN NULL WHEN i %% 41 = 0 THEN 'NaN' WHEN i %% 43 = 0 THEN '-0'
	            WHEN i %% 47 = 0 THEN '-Infinity' ELSE hashint4(i + 1) / 1000.0 END,
	       repeat('x', i %% 50)
	FROM generate_series(1, 5000) i$q$, t);
	EXECUTE format('DELETE FROM %s WHERE id %% 11 = 0', t);
	EXECUTE format('DELETE FROM %s WHERE id %% 13 = 0', t);
END $$;
SELECT fill('cl_g'), fill('cl_b');

CREATE INDEX cl_g_k ON cl_g USING gbtree (k);
CREATE INDEX cl_b_k ON cl_b USING btree (k);
CREATE INDEX cl_g_f ON cl_g USING gbtree (f DESC NULLS FIRST);
CREATE INDEX cl_b_f ON cl_b USING btree (f DESC NULLS FIRST);

-- same rows at the same TIDs: a fingerprint of (ctid, id) in TID order
CREATE FUNCTION heap_print(t regclass) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
	EXECUTE format('SELECT count(*) || '':'' || md5(string_agg(ctid::text || ''='' || id, '','' ORDER BY ctid)) FROM %s', t) INTO r;
	RETURN r;
END $$;

-- btree's CLUSTER may seqscan and sort instead, which leaves equal keys in
-- no particular order; its index scan, like gbtree's, keeps their TID order
SET enable_sort = off;
CLUSTER cl_g USING cl_g_k;
CLUSTER cl_b USING cl_b_k;
SELECT heap_print('cl_g') = heap_print('cl_b') AS same_heap_order_k,
       (SELECT count(*) FROM cl_g) AS nrows;
-- the heap is in key order, NULLs last
SELECT (SELECT array_agg(k ORDER BY ctid) FROM cl_g)
     = (SELECT array_agg(k ORDER BY k NULLS LAST) FROM cl_g) AS heap_in_key_order;
SELECT indexrelid::regclass, indisclustered FROM pg_index
WHERE indrelid IN ('cl_g'::regclass, 'cl_b'::regclass) ORDER BY indexrelid::regclass::text;

-- a DESC NULLS FIRST index, NaN, -0 and -Infinity included
CLUSTER cl_g USING cl_g_f;
CLUSTER cl_b USING cl_b_f;
SELECT heap_print('cl_g') = heap_print('cl_b') AS same_heap_order_f;

-- CLUSTER without USING: the index marked clustered
UPDATE cl_g SET k = k + 1 WHERE id % 3 = 0;
UPDATE cl_b SET k = k + 1 WHERE id % 3 = 0;
ALTER TABLE cl_g CLUSTER ON cl_g_k;
ALTER TABLE cl_b CLUSTER ON cl_b_k;
CLUSTER cl_g;
CLUSTER cl_b;
SELECT heap_print('cl_g') = heap_print('cl_b') AS same_heap_order_again;

RESET enable_sort;

-- the rebuilt gbtree indexes answer as btree's
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT (SELECT string_agg(id::text, ',' ORDER BY k, id) FROM cl_g WHERE k BETWEEN 100 AND 200)
     = (SELECT string_agg(id::text, ',' ORDER BY k, id) FROM cl_b WHERE k BETWEEN 100 AND 200) AS same_range,
       (SELECT count(*) FROM cl_g WHERE k IS NULL) = (SELECT count(*) FROM cl_b WHERE k IS NULL) AS same_nulls;
SELECT gbtree_check('cl_g_k', true), gbtree_check('cl_g_f', true);
RESET enable_seqscan;
RESET enable_bitmapscan;

-- a partial gbtree index cannot order the whole heap, as with btree
CREATE INDEX cl_g_part ON cl_g USING gbtree (k) WHERE k > 0;
CLUSTER cl_g USING cl_g_part;

DROP TABLE cl_g, cl_b;
DROP FUNCTION heap_print(regclass);
DROP FUNCTION fill(regclass);
