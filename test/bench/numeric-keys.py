#!/usr/bin/python3
"""test/bench/numeric-keys.py: a numeric(12, 2) index, gbtree against its
btree twin (src/README, "numeric keys").

ROWS rows (default 1,000,000) of amounts spread over both signs go into
twin tables, each with one engine's index on the amount; CREATE INDEX is
timed once each (after a CHECKPOINT, the engines one after the other),
then each query runs REPEAT times (default 7) per engine under forced
index plans (enable_seqscan, enable_bitmapscan off; jit and parallel
workers off), the engines alternating and their order too, and the
medians of EXPLAIN ANALYZE's execution time are printed with their
spreads, the ratio gbtree/btree and both plans' top nodes.  Every query's
answer is compared between the engines first.  Run against a server with
gbtree installed, through libpq's environment (PGHOST, PGPORT, ...):

    PGHOST=... PGPORT=... test/bench/numeric-keys.py [ROWS [REPEAT]]
"""
import statistics
import sys
import time

import psycopg2

ROWS = int(sys.argv[1]) if len(sys.argv) > 1 else 1000000
REPEAT = int(sys.argv[2]) if len(sys.argv) > 2 else 7

QUERIES = [
    ("sum over 7% of the rows (index-only)",
     "SELECT sum(n) FROM (SELECT n FROM {t} WHERE n BETWEEN -100000 AND 100000) q", False),
    ("count(*) over the same 7%", "SELECT count(*) FROM {t} WHERE n BETWEEN -100000 AND 100000", False),
    ("count(*) WHERE n = ANY (10k values)", "SELECT count(*) FROM {t} WHERE n = ANY (%s)", True),
    ("ORDER BY n LIMIT 1000 OFFSET 10000 (index-only)",
     "SELECT n FROM {t} ORDER BY n LIMIT 1000 OFFSET 10000", False),
    ("point count", "SELECT count(*) FROM {t} WHERE n = 1370.00", False),
]


def main():
    conn = psycopg2.connect("")
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS gbtree")
    cur.execute("DROP TABLE IF EXISTS bn_g, bn_b")
    for t in ("bn_g", "bn_b"):
        cur.execute("CREATE TABLE %s (id int8, n numeric(12, 2))" % t)
    cur.execute("INSERT INTO bn_g SELECT g, round(((g::int8 * 7919) %% 2000003 - 1000000) * 1.37, 2) "
                "FROM generate_series(1, %d) g" % ROWS)
    cur.execute("INSERT INTO bn_b SELECT * FROM bn_g")
    build = {}
    for t, am in (("bn_g", "gbtree"), ("bn_b", "btree")):
        cur.execute("CHECKPOINT")
        t0 = time.monotonic()
        cur.execute("CREATE INDEX %s_n ON %s USING %s (n)" % (t, t, am))
        build[am] = (time.monotonic() - t0) * 1000
    cur.execute("VACUUM ANALYZE bn_g, bn_b")
    cur.execute("SELECT pg_relation_size('bn_g_n') / 8192, pg_relation_size('bn_b_n') / 8192")
    gp, bp = cur.fetchone()
    print("rows %d; CREATE INDEX gbtree %.1f ms, btree %.1f ms (%.2f); index pages gbtree %d, btree %d (%.2f)"
          % (ROWS, build["gbtree"], build["btree"], build["gbtree"] / build["btree"], gp, bp, gp / bp))
    cur.execute("SET enable_seqscan = off; SET enable_bitmapscan = off; SET jit = off; "
                "SET max_parallel_workers_per_gather = 0")
    cur.execute("SELECT array_agg(n) FROM (SELECT n FROM bn_b ORDER BY md5(id::text) LIMIT 10000) q")
    arr = cur.fetchone()[0]
    print("| query | gbtree ms | btree ms | gbtree/btree | plans (gbtree / btree) |")
    print("|---|---|---|---|---|")
    for name, q, takes_arr in QUERIES:
        args = (arr,) if takes_arr else None
        answers = {}
        for t in ("bn_g", "bn_b"):
            cur.execute(q.format(t=t), args)
            answers[t] = cur.fetchall()
        if answers["bn_g"] != answers["bn_b"]:
            sys.exit("numeric-keys: %s: the engines' answers differ" % name)
        times = {"bn_g": [], "bn_b": []}
        plans = {}
        for r in range(REPEAT):
            for t in (("bn_g", "bn_b") if r % 2 == 0 else ("bn_b", "bn_g")):
                cur.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + q.format(t=t), args)
                j = cur.fetchone()[0][0]
                times[t].append(j["Execution Time"])
                p = j["Plan"]
                while p.get("Node Type") in ("Aggregate", "Limit") and p.get("Plans"):
                    p = p["Plans"][0]
                plans[t] = p["Node Type"] + (" (%s)" % p["Custom Plan Provider"] if "Custom Plan Provider" in p else "")
        g, b = statistics.median(times["bn_g"]), statistics.median(times["bn_b"])
        print("| %s | %.3f (%.3f-%.3f) | %.3f (%.3f-%.3f) | %.2f | %s / %s |"
              % (name, g, min(times["bn_g"]), max(times["bn_g"]), b, min(times["bn_b"]), max(times["bn_b"]),
                 g / b, plans["bn_g"], plans["bn_b"]))
    cur.execute("DROP TABLE bn_g, bn_b")


if __name__ == "__main__":
    main()
