#!/usr/bin/env python3
"""test/bench/orderby_pairs.py: the ordered index-only scan of make bench
(SELECT k ... ORDER BY k LIMIT 20000 OFFSET 500000) timed pair by pair on
a btree table and its gbtree twin, for machines whose speed drifts from
one second to the next: each pair runs back to back (alternating which
goes first), and the median of the pairs' ratios is reported with its
quartiles, beside each engine's median time.  EXPLAIN ANALYZE with
TIMING OFF (no per-row clock reads), one psql per query, parallel query
off.

    orderby_pairs.py [-n PAIRS] BTREE_TABLE GBTREE_TABLE [BTREE GBTREE ...]

Connection: the usual libpq environment (PGHOST, PGPORT, PGDATABASE,
PGUSER); PSQL names the psql binary (default: psql).
"""
import os
import re
import statistics
import subprocess
import sys

PSQL = os.environ.get("PSQL", "psql")
Q = "EXPLAIN (ANALYZE, TIMING OFF) SELECT k FROM {t} ORDER BY k LIMIT 20000 OFFSET 500000"


def run(table):
    out = subprocess.run([PSQL, "-X", "-At", "-c", "SET max_parallel_workers_per_gather = 0",
                          "-c", Q.format(t=table)], capture_output=True, text=True, check=True).stdout
    return float(re.search(r"Execution Time: ([0-9.]+)", out).group(1))


def main():
    args = sys.argv[1:]
    n = 31
    if args[:1] == ["-n"]:
        n = int(args[1])
        args = args[2:]
    for a, b in zip(args[0::2], args[1::2]):
        run(a)
        run(b)
        ta, tb, r = [], [], []
        for i in range(n):
            if i % 2 == 0:
                x = run(a)
                y = run(b)
            else:
                y = run(b)
                x = run(a)
            ta.append(x)
            tb.append(y)
            r.append(y / x)
        r.sort()
        print(f"{a} (btree) {statistics.median(ta):.2f} ms, {b} (gbtree) {statistics.median(tb):.2f} ms; "
              f"ratio of pairs: median {statistics.median(r):.3f}, quartiles "
              f"{r[len(r) // 4]:.3f}-{r[3 * len(r) // 4]:.3f} ({n} pairs)")


if __name__ == "__main__":
    main()
