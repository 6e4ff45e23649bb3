\set k random(1, 50000)
\set j random(1, 50000)
UPDATE soak SET k = :j WHERE k = :k;
