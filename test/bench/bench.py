#!/usr/bin/env python3
"""test/bench/bench.py: the driver behind test/bench/run-bench.sh.

run-bench.sh builds and installs gbtree, starts a throwaway cluster and
runs this with PGHOST/PGPORT/PGUSER pointing at it and the BENCH_*
variables set.  Only the Python standard library is used; psql and
pgbench do the talking to the server.  See test/bench/README.md for what
each measure is.
"""

import csv
import datetime
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time

# ---- configuration ----------------------------------------------------------

ENV = os.environ
# --replot: only redraw the plots and the README's results section from the
# result files (for results made where there is no gnuplot: the GPU machine)
REPLOT = sys.argv[1:] == ["--replot"]
if REPLOT:
    _root = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    for k, v in (("BENCH_ROWS", "0"), ("GB_SCRATCH", ""), ("PG_BINDIR", ""), ("GB_ROOT", _root),
                 ("BENCH_OUT", os.path.join(_root, "test", "bench", "results"))):
        os.environ.setdefault(k, v)
ROWS = int(ENV["BENCH_ROWS"])
REPEAT = int(ENV.get("BENCH_REPEAT", "5"))
OUT = ENV["BENCH_OUT"]
SCRATCH = ENV["GB_SCRATCH"]
BINDIR = ENV["PG_BINDIR"]
GB_ROOT = ENV["GB_ROOT"]
PGB_SECS = int(ENV.get("BENCH_PGBENCH_SECS", "3"))
PGB_SCALE = int(ENV.get("BENCH_PGBENCH_SCALE", "10"))
# gbtree-gpu: the GPU service running and gbtree.device = auto, what a
# server with a GPU gives by default (batches of gbtree.gpu_min_batch keys
# and more, and index builds, go to the GPU; the rest stays on the CPU).
# BENCH_GPU_OPTIONS='-c gbtree.device=gpu' sends every scan it can there.
GPU_OPTIONS = ENV.get("BENCH_GPU_OPTIONS", "") or "-c gbtree.device=auto"
DATASETS = [d.strip() for d in ENV.get("BENCH_DATASETS", "").split(",") if d.strip()]
ENGINES_SET = ENV.get("BENCH_ENGINES_SET", "") == "1"
ENGINE_NAMES = [e.strip() for e in ENV.get("BENCH_ENGINES", "btree,gbtree").split(",") if e.strip()]
WRITE_README = ENV.get("BENCH_README", "1") == "1"
DEFAULT_OUT = os.path.join(GB_ROOT, "test", "bench", "results")
NCPU = os.cpu_count() or 2
CLIENTS = [int(c) for c in ENV.get("BENCH_CLIENTS", "1,8").split(",") if c.strip()]
# anyrows (the = ANY row fetches, planner's plans) only when named
MEASURES = [m.strip() for m in ENV.get("BENCH_MEASURES", "build,queries,lookups,joins,copy,vacuum").split(",")
            if m.strip()]
# BENCH_KEEP_DATA=1: the data sets stay in the cluster after the run and a
# later run on the same cluster (BENCH_SCRATCH) takes them up again instead
# of generating them: the largest sizes are measured over several runs,
# e.g. BENCH_MEASURES=build then BENCH_MEASURES=queries,lookups.
KEEP_DATA = ENV.get("BENCH_KEEP_DATA", "0") == "1"
# memory for the data preparation's sorts (not for the measures)
PREP_WORK_MEM = ENV.get("BENCH_PREP_WORK_MEM", "") or \
    f"{max(64, min(8192, ROWS * 96 // 1048576))}MB"
DB = "postgres"
PSQL = os.path.join(BINDIR, "psql")
PGBENCH = os.path.join(BINDIR, "pgbench")

# Planner settings for the measures that must go through the index.  They
# are printed with every measure that uses them.
FORCE_INDEX = "SET enable_seqscan = off; SET enable_bitmapscan = off;"
FORCE_INDEX_OPTS = "-c enable_seqscan=off -c enable_bitmapscan=off"
FORCE_NOTE = "enable_seqscan=off, enable_bitmapscan=off"

# Key scrambling.  Keys are a function of a row number i that both SQL and
# pgbench can compute in int8 arithmetic without overflow, so pgbench can
# draw an existing key at random: i -> ((i*A) mod M) is a permutation of
# 1..M-1 (M prime), spread to the whole int8 range, low bits from a
# second permutation.
A40, M40, H40 = 169883889234, 1099511627689, 549755813844
B24, P24 = 10000019, 16777213
A33, M33, H33 = 3281063049, 8589934583, 4294967291
ZIPF_S = 1.1


def scramble(x):
    """int8 expression (SQL and pgbench alike) of an integer expression x;
    x * A40 mod M40 is taken in two steps (A40's high bits, then its low 20)
    so that no product overflows int8 up to x = 5e12 (x * A40 itself would
    from x = 5.4e7)"""
    hi, lo = A40 >> 20, A40 & 0xFFFFF
    return (f"((((({x}) * {hi}) % {M40}) * 1048576 + ({x}) * {lo}) % {M40} - {H40}) * 16777216 "
            f"+ (({x}) * {B24}) % {P24}")


def ts_us(x):
    return f"1577836800000000 + ({x}) * 1000000 + (({x}) * 7919) % 59999993"


def zipf_v(nvals):
    """a Zipf(s) draw over 1..nvals (inverse CDF of the continuous power law)"""
    e = 1.0 - ZIPF_S
    return (f"least({nvals}, floor(power(1 + random() * (power({nvals} + 1, {e}) - 1), "
            f"{1.0 / e})))::int8")


def float_regular_count(n):
    full, rem = divmod(n, 100)
    return full * 97 + max(0, rem - 3)


