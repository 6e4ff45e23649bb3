#!/usr/bin/env python3
"""test/bench/write_bench.py: the driver behind test/bench/run-write-bench.sh
(make bench-write), the write path of issue 18.

The same statements on the same data into three tables, one per engine:
no index (none), a btree index on k, a gbtree index on k.  What an index
costs is its share: the statement's time (or WAL) on the indexed table
minus the same statement's on the table without an index, in the same
repetition.  run-bench.sh builds and installs gbtree and starts the
throwaway cluster; the helpers (psql, timing, pgbench, statistics,
machine and settings facts) are bench.py's.  See test/bench/README.md.
"""

import datetime
import hashlib
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402  (reads the same BENCH_* variables)
from bench import log, loud, psql, q1, rotated, Measure, fmt_ratio  # noqa: E402

ENV = os.environ
ROWS = B.ROWS
REPEAT = B.REPEAT
OUT = B.OUT
SCRATCH = B.SCRATCH
# rows each pgbench run inserts (a fixed number, not a duration: see m_inserts)
INSERT_ROWS = int(ENV.get("BENCH_INSERT_ROWS", "20000"))
# unique indexes for both engines (the keys are distinct): every insert checked
UNIQUE = ENV.get("BENCH_WRITE_UNIQUE", "0") == "1"
CLIENTS = B.CLIENTS
TAG = ENV.get("BENCH_TAG", "")
GB_OPTIONS = " ".join(x for x in ("-c gbtree.device=cpu", ENV.get("BENCH_GBTREE_OPTIONS", "")) if x)
ALL_MEASURES = ["copy", "copy_full", "insert_select", "insert_select_full", "update", "inserts"]
MEASURES = [m.strip() for m in ENV.get("BENCH_MEASURES", ",".join(ALL_MEASURES)).split(",") if m.strip()]
# what this benchmark changes from PostgreSQL's defaults, and why (README.md)
SETTINGS = [("autovacuum", "off", "no background VACUUM/ANALYZE inside a timed statement"),
            ("jit", "off", "no JIT compilation time in the timed statements")]
FAILURES = B.FAILURES   # bench.check_gbtree reports there too
TYPE = "id int8 NOT NULL, k int8, payload text"
DATA_A = f"{SCRATCH}/write_a.copy"   # ids 1..N: the first N rows
DATA_B = f"{SCRATCH}/write_b.copy"   # ids N+1..2N: the N more rows


def gen_sql(lo, hi):
    """rows lo..hi: k a pseudo-random permutation of the row number over the
    whole int8 range (bench.py's uniform keys, distinct), so new rows' keys
    land among the existing ones"""
    return (f"SELECT g AS id, {B.scramble('g')} AS k, md5(g::text) AS payload "
            f"FROM generate_series({lo}::int8, {hi}) g")


class Engine(B.Engine):
    """an access method, or none (the table without an index)"""

    def table(self, key):
        return f"w_{key}_{self.tag}"

    def create(self, t, load=None):
        """drop and recreate t, with its index; load: a COPY file loaded first
        (frozen, all-visible, then CREATE INDEX), as a loaded table is"""
        sql = f"DROP TABLE IF EXISTS {t};\n"
        if load:
            sql += f"BEGIN; CREATE TABLE {t} ({TYPE}); COPY {t} FROM '{load}' (FREEZE); COMMIT;\n"
        else:
            sql += f"CREATE TABLE {t} ({TYPE});\n"
        if self.am:
            sql += f"CREATE {'UNIQUE ' if UNIQUE else ''}INDEX {t}_k_idx ON {t} USING {self.am} (k);\n"
        return sql


def engines(has_device_guc):
    return [Engine("none", None), Engine("btree", "btree"),
            Engine("gbtree", "gbtree", GB_OPTIONS if has_device_guc else ENV.get("BENCH_GBTREE_OPTIONS", ""))]


# ---- checks -----------------------------------------------------------------

