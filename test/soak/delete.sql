\set k random(1, 50000)
DELETE FROM soak WHERE k BETWEEN :k AND :k + 40;
