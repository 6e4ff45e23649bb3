--
-- t16_reloption_locks: gbtree's reloptions take btree's lock levels, and
-- loading gbtree does not change the lock level of ALTER TABLE ... SET
-- (fillfactor) on tables that have nothing to do with gbtree.
-- PostgreSQL picks the level by option name across every reloption kind,
-- so a gbtree "fillfactor" registered with a stronger lock would make
-- every such ALTER TABLE block readers once gbtree.so is loaded.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gbtree;
CREATE SCHEMA t16;
SET search_path = t16, public;

CREATE TABLE plain_t (a int);
CREATE TABLE gb_t (k int8);
INSERT INTO gb_t SELECT g FROM generate_series(1, 1000) g;
CREATE INDEX gb_t_gb ON gb_t USING gbtree (k);
CREATE INDEX gb_t_bt ON gb_t USING btree (k);

CREATE FUNCTION held(rel regclass) RETURNS text LANGUAGE sql AS $$
	SELECT string_agg(mode, ', ' ORDER BY mode) FROM pg_locks
	WHERE locktype = 'relation' AND relation = rel
	  AND pid = pg_backend_pid() AND granted
$$;

-- a fresh session: gbtree.so is loaded only if preloaded
\c
SET client_min_messages = warning;
SET search_path = t16, public;
BEGIN;
ALTER TABLE plain_t SET (fillfactor = 90);
SELECT held('plain_t');
ROLLBACK;

-- planning over a gbtree index loads gbtree.so in this session
SET enable_seqscan = off;
SELECT count(*) FROM gb_t WHERE k > 500;
RESET enable_seqscan;
SELECT count(*) > 0 AS gbtree_loaded FROM pg_settings WHERE name LIKE 'gbtree.%';

BEGIN;
ALTER TABLE plain_t SET (fillfactor = 90);
SELECT held('plain_t');
ROLLBACK;
BEGIN;
ALTER TABLE plain_t RESET (fillfactor);
SELECT held('plain_t');
ROLLBACK;

-- an index's fillfactor: the same level on gbtree as on btree
BEGIN;
ALTER INDEX gb_t_bt SET (fillfactor = 70);
SELECT held('gb_t_bt');
ROLLBACK;
BEGIN;
ALTER INDEX gb_t_gb SET (fillfactor = 70);
SELECT held('gb_t_gb');
ROLLBACK;

-- and readers are not blocked meanwhile: a concurrent scan is in the
-- isolation suite (gbtree-reloption-lock); here, the option still takes effect
ALTER INDEX gb_t_gb SET (fillfactor = 70);
SELECT reloptions FROM pg_class WHERE oid = 'gb_t_gb'::regclass;
REINDEX INDEX gb_t_gb;
SELECT gbtree_check('gb_t_gb');

DROP SCHEMA t16 CASCADE;
