#!/usr/bin/python3
"""
gbtree differential fuzzer: gbtree against btree and a sequential scan.

Twin tables per type (fz_<type>_g with a gbtree index, fz_<type>_b with a
btree index) receive identical changes in one REPEATABLE READ transaction
each (one snapshot for both twins; serialization failures retry), from
several concurrent writer sessions: inserts (nasty values, heavy
duplicates), updates, deletes, VACUUM, REINDEX [CONCURRENTLY].  A checker
session meanwhile runs random queries of every kind gbtree serves: point,
range, BETWEEN, IN, = ANY (with NULLs), IS [NOT] NULL, cross-type
comparisons, OR (bitmap), ORDER BY [DESC] [NULLS ...] LIMIT, min/max,
scrollable cursors moving both ways.  Each query runs three times inside
one REPEATABLE READ snapshot: on the gbtree twin with index (or
index-only, or bitmap) scans forced, on the btree twin, and on the gbtree
twin as a sequential scan; any difference is a failure, printed with the
seed and the query, and the exit status is 1.

The seed fixes every random choice of every session; the interleaving of
the sessions is up to the scheduler.

usage: gbtree_fuzz.py --dsn 'host=... port=... dbname=...' [--seed N]
                      [--seconds S] [--writers W] [--types int8,float8,...]
"""
import argparse
import math
import multiprocessing as mp
import random
import sys
import time

import psycopg2
import psycopg2.extensions

INT_LIMITS = {"int2": (-32768, 32767), "int4": (-2147483648, 2147483647),
              "int8": (-9223372036854775808, 9223372036854775807)}


def gen_value(t, rnd):
    """A random SQL literal of type t (None for NULL), biased to nasty values."""
    r = rnd.random()
    if r < 0.06:
        return None
    if t in INT_LIMITS or t == "oid" or t == "money":
        lo, hi = INT_LIMITS.get(t, (0, 4294967295) if t == "oid" else (-92233720368547758, 92233720368547758))
        if r < 0.10:
            v = rnd.choice([lo, hi, lo + 1, hi - 1, 0, -1 if lo < 0 else 1])
        elif r < 0.45:
            v = rnd.randint(-20, 20) if lo < 0 else rnd.randint(0, 40)   # heavy duplicates
        else:
            v = rnd.randint(max(lo, -100000), min(hi, 100000))
        return "'%d'::%s" % (v, t)
    if t in ("float4", "float8"):
        if r < 0.16:
            v = rnd.choice(["NaN", "Infinity", "-Infinity", "-0", "0", "1e-300" if t == "float8" else "1e-30",
                            "-1.5", "3.4e38" if t == "float4" else "1.7e308"])
            return "'%s'::%s" % (v, t)
        if r < 0.5:
            return "'%s'::%s" % (rnd.randint(-20, 20) / 4.0, t)
        return "'%r'::%s" % (rnd.uniform(-1e6, 1e6), t)
    if t in ("timestamptz", "timestamp"):
        if r < 0.12:
            return "'%s'::%s" % (rnd.choice(["infinity", "-infinity", "4713-01-01 00:00:00 BC", "294276-12-31 23:59:59"]), t)
        return "'2020-01-01'::%s + '%d seconds'::interval" % (t, rnd.randint(-100, 100) * (1 if r < 0.5 else 3600))
    if t == "date":
        if r < 0.12:
            return "'%s'::date" % rnd.choice(["infinity", "-infinity", "4713-01-01 BC", "5874897-12-31"])
        return "'2020-01-01'::date + %d" % rnd.randint(-60, 60)
    if t == "time":
        if r < 0.12:
            return "'%s'::time" % rnd.choice(["00:00", "24:00", "23:59:59.999999"])
        return "'%02d:%02d'::time" % (rnd.randint(0, 23), rnd.choice([0, 30]))
    if t == "bool":
        return rnd.choice(["true", "false"])
    raise ValueError(t)


def cross_types(t):
    if t in INT_LIMITS:
        return ["int2", "int4", "int8"]
    if t in ("float4", "float8"):
        return ["float4", "float8"]
    return [t]


def gen_const(t, rnd):
    """A non-null constant, possibly of another type of t's family."""
    for _ in range(20):
        ct = rnd.choice(cross_types(t))
        v = gen_value(ct, rnd)
        if v is not None:
            return v
    return gen_value(t, random.Random(1)) or "0::%s" % t