# Each data set: the key type, a description, the SQL that generates rows
# (id, k) for ids lo..hi, and the pgbench lines that set :i (recorded by the
# verification run) and the SQL expression of a random existing key.  The
# data sets whose keys spread over the whole heap (uniform, zipf, uuid) also
# say how the join measures draw their probe keys (join): key(r) is the key of rank r, and
# ranks 1..ranks are exactly the table's keys, so the ranks beyond give keys
# of the same distribution that match nothing.  anyrows: the data sets the
# = ANY row fetches run on (distinct keys spread over the whole heap).
def dataset_defs(n):
    nz = max(10, n // 50)
    fj = float_regular_count(n)
    return {
        "uniform": dict(
            type="int8",
            desc=("uniform random int8: k = a pseudo-random permutation of the row "
                  "number spread over the whole int8 range (distinct keys); rows in "
                  "id order, so heap order and key order are unrelated"),
            gen=lambda lo, hi: (f"SELECT g AS id, {scramble('g')} AS k "
                                f"FROM generate_series({lo}::int8, {hi}) g"),
            pgb=f"\\set i random(1, {n})\n\\set k {scramble(':i')}\n",
            keyexpr=":k",
            join=dict(ranks=n, key=scramble,
                      note="keys of random rows (row ids drawn uniformly over 1..N with replacement; "
                           "the rows are in id order, so their heap pages spread over the whole table)"),
            # the = ANY row fetches (anyrows): distinct keys, so the keys of
            # n distinct random rows match exactly those n rows
            anyrows=True),
        "sequential": dict(
            type="int8",
            desc="sequential int8: k = id = 1..N, inserted in key order",
            gen=lambda lo, hi: f"SELECT g AS id, g::int8 AS k FROM generate_series({lo}::int8, {hi}) g",
            pgb=f"\\set i random(1, {n})\n\\set k :i\n",
            keyexpr=":k"),
        "zipf": dict(
            type="int8",
            desc=(f"Zipf-skewed int8 with heavy duplicates: {nz} distinct keys (N/50), "
                  f"value rank v drawn with P(v) ~ 1/v^{ZIPF_S} (every rank occurs at "
                  f"least once), k = scrambled v; rows in random order"),
            gen=lambda lo, hi: (
                f"SELECT row_number() OVER (ORDER BY r) AS id, {scramble('v')} AS k FROM "
                f"(SELECT random() AS r, CASE WHEN g <= {nz} THEN g ELSE {zipf_v(nz)} END AS v "
                f"FROM generate_series(1::int8, {hi}) g) z"
                if lo == 1 else
                f"SELECT g AS id, {scramble('v')} AS k FROM "
                f"(SELECT g, {zipf_v(nz)} AS v FROM generate_series({lo}::int8, {hi}) g) z"),
            pgb=f"\\set i random(1, {nz})\n\\set k {scramble(':i')}\n",
            serial=True,
            keyexpr=":k",
            lookup_note="random distinct key (uniform over the distinct values)",
            # drawn by row, a probe key would match sum(c^2)/N rows on
            # average (the top key holds about 12% of the rows), thousands,
            # and the inner join's output would grow as N x probes; drawn by
            # distinct key it matches N/50 rows on average, the heavy keys
            # included, and those rows lie all over the heap
            join=dict(ranks=nz, key=scramble,
                      note=f"random distinct keys (uniform over the {nz:,} distinct values, as the point "
                           "lookups draw them, with replacement): a probe key matches N/50 rows on "
                           "average, the top key about 12% of the table, rows spread over the whole heap "
                           "(drawn by row, the inner join's output would grow as N x probes)")),
        "float8": dict(
            type="float8",
            desc=("float8 with NaN and +-Infinity sprinkled: 1% each of NaN, Infinity, "
                  "-Infinity (id % 100 = 1, 2, 3), the rest distinct multiples of 0.25 "
                  "in about +-1.07e9 in pseudo-random order"),
            gen=lambda lo, hi: (
                f"SELECT g AS id, CASE g % 100 WHEN 1 THEN 'NaN'::float8 "
                f"WHEN 2 THEN 'Infinity'::float8 WHEN 3 THEN '-Infinity'::float8 "
                f"ELSE (((g * {A33}) % {M33}) - {H33})::float8 / 4 END AS k "
                f"FROM generate_series({lo}::int8, {hi}) g"),
            pgb=(f"\\set j random(0, {fj - 1})\n\\set i (:j / 97) * 100 + :j % 97 + 4\n"
                 f"\\set k ((:i * {A33}) % {M33} - {H33}) / 4.0\n"),
            keyexpr=":k",
            lookup_note="random regular key (not NaN/Infinity)"),
        "timestamptz": dict(
            type="timestamptz",
            desc=("timestamptz event times: one per second from 2020-01-01 UTC plus "
                  "0-60 s of jitter, so the insert order is nearly sorted"),
            gen=lambda lo, hi: (
                f"SELECT g AS id, timestamptz 'epoch' + ({ts_us('g')}) * interval '1 microsecond' AS k "
                f"FROM generate_series({lo}::int8, {hi}) g"),
            pgb=f"\\set i random(1, {n})\n\\set us {ts_us(':i')}\n",
            keyexpr="timestamptz 'epoch' + :us * interval '1 microsecond'"),
        # multi-word keys (src/README, "Multi-word keys")
        "uuid": dict(
            type="uuid",
            desc=("uuid primary-key style: k = md5(id)::uuid, random and distinct (two "
                  "64-bit words a key), under a UNIQUE index on both engines; rows in id "
                  "order, so heap order and key order are unrelated"),
            unique=True,
            gen=lambda lo, hi: (f"SELECT g AS id, md5(g::text)::uuid AS k "
                                f"FROM generate_series({lo}::int8, {hi}) g"),
            pgb=f"\\set i random(1, {n})\n",
            keyexpr="md5(:i::text)::uuid",
            join=dict(ranks=n, key=lambda r: f"md5(({r})::text)::uuid",
                      note="keys of random rows (row ids drawn uniformly over 1..N with replacement; "
                           "the rows are in id order, so their heap pages spread over the whole table)")),
        # text keys under "C" (src/README, "Text keys"): at most 32 bytes
        "text": dict(
            type="text",
            desc=("text e-mail style: k = the first 10 hex digits of md5(id) || "
                  "'@example.com' (22 bytes, random; the bench's cluster is --no-locale, "
                  "so its collation is \"C\"); rows in id order, so heap order and key "
                  "order are unrelated"),
            gen=lambda lo, hi: (f"SELECT g AS id, substr(md5(g::text), 1, 10) || '@example.com' AS k "
                                f"FROM generate_series({lo}::int8, {hi}) g"),
            pgb=f"\\set i random(1, {n})\n",
            keyexpr="substr(md5(:i::text), 1, 10) || '@example.com'",
            join=dict(ranks=n, key=lambda r: f"substr(md5(({r})::text), 1, 10) || '@example.com'",
                      note="keys of random rows (row ids drawn uniformly over 1..N with replacement; "
                           "the rows are in id order, so their heap pages spread over the whole table)")),
        "composite": dict(
            type="int4",
            extra_cols=", ts timestamptz",
            index_cols="k, ts",
            desc=("composite (tenant int4, created_at timestamptz), the index on both "
                  "(k, ts): 1000 tenants k = id % 1000, ts one second per row from "
                  "2024-01-01 UTC, so rows arrive in time order; measures on k are on the "
                  "index's first column (= ANY of tenants, ranges of tenants, ORDER BY k), "
                  "point lookups on both columns"),
            gen=lambda lo, hi: (f"SELECT g AS id, (g % 1000)::int4 AS k, "
                                f"timestamptz '2024-01-01 00:00+00' + g * interval '1 second' AS ts "
                                f"FROM generate_series({lo}::int8, {hi}) g"),
            pgb=f"\\set i random(1, {n})\n",
            keyexpr="(:i % 1000)::int4",
            where=("k = (:i % 1000)::int4 AND ts = timestamptz '2024-01-01 00:00+00' + "
                   ":i * interval '1 second'"),
            lookup_note="tenant and time of a random row (k = .. AND ts = ..)"),
    }


def table_cols(d):
    """the key columns of a data set's tables, after id"""
    return f"k {d['type']}{d.get('extra_cols', '')}"


def index_cols(d):
    return d.get("index_cols", "k")


def index_kw(d):
    """CREATE's words: a primary-key style data set's index is unique (a
    constraint would be btree's own; a unique index is what gbtree offers)"""
    return "UNIQUE INDEX" if d.get("unique") else "INDEX"


def select_cols(d):
    return "id, k" + (", ts" if d.get("extra_cols") else "")


# ---- helpers --------------------------------------------------------------

FAILURES = []        # verification failures (answers differ): loud, exit 1
OTHER_CPU = []       # per data set: CPU share other processes used meanwhile
PLAN_WARNINGS = []   # a measure that did not use the index it should


def log(msg=""):
    print(msg, flush=True)


def loud(msg):
    bar = "!" * 78
    log(f"{bar}\n!!! {msg}\n{bar}")


class SqlError(Exception):
    pass


def psql(sql, db=DB, options=None, timeout=3600):
    env = dict(ENV)
    if options:
        env["PGOPTIONS"] = options
    p = subprocess.run([PSQL, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", db, "-f", "-"],
                       input=sql, capture_output=True, text=True, env=env, timeout=timeout)
    if p.returncode != 0:
        raise SqlError(f"psql failed ({p.returncode}): {p.stderr.strip()[:2000]}\n"
                       f"--- SQL (first 1500 chars) ---\n{sql[:1500]}")
    return p.stdout


def q1(sql, db=DB):
    return psql(sql, db).strip()


TIME_RE = re.compile(r"^Time: ([0-9.]+) ms", re.M)


def timed(setup, stmt, db=DB, options=None):
    """client-side wall time (psql \\timing) of the first statement of
    stmt after setup, in ms; if stmt \\echo-es "NAME value" lines, returns
    (ms, {NAME: value})"""
    out = psql(f"{setup}\n\\timing on\n{stmt}\n\\timing off\n", db, options)
    t = TIME_RE.findall(out)
    if not t:
        raise SqlError(f"no timing in psql output: {out[-500:]}")
    echoes = dict(line.split(" ", 1) for line in out.splitlines()
                  if re.match(r"^[A-Z]+ \S+$", line))
    return (float(t[0]), echoes) if echoes else float(t[0])


def median(v):
    return statistics.median(v) if v else float("nan")


def iqr(v):
    """first and third quartile (for 5 runs: the 2nd and 4th value)"""
    if len(v) < 3:
        return min(v), max(v)
    q = statistics.quantiles(v, n=4, method="inclusive")
    return q[0], q[2]


def rotated(seq, r):
    r %= len(seq)
    return seq[r:] + seq[:r]


def lit(text, typ):
    return "'" + text.replace("'", "''") + "'::" + typ


def plan_nodes(plan):
    """scan nodes of an EXPLAIN JSON plan"""
    out = []
    if "Index Name" in plan or plan.get("Node Type", "").endswith("Scan"):
        out.append(plan)
    for c in plan.get("Plans", []):
        out.extend(plan_nodes(c))
    return out


def describe_scan(nodes):
    parts = []
    for n in nodes:
        s = n.get("Node Type", "?")
        if "Custom Plan Provider" in n:
            s += f" ({n['Custom Plan Provider']})"
        if "Heap Fetches" in n:
            s += f" (heap fetches {n['Heap Fetches']})"
        parts.append(s)
    return " + ".join(parts) if parts else "?"


def describe_plan(p):
    """a whole EXPLAIN JSON plan in one line, as EXPLAIN's text format names
    the nodes, children in brackets: the join measures' plans (which join
    method, GbtreeJoin or not, what it scanned) and the = ANY row fetches'
    (Gather, Custom Scan (GbtreeArrayScan) or a core scan)"""
    t = p.get("Node Type", "?")
    jt = p.get("Join Type", "Inner")
    det = []
    if "Custom Plan Provider" in p and "Join Type" not in p:
        # a custom scan (GbtreeArrayScan, GbtreeCount), named as in EXPLAIN's
        # text format
        t = f"Custom Scan ({p['Custom Plan Provider']})"
    elif "Custom Plan Provider" in p:
        t = f"{p['Custom Plan Provider']} {jt}"
        if "Batches" in p:
            det.append(f"{p['Batches']} batch{'es' if p['Batches'] != 1 else ''}"
                       + (f" ({p['GPU Batches']} on the GPU)" if p.get("GPU Batches") else "")
                       + f", {p.get('Lookup Keys', '?')} lookup keys, {p.get('Heap Fetches', '?')} heap fetches")
    elif t in ("Hash Join", "Merge Join"):
        t = t if jt == "Inner" else f"{t.split()[0]} {jt} Join"
    elif t == "Nested Loop" and jt != "Inner":
        t = f"Nested Loop {jt} Join"
    elif t == "Aggregate" and p.get("Strategy") in ("Hashed", "Sorted", "Mixed"):
        t = {"Hashed": "HashAggregate", "Sorted": "GroupAggregate", "Mixed": "MixedAggregate"}[p["Strategy"]]
    if p.get("Partial Mode") in ("Partial", "Finalize"):
        t = f"{p['Partial Mode']} {t}"
    if p.get("Parallel Aware"):
        t = "Parallel " + t
    if "Index Name" in p:
        det.insert(0, p["Index Name"])
    elif "Relation Name" in p:
        det.insert(0, p["Relation Name"])
    if p.get("Hash Batches", 1) > 1:
        det.append(f"{p['Hash Batches']} batches")
    if "Workers Launched" in p:
        wl, wp = p["Workers Launched"], p.get("Workers Planned", p["Workers Launched"])
        det.append(f"{wl} worker{'s' if wl != 1 else ''}" + (f" of {wp} planned" if wl != wp else ""))
    kids = [describe_plan(c) for c in p.get("Plans", [])]
    return (t + (f" ({'; '.join(str(x) for x in det)})" if det else "")
            + (f" [{', '.join(kids)}]" if kids else ""))


class Engine:
    def __init__(self, name, am, options=""):
        self.name, self.am, self.options = name, am, options
        self.tag = re.sub(r"[^a-z0-9_]", "_", name)

    def opts(self, extra=""):
        return " ".join(x for x in (extra, self.options) if x) or None

    def table(self, name):
        """the twin table this engine reads (one per access method)"""
        return f"t_{name}_{self.am}"


class Measure:
    def __init__(self, key, title, unit, better, how):
        self.key, self.title, self.unit, self.better, self.how = key, title, unit, better, how
        self.values = {}      # engine name -> list of values
        self.fixed = {}       # engine name -> statistics read back from a CSV
        self.notes = []

    def add(self, eng, v):
        self.values.setdefault(eng, []).append(v)

    def st(self, eng):
        """median, min, max, q1, q3, n of an engine's runs (or None)"""
        if eng in self.fixed:
            return self.fixed[eng]
        v = self.values.get(eng, [])
        if not v:
            return None
        q = iqr(v)
        return dict(median=median(v), min=min(v), max=max(v), q1=q[0], q3=q[1], n=len(v))

    def med(self, eng):
        x = self.st(eng)
        return x["median"] if x else float("nan")

    def ratio(self, eng):
        b, g = self.med("btree"), self.med(eng)
        if not b or b != b or g != g:
            return float("nan")
        return g / b

    def verdict(self, eng):
        r = self.ratio(eng)
        if r != r:
            return "?"
        b, g = self.st("btree"), self.st(eng)
        if b["n"] > 1 and g["n"] > 1 and b["max"] != b["min"]:
            # overlapping interquartile ranges: within the noise
            if g["q1"] <= b["q3"] and b["q1"] <= g["q3"]:
                return "~ (noise)"
        elif abs(r - 1) < 0.01:
            return "="
        gb_better = (r < 1) if self.better == "lower" else (r > 1)
        return eng if gb_better else "btree"


def fmt_val(v, unit):
    if v != v:
        return "n/a"
    if unit == "MB":
        return f"{v:.2f}"
    if unit in ("tps", "rows/s"):
        return f"{v:,.0f}"
    if v >= 100:
        return f"{v:.1f}"
    if v >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def fmt_spread(st, unit):
    if not st:
        return "n/a"
    m = fmt_val(st["median"], unit)
    # a measure kept from an earlier run may have another number of runs
    runs = f", {st['n']} runs" if st["n"] != REPEAT and unit != "MB" else ""
    if st["n"] == 1 or st["min"] == st["max"]:
        return m + (f" ({runs[2:]})" if runs else "")
    return f"{m} ({fmt_val(st['min'], unit)}-{fmt_val(st['max'], unit)}{runs})"


def fmt_ratio(r):
    return "n/a" if r != r else f"{r:.2f}"


CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _proc_times(pid):
    """utime + stime + cutime + cstime of a process, in seconds"""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return sum(int(x) for x in fields[11:15]) / CLK_TCK, int(fields[1])
    except (OSError, IndexError, ValueError):
        return 0.0, -1


def cpu_snapshot():
    """(wall time, CPU seconds busy on the machine, CPU seconds of this
    benchmark: this driver, its psql/pgbench children, the cluster's
    postmaster and its backends)"""
    busy = 0.0
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        busy = (v[0] + v[1] + v[2] + v[5] + v[6]) / CLK_TCK   # user nice system irq softirq
    except (OSError, ValueError, IndexError):
        return None
    t = os.times()
    ours = t.user + t.system + t.children_user + t.children_system
    try:
        with open(os.path.join(SCRATCH, "data", "postmaster.pid")) as f:
            pm = int(f.readline())
    except (OSError, ValueError):
        pm = None
    if pm:
        ours += _proc_times(pm)[0]
        for d in os.listdir("/proc"):
            if d.isdigit():
                secs, ppid = _proc_times(d)
                if ppid == pm:
                    ours += secs
    return time.time(), busy, ours


def others_cpu(a, b):
    """share of all CPUs that other processes used between two snapshots"""
    if not a or not b or b[0] <= a[0]:
        return "?"
    other = max(0.0, (b[1] - a[1]) - (b[2] - a[2]))
    return f"{100.0 * other / ((b[0] - a[0]) * NCPU):.0f}% of {NCPU} CPUs"


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


# ---- environment facts for the result files ----------------------------------

def machine_info():
    model = "?"
    flags = ""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
            if line.startswith("Flags:"):
                flags = line
    except OSError:
        pass
    mem = "?"
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem = f"{int(line.split()[1]) / 1048576:.1f} GiB"
    except OSError:
        pass
    have = set(flags.split())
    simd = ", ".join(x + (" yes" if x in have else " no") for x in ("avx2", "avx512f", "avx512bw"))
    return f"{model}, {NCPU} CPUs, {mem} RAM (SIMD: {simd})"


def pg_info():
    version = q1("SELECT version()")
    rows = q1("SELECT name || '=' || current_setting(name) FROM pg_settings "
              "WHERE source NOT IN ('default', 'override', 'client', 'session') "
              "AND name NOT IN ('port', 'unix_socket_directories', 'listen_addresses') "
              "ORDER BY name").splitlines()
    return version, rows


# ---- data -------------------------------------------------------------------

def twin_tables(name):
    """one twin table per access method: gbtree and gbtree-gpu are the same
    index read with other settings, so they share theirs"""
    out = []
    for e in ENGINES:
        if e.table(name) not in out:
            out.append(e.table(name))
    return out


def run_concurrently(jobs):
    """run psql scripts at once, one session each; the first error wins"""
    errors = []

    def one(sql):
        try:
            psql(sql)
        except SqlError as ex:
            errors.append(ex)
    threads = [threading.Thread(target=one, args=(sql,)) for sql in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


PREP = "SET synchronize_seqscans = off; SET max_parallel_workers_per_gather = 0; "


def sample_tids(pages, n=400):
    """about n TIDs spread over a table of that many pages, as a tid[] literal"""
    step = max(1, pages // n)
    return "'{" + ",".join(f'"({b},{1 + b % 7})"' for b in range(0, max(1, pages), step)) + "}'::tid[]"


def generate_file(name, d, path):
    """the rows (id order) as a COPY text file: in one chunk per CPU at once,
    or by one session where the generator draws random numbers in order
    (zipf's shuffle)"""
    if d.get("serial"):
        psql(f"{PREP} SET work_mem = '{PREP_WORK_MEM}'; SELECT setseed(0.4242); "
             f"COPY ({d['gen'](1, ROWS)}) TO '{path}';")
        return
    per = -(-ROWS // NCPU)
    chunks = [(j * per + 1, min(ROWS, (j + 1) * per)) for j in range(NCPU) if j * per < ROWS]
    parts = [f"{path}.{j}" for j in range(len(chunks))]
    run_concurrently([f"{PREP} COPY ({d['gen'](lo, hi)}) TO '{part}';" for (lo, hi), part in zip(chunks, parts)])
    with open(path, "wb") as out:
        for part in parts:
            with open(part, "rb") as f:
                shutil.copyfileobj(f, out, 1 << 22)
            os.unlink(part)
    os.chmod(path, 0o644)


def create_dataset(name, d):
    """src_<ds> (the rows in id order), shuf_<ds> (1M keys of random rows in
    random order, for the arrays), new_<ds> (rows for the churn reinsert,
    only with the vacuum measure), the twin tables; returns the number the
    churn deletes (id % 10 < 3).  The rows are generated once, into a file
    (data_<ds>.copy, which the COPY measure loads too); the source and the
    twins are loaded from it at once, each by one COPY FREEZE into a table
    created in the same transaction, so every twin holds the same rows at
    the same TIDs, and is all-visible, as VACUUM would leave it."""
    typ = d["type"]
    ndel = int(q1(f"SELECT count(*) FROM generate_series(1, {ROWS}) g WHERE g % 10 < 3"))
    twins = twin_tables(name)
    psql(f"DROP TABLE IF EXISTS src_{name}, new_{name}, shuf_{name}, {', '.join(twins)};")
    data = f"{SCRATCH}/data_{name}.copy"
    generate_file(name, d, data)
    jobs = [f"BEGIN; CREATE UNLOGGED TABLE src_{name} (id int8 NOT NULL, {table_cols(d)}); "
            f"COPY src_{name} FROM '{data}' (FREEZE); COMMIT;"]
    for t in twins:
        jobs.append(f"BEGIN; CREATE TABLE {t} (id int8 NOT NULL, {table_cols(d)}); "
                    f"COPY {t} FROM '{data}' (FREEZE); COMMIT;")
    if "vacuum" in MEASURES:
        jobs.append(f"{PREP} SELECT setseed(0.1717); "
                    f"CREATE UNLOGGED TABLE new_{name} AS {d['gen'](ROWS + 1, ROWS + ndel)};")
    run_concurrently(jobs)
    # the same rows at the same TIDs: counts, and a sample of TIDs spread
    # over the table (TID scans, cheap at any size)
    pages = int(q1(f"SELECT pg_relation_size('src_{name}') / current_setting('block_size')::int"))
    probe = {}
    for t in [f"src_{name}"] + twins:
        probe[t] = q1(f"SELECT (SELECT count(*) FROM {t}) || ' ' || coalesce(string_agg(format('%s=%s/%s', "
                      f"ctid, id, k), ' ' ORDER BY ctid), '') FROM {t} WHERE ctid = ANY({sample_tids(pages)})")
    if len(set(probe.values())) != 1 or probe[f"src_{name}"].split(" ", 1)[0] != str(ROWS):
        FAILURES.append(f"{name}: twin tables differ")
        loud(f"{name}: the twin tables do not hold the same rows at the same TIDs: "
             + "; ".join(f"{t}: {v[:120]}" for t, v in probe.items()))
    psql(f"""{PREP} SET work_mem = '{PREP_WORK_MEM}'; SELECT setseed(0.2323);
CREATE UNLOGGED TABLE shuf_{name} AS SELECT k, row_number() OVER (ORDER BY r) AS rn
  FROM (SELECT k, random() AS r FROM src_{name} ORDER BY r LIMIT 1000000) s;
""")
    if KEEP_DATA:
        psql(f"CREATE TABLE IF NOT EXISTS bench_kept (name text PRIMARY KEY, rows int8, ndel int8, stats text); "
             f"DELETE FROM bench_kept WHERE name = '{name}'; "
             f"INSERT INTO bench_kept VALUES ('{name}', {ROWS}, {ndel}, '');")
    return ndel


def dataset_stats(name):
    """a line of key statistics, from one index-order pass over the btree
    twin (no hash table or sort of the whole table)"""
    stats = q1(f"{FORCE_INDEX} SET enable_hashagg = off; "
               f"SELECT format('%s rows, %s distinct keys, max %s rows per key, %s keys with duplicates', "
               f"sum(c), count(*), max(c), count(*) FILTER (WHERE c > 1)) "
               f"FROM (SELECT k, count(*) AS c FROM t_{name}_btree GROUP BY k) s")
    if KEEP_DATA:
        psql(f"UPDATE bench_kept SET stats = {lit(stats, 'text')} WHERE name = '{name}';")
    return stats


def kept_dataset(name):
    """(ndel, stats) of a data set an earlier run kept at this size, when all
    of its tables are still there; else None"""
    if q1("SELECT to_regclass('bench_kept') IS NOT NULL") != "t":
        return None
    row = q1(f"SELECT ndel || '|' || stats FROM bench_kept WHERE name = '{name}' AND rows = {ROWS}")
    if not row:
        return None
    need = [f"src_{name}", f"shuf_{name}"] + twin_tables(name) + (["new_" + name] if "vacuum" in MEASURES else [])
    if any(q1(f"SELECT to_regclass('{t}') IS NOT NULL") != "t" for t in need):
        return None
    if "copy" in MEASURES and not os.path.exists(f"{SCRATCH}/data_{name}.copy"):
        psql(f"COPY src_{name} TO '{SCRATCH}/data_{name}.copy';")   # src is in id order
    ndel, stats = row.split("|", 1)
    return int(ndel), stats


def drop_dataset(name):
    if KEEP_DATA:
        psql("CHECKPOINT;")
        return
    tabs = [f"src_{name}", f"new_{name}", f"shuf_{name}", f"arr_{name}"] + twin_tables(name)
    tabs += [f"jp_{name}_{label}" for _, label in JOIN_SIZES] + [f"anyr_{name}"]
    for e in ENGINES:
        tabs += [f"c_{name}_{e.tag}", f"v_{name}_{e.tag}"]
    psql("DROP TABLE IF EXISTS " + ", ".join(tabs) + "; CHECKPOINT;")
    if q1("SELECT to_regclass('bench_kept') IS NOT NULL") == "t":
        psql(f"DELETE FROM bench_kept WHERE name = '{name}';")
    for f in (f"{SCRATCH}/data_{name}.copy", f"{SCRATCH}/grow_{name}.copy"):
        try:
            os.unlink(f)
        except OSError:
            pass


def checksum_sql(table):
    """index order scan of the whole table: count and md5 of the keys"""
    return (f"{FORCE_INDEX} SELECT count(*) || ' ' || md5(coalesce(string_agg(k::text, ','), '')) "
            f"FROM (SELECT k FROM {table} ORDER BY k) s;")


def compare(what, answers):
    """answers: engine name -> answer text; a difference is a loud failure"""
    base = answers.get("btree")
    ok = True
    for eng, a in answers.items():
        if eng != "btree" and a != base:
            ok = False
            FAILURES.append(f"{what}: {eng} differs from btree")
            loud(f"MISMATCH: {what}: {eng} and btree answers differ")
            bl, gl = (base or "").splitlines(), (a or "").splitlines()
            log(f"    btree:  {len(bl)} lines, first {bl[:3]}")
            log(f"    {eng}: {len(gl)} lines, first {gl[:3]}")
    return ok


def gpu_counters():
    """the GPU service's batch and build counters (None without a service)"""
    if not any(e.name == "gbtree-gpu" for e in ENGINES):
        return None
    v = dict(line.split("|", 1) for line in psql(
        "SELECT name, value FROM gbtree_device_info() WHERE name IN ('gpu_batches', 'gpu_builds')").splitlines())
    return int(v.get("gpu_batches", 0)), int(v.get("gpu_builds", 0))


class GpuUse:
    """counts what the GPU service did during one engine's timed runs, so a
    result says whether gbtree-gpu's runs went to the GPU (under
    gbtree.device = auto small batches stay on the CPU)"""

    def __init__(self):
        self.batches = self.builds = self.runs = 0

    def run(self, eng, fn):
        before = gpu_counters() if eng.name == "gbtree-gpu" else None
        out = fn()
        if before:
            after = gpu_counters()
            self.batches += after[0] - before[0]
            self.builds += after[1] - before[1]
            self.runs += 1
        return out

    def note(self):
        if not self.runs:
            return ""
        did = ", ".join(x for x in (f"{self.batches} GPU lookup batches" if self.batches else "",
                                    f"{self.builds} GPU builds" if self.builds else "") if x)
        return f"; gbtree-gpu's {self.runs} timed runs: {did or 'nothing on the GPU'}"


def check_gbtree(index):
    if not HAS_CHECK:
        return
    try:
        psql(f"SELECT gbtree_check('{index}', true);")
    except SqlError as ex:
        FAILURES.append(f"gbtree_check({index}) failed")
        loud(f"gbtree_check('{index}', true) FAILED: {ex}")


# ---- measures ---------------------------------------------------------------

def finish_indexes(name):
    """what follows every build: statistics and visibility map, and
    gbtree_check on the gbtree index"""
    run_concurrently([f"VACUUM ANALYZE {t};" for t in twin_tables(name)])
    for t in twin_tables(name):
        if t.endswith("_gbtree"):
            check_gbtree(f"{t}_k_idx")


def m_build(name, d, res):
    mb = Measure("build", "CREATE INDEX", "ms", "lower",
                 "psql \\timing of CREATE INDEX after CHECKPOINT; maintenance_work_mem default (64MB)"
                 + ("; gbtree and gbtree-gpu build on the same table in turn" if len(twin_tables(name)) <
                    len(ENGINES) else ""))
    ms_ = Measure("size", "index size after CREATE INDEX", "MB", "lower",
                  "pg_relation_size, right after the engine's first build")
    use = GpuUse()
    for r in range(REPEAT):
        for e in rotated(ENGINES, r):
            t = e.table(name)
            ms = use.run(e, lambda: timed(f"DROP INDEX IF EXISTS {t}_k_idx; CHECKPOINT;",
                                          f"CREATE {index_kw(d)} {t}_k_idx ON {t} USING {e.am} ({index_cols(d)});",
                                          options=e.opts()))
            mb.add(e.name, ms)
            if r == 0:
                ms_.add(e.name, int(q1(f"SELECT pg_relation_size('{t}_k_idx')")) / 1048576)
    mb.how += use.note()
    finish_indexes(name)
    res += [mb, ms_]
    report(mb)
    report(ms_)


def ensure_indexes(name):
    """without the build measure: the indexes a kept data set already has,
    or built once, untimed (by the last engine of each access method:
    gbtree-gpu's build where there is one)"""
    built = False
    for e in reversed(ENGINES):
        t = e.table(name)
        if q1(f"SELECT to_regclass('{t}_k_idx') IS NOT NULL") != "t":
            psql(f"CREATE {index_kw(dataset_defs(ROWS)[name])} {t}_k_idx ON {t} USING {e.am} ({index_cols(dataset_defs(ROWS)[name])});",
                 options=e.opts())
            built = True
    if built:
        finish_indexes(name)
        log("  indexes built (untimed: BENCH_MEASURES has no build)")
    else:
        log("  indexes kept from an earlier run")


def prewarm(name, heap=True):
    # index-only measures need the indexes and visibility maps; with small
    # shared_buffers (BENCH_DEFAULTS=1) the heaps would only push them out
    for t in twin_tables(name):
        if heap:
            psql(f"SELECT pg_prewarm('{t}'), pg_prewarm('{t}_k_idx');")
        else:
            psql(f"SELECT pg_prewarm('{t}', 'buffer', 'vm'), pg_prewarm('{t}_k_idx');")


def explain_measure(m, name, setup_for, stmts_for, verify_for=None, options_note="", whole_plan=False):
    """EXPLAIN (ANALYZE, TIMING OFF) execution time, summed over the
    statements of one run, per statement; answers compared first.
    whole_plan: the planner chooses (the join measures): each engine's
    whole plan is recorded, and the answer, instead of the scan nodes and
    the check that they use the engine's index"""
    answers = {}
    for e in ENGINES:
        stmts = verify_for(e) if verify_for else stmts_for(e)
        sql = setup_for(e) + "\n" + "\n".join(s + ";" for s in stmts) + "\n"
        answers[e.name] = psql(sql, options=e.opts())
    ok = compare(f"{name}: {m.title}", answers)
    if whole_plan:
        plans = {}
        use = GpuUse()
        for r in range(REPEAT):
            for e in rotated(ENGINES, r):
                stmts = stmts_for(e)
                sql = setup_for(e) + "\n" + "\n".join(
                    f"EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) {s};\n\\echo @@SEP@@" for s in stmts) + "\n"
                out = use.run(e, lambda: psql(sql, options=e.opts()))
                js = [json.loads(c)[0] for c in out.split("@@SEP@@") if c.strip()]
                m.add(e.name, sum(j["Execution Time"] for j in js) / max(1, len(js)))
                if r == 0:
                    plans[e.name] = " + ".join(describe_plan(j["Plan"]) for j in js)
        m.how += ("; answer: " + answers.get("btree", "?").strip().replace("\n", " / ").replace("|", ", ")
                  + "; plans: " + "; ".join(f"{e.name}: {plans.get(e.name, '?')}" for e in ENGINES)
                  + (f"; {options_note}" if options_note else "") + use.note())
        if not ok:
            m.notes.append("ANSWERS DIFFER")
        return
    scans = {}
    rows = {}
    use = GpuUse()
    for r in range(REPEAT):
        for e in rotated(ENGINES, r):
            stmts = stmts_for(e)
            sql = setup_for(e) + "\n" + "\n".join(
                f"EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) {s};\n\\echo @@SEP@@" for s in stmts) + "\n"
            out = use.run(e, lambda: psql(sql, options=e.opts()))
            total = 0.0
            nrows = 0
            for chunk in out.split("@@SEP@@"):
                chunk = chunk.strip()
                if not chunk:
                    continue
                j = json.loads(chunk)[0]
                total += j["Execution Time"]
                nodes = plan_nodes(j["Plan"])
                nrows += sum(n.get("Actual Rows", 0) for n in nodes)
                if r == 0:
                    scans[e.name] = (describe_scan(nodes), [n.get("Index Name") for n in nodes])
            rows[e.name] = nrows / max(1, len(stmts))
            m.add(e.name, total / max(1, len(stmts)))
    for e in ENGINES:
        desc, idx = scans.get(e.name, ("?", []))
        if not any(i and i.startswith(e.table(name)) for i in idx):
            PLAN_WARNINGS.append(f"{name}: {m.title}: {e.name} did not use its index ({desc})")
            loud(f"{name}: {m.title}: {e.name} plan did not use {e.table(name)}_k_idx: {desc}")
    first = ENGINES[1] if len(ENGINES) > 1 else ENGINES[0]
    m.how += (f"; plan: {scans.get(first.name, ('?',))[0]}; "
              f"~{rows.get('btree', 0):,.0f} index rows per query"
              + (f"; {options_note}" if options_note else "") + use.note())
    if not ok:
        m.notes.append("ANSWERS DIFFER")


def m_queries(name, d, res):
    typ = d["type"]
    # = ANY(array): n existing keys (of n distinct random rows), capped by N
    sizes = [(1000, "1k"), (100000, "100k"), (1000000, "1M")]
    psql(f"DROP TABLE IF EXISTS arr_{name}; CREATE UNLOGGED TABLE arr_{name} (n int, a {typ}[]);")
    for n, label in sizes:
        psql(f"INSERT INTO arr_{name} SELECT {n}, array_agg(k ORDER BY rn) FROM shuf_{name} WHERE rn <= {n};")
    for n, label in sizes:
        na = min(n, ROWS)
        capped = f", capped: {na:,} keys" if na < n else ""
        m = Measure(f"any_{label}", f"count k = ANY({label} keys{capped})", "ms", "lower",
                    "EXPLAIN ANALYZE execution time of a prepared generic-plan "
                    "SELECT count(*) ... WHERE k = ANY($1), keys of random rows in random order")

        def setup(e, n=n):
            return (f"{FORCE_INDEX} SET plan_cache_mode = force_generic_plan;\n"
                    f"SELECT a AS arr FROM arr_{name} WHERE n = {n} \\gset\n"
                    f"PREPARE q({typ}[]) AS SELECT count(*) FROM {e.table(name)} WHERE k = ANY($1);")
        explain_measure(m, name, setup, lambda e: ["EXECUTE q(:'arr')"],
                        options_note=FORCE_NOTE + ", plan_cache_mode=force_generic_plan")
        res.append(m)
        report(m)

    # ranges over 0.1%, 1%, 20% of the rows, several windows per run; the
    # keys at the windows' ranks come from one index-order pass over the
    # btree twin (no sort of the whole table)
    plan = []
    for frac, label, nwin in [(0.001, "0.1%", 50), (0.01, "1%", 20), (0.20, "20%", 3)]:
        w = max(1, round(frac * ROWS))
        starts = [round(j * (ROWS - w) / (nwin - 1)) if nwin > 1 else (ROWS - w) // 2
                  for j in range(nwin)]
        plan.append((label, nwin, w, starts))
    ranks = sorted({x for _, _, w, starts in plan for s in starts for x in (s + 1, s + w)})
    kv = {}
    for line in psql(f"{FORCE_INDEX} SELECT rn, k::text FROM (SELECT k, row_number() OVER (ORDER BY k) AS rn "
                     f"FROM t_{name}_btree) s WHERE rn = ANY('{{{','.join(map(str, ranks))}}}'::int8[])"
                     ).splitlines():
        rn, k = line.split("|", 1)
        kv[int(rn)] = k
    for label, nwin, w, starts in plan:
        wins = [(kv[s + 1], kv[s + w]) for s in starts]
        m = Measure(f"range_{label}", f"count k BETWEEN (range of {label} of rows)", "ms", "lower",
                    f"EXPLAIN ANALYZE execution time per query, mean of {nwin} windows spread over the key range")
        explain_measure(
            m, name, lambda e: FORCE_INDEX,
            lambda e: [f"SELECT count(*) FROM {e.table(name)} WHERE k BETWEEN {lit(a, typ)} AND {lit(b, typ)}"
                       for a, b in wins],
            options_note=FORCE_NOTE)
        res.append(m)
        report(m)

    # composite keys: one tenant's rows in a time window, the query such an
    # index is for (equality on the first column, a range on the second)
    if d.get("extra_cols"):
        span = ROWS  # seconds: one row a second
        wins = [(t, (j * span) // 20, (j * span) // 20 + span // 10)
                for j, t in enumerate([7, 123, 456, 789, 999, 1, 500, 250, 750, 333])]
        m = Measure("tenant_window", "count k = tenant AND ts in a window of 10% of the time span",
                    "ms", "lower",
                    "EXPLAIN ANALYZE execution time per query, mean of 10 tenants and windows")
        explain_measure(
            m, name, lambda e: FORCE_INDEX,
            lambda e: [f"SELECT count(*) FROM {e.table(name)} WHERE k = {t} AND ts >= timestamptz "
                       f"'2024-01-01 00:00+00' + {a} * interval '1 second' AND ts < timestamptz "
                       f"'2024-01-01 00:00+00' + {b} * interval '1 second'" for t, a, b in wins],
            options_note=FORCE_NOTE)
        res.append(m)
        report(m)

    # ORDER BY k LIMIT 20000 OFFSET N/2
    off = ROWS // 2
    lim = min(20000, ROWS - off)
    m = Measure("orderby", f"ORDER BY k LIMIT {lim} OFFSET {off}", "ms", "lower",
                "EXPLAIN ANALYZE execution time of SELECT k ... ORDER BY k LIMIT .. OFFSET ..")
    explain_measure(m, name, lambda e: FORCE_INDEX,
                    lambda e: [f"SELECT k FROM {e.table(name)} ORDER BY k LIMIT {lim} OFFSET {off}"],
                    options_note=FORCE_NOTE)
    res.append(m)
    report(m)


JOIN_SIZES = [(1000, "1k"), (10000, "10k"), (100000, "100k"), (1000000, "1M")]


def join_probe_sizes():
    """probe sizes: 1M keys only where the table has at least 1M rows"""
    return [(n, label) for n, label in JOIN_SIZES if n < 1000000 or ROWS >= 1000000]


def m_joins(name, d, res):
    """joins of a probe table to the twin table through k, the planner's
    own choice for every engine (btree: its best plan, a hash join or an
    index nested loop; gbtree: the same or the Custom Scan GbtreeJoin)"""
    t0 = time.time()
    j = d["join"]
    ranks, key = j["ranks"], j["key"]
    sizes = join_probe_sizes()
    # the probe tables, once per data set, untimed, the same for every
    # engine: n keys in the order drawn, every 10th of the same distribution
    # but matching nothing (a rank beyond the table's)
    for i, (n, label) in enumerate(sizes):
        p = f"jp_{name}_{label}"
        psql(f"""{PREP} SELECT setseed({0.11 + 0.01 * i});
DROP TABLE IF EXISTS {p};
CREATE UNLOGGED TABLE {p} (x {d['type']});
INSERT INTO {p} SELECT CASE WHEN g % 10 = 0 THEN {key(f'{ranks} + 1 + r')} ELSE {key('1 + r')} END
  FROM (SELECT g, floor(random() * {ranks})::int8 AS r FROM generate_series(1, {n}) g OFFSET 0) s;
VACUUM ANALYZE {p};
SELECT pg_prewarm('{p}');
""")
    how = (f"EXPLAIN (ANALYZE, TIMING OFF) execution time; probe table (x {d['type']}) of n keys: "
           f"{j['note']}, every 10th key one of the same distribution that matches nothing; "
           "the planner's own plan for every engine (no enable_* settings), the session settings "
           "of the run")
    queries = [
        ("inner", "inner join (rows fetched)",
         lambda t, p: f"SELECT count(*), sum(t.id) FROM {p} p JOIN {t} t ON t.k = p.x",
         "SELECT count(*), sum(t.id) FROM probe p JOIN t ON t.k = p.x (id comes from the heap)"),
        ("semi", "semi join, IN",
         lambda t, p: f"SELECT count(*) FROM {p} p WHERE p.x IN (SELECT k FROM {t})",
         "SELECT count(*) FROM probe p WHERE p.x IN (SELECT k FROM t)"),
        ("anti", "anti join, NOT EXISTS",
         lambda t, p: f"SELECT count(*) FROM {p} p WHERE NOT EXISTS (SELECT 1 FROM {t} t WHERE t.k = p.x)",
         "SELECT count(*) FROM probe p WHERE NOT EXISTS (SELECT 1 FROM t WHERE t.k = p.x)"),
    ]
    for kind, title, q, shown in queries:
        for n, label in sizes:
            m = Measure(f"join_{kind}_{label}", f"{title}, {label} probe keys", "ms", "lower", f"{shown}; {how}")
            explain_measure(m, name, lambda e: "",
                            lambda e, q=q, label=label: [q(e.table(name), f"jp_{name}_{label}")],
                            whole_plan=True)
            res.append(m)
            report(m)
    log(f"  (joins: {time.time() - t0:.0f} s)")


ANYROWS_SIZES = [(1000, "1k"), (10000, "10k"), (100000, "100k"), (1000000, "1M")]


def m_anyrows(name, d, res):
    """k = ANY(array) with the array a literal in the SQL text (a custom
    plan: the planner knows its length), the planner's own plan for every
    engine (btree: an index, bitmap or sequential scan, parallel or not;
    gbtree: the same or the Custom Scans GbtreeCount and GbtreeArrayScan),
    counting the rows and fetching every one of them from the heap"""
    t0 = time.time()
    typ = d["type"]
    # the keys of n distinct random rows in random order: the first n of
    # shuf_<ds> (the = ANY measure's draw, a top-N by random() after a fixed
    # setseed), the same arrays for every engine; no more keys than rows
    sizes = [(n, label) for n, label in ANYROWS_SIZES if n <= ROWS]
    skipped = [label for n, label in ANYROWS_SIZES if n > ROWS]
    if skipped:
        log(f"  anyrows: {', '.join(skipped)} keys skipped (more than the {ROWS:,} rows)")
    psql(f"DROP TABLE IF EXISTS anyr_{name}; CREATE UNLOGGED TABLE anyr_{name} (n int, a {typ}[]);")
    for n, label in sizes:
        psql(f"INSERT INTO anyr_{name} SELECT {n}, array_agg(k ORDER BY rn) FROM shuf_{name} WHERE rn <= {n};")
    workers = q1("SHOW max_parallel_workers_per_gather")
    how = ("EXPLAIN (ANALYZE, TIMING OFF) execution time; the array a literal in the SQL text (a custom "
           "plan: the planner knows its n keys), the keys of n distinct random rows (row ids drawn "
           "uniformly over 1..N without replacement; the rows are in id order, so they spread over the "
           "whole heap) in random order, the same arrays for every engine; the planner's own plan for "
           "every engine (no enable_* settings), the session settings of the run "
           f"(max_parallel_workers_per_gather={workers})")
    queries = [
        ("count", "count k = ANY",
         lambda t: f"SELECT count(*) FROM {t} WHERE k = ANY(:'arr'::{typ}[])",
         "SELECT count(*) FROM t WHERE k = ANY('{...}')"),
        ("sum", "count, sum(id) k = ANY",
         lambda t: f"SELECT count(*), sum(id) FROM {t} WHERE k = ANY(:'arr'::{typ}[])",
         "SELECT count(*), sum(id) FROM t WHERE k = ANY('{...}') (every matching row fetched from the heap "
         "for its id)"),
    ]
    for kind, title, q, shown in queries:
        for n, label in sizes:
            m = Measure(f"anyrows_{kind}_{label}", f"{title}({label}-key literal)"
                        + (", rows fetched" if kind == "sum" else ""), "ms", "lower", f"{shown}; {how}")
            explain_measure(m, name, lambda e, n=n: f"SELECT a AS arr FROM anyr_{name} WHERE n = {n} \\gset",
                            lambda e, q=q: [q(e.table(name))], whole_plan=True)
            res.append(m)
            report(m)
    log(f"  (anyrows: {time.time() - t0:.0f} s)")


def pgbench(script, clients, db, options, secs=None, transactions=None, extra=()):
    env = dict(ENV)
    if options:
        env["PGOPTIONS"] = options
    else:
        env.pop("PGOPTIONS", None)
    cmd = [PGBENCH, "-n", "-M", "prepared", "-c", str(clients), "-j", str(min(clients, NCPU))]
    cmd += ["-T", str(secs)] if secs else ["-t", str(transactions)]
    cmd += list(extra)
    if script:
        cmd += ["-f", script]
    cmd.append(db)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600)
    out = p.stdout + p.stderr
    if p.returncode != 0:
        raise SqlError(f"pgbench failed ({p.returncode}): {' '.join(cmd)}\n{out[-2000:]}")
    fm = re.search(r"number of failed transactions: (\d+)", out)
    if fm and int(fm.group(1)) != 0:
        raise SqlError(f"pgbench: {fm.group(1)} failed transactions\n{out[-2000:]}")
    tm = re.search(r"tps = ([0-9.]+) \(without initial connection time\)", out)
    if not tm:
        raise SqlError(f"no tps in pgbench output:\n{out[-2000:]}")
    return float(tm.group(1))


def m_lookups(name, d, res):
    pdir = os.path.join(SCRATCH, "pgbench")
    os.makedirs(pdir, exist_ok=True)
    # verification: the same 300 random keys on every engine
    psql("DROP TABLE IF EXISTS bench_verify_pt; "
         "CREATE TABLE bench_verify_pt (eng text, i int8, cnt int8, s numeric);")
    scripts = {}
    plans = {}
    for e in ENGINES:
        t = e.table(name)
        scripts[e.name] = os.path.join(pdir, f"{name}_{e.tag}.sql")
        with open(scripts[e.name], "w") as f:
            f.write(d["pgb"] + f"SELECT id FROM {t} WHERE {d.get('where', 'k = ' + d['keyexpr'])};\n")
        vs = os.path.join(pdir, f"{name}_{e.tag}_verify.sql")
        with open(vs, "w") as f:
            f.write(d["pgb"] + f"INSERT INTO bench_verify_pt SELECT '{e.name}', :i, count(*), "
                               f"coalesce(sum(id), 0) FROM {t} WHERE {d.get('where', 'k = ' + d['keyexpr'])};\n")
        pgbench(vs, 1, DB, e.opts(FORCE_INDEX_OPTS), transactions=300, extra=["--random-seed=4242"])
        ex = json.loads(psql(f"{FORCE_INDEX} EXPLAIN (FORMAT JSON) SELECT id FROM {t} "
                             f"WHERE k = (SELECT k FROM src_{name} LIMIT 1 OFFSET 7)", options=e.opts()))
        plans[e.name] = describe_scan([n for n in plan_nodes(ex[0]["Plan"]) if n.get("Index Name")])
    bad = q1("SELECT count(*) FROM bench_verify_pt WHERE cnt = 0")
    answers = {e.name: psql(f"SELECT i, cnt, s FROM bench_verify_pt WHERE eng = '{e.name}' ORDER BY i, cnt, s")
               for e in ENGINES}
    ok = compare(f"{name}: point lookups (300 random keys)", answers)
    if bad != "0":
        FAILURES.append(f"{name}: point lookup script drew {bad} keys that do not exist")
        loud(f"{name}: the pgbench script drew {bad} keys that match no row (key formula broken?)")
        ok = False
    avg = q1("SELECT round(avg(cnt), 1) FROM bench_verify_pt WHERE eng = 'btree'")
    for c in CLIENTS:
        m = Measure(f"lookup_{c}c", f"point lookups, pgbench {c} client{'s' if c > 1 else ''}", "tps",
                    "higher",
                    f"pgbench -M prepared -c {c} -j {min(c, NCPU)} -T {PGB_SECS}: "
                    f"SELECT id ... WHERE k = <{d.get('lookup_note', 'random existing key')}>, "
                    f"{avg} rows per lookup on average; plan: {plans.get('gbtree', '?')}; {FORCE_NOTE}")
        use = GpuUse()
        for r in range(REPEAT):
            for e in rotated(ENGINES, r):
                m.add(e.name, use.run(e, lambda: pgbench(scripts[e.name], c, DB, e.opts(FORCE_INDEX_OPTS),
                                                         secs=PGB_SECS)))
        m.how += use.note()
        if not ok:
            m.notes.append("ANSWERS DIFFER")
        res.append(m)
        report(m)


def copy_measures(name, d, res, m, mw, ms, setup_rows, src, rows, what):
    """COPY of rows from the server-side file src into a new table with
    only the index, after setup_rows (SQL run before the index is made),
    CHECKPOINT: rows/s (m), WAL (mw), the index's size after (ms)"""
    answers = {}
    for r in range(REPEAT):
        for e in rotated(ENGINES, r):
            t = f"c_{name}_{e.tag}"
            ms_ = timed(f"DROP TABLE IF EXISTS {t}; CREATE TABLE {t} (id int8 NOT NULL, {table_cols(d)}); "
                        f"{setup_rows.format(t=t)}"
                        f"CREATE {index_kw(d)} {t}_k_idx ON {t} USING {e.am} ({index_cols(d)}); "
                        f"{'VACUUM ' + t + '; ' if setup_rows else ''}CHECKPOINT;\n"
                        f"SELECT pg_current_wal_insert_lsn() AS lsn0 \\gset",
                        f"COPY {t} FROM '{src}';\n"
                        f"SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), :'lsn0') AS wal \\gset\n"
                        f"\\echo WAL :wal", options=e.opts())
            m.add(e.name, rows / (ms_[0] / 1000.0))
            mw.add(e.name, float(ms_[1]["WAL"]) / 1048576)
            if r == 0:
                ms.add(e.name, int(q1(f"SELECT pg_relation_size('{t}_k_idx')")) / 1048576)
                answers[e.name] = psql(checksum_sql(t), options=e.opts())
                if e.am == "gbtree":
                    check_gbtree(f"{t}_k_idx")
            psql(f"DROP TABLE {t};")
    if not compare(f"{name}: full index scan after {what}", answers):
        m.notes.append("ANSWERS DIFFER")
    m.how += f"; checked: count and md5 of a full index-order scan ({FORCE_NOTE})"
    res += [m, mw, ms]
    report(m)
    report(mw)
    report(ms)


def m_copy(name, d, res):
    m = Measure("copy", f"COPY {ROWS:,} rows into indexed empty table", "rows/s", "higher",
                "psql \\timing of COPY FROM a server-side file (rows in the twin tables' order) "
                "into a new table with only the index, after CHECKPOINT; includes commit")
    ms = Measure("size_copy", "index size after COPY (built by inserts)", "MB", "lower", "pg_relation_size")
    mw = Measure("wal_copy", "WAL written by that COPY (heap + index)", "MB", "lower",
                 "pg_current_wal_insert_lsn() difference around the COPY")
    copy_measures(name, d, res, m, mw, ms, "", f"{SCRATCH}/data_{name}.copy", ROWS, "COPY")
    m_copy_grow(name, d, res)


def m_copy_grow(name, d, res):
    """COPY of the data set's second half into a table holding its first
    half, indexed (a load into a table that has rows: keys among the
    index's, or above them where keys follow ids)"""
    half = ROWS // 2
    grow = f"{SCRATCH}/grow_{name}.copy"
    if not os.path.exists(grow):
        psql(f"COPY (SELECT * FROM src_{name} WHERE id > {half} ORDER BY id) TO '{grow}';")
    m = Measure("copy_grow", f"COPY {ROWS - half:,} rows into an indexed table of {half:,}", "rows/s",
                "higher", "psql \\timing of COPY FROM a server-side file (the second half of the rows, "
                "in id order) into a table holding the first half, indexed by CREATE INDEX, after "
                "VACUUM and CHECKPOINT; includes commit")
    mw = Measure("wal_copy_grow", "WAL written by that COPY (heap + index)", "MB", "lower",
                 "pg_current_wal_insert_lsn() difference around the COPY")
    ms = Measure("size_copy_grow", "index size after that COPY", "MB", "lower", "pg_relation_size")
    copy_measures(name, d, res, m, mw, ms,
                  f"INSERT INTO {{t}} SELECT * FROM src_{name} WHERE id <= {half} ORDER BY id; ",
                  grow, ROWS - half, "COPY into a table with rows")


def m_vacuum(name, d, res, ndel):
    typ = d["type"]
    m = Measure("vacuum", "VACUUM after deleting 30% of rows", "ms", "lower",
                "fresh table + CREATE INDEX + VACUUM ANALYZE, DELETE WHERE id % 10 < 3, CHECKPOINT, "
                "then psql \\timing of VACUUM (heap and index)")
    ms = Measure("size_churn", "index size after churn", "MB", "lower",
                 f"after the VACUUM above: INSERT {ndel:,} new rows of the same distribution, VACUUM, "
                 "pg_relation_size")
    answers = {}
    for r in range(REPEAT):
        for e in rotated(ENGINES, r):
            t = f"v_{name}_{e.tag}"
            setup = (f"DROP TABLE IF EXISTS {t}; CREATE TABLE {t} (id int8 NOT NULL, {table_cols(d)}); "
                     f"{PREP} INSERT INTO {t} SELECT {select_cols(d)} FROM src_{name}; "
                     f"CREATE {index_kw(d)} {t}_k_idx ON {t} USING {e.am} ({index_cols(d)}); VACUUM ANALYZE {t}; "
                     f"DELETE FROM {t} WHERE id % 10 < 3; CHECKPOINT;")
            m.add(e.name, timed(setup, f"VACUUM {t};", options=e.opts()))
            psql(f"INSERT INTO {t} SELECT {select_cols(d)} FROM new_{name} ORDER BY id; VACUUM {t};",
                 options=e.opts())
            ms.add(e.name, int(q1(f"SELECT pg_relation_size('{t}_k_idx')")) / 1048576)
            if r == 0:
                answers[e.name] = psql(checksum_sql(t), options=e.opts())
                if e.am == "gbtree":
                    check_gbtree(f"{t}_k_idx")
            psql(f"DROP TABLE {t};")
    if not compare(f"{name}: full index scan after churn", answers):
        m.notes.append("ANSWERS DIFFER")
    ms.how += f"; checked: count and md5 of a full index-order scan ({FORCE_NOTE})" + \
        ("; gbtree_check(index, true)" if HAS_CHECK else "")
    res += [m, ms]
    report(m)
    report(ms)


def m_pgbench_s(res):
    """standard pgbench -S, pgbench_accounts' pkey vs a gbtree index on aid"""
    log(f"\n---- pgbench -S (scale {PGB_SCALE}) ----")
    n = PGB_SCALE * 100000
    dbs = {}
    for e in ENGINES:
        # one database per access method, as for the twin tables
        db = f"pgb_{e.am}"
        dbs[e.name] = db
        if list(dbs.values()).count(db) > 1:
            continue
        psql(f"DROP DATABASE IF EXISTS {db}; CREATE DATABASE {db};")
        p = subprocess.run([PGBENCH, "-i", "-q", "-s", str(PGB_SCALE), db], capture_output=True, text=True)
        if p.returncode != 0:
            raise SqlError(f"pgbench -i failed: {p.stderr[-2000:]}")
        sql = "CREATE EXTENSION pg_prewarm;"
        if e.am != "btree":
            sql += (f"CREATE EXTENSION gbtree; ALTER TABLE pgbench_accounts DROP CONSTRAINT pgbench_accounts_pkey; "
                    f"CREATE INDEX pgbench_accounts_aid_{e.am} ON pgbench_accounts USING {e.am} (aid); ")
        sql += "VACUUM ANALYZE pgbench_accounts; CHECKPOINT;"
        psql(sql, db)
    answers, plans = {}, {}
    size = Measure("pgbs_size", "pgbench_accounts aid index size", "MB", "lower",
                   "pg_relation_size of pgbench_accounts_pkey (btree) or the gbtree index on aid")
    for e in ENGINES:
        db = dbs[e.name]
        idx = "pgbench_accounts_pkey" if e.am == "btree" else f"pgbench_accounts_aid_{e.am}"
        ex = json.loads(psql("EXPLAIN (FORMAT JSON) SELECT abalance FROM pgbench_accounts WHERE aid = 4242", db,
                             e.opts()))
        nodes = plan_nodes(ex[0]["Plan"])
        plans[e.name] = describe_scan(nodes)
        if not any(x.get("Index Name") == idx for x in nodes):
            PLAN_WARNINGS.append(f"pgbench -S: {e.name} did not use {idx}")
            loud(f"pgbench -S: {e.name}'s lookup does not use {idx}: {plans[e.name]}")
        answers[e.name] = psql(
            f"{FORCE_INDEX} SELECT count(*), sum(aid), sum(abalance) FROM pgbench_accounts "
            f"WHERE aid BETWEEN {n // 7} AND {n // 2};"
            f"SELECT aid, bid, abalance FROM pgbench_accounts WHERE aid = ANY('{{1,2,{n // 3},{n - 1},{n}}}') "
            f"ORDER BY aid;", db, e.opts())
        size.add(e.name, int(q1(f"SELECT pg_relation_size('{idx}')", db)) / 1048576)
    ok = compare(f"pgbench -S scale {PGB_SCALE}: accounts by aid", answers)
    for c in CLIENTS:
        m = Measure(f"pgbs_{c}c", f"pgbench -S, {c} client{'s' if c > 1 else ''}", "tps", "higher",
                    f"pgbench -n -S -M prepared -c {c} -j {min(c, NCPU)} -T {PGB_SECS} on scale {PGB_SCALE} "
                    f"({n:,} accounts), after pg_prewarm; plan: {plans.get('gbtree', '?')}; default planner settings")
        for r in range(REPEAT):
            for e in rotated(ENGINES, r):
                db = dbs[e.name]
                idx = "pgbench_accounts_pkey" if e.am == "btree" else f"pgbench_accounts_aid_{e.am}"
                psql(f"SELECT pg_prewarm('pgbench_accounts'), pg_prewarm('{idx}')", db)
                m.add(e.name, pgbench(None, c, db, e.opts(), secs=PGB_SECS, extra=["-S"]))
        if not ok:
            m.notes.append("ANSWERS DIFFER")
        res.append(m)
        report(m)
    res.append(size)
    report(size)
    for db in set(dbs.values()):
        psql(f"DROP DATABASE {db};")


# ---- reporting ----------------------------------------------------------------

def report(m):
    parts = []
    for e in ENGINES:
        parts.append(f"{e.name} {fmt_spread(m.st(e.name), m.unit)}")
    rat = "  ".join(f"{e.name}/btree {fmt_ratio(m.ratio(e.name))}" for e in ENGINES if e.name != "btree")
    log(f"  {m.title:<52} [{m.unit}] " + " | ".join(parts) + f"  -> {rat}"
        + ("  !! " + ", ".join(m.notes) if m.notes else ""))


def header_lines(title, extra=(), load=None):
    lines = [f"# {title}", ""]
    lines += list(extra)
    lines += ([f"- load average: {load}"] if load else []) + [
        f"- command: `{ENV.get('BENCH_INVOCATION', '?')}`; effective settings: BENCH_ROWS={ROWS} "
        f"BENCH_ENGINES={','.join(e.name for e in ENGINES)} BENCH_REPEAT={REPEAT} "
        f"BENCH_PGBENCH_SECS={PGB_SECS} BENCH_PGBENCH_SCALE={PGB_SCALE}",
        f"- date: {START_DATE}",
        f"- git revision: {ENV.get('GIT_REV', '?')}",
        f"- machine: {MACHINE}",
        f"- PostgreSQL: {PG_VERSION}",
        f"- settings this benchmark changes: {', '.join(s.replace(' ', '') for s in ENV.get('BENCH_SETTINGS', '').splitlines()) or 'none (BENCH_DEFAULTS=1: parallel plans and parallel index builds allowed)'} "
        f"(everything else is the default)",
        f"- all settings whose source is not the default (initdb's included): {', '.join(PG_SETTINGS)}",
        f"- gbtree device: {DEVICE}",
        f"- repetitions: {REPEAT} per measure; values are median (min-max); the engines alternate "
        f"their order from one repetition to the next",
    ]
    if SKIPPED:
        lines.append(f"- skipped engines: {'; '.join(SKIPPED)}")
    return lines


def table_lines(measures, with_how=True, dataset_col=None, engines=None):
    eng = engines or [e.name for e in ENGINES]
    others = [x for x in eng if x != "btree"]
    head = (["data set"] if dataset_col else []) + ["measure", "unit"] + eng + \
        [f"{x}/btree" for x in others] + ["better"] + (["how"] if with_how else [])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for ds, m in measures:
        row = ([ds] if dataset_col else []) + [m.title + (" **" + ", ".join(m.notes) + "**" if m.notes else ""),
                                                m.unit]
        row += [fmt_spread(m.st(x), m.unit) for x in eng]
        row += [fmt_ratio(m.ratio(x)) for x in others]
        row += ["; ".join(m.verdict(x) for x in others)]
        if with_how:
            row.append(m.how.replace("|", "/"))
        lines.append("| " + " | ".join(row) + " |")
    return lines


MEASURE_ORDER = (["build", "size", "any_1k", "any_100k", "any_1M", "range_0.1%", "range_1%", "range_20%",
                  "orderby", "lookup_1c", "lookup_8c"]
                 + [f"join_{k}_{label}" for k in ("inner", "semi", "anti") for _, label in JOIN_SIZES]
                 + [f"anyrows_{k}_{label}" for k in ("count", "sum") for _, label in ANYROWS_SIZES]
                 + ["copy", "wal_copy", "size_copy", "vacuum", "size_churn", "pgbs_1c", "pgbs_8c", "pgbs_size"])


def morder(key):
    return MEASURE_ORDER.index(key) if key in MEASURE_ORDER else len(MEASURE_ORDER)


CSV_FIELDS = ["rows", "measure", "title", "unit", "better", "engine", "median", "min", "max", "q1", "q3",
              "ratio_vs_btree", "runs", "date", "git", "loadavg", "other_cpu", "how"]


def write_csv(path, key_field, key_value, measures, load, other=""):
    # a run replaces the measures it made at this size and keeps the others
    # (a size measured over several runs, BENCH_MEASURES=build then the rest)
    rows = []
    done = {m.key for m in measures}
    if os.path.exists(path):
        with open(path, newline="") as f:
            rows = [r for r in csv.DictReader(f)
                    if r.get(key_field) != str(key_value) or r.get("measure") not in done]
    for m in measures:
        for e in ENGINES:
            st = m.st(e.name)
            if not st:
                continue
            rows.append({key_field: key_value, "measure": m.key, "title": m.title, "unit": m.unit,
                         "better": m.better, "engine": e.name, "median": f"{st['median']:.6g}",
                         "min": f"{st['min']:.6g}", "max": f"{st['max']:.6g}",
                         "q1": f"{st['q1']:.6g}", "q3": f"{st['q3']:.6g}",
                         "ratio_vs_btree": "" if e.name == "btree" else f"{m.ratio(e.name):.4f}",
                         "runs": st["n"], "date": START_DATE, "git": ENV.get("GIT_REV", "?"),
                         "loadavg": load, "other_cpu": other, "how": m.how})
    rows.sort(key=lambda r: (int(r[key_field]), morder(r["measure"]), r["engine"]))
    fields = [key_field] + CSV_FIELDS[1:]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in fields})


def read_csv_measures(path, key_field, key_value=None):
    """measures of one size (or, with key_value None, of the newest run) from
    a result CSV: ([Measure], [engine names], {date, git, loadavg, other_cpu})"""
    if not os.path.exists(path):
        return [], [], {}
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if key_value is None and rows:
        key_value = max(rows, key=lambda r: r.get("date", ""))[key_field]
    rows = [r for r in rows if r.get(key_field) == str(key_value)]
    ms, engines, meta = {}, [], {}
    for r in rows:
        m = ms.get(r["measure"])
        if not m:
            m = ms[r["measure"]] = Measure(r["measure"], r["title"], r["unit"], r["better"], r.get("how") or "")
            m.date, m.git = r.get("date", ""), r.get("git", "")
        f = {k: float(r[k]) if r.get(k) else None for k in ("median", "min", "max", "q1", "q3")}
        f["q1"] = f["q1"] if f["q1"] is not None else f["min"]
        f["q3"] = f["q3"] if f["q3"] is not None else f["max"]
        f["n"] = int(r.get("runs") or 1)
        m.fixed[r["engine"]] = f
        if r["engine"] not in engines:
            engines.append(r["engine"])
        meta = {k: r.get(k, "") for k in ("date", "git", "loadavg", "other_cpu")}
        meta[key_field] = key_value
    if "btree" in engines:
        engines = ["btree"] + [e for e in engines if e != "btree"]
    return sorted(ms.values(), key=lambda m: morder(m.key)), engines, meta


def plot(name, csv_path, png_path):
    if not shutil.which("gnuplot"):
        return
    with open(csv_path, newline="") as f:
        data = [r for r in csv.DictReader(f) if r["ratio_vs_btree"]]
    # one series per measure key (titles may mention the row count)
    series = {}
    titles = {}
    for r in data:
        k = (r["better"], r["measure"], r["engine"])
        series.setdefault(k, []).append((int(r["rows"]), float(r["ratio_vs_btree"])))
        titles[k] = re.sub(r"[0-9,]{4,}", "N", r["title"]).replace("_", " ")
    script = [
        "set terminal pngcairo size 1400,1000 font ',10'",
        f"set output '{png_path}'",
        "set multiplot layout 2,1 title "
        f"'gbtree/btree ratio by table size: {name} data set (log scales)'",
        "set logscale x", "set grid", "set key outside right",
        "set xlabel 'rows'", "set lmargin at screen 0.07", "set rmargin at screen 0.66",
    ]
    allx = sorted({x for v in series.values() for x, _ in v}) or [ROWS]
    xr = (f"set xrange [{allx[0] / 1.5}:{allx[-1] * 1.5}]\n"
          "set xtics (" + ", ".join(f"'{x:,}' {x}" for x in allx) + ")")
    for better, ylabel in (("lower", "ratio of times and sizes (below 1: gbtree faster / smaller)"),
                           ("higher", "ratio of throughputs (above 1: gbtree faster)")):
        keys = sorted((k for k in series if k[0] == better), key=lambda k: (morder(k[1]), k[2]))
        ys = [y for k in series if k[0] == better for _, y in series[k] if y > 0] or [1.0]
        lo, hi = min(min(ys), 0.9) / 1.25, max(max(ys), 1.1) * 1.25
        ticks = [t for t in (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.5, 2, 3, 5, 10, 20, 50, 100)
                 if lo <= t <= hi]
        script += [xr, f"set ylabel '{ylabel}'", "set logscale y", f"set yrange [{lo}:{hi}]",
                   "set ytics (" + ", ".join(f"'{t:g}' {t}" for t in ticks) + ")"]
        blocks, plots = [], []
        for i, k in enumerate(keys):
            pts = sorted(series[k])
            blocks.append(f"$D{better}{i} << EOD\n" + "\n".join(f"{x} {y}" for x, y in pts) + "\nEOD")
            t = titles[k] + (f" [{k[2]}]" if k[2] != "gbtree" else "")
            plots.append(f"$D{better}{i} using 1:2 with linespoints lw 1.5 lc {i % 8 + 1} pt {(i // 8) * 2 + 5 + (i % 2)} "
                         f"ps 1.3 title '{t.replace(chr(39), '')}'")
        plots.append("1 with lines lc rgb 'black' dt 2 notitle")
        script += blocks
        script.append("plot " + ", ".join(plots))
    script.append("unset multiplot")
    p = subprocess.run(["gnuplot"], input="\n".join(script) + "\n", capture_output=True, text=True)
    if p.returncode != 0:
        log(f"WARNING: gnuplot failed for {name}: {p.stderr.strip()[:500]}")


def write_dataset_files(name, d, measures, stats, load_before, load_after, other):
    os.makedirs(OUT, exist_ok=True)
    md = os.path.join(OUT, f"{name}-{ROWS}.md")
    lines = header_lines(
        f"gbtree vs btree: {name} data set, {ROWS:,} rows",
        [f"Data set: {d['desc']}. {stats}. Each access method has its own twin table "
         f"(id int8, k {d['type']}) with the same rows at the same TIDs and only that access method's "
         f"index on k, then VACUUM ANALYZE"
         + (f"; gbtree-gpu reads gbtree's table and index with other settings ({GPU_OPTIONS})"
            if any(e.name == "gbtree-gpu" for e in ENGINES) else "") + ".", ""],
        load=(f"{ENV.get('BENCH_START_LOAD', '?')} at the start of the run, "
              f"{load_before} before this data set, {load_after} after it (the benchmark's own "
              f"processes count too); CPU used by other processes while this data set ran: {other}"))
    lines += ["", "Ratios are gbtree median / btree median: for ms and MB below 1 means gbtree is "
                  "better, for tps and rows/s above 1 means gbtree is better. \"~ (noise)\": the "
                  "interquartile ranges overlap.", ""]
    earlier = earlier_measures(name, measures)
    if earlier:
        lines += ["Measures of an earlier run at this size (same table contents), kept: "
                  + "; ".join(f"{m.title} ({m.date}, {m.git})" for m in earlier) + ".", ""]
    lines += table_lines([(name, m) for m in sorted(measures + earlier, key=lambda m: morder(m.key))])
    fails = [f for f in FAILURES if f.startswith(name + ":")]
    lines += ["", "Verification: " + ("FAILED: " + "; ".join(fails) if fails else
                                       "every query gave identical answers on all engines"
                                       + (", and gbtree_check(index, true) passed" if HAS_CHECK else "")
                                       + "."), ""]
    with open(md, "w") as f:
        f.write("\n".join(lines))
    csvp = os.path.join(OUT, f"{name}.csv")
    write_csv(csvp, "rows", ROWS, measures, load_after, other)
    plot(name, csvp, os.path.join(OUT, f"{name}.png"))
    return md


def earlier_measures(name, measures):
    """measures of this size that an earlier run made and this one did not"""
    done = {m.key for m in measures}
    ms_, _, _ = read_csv_measures(os.path.join(OUT, f"{name}.csv"), "rows", ROWS)
    return [m for m in ms_ if m.key not in done]


# ---- main -------------------------------------------------------------------

def main():
    global ENGINES, HAS_CHECK, MACHINE, PG_VERSION, PG_SETTINGS, DEVICE, START_DATE, SKIPPED
    START_DATE = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    psql("CREATE EXTENSION IF NOT EXISTS gbtree; CREATE EXTENSION IF NOT EXISTS pg_prewarm;")
    HAS_CHECK = q1("SELECT to_regprocedure('gbtree_check(regclass,boolean)') IS NOT NULL") == "t"
    has_fn = q1("SELECT to_regprocedure('gbtree_device_info()') IS NOT NULL") == "t"
    has_dev = False
    DEVICE = "cpu (no gbtree_device_info())"
    if has_fn:
        try:
            # the service probes the device after the server is up
            for _ in range(60):
                state = q1("SELECT value FROM gbtree_device_info() WHERE name = 'service'")
                if state not in ("starting", "restarting"):
                    break
                time.sleep(1)
            dev = q1("SELECT value FROM gbtree_device_info() WHERE name = 'device'")
            detail = q1("SELECT value FROM gbtree_device_info() WHERE name = 'detail'")
            has_dev = state == "ready"
            DEVICE = f"GPU service {state}: {dev}" if has_dev else f"cpu (GPU service {state}: {detail})"
        except SqlError as ex:
            DEVICE = f"gbtree_device_info() failed: {ex}"
    SKIPPED = []
    names = list(ENGINE_NAMES)
    if not ENGINES_SET and has_dev and "gbtree-gpu" not in names:
        names.append("gbtree-gpu")
    ENGINES = []
    for n in names:
        if n == "btree":
            ENGINES.append(Engine("btree", "btree"))
        elif n == "gbtree":
            # the CPU path, also where a GPU service is running
            ENGINES.append(Engine("gbtree", "gbtree", "-c gbtree.device=cpu" if has_fn else ""))
        elif n == "gbtree-gpu":
            if has_dev:
                ENGINES.append(Engine("gbtree-gpu", "gbtree", GPU_OPTIONS))
            else:
                SKIPPED.append(f"gbtree-gpu ({DEVICE})")
                log(f"Skipping engine gbtree-gpu: {DEVICE}")
        else:
            raise SystemExit(f"unknown engine {n!r} (btree, gbtree, gbtree-gpu)")
    MACHINE = machine_info()
    PG_VERSION, PG_SETTINGS = pg_info()
    defs = dataset_defs(ROWS)
    for ds in DATASETS:
        if ds not in defs:
            raise SystemExit(f"unknown data set {ds!r} ({', '.join(defs)})")
    log(f"Engines: {', '.join(e.name for e in ENGINES)}; data sets: {', '.join(DATASETS)}; "
        f"{ROWS:,} rows; {REPEAT} repetitions; pgbench runs of {PGB_SECS} s")
    log(f"Machine: {MACHINE}")
    log(f"Forced index paths are marked in each measure's notes ({FORCE_NOTE}).")

    t0 = time.time()
    allm = []   # (dataset, measure)
    files = []
    for name in DATASETS:
        d = defs[name]
        load_before = loadavg()
        ts = time.time()
        snap = cpu_snapshot()
        log(f"\n---- data set {name}: {ROWS:,} rows (load average {load_before}) ----")
        kept = kept_dataset(name) if KEEP_DATA else None
        if kept:
            ndel, stats = kept
            log(f"  kept from an earlier run: {stats or ROWS}")
        else:
            tp = time.time()
            ndel = create_dataset(name, d)
            log(f"  generated in {time.time() - tp:.0f} s")
        res = []
        if "build" in MEASURES:
            m_build(name, d, res)
        else:
            ensure_indexes(name)
        if not kept or not stats:
            stats = dataset_stats(name)
            log(f"  {stats}")
        if "queries" in MEASURES:
            prewarm(name, heap=False)
            m_queries(name, d, res)
        if "lookups" in MEASURES:
            prewarm(name)
            m_lookups(name, d, res)
        # groups measured only on the data sets that have what they need
        for group, flag, measure, needs in (
                ("joins", "join", m_joins, "whose keys spread over the whole heap"),
                ("anyrows", "anyrows", m_anyrows, "with distinct keys spread over the whole heap")):
            if group not in MEASURES:
                continue
            if d.get(flag):
                prewarm(name)
                measure(name, d, res)
            else:
                log(f"  {group}: not measured on {name} (only on the data sets {needs}: "
                    f"{', '.join(n for n, x in defs.items() if x.get(flag))})")
        if "copy" in MEASURES:
            m_copy(name, d, res)
        if "vacuum" in MEASURES:
            m_vacuum(name, d, res, ndel)
        drop_dataset(name)
        load_after = loadavg()
        other = others_cpu(snap, cpu_snapshot())
        OTHER_CPU.append(f"{name} {other}")
        files.append(write_dataset_files(name, d, res, stats, load_before, load_after, other))
        allm += [(name, m) for m in res]
        log(f"  ({time.time() - ts:.0f} s; other processes used {other} meanwhile)")

    pgbs = []
    if PGB_SCALE > 0:
        snap = cpu_snapshot()
        m_pgbench_s(pgbs)
        other = others_cpu(snap, cpu_snapshot())
        OTHER_CPU.append(f"pgbench -S {other}")
        log(f"  (other processes used {other} meanwhile)")
        label = f"pgbench -S (scale {PGB_SCALE})"
        allm += [(label, m) for m in pgbs]
        csvp = os.path.join(OUT, "pgbench-S.csv")
        write_csv(csvp, "scale", PGB_SCALE, pgbs, loadavg(), other)

    end_load = loadavg()
    elapsed = time.time() - t0
    summary = os.path.join(OUT, f"summary-{ROWS}.md")
    # The summary holds every data set measured at this size, this run's
    # and earlier ones' (BENCH_DATASETS=... reruns one part), read back from
    # the CSVs, and the newest pgbench -S.
    sm, parts, seng = [], [], []
    for ds in defs:
        ms_, engs, meta = read_csv_measures(os.path.join(OUT, f"{ds}.csv"), "rows", ROWS)
        if ms_:
            sm += [(ds, m) for m in ms_]
            parts.append((ds, meta))
            seng += [e for e in engs if e not in seng]
    ms_, engs, meta = read_csv_measures(os.path.join(OUT, "pgbench-S.csv"), "scale",
                                        PGB_SCALE if pgbs else None)
    if ms_:
        sm += [(f"pgbench -S (scale {meta['scale']})", m) for m in ms_]
        parts.append((f"pgbench -S (scale {meta['scale']})", meta))
        seng += [e for e in engs if e not in seng]
    lines = header_lines(f"gbtree vs btree: summary, {ROWS:,} rows per data set")
    lines.append(f"- load average: {ENV.get('BENCH_START_LOAD', '?')} at the start, {end_load} at the end "
                 f"(the benchmark's own processes count too); duration {elapsed / 60:.1f} min")
    lines.append("- parts (date, git revision, CPU that other processes used while it ran): " + "; ".join(
        f"{name}: {meta.get('date', '?')}, {meta.get('git', '?')}, {meta.get('other_cpu') or '?'}"
        + ("" if meta.get("date") == START_DATE else " (earlier run)") for name, meta in parts))
    lines += ["", "Ratios are gbtree median / btree median: for ms and MB below 1 means gbtree is better, "
                  "for tps and rows/s above 1 means gbtree is better. \"~ (noise)\": the interquartile "
                  "ranges of the runs overlap. Spreads (min-max), methods, plans and verification: "
                  "the per-data-set files " + ", ".join(f"`{n}-{ROWS}.md`" for n, _ in parts
                                                        if not n.startswith("pgbench")) + ".", ""]
    lines += table_lines(sm, with_how=False, dataset_col=True, engines=seng)
    lines += ["", "Verification of this run: " + ("FAILED: " + "; ".join(FAILURES) if FAILURES else
                                                   "every query gave identical answers on all engines.")]
    if PLAN_WARNINGS:
        lines.append("Plan warnings: " + "; ".join(PLAN_WARNINGS))
    lines.append("")
    with open(summary, "w") as f:
        f.write("\n".join(lines))

    # terminal table
    eng = [e.name for e in ENGINES]
    others = [x for x in eng if x != "btree"]
    log(f"\n==================== results: {ROWS:,} rows, median of {REPEAT} "
        f"(load average {ENV.get('BENCH_START_LOAD', '?')} -> {end_load}) ====================")
    log("CPU used by other processes meanwhile: " + ", ".join(OTHER_CPU))
    log("ratio = gbtree / btree: below 1 is better for ms and MB, above 1 is better for tps and rows/s")
    cols = ["data set", "measure", "unit"] + eng + [f"{x}/btree" for x in others] + ["better"]
    table = []
    for ds, m in allm:
        table.append([ds, m.title + (" !! " + ",".join(m.notes) if m.notes else ""), m.unit]
                     + [fmt_val(m.med(x), m.unit) for x in eng]
                     + [fmt_ratio(m.ratio(x)) for x in others]
                     + ["; ".join(m.verdict(x) for x in others)])
    widths = [max(len(str(r[i])) for r in table + [cols]) for i in range(len(cols))]
    right = set(range(3, 3 + len(eng) + len(others)))

    def fmt_row(r):
        return " | ".join(str(c).rjust(widths[i]) if i in right else str(c).ljust(widths[i])
                          for i, c in enumerate(r))
    log(fmt_row(cols))
    log("-+-".join("-" * w for w in widths))
    prev = None
    for r in table:
        if prev is not None and r[0] != prev:
            log("-+-".join("-" * w for w in widths))
        prev = r[0]
        log(fmt_row(r))
    log("")
    log(f"Result files in {OUT}: summary-{ROWS}.md, " + ", ".join(
        f"{n}-{ROWS}.md {n}.csv {n}.png" for n in DATASETS) + (", pgbench-S.csv" if pgbs else ""))
    if WRITE_README and os.path.realpath(OUT) == os.path.realpath(DEFAULT_OUT):
        update_readme()
    log(f"Total benchmark time {elapsed / 60:.1f} min.")
    if PLAN_WARNINGS:
        log(f"{len(PLAN_WARNINGS)} plan warning(s): " + "; ".join(PLAN_WARNINGS))
    if FAILURES:
        loud(f"{len(FAILURES)} VERIFICATION FAILURE(S): " + "; ".join(FAILURES))
        return 1
    log("Verification: every query gave identical answers on all engines.")
    return 0


def update_readme():
    """replace the results section of test/bench/README.md with the summary
    files present in the default result directory"""
    readme = os.path.join(GB_ROOT, "test", "bench", "README.md")
    begin, end = "<!-- BEGIN RESULTS (written by run-bench.sh) -->", "<!-- END RESULTS -->"
    try:
        with open(readme) as f:
            text = f.read()
    except OSError:
        return
    if begin not in text or end not in text:
        return
    sums = []
    for fn in os.listdir(DEFAULT_OUT):
        mm = re.match(r"summary-(\d+)\.md$", fn)
        if mm:
            sums.append((int(mm.group(1)), fn))
    parts = [begin, ""]
    for n, fn in sorted(sums):
        with open(os.path.join(DEFAULT_OUT, fn)) as f:
            body = f.read().strip().splitlines()
        body = [("##" + l[1:]) if l.startswith("# ") else l for l in body]
        parts += [f"<!-- from results/{fn} -->"] + body + [""]
    parts.append(end)
    pre = text.split(begin)[0]
    post = text.split(end, 1)[1]
    with open(readme, "w") as f:
        f.write(pre + "\n".join(parts) + post)
    log(f"Updated the results section of {readme}")


def replot():
    for fn in sorted(os.listdir(OUT)):
        name = fn[:-4] if fn.endswith(".csv") else None
        if name and name != "pgbench-S":
            plot(name, os.path.join(OUT, fn), os.path.join(OUT, f"{name}.png"))
            log(f"plotted {name}.png")
    if os.path.realpath(OUT) == os.path.realpath(DEFAULT_OUT):
        update_readme()
    return 0


if __name__ == "__main__":
    if REPLOT:
        sys.exit(replot())
    try:
        sys.exit(main())
    except SqlError as ex:
        loud(f"benchmark aborted: {ex}")
        sys.exit(2)