def answer_sql(t, by_index):
    """(settings, query): count, sum(id), sum(k), an order-independent hash
    of the (k, id) multiset, and (by index) how many keys an index-order
    scan returned out of order"""
    agg = ("count(*) || ' ' || coalesce(sum(id), 0) || ' ' || coalesce(sum(k::numeric), 0) || ' ' || "
           "coalesce(sum(hashint8extended(k, id)::numeric), 0)")
    if by_index:
        return (B.FORCE_INDEX, f"SELECT {agg} || ' ' || count(*) FILTER (WHERE k < pk) "
                               f"FROM (SELECT k, id, lag(k) OVER (ORDER BY k) AS pk FROM {t}) s")
    return ("SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off;",
            f"SELECT {agg} || ' 0' FROM {t}")


def table_answer(e, t, check_plan=False):
    """the table's contents as its index returns them (none: a seq scan);
    check_plan: make sure the query does scan the index"""
    setup, query = answer_sql(t, e.am is not None)
    if check_plan and e.am:
        nodes = B.plan_nodes(json.loads(psql(f"{setup} EXPLAIN (FORMAT JSON) {query};",
                                             options=e.opts()))[0]["Plan"])
        if not any(n.get("Index Name") == f"{t}_k_idx" for n in nodes):
            FAILURES.append(f"{t}: the check did not scan {t}_k_idx")
            loud(f"{t}: the check's plan does not scan {t}_k_idx: {B.describe_scan(nodes)}")
    return psql(f"{setup} {query};", options=e.opts()).strip()


def check_same(what, answers):
    """answers: label -> answer; all must agree (a difference is loud)"""
    if len(set(answers.values())) <= 1:
        return True
    FAILURES.append(f"{what}: contents differ")
    loud(f"MISMATCH: {what}: " + "; ".join(f"{k}: {v}" for k, v in answers.items()))
    return False


def so_md5():
    try:
        with open(SO_PATH, "rb") as f:
            return hashlib.md5(f.read()).hexdigest()
    except OSError as ex:
        return f"unreadable ({ex.strerror})"


def check_library(when):
    """the library the runs load must stay the one this run installed"""
    now = so_md5()
    if now != SO_MD5:
        FAILURES.append(f"{SO_PATH} changed {when}")
        loud(f"{SO_PATH} changed {when} (md5 {SO_MD5} -> {now}): another install? "
             f"the results mix two builds; run again (BENCH_PRIVATE_PG=1 keeps other installs out)")


# ---- measures -----------------------------------------------------------------

class Result:
    """one line of the results: the engines' values per repetition, in
    repetition order, so each share pairs values of the same repetition"""

    def __init__(self, key, title, unit, better, shares=True):
        self.key, self.title, self.unit, self.better, self.shares = key, title, unit, better, shares
        self.total = Measure(key, title, unit, better, "")
        self.share = Measure(key + "_share", title, unit, better, "")

    def add(self, eng, v):
        self.total.add(eng, v)

    def finish(self):
        none = self.total.values.get("none", [])
        for eng in ("btree", "gbtree"):
            for a, b in zip(self.total.values.get(eng, []), none):
                self.share.add(eng, a - b)

    def ratio(self):
        return self.share.ratio("gbtree") if self.shares else self.total.ratio("gbtree")

    def verdict(self):
        return self.share.verdict("gbtree") if self.shares else self.total.verdict("gbtree")


def timed_wal(e, setup, stmt):
    """(ms, WAL bytes) of stmt after setup and a CHECKPOINT, in one session"""
    ms, echo = B.timed(f"{setup}CHECKPOINT;\nSELECT pg_current_wal_insert_lsn() AS lsn0 \\gset",
                       f"{stmt}\nSELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), :'lsn0') AS wal \\gset\n"
                       f"\\echo WAL :wal", options=e.opts())
    return ms, float(echo["WAL"])


