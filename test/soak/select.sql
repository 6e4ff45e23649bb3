\set k random(1, 50000)
SET enable_seqscan = off;
SELECT count(*) FROM soak WHERE k BETWEEN :k AND :k + 200;
SELECT k FROM soak WHERE k > :k ORDER BY k LIMIT 20;
SELECT k FROM soak WHERE k < :k ORDER BY k DESC LIMIT 20;
SELECT count(*) FROM soak WHERE k = ANY(ARRAY[:k, :k + 7, :k + 77, :k * 2, NULL]::int8[]);
SELECT count(*) FROM soak WHERE f <= :k / 7.0;
RESET enable_seqscan;
