\set k random(1, 50000)
\set n random(1, 100)
\set big random(0, 19)
\set r random(0, 5)
\set mem random(0, 3)
\if :big = 0
\set n 5000
\set r 3
\endif
BEGIN;
\if :have_batch_guc
\if :mem = 0
SET LOCAL gbtree.insert_batch_memory = 64;
\elif :mem = 1
SET LOCAL gbtree.insert_batch_memory = 1024;
\elif :mem = 2
SET LOCAL gbtree.insert_batch_memory = 0;
\endif
\endif
INSERT INTO soak (k, f) SELECT CASE WHEN g % 53 = 0 THEN NULL ELSE (:k + g * 7) % 50000 END, ((:k + g) % 1000) / 3.0 FROM generate_series(1, :n) g;
SAVEPOINT a;
INSERT INTO soak (k, f) SELECT (:k * 3 + g) % 50000, CASE WHEN g % 11 = 0 THEN -0.0 WHEN g % 13 = 0 THEN NULL ELSE g / 7.0 END FROM generate_series(1, :n) g;
\if :r = 0
SELECT soak_batch_check(:k, :k + 300);
ROLLBACK TO a;
\endif
INSERT INTO soak (k, f) SELECT :k + g % 5, :k / 7.0 FROM generate_series(1, :n / 10 + 1) g;
SELECT soak_batch_check(:k, :k + 300);
RELEASE a;
\if :r = 1
UPDATE soak SET k = k + 1 WHERE k = :k;
\elif :r = 2
DELETE FROM soak WHERE id > currval('soak_id_seq') - :n * 2;
\elif :r = 4
DELETE FROM soak WHERE k BETWEEN :k AND :k + 20;
\endif
\if :r = 3
ROLLBACK;
\else
COMMIT;
\endif