def m_statement(key, title, how, load, stmt, res):
    """a statement measure: per repetition, each engine in turn: fresh
    table (untimed), CHECKPOINT, the timed statement, then the contents
    through the index, compared between engines, and the table dropped
    (so the next engine's statement finds the same shared buffers)"""
    rt = Result(key, f"{title}: time", "ms", "lower")
    rw = Result(key + "_wal", f"{title}: WAL", "MB", "lower")
    size = {}
    for r in range(REPEAT):
        answers = {}
        for e in rotated(ENGINES, r):
            t = e.table(key)
            ms, wal = timed_wal(e, e.create(t, load), stmt(t))
            rt.add(e.name, ms)
            rw.add(e.name, wal / 1048576)
            answers[e.name + (" (index scan)" if e.am else " (seq scan)")] = table_answer(e, t, r == 0)
            if e.am:
                size.setdefault(e.name, int(q1(f"SELECT pg_relation_size('{t}_k_idx')")) / 1048576)
                if e.am == "gbtree" and r == 0:
                    B.check_gbtree(f"{t}_k_idx")
            psql(f"DROP TABLE {t};")
        same = check_same(f"{title} (repetition {r + 1})", answers)
        if not same:
            rt.total.notes.append("CONTENTS DIFFER")
        log(f"    repetition {r + 1}: " + ", ".join(
            f"{e.name} {rt.total.values[e.name][-1]:.0f} ms {rw.total.values[e.name][-1]:.1f} MB" for e in ENGINES)
            + f"; {next(iter(answers.values())).split(' ')[0]} rows, " + ("same contents" if same else "DIFFER"))
    for x in (rt, rw):
        x.finish()
        x.how = how
        res.append(x)
        report(x)
    SIZES.append((title, size))


def insert_script(t):
    """one single-row INSERT per transaction: keys of rows 3N+1.. of the
    same permutation, new keys among the existing ones (drawn below 9e11,
    where scramble()'s x * B24 would overflow int8)"""
    path = os.path.join(SCRATCH, "pgbench", f"{t}.sql")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(f"\\set i random({3 * ROWS + 1}, 900000000000)\n\\set k {B.scramble(':i')}\n"
                f"INSERT INTO {t} (id, k, payload) VALUES (:i, :k, md5(CAST(:i AS text)));\n")
    return path