def gen_pred(t, rnd):
    kind = rnd.random()
    if kind < 0.18:
        return "k = %s" % gen_const(t, rnd)
    if kind < 0.40:
        return "k %s %s" % (rnd.choice(["<", "<=", ">", ">="]), gen_const(t, rnd))
    if kind < 0.52:
        a, b = gen_const(t, rnd), gen_const(t, rnd)
        return "k BETWEEN %s AND %s" % (a, b)
    if kind < 0.62:
        return "k IN (%s)" % ", ".join(gen_const(t, rnd) for _ in range(rnd.randint(1, 6)))
    if kind < 0.74:
        elems = []
        for _ in range(rnd.randint(0, 12)):
            v = gen_value(t, rnd)
            elems.append(v if v is not None else "NULL")
        op = rnd.choice(["=", "=", "=", "<", ">="])
        return "k %s ANY(ARRAY[%s]::%s[])" % (op, ", ".join(elems), t)
    if kind < 0.80:
        return "k IS NULL"
    if kind < 0.86:
        return "k IS NOT NULL"
    if kind < 0.93:
        return "(%s OR %s)" % (gen_pred(t, rnd), gen_pred(t, rnd))
    return "%s AND %s" % (gen_pred(t, rnd), gen_pred(t, rnd))


def norm_key(v):
    """Sort-equality form of a key: -0.0 == 0.0, NaN == NaN."""
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if v == 0.0:
            return 0.0
    return v


MODES = {
    "index": ["SET LOCAL enable_seqscan = off", "SET LOCAL enable_bitmapscan = off",
              "SET LOCAL enable_indexonlyscan = off"],
    "ios": ["SET LOCAL enable_seqscan = off", "SET LOCAL enable_bitmapscan = off"],
    "bitmap": ["SET LOCAL enable_seqscan = off", "SET LOCAL enable_indexscan = off",
               "SET LOCAL enable_indexonlyscan = off"],
    # parallel index (only) scans: chunks claimed while writers split pages
    "parallel": ["SET LOCAL enable_seqscan = off", "SET LOCAL enable_bitmapscan = off",
                 "SET LOCAL parallel_setup_cost = 0", "SET LOCAL parallel_tuple_cost = 0",
                 "SET LOCAL min_parallel_index_scan_size = 0",
                 "SET LOCAL max_parallel_workers_per_gather = 2"],
}
SEQ = ["SET LOCAL enable_seqscan = on", "SET LOCAL enable_indexscan = off",
       "SET LOCAL enable_indexonlyscan = off", "SET LOCAL enable_bitmapscan = off"]
RESET = ["SET LOCAL enable_seqscan = on", "SET LOCAL enable_indexscan = on",
         "SET LOCAL enable_indexonlyscan = on", "SET LOCAL enable_bitmapscan = on",
         "RESET parallel_setup_cost", "RESET parallel_tuple_cost",
         "RESET min_parallel_index_scan_size", "RESET max_parallel_workers_per_gather"]


def connect(dsn):
    conn = psycopg2.connect(dsn)
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("SET TimeZone = 'UTC'; SET extra_float_digits = 3; SET jit = off")
    return conn


def setup(dsn, types):
    conn = connect(dsn)
    cur = conn.cursor()
    cur.execute("SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS gbtree")
    for t in types:
        for side, am in (("g", "gbtree"), ("b", "btree")):
            cur.execute("DROP TABLE IF EXISTS fz_%s_%s" % (t, side))
            cur.execute("CREATE TABLE fz_%s_%s (id int8, k %s) WITH (autovacuum_enabled = off)" % (t, side, t))
            cur.execute("CREATE INDEX fz_%s_%s_k ON fz_%s_%s USING %s (k)" % (t, side, t, side, am))
    conn.close()


