-- Every in-page search implementation the CPU has (gbtree.simd) must give
-- btree's answers.  The output does not depend on which ones exist: the
-- loop prints one line per query kind, true when all available
-- implementations agreed with the btree twin.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
RESET client_min_messages;
SELECT setseed(0.90);
CREATE TABLE simd_g (k int8);
CREATE TABLE simd_b (k int8);
INSERT INTO simd_g
  SELECT CASE WHEN random() < 0.05 THEN NULL
              WHEN random() < 0.10 THEN 42
              WHEN random() < 0.02 THEN -9223372036854775808
              WHEN random() < 0.02 THEN 9223372036854775807
              ELSE (random() * 200000)::int8 END
  FROM generate_series(1, 60000);
INSERT INTO simd_b SELECT * FROM simd_g;
CREATE INDEX simd_g_idx ON simd_g USING gbtree (k);
CREATE INDEX simd_b_idx ON simd_b USING btree (k);
-- grow by inserts too, so splits run under each setting
INSERT INTO simd_g SELECT (g * 7919) % 300000 FROM generate_series(1, 20000) g;
INSERT INTO simd_b SELECT (g * 7919) % 300000 FROM generate_series(1, 20000) g;
VACUUM ANALYZE simd_g;
VACUUM ANALYZE simd_b;

-- forcing an implementation the CPU lacks is an error, with SQLSTATE 22023
DO $$
BEGIN
  BEGIN
    SET LOCAL gbtree.simd = 'no_such_level';
  EXCEPTION WHEN invalid_parameter_value THEN
    RAISE NOTICE 'bad gbtree.simd value rejected';
  END;
END $$;

CREATE FUNCTION simd_check(q text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  lvl text;
  ok boolean := true;
  g text;
  b text;
BEGIN
  FOREACH lvl IN ARRAY ARRAY['scalar', 'avx2', 'avx512'] LOOP
    BEGIN
      PERFORM set_config('gbtree.simd', lvl, true);
    EXCEPTION WHEN invalid_parameter_value THEN
      CONTINUE;               -- not on this CPU
    END;
    PERFORM set_config('enable_seqscan', 'off', true);
    PERFORM set_config('enable_bitmapscan', 'off', true);
    EXECUTE format(q, 'simd_g') INTO g;
    EXECUTE format(q, 'simd_b') INTO b;
    IF g IS DISTINCT FROM b THEN
      RAISE NOTICE 'gbtree.simd=% differs for %', lvl, q;
      ok := false;
    END IF;
    PERFORM set_config('enable_indexscan', 'off', true);
    PERFORM set_config('enable_indexonlyscan', 'off', true);
    PERFORM set_config('enable_bitmapscan', 'on', true);
    EXECUTE format(q, 'simd_g') INTO g;
    IF g IS DISTINCT FROM b THEN
      RAISE NOTICE 'gbtree.simd=% bitmap scan differs for %', lvl, q;
      ok := false;
    END IF;
    PERFORM set_config('enable_indexscan', 'on', true);
    PERFORM set_config('enable_indexonlyscan', 'on', true);
  END LOOP;
  RETURN ok;
END $$;

SELECT simd_check('SELECT count(*)::text || sum(k)::text FROM %I WHERE k = 42');
SELECT simd_check('SELECT count(*)::text || sum(k)::text FROM %I WHERE k BETWEEN 1000 AND 90000');
SELECT simd_check('SELECT count(*)::text FROM %I WHERE k IS NULL');
SELECT simd_check('SELECT count(*)::text || sum(k)::text FROM %I WHERE k = ANY(ARRAY(SELECT (g * 13)::int8 FROM generate_series(0, 20000) g))');
SELECT simd_check('SELECT count(*)::text FROM %I WHERE k >= 9223372036854775807 OR k <= -9223372036854775808');
SELECT simd_check('SELECT string_agg(k::text, '','') FROM (SELECT k FROM %I WHERE k > 150000 ORDER BY k LIMIT 300) s');
SELECT simd_check('SELECT string_agg(coalesce(k::text, ''null''), '','') FROM (SELECT k FROM %I ORDER BY k DESC LIMIT 300) s');
SELECT simd_check('SELECT min(k)::text || max(k)::text FROM %I');

DROP FUNCTION simd_check(text);
DROP TABLE simd_g, simd_b;
RESET gbtree.simd;