def m_inserts(res):
    """pgbench single-row inserts into a table that starts with N rows.
    Every run inserts the same number of rows, BENCH_INSERT_ROWS, and every
    engine of a repetition the same rows (the same --random-seed), so WAL
    per row compares between engines and between runs (after a CHECKPOINT
    most inserts of a short run write a full-page image: per row that
    depends on how many rows follow), and the contents can be compared as
    the statements' are"""
    for c in CLIENTS:
        cl = f"{c} client{'s' if c > 1 else ''}"
        ntx = -(-INSERT_ROWS // c)   # transactions per client
        rt = Result(f"inserts_{c}c", f"single-row INSERT, pgbench {cl}", "tps", "higher", shares=False)
        rw = Result(f"inserts_{c}c_wal", f"single-row INSERT, pgbench {cl}: WAL per row", "bytes", "lower")
        for r in range(REPEAT):
            answers = {}
            for e in rotated(ENGINES, r):
                t = e.table(f"ins{c}")
                lsn0 = q1(f"{e.create(t, DATA_A)}CHECKPOINT; SELECT pg_current_wal_insert_lsn();")
                tps = B.pgbench(insert_script(t), c, B.DB, e.opts(), transactions=ntx,
                                extra=[f"--random-seed={4242 + r}"])
                wal = float(q1(f"SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '{lsn0}')"))
                rt.add(e.name, tps)
                rw.add(e.name, wal / (c * ntx))
                answers[e.name + (" (index scan)" if e.am else " (seq scan)")] = table_answer(e, t, r == 0)
                if e.am == "gbtree" and r == 0:
                    B.check_gbtree(f"{t}_k_idx")
                psql(f"DROP TABLE {t};")
            count = next(iter(answers.values())).split(" ")[0]
            same = check_same(f"{rt.title} (repetition {r + 1})", answers)
            if count != str(ROWS + c * ntx):
                same = False
                FAILURES.append(f"{rt.title}: {count} rows, not {ROWS + c * ntx}")
                loud(f"{rt.title}: the tables hold {count} rows, not {ROWS} + {c} x {ntx}")
            if not same:
                rt.total.notes.append("CONTENTS DIFFER")
            log(f"    repetition {r + 1}: " + ", ".join(
                f"{e.name} {rt.total.values[e.name][-1]:,.0f} tps {rw.total.values[e.name][-1]:,.0f} B/row"
                for e in ENGINES) + f"; {count} rows, " + ("same contents" if same else "DIFFER"))
        for x in (rt, rw):
            x.finish()
            x.how = (f"pgbench -n -M prepared -c {c} -j {min(c, B.NCPU)} -t {ntx:,} ({c * ntx:,} rows), "
                     f"the same --random-seed for every engine of a repetition; one INSERT INTO t VALUES (:i, <key of :i>, md5(:i)) per "
                     f"transaction (random :i > 3N), into a fresh table of N rows, after CHECKPOINT; "
                     f"tps excludes connection time; WAL per row: LSN difference / rows inserted")
            res.append(x)
            report(x)


# ---- reporting ----------------------------------------------------------------

def fmt_num(v, unit):
    if v != v:
        return "n/a"
    if unit == "bytes":
        return f"{v:,.0f}"
    return B.fmt_val(v, unit) if v >= 0 else "-" + B.fmt_val(-v, unit)


def spread(m, eng, unit):
    st = m.st(eng)
    if not st:
        return "n/a"
    if st["n"] == 1 or st["min"] == st["max"]:
        return fmt_num(st["median"], unit)
    return f"{fmt_num(st['median'], unit)} ({fmt_num(st['min'], unit)} to {fmt_num(st['max'], unit)})"


def report(x):
    parts = " | ".join(f"{e.name} {spread(x.total, e.name, x.unit)}" for e in ENGINES)
    if x.shares:
        parts += " || share: " + " | ".join(f"{n} {spread(x.share, n, x.unit)}" for n in ("btree", "gbtree"))
    log(f"  {x.title:<58} [{x.unit}] {parts}  -> {fmt_ratio(x.ratio())}"
        + ("  !! " + ", ".join(x.total.notes) if x.total.notes else ""))


def table_lines(res):
    head = ["measure", "unit", "no index", "btree", "gbtree", "btree's share", "gbtree's share",
            "gbtree/btree", "better"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for x in res:
        row = [x.title + (" **" + ", ".join(x.total.notes) + "**" if x.total.notes else ""), x.unit]
        row += [spread(x.total, e.name, x.unit) for e in ENGINES]
        row += [spread(x.share, n, x.unit) if x.shares else "" for n in ("btree", "gbtree")]
        row += [fmt_ratio(x.ratio()) + ("" if x.shares else " (tps)"), x.verdict()]
        lines.append("| " + " | ".join(row) + " |")
    return lines


def write_results(res, elapsed, end_load, others):
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, f"write-{ROWS}{'-' + TAG if TAG else ''}.md")
    changed = ", ".join(f"{n}={v} ({why})" for n, v, why in SETTINGS)
    lines = [f"# gbtree vs btree vs no index: the write path, {ROWS:,} rows", "",
             f"- command: `{ENV.get('BENCH_INVOCATION', '?')}`; effective settings: BENCH_ROWS={ROWS} "
             f"BENCH_REPEAT={REPEAT} BENCH_INSERT_ROWS={INSERT_ROWS} BENCH_CLIENTS={','.join(map(str, CLIENTS))} "
             f"BENCH_MEASURES={','.join(MEASURES)}"
             + (f" BENCH_GBTREE_OPTIONS='{ENV['BENCH_GBTREE_OPTIONS']}'" if ENV.get("BENCH_GBTREE_OPTIONS") else "")
             + (" BENCH_WRITE_UNIQUE=1 (both indexes UNIQUE)" if UNIQUE else ""),
             f"- date: {START_DATE}; duration {elapsed / 60:.1f} min",
             f"- git revision: {ENV.get('GIT_REV', '?')} (gbtree built from "
             + (f"`git archive` of BENCH_SRC_REV={ENV['BENCH_SRC_REV']}, not the working tree)"
                if ENV.get("BENCH_SRC_REV") else "the working tree; -dirty: with uncommitted changes)"),
             f"- gbtree library: {SO_PATH} (md5 {SO_MD5}; {SO_WHERE})",
             f"- gbtree settings in the gbtree sessions (PGOPTIONS `{ENGINES[2].options}`): {GB_SETTINGS}",
             f"- machine: {MACHINE}",
             f"- load average: {ENV.get('BENCH_START_LOAD', '?')} at the start, {end_load} at the end (the "
             f"benchmark's own processes count too); CPU used by other processes while each measure ran: "
             + "; ".join(others),
             f"- PostgreSQL: {PG_VERSION}",
             f"- settings this benchmark changes: {changed} (ALTER SYSTEM at the start; everything else, "
             f"shared_buffers, max_wal_size, checkpoints, synchronous_commit and parallel index builds "
             f"included, is PostgreSQL's default)",
             f"- all settings whose source is not the default (initdb's included): {', '.join(PG_SETTINGS)}",
             f"- repetitions: {REPEAT} per measure; values are median (min to max); the engines "
             f"alternate their order from one repetition to the next", "",
             "Each table is `(id int8 NOT NULL, k int8, payload text)`: k a pseudo-random permutation of "
             "the row number spread over the whole int8 range (distinct keys, in an order unrelated to "
             "the heap's), payload md5(id) (32 characters). *no index*: the table alone; *btree*, "
             "*gbtree*: the same table with only that index on k (default fillfactor).", "",
             "The index's share is the statement's time (or WAL) on the indexed table minus the same "
             "statement's on the table without an index, in the same repetition; the share columns give "
             "its median (min to max) over the repetitions, and gbtree/btree is the ratio of the median "
             "shares (below 1: gbtree's index costs less). For pgbench it is gbtree tps / btree tps "
             "(above 1: gbtree faster). \"better\": \"~ (noise)\" where the interquartile ranges of the "
             "runs overlap.", ""]
    lines += table_lines(res)
    lines += ["", "How each was measured:", ""]
    seen = set()
    for x in res:
        base = x.title.split(":")[0]
        if base not in seen:
            seen.add(base)
            lines.append(f"- {base}: {x.how}")
    if SIZES:
        lines += ["", "Index size after the statement (MB, first repetition): " + "; ".join(
            f"{t}: btree {s.get('btree', float('nan')):.2f}, gbtree {s.get('gbtree', float('nan')):.2f}"
            for t, s in SIZES) + "."]
    lines += ["", "Verification: " + (
        "FAILED: " + "; ".join(FAILURES) if FAILURES else
        "after every timed statement the btree and gbtree tables held the same (k, id) multiset as the "
        "table without an index (count, sum(id), sum(k) and a sum of hashint8extended(k, id) over an "
        "index-order scan of each index, and no key out of order; a seq scan of the table without an "
        "index), the pgbench runs' tables included; "
        + ("gbtree_check(index, true) passed on every first repetition's gbtree index; " if B.HAS_CHECK else "")
        + "the installed gbtree library did not change during the run."), ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))
    return path