def writer(dsn, types, seed, wid, deadline, counter):
    rnd = random.Random(seed * 1000 + wid)
    conn = connect(dsn)
    cur = conn.cursor()
    nextid = wid * 10 ** 9
    ops = 0
    while time.time() < deadline:
        t = rnd.choice(types)
        r = rnd.random()
        try:
            if r < 0.55:
                n = rnd.choice([1, 5, 50, 400])
                rows = []
                for _ in range(n):
                    v = gen_value(t, rnd)
                    rows.append("(%d, %s)" % (nextid, v if v is not None else "NULL"))
                    nextid += 1
                vals = ", ".join(rows)
                cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ; INSERT INTO fz_{0}_g VALUES {1}; INSERT INTO fz_{0}_b VALUES {1}; COMMIT"
                            .format(t, vals))
            elif r < 0.70:
                m = rnd.randint(2, 9)
                rr = rnd.randint(0, m - 1)
                cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ; DELETE FROM fz_{0}_g WHERE id % {1} = {2} AND id / 1000 % 7 = {3}; "
                            "DELETE FROM fz_{0}_b WHERE id % {1} = {2} AND id / 1000 % 7 = {3}; COMMIT"
                            .format(t, m, rr, rnd.randint(0, 6)))
            elif r < 0.80:
                v = gen_value(t, rnd)
                m = rnd.randint(5, 50)
                cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ; UPDATE fz_{0}_g SET k = {1} WHERE id % {2} = {3}; "
                            "UPDATE fz_{0}_b SET k = {1} WHERE id % {2} = {3}; COMMIT"
                            .format(t, v if v is not None else "NULL", m, rnd.randint(0, m - 1)))
            elif r < 0.86:
                # the predicate may be answered by either index: compare counts
                pred = gen_pred(t, rnd)
                cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
                if rnd.random() < 0.5:
                    cur.execute("SET LOCAL enable_seqscan = off")
                cur.execute("DELETE FROM fz_{0}_g WHERE {1}".format(t, pred))
                ng = cur.rowcount
                cur.execute("DELETE FROM fz_{0}_b WHERE {1}".format(t, pred))
                nb = cur.rowcount
                if ng != nb:
                    cur.execute("ROLLBACK")
                    print("gbtree_fuzz: FAILED with seed %d\nwriter %d: DELETE FROM fz_%s_g WHERE %s removed %d rows, btree twin %d"
                          % (seed, wid, t, pred, ng, nb), flush=True)
                    conn.close()
                    sys.exit(3)
                cur.execute("COMMIT")
            elif r < 0.95:
                cur.execute("VACUUM fz_%s_g" % t)
            elif r < 0.98:
                cur.execute("REINDEX INDEX fz_%s_g_k" % t)
            else:
                cur.execute("REINDEX INDEX CONCURRENTLY fz_%s_g_k" % t)
            ops += 1
        except psycopg2.Error as e:
            cur.execute("ROLLBACK")
            if e.pgcode in ("40P01", "40001", "55P03"):
                continue
            print("writer %d: unexpected error: %s" % (wid, e), file=sys.stderr)
            conn.close()
            sys.exit(2)
    with counter.get_lock():
        counter.value += ops
    conn.close()


def run_query(cur, settings, sql):
    for s in settings:
        cur.execute(s)
    cur.execute(sql)
    rows = cur.fetchall()
    for s in RESET:
        cur.execute(s)
    return rows


def kexpr(t):
    """How to fetch k: floats as numbers (to fold -0.0), the rest as text
    (exact, and datetimes outside Python's range survive)."""
    return "k" if t in ("float4", "float8") else "k::text"


def check_once(cur, t, rnd, stats):
    kind = rnd.random()
    ke = kexpr(t)
    pred = gen_pred(t, rnd)
    mode = rnd.choice(list(MODES))
    if kind < 0.45:
        q = "SELECT id, " + ke + " FROM fz_%s_{side} WHERE " + pred
        ordered = False
    elif kind < 0.75:
        direction = rnd.choice(["", " DESC", " NULLS FIRST", " DESC NULLS LAST", ""])
        lim = rnd.choice([1, 10, 100, 1000])
        q = "SELECT " + ke + " FROM fz_%s_{side} WHERE " + pred + " ORDER BY k" + direction + " LIMIT %d" % lim
        ordered = True
        if rnd.random() < 0.3:
            q = q.replace(" WHERE " + pred, "")
    elif kind < 0.85:
        # -0 and 0 are equal: which one min() meets first is a tie, fold it
        fold = " + 0" if t in ("float4", "float8") else ""
        agg = "count(*)" if t == "bool" else "count(*), (min(k)%s)::text, (max(k)%s)::text" % (fold, fold)
        q = "SELECT " + agg + " FROM fz_%s_{side} WHERE " + pred
        ordered = True
    else:
        return check_cursor(cur, t, rnd, stats)
    q = q % t
    cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
    try:
        g = run_query(cur, MODES[mode], q.format(side="g"))
        b = run_query(cur, MODES[mode], q.format(side="b"))
        s = run_query(cur, SEQ, q.format(side="g"))
        if rnd.random() < 0.05:
            cur.execute("SET LOCAL enable_seqscan = off")
            cur.execute("EXPLAIN (COSTS OFF) " + q.format(side="g"))
            plan = "\n".join(r[0] for r in cur.fetchall())
            stats["explained"] += 1
            if "fz_%s_g_k" % t in plan:
                stats["index_used"] += 1
    finally:
        cur.execute("COMMIT")
    if ordered:
        fg = [tuple(norm_key(x) for x in r) for r in g]
        fb = [tuple(norm_key(x) for x in r) for r in b]
        fs = [tuple(norm_key(x) for x in r) for r in s]
    else:
        fg = sorted(map(repr, g))
        fb = sorted(map(repr, b))
        fs = sorted(map(repr, s))
    stats["queries"] += 1
    stats["rows"] += len(g)
    if fg != fb or fg != fs:
        diff_gb = [x for x in fg if x not in fb][:5] + [x for x in fb if x not in fg][:5]
        diff_gs = [x for x in fg if x not in fs][:5] + [x for x in fs if x not in fg][:5]
        return ("query (%s scans): %s\n gbtree %d rows, btree %d rows, seqscan %d rows\n"
                " gbtree vs btree differ in %r\n gbtree vs seqscan differ in %r") % (
            mode, q.format(side="g"), len(g), len(b), len(s), diff_gb, diff_gs)
    return None


