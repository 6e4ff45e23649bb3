\set k random(1, 50000)
\set n random(0, 19)
INSERT INTO soak (k, f) VALUES (CASE WHEN :n = 0 THEN NULL ELSE :k END, :k / 7.0), (:k + 1, NULL), (:k * 3 % 50000, -0.0);