# ---- main -------------------------------------------------------------------

def apply_settings():
    psql("".join(f"ALTER SYSTEM SET {n} = {v};\n" for n, v, _ in SETTINGS) + "SELECT pg_reload_conf();")
    # the postmaster rereads the file asynchronously; new sessions must see it
    want = "|".join(v for _, v, _ in SETTINGS)
    for _ in range(100):
        if q1("SELECT " + " || '|' || ".join(f"current_setting('{n}')" for n, _, _ in SETTINGS)) == want:
            return
        time.sleep(0.1)
    raise B.SqlError("ALTER SYSTEM settings did not take effect")


def main():
    global ENGINES, MACHINE, PG_VERSION, PG_SETTINGS, START_DATE, SIZES
    global SO_PATH, SO_MD5, SO_WHERE, GB_SETTINGS
    for m in MEASURES:
        if m not in ALL_MEASURES:
            raise SystemExit(f"unknown measure {m!r} ({', '.join(ALL_MEASURES)})")
    START_DATE = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    apply_settings()
    psql("CREATE EXTENSION IF NOT EXISTS gbtree;")
    B.HAS_CHECK = q1("SELECT to_regprocedure('gbtree_check(regclass,boolean)') IS NOT NULL") == "t"
    pkglib = q1("SELECT setting FROM pg_config WHERE name = 'PKGLIBDIR'")
    SO_PATH = os.path.join(pkglib, "gbtree.so")
    SO_MD5 = so_md5()
    built = os.path.join(SCRATCH, "src", "gbtree.so")
    want = ENV.get("BENCH_GBTREE_SO_MD5") or (
        hashlib.md5(open(built, "rb").read()).hexdigest()
        if ENV.get("BENCH_INSTALL") == "1" and os.path.exists(built) else "")
    if want and want != SO_MD5:
        raise SystemExit(f"ERROR: {SO_PATH} is not the library this run built (md5 {SO_MD5}, built {want}): "
                         f"another install in between? run again")
    priv = ENV.get("BENCH_PRIVATE_PG_DIR", "")
    # preloaded, gbtree may log its own WAL records instead of generic WAL
    preload = "gbtree" in q1("SHOW shared_preload_libraries")
    SO_WHERE = ("installed by this run" if want else "installed before the run (BENCH_INSTALL=0)") + (
        ", in a private PostgreSQL tree" if priv and pkglib.startswith(priv) else ", system-wide") + (
        "; preloaded (shared_preload_libraries)" if preload else "; not preloaded: each session loads it")
    # the gbtree settings a gbtree session sees (a build may add some, e.g.
    # gbtree.insert_batch_memory): recorded, never set here
    gbs = psql("LOAD 'gbtree'; SELECT name || '=' || setting || coalesce(unit, '') "
               "FROM pg_settings WHERE name LIKE 'gbtree.%' ORDER BY name;",
               options=GB_OPTIONS).split()
    has_device = any(s.startswith("gbtree.device=") for s in gbs)
    GB_SETTINGS = ", ".join(gbs) + ("" if any(s.startswith("gbtree.insert_batch_memory=") for s in gbs)
                                    else " (no gbtree.insert_batch_memory in this build)")
    ENGINES = engines(has_device)
    MACHINE = B.machine_info()
    PG_VERSION, PG_SETTINGS = B.pg_info()
    SIZES = []
    log(f"Engines: {', '.join(e.name for e in ENGINES)}; {ROWS:,} rows; {REPEAT} repetitions; "
        f"measures {', '.join(MEASURES)}; pgbench runs of {INSERT_ROWS:,} inserts")
    log(f"Machine: {MACHINE}")
    log(f"gbtree: {SO_PATH} ({SO_WHERE}); {GB_SETTINGS}")

    t0 = time.time()
    # the rows, generated once (untimed) into COPY files in id order
    for path, lo in ((DATA_A, 0), (DATA_B, ROWS)):
        B.generate_file("write", {"gen": lambda a, b, lo=lo: gen_sql(a + lo, b + lo)}, path)
    if "insert_select" in MEASURES:
        psql(f"DROP TABLE IF EXISTS w_src; BEGIN; CREATE UNLOGGED TABLE w_src ({TYPE}); "
             f"COPY w_src FROM '{DATA_A}' (FREEZE); COMMIT;")
    if "insert_select_full" in MEASURES:
        psql(f"DROP TABLE IF EXISTS w_src_more; BEGIN; CREATE UNLOGGED TABLE w_src_more ({TYPE}); "
             f"COPY w_src_more FROM '{DATA_B}' (FREEZE); COMMIT;")
    log(f"  data generated in {time.time() - t0:.0f} s")

    res, others = [], []
    n = f"{ROWS:,}"
    steps = {
        "copy": lambda: m_statement(
            "copy", f"COPY {n} rows into an empty table",
            f"COPY t FROM a server-side file of N rows in id order into a new empty table with the index, "
            f"after CHECKPOINT; psql \\timing, commit included", None,
            lambda t: f"COPY {t} FROM '{DATA_A}';", res),
        "copy_full": lambda: m_statement(
            "copy_full", f"COPY {n} rows into a table of {n}",
            f"COPY t FROM a server-side file of N more rows (ids N+1..2N, keys among the existing ones) into "
            f"a table loaded with N rows (COPY FREEZE, then CREATE INDEX, untimed), after CHECKPOINT; psql "
            f"\\timing, commit included", DATA_A,
            lambda t: f"COPY {t} FROM '{DATA_B}';", res),
        "insert_select": lambda: m_statement(
            "insert_select", f"INSERT ... SELECT {n} rows into an empty table",
            f"INSERT INTO t SELECT * FROM a source table of the same N rows (unlogged, id order) into a new "
            f"empty table with the index, after CHECKPOINT", None,
            lambda t: f"INSERT INTO {t} SELECT id, k, payload FROM w_src;", res),
        "insert_select_full": lambda: m_statement(
            "insert_select_full", f"INSERT ... SELECT {n} rows into a table of {n}",
            f"INSERT INTO t SELECT * FROM a source table of N more rows (ids N+1..2N, keys among the existing "
            f"ones; unlogged, id order) into a table loaded with N rows (COPY FREEZE, then CREATE INDEX, "
            f"untimed), after CHECKPOINT", DATA_A,
            lambda t: f"INSERT INTO {t} SELECT id, k, payload FROM w_src_more;", res),
        "update": lambda: m_statement(
            "update", f"UPDATE 10% of {n} keys",
            f"UPDATE t SET k = <new key> WHERE id % 10 = 0 on a table loaded with N rows (COPY FREEZE, "
            f"then CREATE INDEX, untimed), after CHECKPOINT; the new keys are rows 2N+1..3N's of the "
            f"permutation; no HOT update, as k is indexed (and the pages are full)", DATA_A,
            lambda t: f"UPDATE {t} SET k = {B.scramble(f'id + {2 * ROWS}')} WHERE id % 10 = 0;", res),
        "inserts": lambda: m_inserts(res),
    }
    for m in MEASURES:
        log(f"\n---- {m} (load average {B.loadavg()}) ----")
        snap, ts = B.cpu_snapshot(), time.time()
        steps[m]()
        others.append(f"{m} {B.others_cpu(snap, B.cpu_snapshot())}")
        log(f"  ({time.time() - ts:.0f} s)")
        check_library(f"during the {m} measure")
    psql("DROP TABLE IF EXISTS w_src, w_src_more; CHECKPOINT;")
    for path in (DATA_A, DATA_B):
        try:
            os.unlink(path)
        except OSError:
            pass

    elapsed = time.time() - t0
    path = write_results(res, elapsed, B.loadavg(), others)
    log(f"\n==================== write path: {ROWS:,} rows, median of {REPEAT} ====================")
    for line in table_lines(res):
        log(line)
    log(f"\nResults: {path}")
    log(f"Total benchmark time {elapsed / 60:.1f} min.")
    if FAILURES:
        loud(f"{len(FAILURES)} FAILURE(S): " + "; ".join(FAILURES))
        return 1
    log("Verification: the btree, gbtree and no-index tables held the same rows after every statement.")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except B.SqlError as ex:
        loud(f"benchmark aborted: {ex}")
        sys.exit(2)