def check_cursor(cur, t, rnd, stats):
    pred = gen_pred(t, rnd) if rnd.random() < 0.6 else "true"
    desc = rnd.choice(["", " DESC"])
    moves = []
    for _ in range(rnd.randint(3, 12)):
        m = rnd.choice(["NEXT", "PRIOR", "FORWARD %d" % rnd.randint(1, 300), "BACKWARD %d" % rnd.randint(1, 300),
                        "ABSOLUTE %d" % rnd.randint(-50, 400), "RELATIVE %d" % rnd.randint(-100, 100),
                        "FIRST", "LAST"])
        moves.append(m)
    results = {}
    cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
    try:
        for side, settings in (("g", MODES["index"]), ("b", MODES["index"])):
            for s in settings:
                cur.execute(s)
            cur.execute("DECLARE c_%s SCROLL CURSOR FOR SELECT %s FROM fz_%s_%s WHERE %s ORDER BY k%s"
                        % (side, kexpr(t), t, side, pred, desc))
            out = []
            for m in moves:
                cur.execute("FETCH %s FROM c_%s" % (m, side))
                out.append([norm_key(r[0]) for r in cur.fetchall()])
            results[side] = out
            for s in RESET:
                cur.execute(s)
    finally:
        cur.execute("COMMIT")
    stats["cursors"] += 1
    if results["g"] != results["b"]:
        return "cursor on %s WHERE %s ORDER BY k%s, moves %s\n gbtree %r\n btree %r" % (
            t, pred, desc, moves, results["g"], results["b"])
    return None


def checker(dsn, types, seed, deadline, result):
    rnd = random.Random(seed * 1000 + 999)
    conn = connect(dsn)
    cur = conn.cursor()
    stats = {"queries": 0, "rows": 0, "cursors": 0, "explained": 0, "index_used": 0}
    while time.time() < deadline:
        t = rnd.choice(types)
        try:
            err = check_once(cur, t, rnd, stats)
        except psycopg2.Error as e:
            cur.execute("ROLLBACK")
            if e.pgcode in ("40001", "40P01", "55P03", "57014"):
                continue
            err = "error: %s" % e
        if err:
            result.put(("fail", err, stats))
            conn.close()
            return
    # final full comparison of every twin pair
    for t in types:
        cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        g = run_query(cur, MODES["ios"], "SELECT id, %s FROM fz_%s_g WHERE k IS NOT NULL OR k IS NULL" % (kexpr(t), t))
        b = run_query(cur, SEQ, "SELECT id, %s FROM fz_%s_b" % (kexpr(t), t))
        cur.execute("COMMIT")
        if sorted(map(repr, g)) != sorted(map(repr, b)):
            result.put(("fail", "final contents of %s differ: gbtree %d rows, heap %d rows" % (t, len(g), len(b)), stats))
            return
        cur.execute("SELECT gbtree_check('fz_%s_g_k', true)" % t)
    result.put(("ok", None, stats))
    conn.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dsn", required=True)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--writers", type=int, default=3)
    ap.add_argument("--types", default="int8,int4,int2,float8,float4,timestamptz,date,bool,oid,money,time,timestamp")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1, 2 ** 31)
    types = args.types.split(",")
    print("gbtree_fuzz: seed %d, %d writers, %.0f s, types %s" % (seed, args.writers, args.seconds, ",".join(types)),
          flush=True)
    setup(args.dsn, types)
    deadline = time.time() + args.seconds
    counter = mp.Value("l", 0)
    result = mp.Queue()
    procs = [mp.Process(target=writer, args=(args.dsn, types, seed, w, deadline, counter))
             for w in range(args.writers)]
    chk = mp.Process(target=checker, args=(args.dsn, types, seed, deadline, result))
    for p in procs + [chk]:
        p.start()
    status, err, stats = result.get()
    for p in procs:
        p.join()
    chk.join()
    bad_writers = [p.exitcode for p in procs if p.exitcode != 0]
    print("gbtree_fuzz: seed %d: %d writer operations, %d queries (%d rows) and %d cursors compared, "
          "index used in %d of %d sampled plans" % (seed, counter.value, stats["queries"], stats["rows"],
                                                    stats["cursors"], stats["index_used"], stats["explained"]))
    if status != "ok" or bad_writers:
        print("gbtree_fuzz: FAILED with seed %d\n%s" % (seed, err or "a writer failed"), flush=True)
        sys.exit(1)
    print("gbtree_fuzz: ok, 0 differences", flush=True)


if __name__ == "__main__":
    main()
