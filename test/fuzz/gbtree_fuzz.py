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

Joins (where the installed gbtree has gbtree.enable_join): an outer side
of random keys of the twin's type or of another of its family (a VALUES
list, an array, a generated set; NULLs, duplicates, nasty values) or of
another twin's rows, joined to the twin on its key: inner joins, semi
joins (IN, EXISTS), anti joins (NOT EXISTS) and left joins (at times
written as a RIGHT JOIN the other way round; their outer rows always
include a NULL key and one that matches nothing; at times a filter on
the inner side after the join, or an aggregate grouped by the outer
key), with extra conditions on the inner row or on both.  The gbtree
twin's run has the core's join
methods off, so that the Custom Scan GbtreeJoin takes it (at times with
a small gbtree.join_batch_size, at times with parallel workers); the
btree twin's run has the planner's choice; the rows must be the same
multiset.  The summary counts the joins and how many went through
GbtreeJoin (every one's plan is explained).

Batchers (--batchers, default 1) write to the same twins in longer
transactions, the kind that gbtree.insert_batch_memory gathers in the
backend and merges into the leaves later: COPY FROM STDIN and INSERT ...
SELECT of up to 20000 rows, multi-row VALUES, UPDATEs of keys (by id, or
through a forced scan of the index being updated), DELETE, MERGE,
self-referencing INSERT ... SELECT through the index, nested savepoints
with ROLLBACK TO / RELEASE, statements failing midway (division by zero,
CHECK violation, bad COPY input) under a savepoint or ending the
transaction, PL/pgSQL exception blocks, scans from inside a running
INSERT (a volatile function comparing an index scan with a seq scan
every N rows), a scrollable cursor kept open across batched inserts,
TRUNCATE (with COPY FREEZE), REINDEX and ALTER INDEX SET TABLESPACE with
entries pending, an extra gbtree index created and dropped or rolled
back, ALTER INDEX, an exclusion-constraint table (gbtree EXCLUDE, and a
unique gbtree index, against a btree UNIQUE twin: the same rows must be
refused), small and changing
gbtree.insert_batch_memory values (64 kB: flushes in the middle of
statements; 0: no batching), and endings COMMIT, ROLLBACK, PREPARE
TRANSACTION + COMMIT PREPARED / ROLLBACK PREPARED (from this session or
another), or an error then COMMIT.  Inside the transaction, the gbtree
twin's scans (every mode, count(*) too) must match the btree twin and a
seq scan on the transaction's own rows; after it ends another session
compares again.  Where the installed gbtree has no
gbtree.insert_batch_memory, the same transactions run without setting
it.  Each batcher takes the feature of its next transaction from a
shuffled deck, so that every kind is reached in a short run; the summary
counts them, and a run of 60 s or more fails if one was never reached.

Multi-word twins (the types uuid, c2 and c3): a one-column index on uuid
(all-zero and all-ff uuids, uuids differing only in their last byte or
across the 64-bit word boundary, NULLs, heavy duplicates), and twins
with indexes on several columns: c2 (a int4, b timestamptz) and c3
(a int2 DESC NULLS FIRST, b float8, c uuid), NULLs in any column, NaN,
-0.0 and infinities in the float column, heavy duplicates of the leading
column.  The writers and batchers change them as they do the others (the
batchers' steps write every column); the checks on them: equality on a
prefix or on every column, ranges on a column under equality on the ones
before it, conditions on a later column only, = ANY and IN on any column
(NULL elements, cross-type arrays), row comparisons ((a, b) > (x, y),
with NULL members at times, after an equality prefix at times), IS [NOT]
NULL on any column, OR and AND of these, ORDER BY index columns (a
prefix, or the columns after an equality prefix; in the index's order or
its exact reverse, NULLS written out or not, at times an order the index
cannot give) with LIMIT, returning the ordered columns only (ties are
equal rows), min/max and count, and scrollable cursors (index and
index-only scans) moving both ways; in every scan mode above.  A tenth
of their checks join an outer side to the twin on its leading column, as
the INCLUDE and unique twins' joins below (GbtreeJoin takes one uuid or
text column, and leading integer, date, timestamp and uuid columns), and no unique
indexes (the unique twins below have them).  They draw on random generators of their own: a seed makes the
same operations on the one-word twins, in the same order, whether or not
multi-word twins run beside them.  By default they join the types when
the installed gbtree can index them (a uuid operator class; several
columns: amcanmulticol), and are left out with a note otherwise; named
in --types, they must be supported.

INCLUDE and unique twins (a third lane of random generators of their own,
chosen by one of its own: a seed makes the same operations on the other
twins, in the same order, whether or not these run beside them; the
batchers' exclusion steps in this lane have tables of their own,
fz_excl3_*).  INCLUDE: i1 (a int8) INCLUDE (b int4, c float8, d date, e
bool), i2 (a int4, b timestamptz DESC) INCLUDE (c time, d int2, e bool),
i3 (a uuid) INCLUDE (b money, c bool), i4 (a int2, b date DESC NULLS
LAST) INCLUDE (c uuid, d bool), the same index on both twins (USING
gbtree, USING btree).  Besides the composites' checks (conditions and
orders on INCLUDE columns too), queries select every column (an
index-only scan returns the INCLUDE ones; forced index-only scans half
the time) under conditions on the key columns (at times on an INCLUDE
column as well), ORDER BY key columns, at times with a LIMIT: rows equal
in the ordered columns compare as a multiset, in their order; and the
final check reads every row in key order through an index-only scan.
On these and the unique twins, the shapes of the one-word custom scans,
under the planner's defaults or forced scans: count(*) WHERE lead = ANY
(...) and other conditions on the leading column alone, the rows of lead
= ANY(...), and joins on the leading column (inner, left, counted per
outer key, EXISTS, IN, NOT EXISTS; the gbtree twin's with the core's
join methods off at times) selecting the inner row's INCLUDE columns;
the rows must match the btree twin's, and no plan may hold GbtreeJoin
but where it takes the index (join_takes: a leading column of an
integer, date, timestamp or uuid type, or one uuid, text or one-word
column); GbtreeCount and
GbtreeArrayScan take these indexes too, and how often they planned the
count/array-scan shapes is counted).  The batchers' transactions run on the INCLUDE twins as on the
composites (their extra index: the key columns reversed, INCLUDE ones
too).  Unique: u2 UNIQUE (a int4, b int2), un UNIQUE (a int2, b uuid)
INCLUDE (c int4) NULLS NOT DISTINCT, uu UNIQUE (a uuid), each as the
twin's index (a unique btree on the btree twin).  Writers draw keys from
a handful of values (NULLs in any column) so that duplicates are the
rule, or spread ones: multi-row inserts (a duplicate within the
statement at times), updates of keys to constants (the outcome does not
depend on the order rows are met in), updates that keep the keys (a new
entry equal to the row's old one), a key deleted and inserted again in
one transaction.  Each change runs on the gbtree twin, then on the
btree twin, in one transaction, each under a savepoint: both must
succeed (with as many rows) or both fail with 23505, else the run fails;
the final contents must be the same.  Every change of a unique twin, a
writer's plain delete of both twins' rows too, holds the twin's advisory
lock (unique_apply, unique_change_lock): a delete that ran between a
change's two halves made the twins rightly disagree.  The batchers' transactions on them
(their own features: such changes, COPY of a handful or of many keys,
INSERT ... SELECT of up to 10000 spread keys, a duplicate at the end at
times, savepoints rolled back; any ending) hold to the same.

Text keys (under "C": a key is the value's bytes in the field its
index's other columns leave of the key's 256 bits; where the installed
gbtree has a text operator class): tx (s text) and ct (a int4, b varchar
DESC NULLS FIRST) among the multi-word twins, ut UNIQUE (a text) among
the unique ones, each written and checked as the others of its lane;
every text column COLLATE "C".  Their fields are 32, 27 and 32 bytes
(text_bytes), and no stored value is longer: NULL, '', heavy
duplicates, prefixes of each other ('ab', 'abc'), a long common prefix
and a last byte or two apart, the field's whole length, chr(1), bytes
above 0x7F (e-acute in UTF-8 and Latin-1, 0xff); the database must be
SQL_ASCII, and the sessions speak LATIN1 to it, a character a byte (so
do the printed queries).  Constants may be longer than the field (up to
40 bytes) and of the family's other types (varchar, name); conditions
add LIKE 'prefix%' (NOT LIKE, a pattern without a wildcard).  Stored
values and constants run past the field too (FUZZ_LONG_TEXT, below).  Now
and then a writer has the gbtree twin alone insert or update a value whose
rest past the field is longer than a tail may be (1,500 bytes and more):
it must fail with 54000 and write nothing.  Every 2 seconds the checker
audits a text twin's entries against its heap (audit_entries): a plain
index scan of every key, NULLs too, returns each visible row once, which
heapallindexed (every row has its entry) does not say.  After a failure
the run prints that audit and, for a unique twin's 23505, the rows whose
key begins as the conflicting one's.

--am btree builds the "gbtree" twins with btree too (no extension, no
gbtree_check, no joins, no batching GUC): a check of the fuzzer itself
against a plain PostgreSQL, where every comparison must agree.

The seed fixes every random choice of every session; the interleaving of
the sessions is up to the scheduler.

usage: gbtree_fuzz.py --dsn 'host=... port=... dbname=...' [--seed N]
                      [--seconds S] [--writers W] [--batchers B]
                      [--types int8,float8,uuid,c2,i1,u2,...] [--am gbtree|btree]
       (--types: "oneword", "multiword", "include", "unique" and "text"
       name the groups)
"""
import argparse
import ast
import collections
import contextlib
import datetime
import faulthandler
import io
import math
import multiprocessing as mp
import os
import random
import re
import signal
import sys
import time
import zlib

import psycopg2
import psycopg2.extensions

INT_LIMITS = {"int2": (-32768, 32767), "int4": (-2147483648, 2147483647),
              "int8": (-9223372036854775808, 9223372036854775807)}

# the one-word key types (the default set before multi-word twins), in the
# order that their random choices were always made in
ONE_WORD_TYPES = ["int8", "int4", "int2", "float8", "float4", "timestamptz", "date", "bool", "oid", "money",
                  "time", "timestamp"]
# twins with an index on several columns: (column, type, index options);
# a twin of any other type t has one column k, indexed as (k)
COMPOSITE = {
    "c2": [("a", "int4", ""), ("b", "timestamptz", "")],
    "c3": [("a", "int2", " DESC NULLS FIRST"), ("b", "float8", ""), ("c", "uuid", "")],
    # heavy duplicates of the whole key (a's handful of values, b's three):
    # multi-word posting leaves (67 bits, two words)
    "dd": [("a", "int8", ""), ("b", "bool", " DESC")],
    # the same in a key that fits one word (19 bits): one-word pages, whose
    # posting form is node_post.c's
    "d1": [("a", "int2", " DESC NULLS LAST"), ("b", "bool", "")],
    # INCLUDE columns (the last INCLUDED[t] columns): a one-key index (no
    # count, array-scan or join custom scan may take it), two keys, a uuid
    # key, a uuid included; each within gbtree's 256 bits
    "i1": [("a", "int8", ""), ("b", "int4", ""), ("c", "float8", ""), ("d", "date", ""), ("e", "bool", "")],
    "i2": [("a", "int4", ""), ("b", "timestamptz", " DESC"), ("c", "time", ""), ("d", "int2", ""), ("e", "bool", "")],
    "i3": [("a", "uuid", ""), ("b", "money", ""), ("c", "bool", "")],
    "i4": [("a", "int2", ""), ("b", "date", " DESC NULLS LAST"), ("c", "uuid", ""), ("d", "bool", "")],
    # unique indexes (UNIQUE_TWINS): two columns, two with a uuid and an
    # INCLUDE column (NULLS NOT DISTINCT), one uuid
    "u2": [("a", "int4", ""), ("b", "int2", "")],
    "un": [("a", "int2", ""), ("b", "uuid", ""), ("c", "int4", "")],
    "uu": [("a", "uuid", "")],
    # and one of one word (a bigint key): one-word trees, never batched
    "u1": [("a", "int8", "")],
    # text keys (COLLATE "C", TEXT_TYPES): one column, its field the key's
    # 32 bytes; a varchar (keyed as text is) after an int4, DESC NULLS
    # FIRST, 27 bytes; a unique one, 32 bytes
    "tx": [("s", "text", "")],
    "ct": [("a", "int4", ""), ("b", "varchar", " DESC NULLS FIRST")],
    "ut": [("a", "text", "")],
    # numeric keys (NUMERIC_T): keyed by bytes as text is; first, then an
    # int4 DESC NULLS FIRST
    "cn": [("a", "numeric(12,3)", ""), ("b", "int4", " DESC NULLS FIRST")],
}
# multi-word keys: their own lane of random choices; joins on the leading
# column (gen_njoin) in a share of their checks, GbtreeJoin's where it
# takes the index (join_takes)
MULTIWORD_TYPES = ["uuid", "c2", "c3", "tx", "ct", "cn", "dd", "d1"]
MULTIWORD_JOIN_SHARE = 0.1
# INCLUDE columns and unique multi-word indexes: a third lane of random
# choices of their own, no joins but their own (GbtreeJoin must not take them)
INCLUDE_TYPES = ["i1", "i2", "i3", "i4"]
UNIQUE_TYPES = ["u2", "un", "uu", "ut", "u1"]
NEW_TYPES = INCLUDE_TYPES + UNIQUE_TYPES
# how many of a twin's columns (the last ones) are INCLUDE columns
INCLUDED = {"i1": 4, "i2": 3, "i3": 2, "i4": 2, "un": 1}
# the unique twins' index: what follows the columns
UNIQUE_TWINS = {"u2": "", "un": " NULLS NOT DISTINCT", "uu": "", "ut": "", "u1": ""}
# the handful of key values a unique twin's writes mostly draw on (text)
UNIQUE_DOMAIN = {
    "int4": ["-1", "0", "1", "2", "-2147483648", "2147483647"],
    "int2": ["0", "1", "2", "-32768", "32767"],
    "int8": ["-1", "0", "1", "2", "-9223372036854775808", "9223372036854775807"],
    "uuid": ["00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
             "00000000-0000-0000-7fff-ffffffffffff", "00000000-0000-0000-8000-000000000000",
             "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a00", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a01",
             "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380aff"],
    # (a 32-byte field's: '', prefixes of each other, the whole field, a
    # common prefix and the last byte apart, bytes above 0x7F)
    "text": ["", "a", "ab", "p" * 31 + "a", "p" * 31 + "b", "p" * 31, "z" * 32, "\xff" * 32, "\xc3\xa9"],
}
# a unique twin's columns computed from {h} (distinct int8s; {salt}: the
# statement's), for INSERT ... SELECT of many rows: distinct keys, NULLs
# (in a NULLS NOT DISTINCT index, never two alike)
UNIQUE_BULK = {
    "u2": ["CASE WHEN {h} % 17 = 0 THEN NULL ELSE (({h}::int8 * 2654435761 + {salt}) % 4294967296 - 2147483648)::int4 END",
           "CASE WHEN {h} % 13 = 0 THEN NULL ELSE ({h} % 5)::int2 END"],
    "un": ["CASE WHEN {h} % 17 = 0 THEN NULL ELSE ({h} % 3)::int2 END", "md5('{salt}-' || {h})::uuid",
           "({h} * 7)::int4"],
    "uu": ["CASE WHEN {h} % 17 = 0 THEN NULL ELSE md5('{salt}-' || {h})::uuid END"],
    "u1": ["CASE WHEN {h} % 17 = 0 THEN NULL ELSE {h}::int8 * 2654435761 + {salt} END"],
    # (h's digits end before the 0xff bytes: distinct; at most 7 + 1 + 5 +
    # 15 bytes)
    "ut": ["CASE WHEN {h} % 17 = 0 THEN NULL ELSE '{salt}-' || {h} || repeat(chr(255), ({h} % 16)::int) END"],
}
# the custom scans that take one-column one-word indexes only: never the
# plan of a query on the INCLUDE and unique twins
ONE_WORD_SCANS = ["GbtreeJoin"]
# the custom scans that take any gbtree index's key columns: counted
KEY_COLUMN_SCANS = ["GbtreeCount", "GbtreeArrayScan"]
# the access method of the "gbtree" twins (--am)
AM = "gbtree"

# uuids that order across both 64-bit words and both signs of each:
# all-zero, all-ff, the words' top bits, neighbours across the boundary
UUID_SPECIAL = ["00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
                "7fffffff-ffff-ffff-ffff-ffffffffffff", "80000000-0000-0000-0000-000000000000",
                "00000000-0000-0000-7fff-ffffffffffff", "00000000-0000-0000-8000-000000000000",
                "00000000-0000-0000-ffff-ffffffffffff", "00000000-0000-0001-0000-000000000000",
                "ffffffff-ffff-ffff-0000-000000000000", "00000000-0000-0000-0000-000000000001",
                "ffffffff-ffff-ffff-ffff-fffffffffffe", "7fffffff-ffff-ffff-8000-000000000000"]
# heavy duplicates: one uuid and the ones differing from it only in the
# last byte
UUID_DUP_PREFIX = "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a"


def uuid_text(rnd, r):
    """A uuid's text for gen_value and gen_text (r: their draw, past NULL)."""
    if r < 0.16:
        return rnd.choice(UUID_SPECIAL)
    if r < 0.5:
        return UUID_DUP_PREFIX + "%02x" % rnd.choice([0, 1, 2, 3, 0x7f, 0x80, 0xfe, 0xff])
    h = "%032x" % rnd.getrandbits(128)
    return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])


# text keys: the column types (the table gives them COLLATE "C"), and
# the family's types a constant may have besides (name has "C" itself)
TEXT_TYPES = ("text", "varchar")
TEXT_FAMILY = ["text", "varchar", "name"]
# text values are bytes, a character each (LATIN1 sessions, connect): no
# quote, backslash, brace, tab or newline, so that they go as they are
# into literals, COPY lines and format() templates; '%' and '_' are
# LIKE's wildcards; chr(1), 0x7f, e-acute in UTF-8 (c3 a9) and Latin-1 (e9),
# 0x80, 0xfe, 0xff
TEXT_CHARS = "abpz09 _%~AZ" + "\x01\x7f\x80\xc3\xa9\xe9\xfe\xff"
# heavy duplicates: '', prefixes of each other, bytes above 0x7F, chr(1)
TEXT_DUP = ["", "a", "ab", "abc", "dup", "\xc3\xa9", "\xe9", "\xff", "\x01", "\x01a"]
# what ends a run of 'p's: neighbours a last byte or two apart, and (with
# "") a value that is a prefix of the others
TEXT_TAIL = ["", "p", "q", "o", "\x01", "\x7f", "\x80", "\xff", "pp", "p\x01", "\xff\xff", "\xc3\xa9"]
# a constant's length bound: the fields' (27, 32), a byte past them, more
TEXT_CONST_WIDTH = [27, 28, 32, 33, 40]
# numeric keys: a declared scale (gbtree refuses a bare numeric); the
# values: NaN, zero, both signs, the type's extremes, values a last digit
# or a scale's last place apart, powers of 10000 (a base-10000 digit's
# boundary)
NUMERIC_T = "numeric(12,3)"
NUMERIC_SPECIAL = ["NaN", "0", "999999999.999", "-999999999.999", "0.001", "-0.001", "123456.789",
                   "123456.788", "-123456.789", "-123456.788", "10000", "100000000", "-10000", "9999.999",
                   "-9999.999", "1.5", "-1.5", "1.501", "-1.501"]


def numeric_text(rnd, r):
    """A numeric(12,3)'s text for gen_value and gen_text (r: their draw)."""
    if r < 0.2:
        return rnd.choice(NUMERIC_SPECIAL)
    if r < 0.5:
        return "%.3f" % (rnd.randint(-20, 20) / 8.0)      # heavy duplicates
    return "%.3f" % (rnd.randint(-10 ** 12 + 1, 10 ** 12 - 1) / 1000.0 / 10 ** rnd.randint(0, 9))


# the fields of the fixed-width types, in bits (the others 64; gbtree's
# type_bits)
TYPE_BITS = {"bool": 1, "int2": 16, "int4": 32, "date": 32, "oid": 32, "uuid": 128}


def text_value(rnd, w):
    """A text value of at most w bytes, biased to nasty ones."""
    r = rnd.random()
    if r < 0.2:
        return rnd.choice(TEXT_DUP)
    if r < 0.5:
        # a long common prefix (the whole field, a byte short, or any
        # length: across the key's word boundaries) and its last bytes
        tail = rnd.choice(TEXT_TAIL)
        return "p" * max(0, rnd.choice([w, w, w - 1, rnd.randint(0, w)]) - len(tail)) + tail
    if r < 0.62:
        # the field's whole length
        return rnd.choice(["z" * w, "\xff" * w, "\x01" * w, "".join(rnd.choice(TEXT_CHARS) for _ in range(w))])
    return "".join(rnd.choice(TEXT_CHARS) for _ in range(rnd.randint(0, w)))


# FUZZ_LONG_TEXT (1 unless 0): the stored text values of the twins run
# past their fields, to three times them and more: gbtree cuts them and
# keeps the rest in tails (src/README, "Text keys"); constants run as
# long; unique twins' keys too.
LONG_TEXT = os.environ.get("FUZZ_LONG_TEXT", "1") != "0"
if LONG_TEXT:
    TEXT_CONST_WIDTH = TEXT_CONST_WIDTH + [64, 100, 136]
    # keys past the field that tie with each other's first bytes
    UNIQUE_DOMAIN["text"] = UNIQUE_DOMAIN["text"] + [
        "p" * 32 + "a", "p" * 32 + "b", "p" * 32 + "a" * 40, "p" * 60, "z" * 33, "\xff" * 70]


# FUZZ_TEXT_FIT=1: the stored text values fit the fields of two or three
# key words (by twin), and every build, however few its rows, fits the
# words to the values it sees (gbtree.fit_min_rows = 1; src/README, "Text
# keys"): REINDEXes give fitted indexes, and so do the first flushes into
# indexes that TRUNCATE left empty.  In the run's second half a few
# values run to the four words' field and past it, and go into fitted
# indexes with tails.
TEXT_FIT = os.environ.get("FUZZ_TEXT_FIT", "0") != "0"
TEXT_FIT_LONG_FROM = float("inf")   # when the longer values start (main)
HAVE_PAGEINSPECT = False


def stored_width(t, rnd=None):
    """The most bytes of a stored text value of twin t (rnd: draws the
    few longer ones of FUZZ_TEXT_FIT)."""
    w = text_bytes(t)
    if w and TEXT_FIT:
        if rnd is not None and time.time() >= TEXT_FIT_LONG_FROM and rnd.random() < 0.004:
            return w + 8
        # two or three words by twin, or more where the other columns
        # leave the text too few bytes of them
        for words in (2 + zlib.crc32(t.encode()) % 2, 3, 4):
            if text_bytes(t, words) >= 6:
                return text_bytes(t, words)
    if w and LONG_TEXT:
        return w * 3 + 40
    return w


def text_bytes(t, words=4):
    """The bytes of each text column's field in twin t's index: what its
    other columns leave of the key's words (four unless fitted; with
    several columns, a NULL bit each; INCLUDE columns: 48 bits of TID
    more), shared by the text columns (gbt_wide_info_init)."""
    cols = tcols(t)
    ntext = sum(1 for _, ct, _ in cols if ct in TEXT_TYPES)
    if not ntext:
        return None
    include = len(cols) > nkeys(t)
    fixed = sum(TYPE_BITS.get(ct, 64) for _, ct, _ in cols if ct not in TEXT_TYPES) + (48 if include else 0)
    room = 64 * words - fixed - ((len(cols) + include) if len(cols) > 1 else 0)
    return max(0, room) // 8 // ntext


def gen_value(t, rnd, width=None):
    """A random SQL literal of type t (None for NULL), biased to nasty
    values.  width: a text value's most bytes (a stored one's: its field;
    by default a constant's, which may be longer)."""
    r = rnd.random()
    if r < 0.06:
        return None
    if t in TEXT_FAMILY:
        return "'%s'::%s" % (text_value(rnd, width or rnd.choice(TEXT_CONST_WIDTH)), t)
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
    if t == "uuid":
        return "'%s'::uuid" % uuid_text(rnd, r)
    if t == NUMERIC_T:
        return "'%s'::%s" % (numeric_text(rnd, r), t)
    raise ValueError(t)


def cross_types(t):
    if t in INT_LIMITS:
        return ["int2", "int4", "int8"]
    if t in ("float4", "float8"):
        return ["float4", "float8"]
    if t in TEXT_TYPES:
        # (gbtree's text_ops has no name operators, only a filter there:
        # text twice as often)
        return TEXT_FAMILY + ["text"]
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


# ---- multi-word twins: several columns, uuid -----------------------------------

def tcols(t):
    """The indexed columns of the fz_<t> twins: (name, type, index options)."""
    return COMPOSITE.get(t) or [("k", t, "")]


def col_decls(t):
    """The columns of t's tables (text ones COLLATE "C": gbtree orders text
    by its bytes only; the cluster's default is "C" too, but need not be)."""
    return ", ".join("%s %s%s" % (c, ct, ' COLLATE "C"' if ct in TEXT_TYPES else "") for c, ct, _ in tcols(t))


def col_names(t):
    return ", ".join(c for c, _, _ in tcols(t))


def lead_col(t):
    return tcols(t)[0][0]


def nkeys(t):
    """How many of t's columns are the index's key columns."""
    return len(tcols(t)) - INCLUDED.get(t, 0)


def index_def(t):
    """The index's columns, and its INCLUDE and NULLS clauses."""
    cols = tcols(t)
    d = ", ".join(c + o for c, _, o in cols[:nkeys(t)])
    if t in INCLUDED:
        d += ") INCLUDE (" + ", ".join(c for c, _, _ in cols[nkeys(t):])
    return d


def index_sql(t, side, am):
    """CREATE [UNIQUE] INDEX fz_<t>_<side>_k."""
    return "CREATE %sINDEX fz_%s_%s_k ON fz_%s_%s USING %s (%s)%s" % (
        "UNIQUE " if t in UNIQUE_TWINS else "", t, side, t, side, am, index_def(t), UNIQUE_TWINS.get(t, ""))


def col_exprs(t, cols=None):
    """The select list of columns (all of t's by default), as kexpr fetches
    them, renamed: an output column's name wins in ORDER BY, so that ORDER
    BY k would sort the text of k::text (a Sort over the scan) instead of
    asking the index for its order."""
    return ", ".join("%s AS %s_out" % (kexpr(ct, c), c) for c, ct, _ in (cols or tcols(t)))


# the share of a composite's leading values drawn from a handful
LEAD_DUP = 0.4


def dup_text(ct, rnd):
    """One of a handful of values of type ct (text form): heavy duplicates
    of a composite's leading column."""
    if ct in INT_LIMITS:
        return str(rnd.randint(-2, 2))
    if ct in ("float4", "float8"):
        return rnd.choice(["-1", "-0", "0", "0.5", "NaN"])
    if ct in ("timestamptz", "timestamp"):
        return (BASE_TS + datetime.timedelta(hours=rnd.randint(-2, 2))).strftime("%Y-%m-%d %H:%M:%S")
    if ct == "uuid":
        return UUID_DUP_PREFIX + "%02x" % rnd.randint(0, 3)
    if ct in TEXT_TYPES:
        return rnd.choice(TEXT_DUP)
    if ct == NUMERIC_T:
        return rnd.choice(["-1.5", "0", "1.5", "1.501", "NaN"])
    return None


def gen_mvalue(t, i, rnd):
    """A literal for column i of composite t (None for NULL)."""
    ct = tcols(t)[i][1]
    if t in UNIQUE_TWINS and i < nkeys(t) and rnd.random() < 0.5:
        return "'%s'::%s" % (rnd.choice(UNIQUE_DOMAIN[ct]), ct)
    if i == 0 and rnd.random() < LEAD_DUP:
        return "'%s'::%s" % (dup_text(ct, rnd), ct)
    # (a text value: at most its field's bytes, unless LONG_TEXT)
    return gen_value(ct, rnd, stored_width(t, rnd))


def gen_mtext(t, i, rnd):
    """gen_mvalue in text form (COPY)."""
    ct = tcols(t)[i][1]
    if i == 0 and rnd.random() < LEAD_DUP:
        return dup_text(ct, rnd)
    return gen_text(ct, rnd, stored_width(t, rnd))


def gen_mrow(t, rnd):
    """The column values of a new row of composite t, as SQL."""
    out = []
    for i in range(len(tcols(t))):
        v = gen_mvalue(t, i, rnd)
        out.append(v if v is not None else "NULL")
    return ", ".join(out)


def gen_mset(t, rnd):
    """An UPDATE's SET list for composite t: one or more of its columns."""
    cols = tcols(t)
    which = sorted(rnd.sample(range(len(cols)), rnd.randint(1, len(cols))))
    out = []
    for i in which:
        v = gen_mvalue(t, i, rnd)
        out.append("%s = %s" % (cols[i][0], v if v is not None else "NULL"))
    return ", ".join(out)


def gen_mconst(t, i, rnd):
    """A non-null constant for column i of composite t, at times of
    another type of its family; the leading column's often one of its
    handful of duplicates."""
    ct = tcols(t)[i][1]
    if t in UNIQUE_TWINS and i < nkeys(t) and rnd.random() < 0.5:
        return "'%s'::%s" % (rnd.choice(UNIQUE_DOMAIN[ct]), ct)
    if i == 0 and rnd.random() < 0.5:
        return "'%s'::%s" % (dup_text(ct, rnd), rnd.choice(cross_types(ct)) if ct in INT_LIMITS else ct)
    return gen_const(ct, rnd)


def gen_many(t, i, rnd, op="="):
    """col op ANY(array) on column i of t: NULL elements, duplicates, at
    times an array of another type of the column's family, and at times
    one of 33-300 elements, past the insertion sort of sort.c's radix
    sorts (their levels, and a uuid's or a text's prefixes shared)."""
    c, ct = tcols(t)[i][:2]
    at = rnd.choice(cross_types(ct))
    elems = []
    for _ in range(rnd.randint(0, 10) if rnd.random() < 0.92 else rnd.randint(33, 300)):
        if elems and rnd.random() < 0.15:
            elems.append(rnd.choice(elems))
            continue
        v = gen_mvalue(t, i, rnd) if at == ct else gen_value(at, rnd)
        elems.append(v if v is not None else "NULL")
    return "%s %s ANY(ARRAY[%s]::%s[])" % (c, op, ", ".join(elems), at)


def gen_like(c, rnd):
    """c [NOT] LIKE a pattern: mostly a value's prefix and '%' (a range
    of the index under "C"), at times a whole value (an equality) or one
    with a wildcard inside ('%' and '_' are among the values' bytes too)."""
    v = text_value(rnd, rnd.choice(TEXT_CONST_WIDTH))
    r = rnd.random()
    if r < 0.7:
        pat = v[:rnd.randint(0, len(v))] + "%"
    elif r < 0.85:
        pat = v
    else:
        k = rnd.randint(0, len(v))
        pat = v[:k] + rnd.choice(["_", "%"]) + v[k:]
    return "%s %sLIKE '%s'" % (c, "NOT " if rnd.random() < 0.15 else "", pat)


def gen_colpred(t, i, rnd, ranges=False):
    """One condition on column i of t (ranges: a range, one or two-sided)."""
    c, ct = tcols(t)[i][:2]
    # (a draw of its own: the other types' conditions stay as a seed made them)
    if ct in TEXT_TYPES and rnd.random() < 0.15:
        return gen_like(c, rnd)
    r = rnd.random() * (0.55 if ranges else 1.0)
    if r < 0.25:
        return "%s %s %s" % (c, rnd.choice(["<", "<=", ">", ">="]), gen_mconst(t, i, rnd))
    if r < 0.40:
        return "%s BETWEEN %s AND %s" % (c, gen_mconst(t, i, rnd), gen_mconst(t, i, rnd))
    if r < 0.55:
        return "%s %s %s AND %s %s %s" % (c, rnd.choice([">", ">="]), gen_mconst(t, i, rnd),
                                          c, rnd.choice(["<", "<="]), gen_mconst(t, i, rnd))
    if r < 0.70:
        return "%s = %s" % (c, gen_mconst(t, i, rnd))
    if r < 0.78:
        return "%s IN (%s)" % (c, ", ".join(gen_mconst(t, i, rnd) for _ in range(rnd.randint(1, 5))))
    if r < 0.88:
        return gen_many(t, i, rnd, rnd.choice(["=", "=", "=", "<", ">="]))
    if r < 0.94:
        return "%s IS NULL" % c
    return "%s IS NOT NULL" % c


def gen_row_compare(t, rnd, start, n=None):
    """(cols) op (values) over columns start.. of t (the first n), NULL
    members at times."""
    cols = tcols(t)
    m = rnd.randint(2, (n or len(cols)) - start)
    members = list(range(start, start + m))
    vals = []
    for i in members:
        if rnd.random() < 0.12:
            vals.append(rnd.choice(["NULL", "NULL::%s" % cols[i][1]]))
        else:
            vals.append(gen_mconst(t, i, rnd))
    op = rnd.choice(["<", "<=", ">", ">=", "<", "<=", ">", ">=", "="])
    row = "ROW(%s)" if rnd.random() < 0.2 else "(%s)"
    return "%s %s %s" % (row % ", ".join(cols[i][0] for i in members), op, "(%s)" % ", ".join(vals))


def gen_mpred(t, rnd, n=None):
    """A WHERE clause on composite t (on its first n columns: all by
    default), and how many leading columns it pins to one value each (by
    equalities; 0 where it may not)."""
    cols = tcols(t)
    n = n or len(cols)
    if n == 1:
        # one column (a uuid key, or the key of an INCLUDE index)
        k = rnd.random()
        if k < 0.75:
            p = gen_colpred(t, 0, rnd)
            return p, 1 if p.startswith(cols[0][0] + " = ") else 0
        if k < 0.87:
            return "(%s OR %s)" % (gen_mpred(t, rnd, n)[0], gen_mpred(t, rnd, n)[0]), 0
        (p1, m1), (p2, m2) = gen_mpred(t, rnd, n), gen_mpred(t, rnd, n)
        return "%s AND %s" % (p1, p2), max(m1, m2)

    def eqs(m):
        return ["%s = %s" % (cols[i][0], gen_mconst(t, i, rnd)) for i in range(m)]
    k = rnd.random()
    if k < 0.12:
        # equality on a prefix, on every column at times
        m = rnd.randint(1, n)
        return " AND ".join(eqs(m)), m
    if k < 0.30:
        # equality on a prefix, a range on the next column (and at times a
        # condition on a column after it)
        m = rnd.randint(1, n - 1)
        parts = eqs(m) + [gen_colpred(t, m, rnd, ranges=rnd.random() < 0.7)]
        if m + 1 < n and rnd.random() < 0.3:
            parts.append(gen_colpred(t, rnd.randint(m + 1, n - 1), rnd))
        return " AND ".join(parts), m
    if k < 0.40:
        # later columns only
        i = rnd.randint(1, n - 1)
        p = gen_colpred(t, i, rnd)
        if rnd.random() < 0.25:
            p += " AND " + gen_colpred(t, rnd.randint(1, n - 1), rnd)
        return p, 0
    if k < 0.48:
        # the leading column, at times with a later one
        p = gen_colpred(t, 0, rnd)
        if rnd.random() < 0.5:
            p += " AND " + gen_colpred(t, rnd.randint(1, n - 1), rnd)
        return p, 0
    if k < 0.58:
        # = ANY on any column, at times under equality on the ones before it
        i = rnd.randrange(n)
        parts = eqs(i) if i and rnd.random() < 0.5 else []
        parts.append(gen_many(t, i, rnd))
        if rnd.random() < 0.25:
            parts.append(gen_many(t, rnd.randrange(n), rnd))
        return " AND ".join(parts), len(parts) - 1 if len(parts) == i + 1 else 0
    if k < 0.70:
        # a row comparison from the first column, or after an equality on
        # it, or (no index bound) from the second
        r = rnd.random()
        if n >= 3 and r < 0.3:
            return " AND ".join(eqs(1) + [gen_row_compare(t, rnd, 1, n)]), 1
        if n >= 3 and r < 0.4:
            return gen_row_compare(t, rnd, 1, n), 0
        p = gen_row_compare(t, rnd, 0, n)
        if rnd.random() < 0.2:
            p += " AND " + gen_colpred(t, rnd.randrange(n), rnd)
        return p, 0
    if k < 0.80:
        # IS [NOT] NULL on any column, at times under equality on the ones
        # before it, or with another condition
        i = rnd.randrange(n)
        nul = "%s IS %sNULL" % (cols[i][0], rnd.choice(["", "NOT "]))
        if i and rnd.random() < 0.4:
            return " AND ".join(eqs(i) + [nul]), i
        if rnd.random() < 0.3:
            nul += " AND " + gen_colpred(t, rnd.randrange(n), rnd)
        return nul, 0
    if k < 0.90:
        return "(%s OR %s)" % (gen_mpred(t, rnd, n)[0], gen_mpred(t, rnd, n)[0]), 0
    (p1, m1), (p2, m2) = gen_mpred(t, rnd, n), gen_mpred(t, rnd, n)
    return "%s AND %s" % (p1, p2), max(m1, m2) if min(m1, m2) == 0 else min(m1, m2)


def gen_any_pred(t, rnd):
    """A WHERE clause on the fz_<t> twins."""
    return gen_mpred(t, rnd)[0] if t in COMPOSITE else gen_pred(t, rnd)


def index_order(t, reverse=False):
    """ORDER BY the index columns of t in the index's order or its exact
    reverse, every direction and NULLS written out."""
    parts = []
    for c, _, opts in tcols(t):
        desc = "DESC" in opts
        nulls_first = "NULLS FIRST" in opts or (desc and "NULLS LAST" not in opts)
        if reverse:
            desc, nulls_first = not desc, not nulls_first
        parts.append("%s %s NULLS %s" % (c, "DESC" if desc else "ASC", "FIRST" if nulls_first else "LAST"))
    return ", ".join(parts)


def gen_morder(t, rnd, pinned=0, full=False, n=None):
    """An ORDER BY over index columns of composite t (the first n): a
    prefix of them, or the ones after the pinned prefix; the index's order
    or its exact reverse (NULLS written out or left to the default), at
    times one the index cannot give.  Returns the clause and its columns."""
    cols = tcols(t)[:n] if n else tcols(t)
    n = len(cols)
    start = pinned if 0 < pinned < n and rnd.random() < 0.6 else 0
    m = n - start if full or rnd.random() < 0.4 else rnd.randint(1, n - start)
    sel = cols[start:start + m]
    reverse = rnd.random() < 0.5
    flip = rnd.randrange(m) if rnd.random() < 0.08 else -1
    parts = []
    for j, (c, ct, opts) in enumerate(sel):
        desc = "DESC" in opts
        nulls_first = "NULLS FIRST" in opts or (desc and "NULLS LAST" not in opts)
        if reverse:
            desc, nulls_first = not desc, not nulls_first
        if j == flip:
            # an order the index cannot give: a Sort
            if rnd.random() < 0.5:
                desc = not desc
            else:
                nulls_first = not nulls_first
        s = c + (" DESC" if desc else rnd.choice(["", " ASC"]))
        if nulls_first != desc or rnd.random() < 0.3:
            s += " NULLS FIRST" if nulls_first else " NULLS LAST"
        parts.append(s)
    return ", ".join(parts), sel


def gen_mcheck(t, rnd, kind):
    """gen_check for composite t."""
    pred, pinned = gen_mpred(t, rnd)
    cols = tcols(t)
    if kind < 0.45:
        # the index columns alone at times: index-only scans
        sel = col_exprs(t) if rnd.random() < 0.3 else "id, " + col_exprs(t)
        return "SELECT " + sel + " FROM fz_" + t + "_{side} WHERE " + pred, False
    if kind < 0.75:
        # the ordered columns alone: rows equal in them are equal rows
        order, ocols = gen_morder(t, rnd, pinned)
        lim = rnd.choice([1, 10, 100, 1000])
        where = "" if rnd.random() < 0.25 else " WHERE " + pred
        return ("SELECT " + col_exprs(t, ocols) + " FROM fz_" + t + "_{side}" + where + " ORDER BY " + order
                + " LIMIT %d" % lim), True
    if kind < 0.85:
        # min/max of a column (a prefix pinned: of the next one), count
        aggs = ["count(*)"]
        # (no min/max of uuid or bool)
        cand = [i for i, (c, ct, _) in enumerate(cols) if ct not in ("uuid", "bool")]
        for i in rnd.sample(cand, min(len(cand), rnd.randint(1, 2))):
            if 0 < pinned < len(cols) and rnd.random() < 0.5 and cols[pinned][1] not in ("uuid", "bool"):
                i = pinned
            c, ct = cols[i][:2]
            fold = " + 0" if ct in ("float4", "float8") else ""
            aggs.append("(min(%s)%s)::text, (max(%s)%s)::text" % (c, fold, c, fold))
        return "SELECT " + ", ".join(aggs) + " FROM fz_" + t + "_{side} WHERE " + pred, True
    return None


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
    # workers only: the leader starts no scan of its own, so whatever its
    # transaction has pending must reach the pages before the workers start
    "parallel_noleader": ["SET LOCAL enable_seqscan = off", "SET LOCAL enable_bitmapscan = off",
                          "SET LOCAL parallel_setup_cost = 0", "SET LOCAL parallel_tuple_cost = 0",
                          "SET LOCAL min_parallel_index_scan_size = 0",
                          "SET LOCAL max_parallel_workers_per_gather = 2",
                          "SET LOCAL parallel_leader_participation = off"],
    # index and bitmap scans both allowed: "k = ANY (...)" gets the
    # Custom Scan (GbtreeArrayScan) where its cost wins, serial or with
    # one lookup shared by parallel workers
    "array": ["SET LOCAL enable_seqscan = off", "SET LOCAL enable_indexonlyscan = off"],
    "array_parallel": ["SET LOCAL enable_seqscan = off", "SET LOCAL enable_indexonlyscan = off",
                       "SET LOCAL parallel_setup_cost = 0", "SET LOCAL parallel_tuple_cost = 0",
                       "SET LOCAL min_parallel_table_scan_size = 0",
                       "SET LOCAL max_parallel_workers_per_gather = 2"],
}
# a row comparison, as gen_row_compare writes it: (cols) op (values)
ROW_COMPARE = re.compile(r"\)\s*(<=|>=|<|>|=)\s*\(")
SEQ = ["SET LOCAL enable_seqscan = on", "SET LOCAL enable_indexscan = off",
       "SET LOCAL enable_indexonlyscan = off", "SET LOCAL enable_bitmapscan = off"]
RESET = ["SET LOCAL enable_seqscan = on", "SET LOCAL enable_indexscan = on",
         "SET LOCAL enable_indexonlyscan = on", "SET LOCAL enable_bitmapscan = on",
         "RESET parallel_setup_cost", "RESET parallel_tuple_cost",
         "RESET min_parallel_index_scan_size", "RESET min_parallel_table_scan_size",
         "RESET max_parallel_workers_per_gather",
         "RESET parallel_leader_participation"]


def connect(dsn):
    conn = psycopg2.connect(dsn)
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("SHOW server_encoding")
    if cur.fetchone()[0] == "SQL_ASCII":
        # text values hold any non-zero byte: LATIN1 writes and reads each
        # as one character (a SQL_ASCII server converts nothing)
        conn.set_client_encoding("LATIN1")
    cur.execute("SET TimeZone = 'UTC'; SET extra_float_digits = 3; SET jit = off")
    if TEXT_FIT:
        # builds of one text value or more fit; an empty one keeps four
        # words, for the first flush into it to fit (src/README, "Text keys")
        cur.execute("SET gbtree.fit_min_rows = 1")
    return conn


def set_am(am):
    """The access method of the "gbtree" twins, in this process."""
    global AM
    AM = am


def multiword_support(dsn):
    """{type: why AM cannot index it} for the multi-word types (and the
    INCLUDE and unique twins) it cannot index: no default operator class
    for a key column's type, or (several columns) amcanmulticol false, or
    no INCLUDE columns, or no unique indexes; text keys (a text operator
    class: gbtree 0.3) need a SQL_ASCII database."""
    conn = connect(dsn)
    cur = conn.cursor()
    if AM == "gbtree":
        cur.execute("SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS gbtree")
        if TEXT_FIT:
            # (the metapage's key words, which REINDEX fits; counted where
            # the server has pageinspect)
            global HAVE_PAGEINSPECT
            try:
                cur.execute("CREATE EXTENSION IF NOT EXISTS pageinspect")
                HAVE_PAGEINSPECT = True
            except psycopg2.Error:
                HAVE_PAGEINSPECT = False
    cur.execute("SHOW server_encoding")
    encoding = cur.fetchone()[0]
    cur.execute("SELECT oid, pg_indexam_has_property(oid, 'can_multi_col'), pg_indexam_has_property(oid, 'can_include'), "
                "pg_indexam_has_property(oid, 'can_unique') FROM pg_am WHERE amname = %s", (AM,))
    amoid, multicol, include, unique = cur.fetchone()
    missing = {}
    for t in MULTIWORD_TYPES + NEW_TYPES:
        why = []
        if len(tcols(t)) > 1 and not multicol:
            why.append("%s indexes one column only" % AM)
        if t in INCLUDED and not include:
            why.append("%s has no INCLUDE columns" % AM)
        if t in UNIQUE_TWINS and not unique:
            why.append("%s has no unique indexes" % AM)
        if text_bytes(t) and encoding != "SQL_ASCII":
            why.append("text values are written a byte a character: the database is %s, not SQL_ASCII" % encoding)
        for _, ct, _ in tcols(t)[:nkeys(t)]:
            # (varchar: text's operator class, as for btree)
            opc_t = "text" if ct == "varchar" else ct
            cur.execute("SELECT count(*) FROM pg_opclass WHERE opcmethod = %s AND opcdefault "
                        "AND opcintype = %s::regtype", (amoid, opc_t))
            if cur.fetchone()[0] == 0 and "no %s operator class" % opc_t not in why:
                why.append("no %s operator class" % opc_t)
        if why:
            missing[t] = ", ".join(why)
    conn.close()
    return missing


def setup(dsn, types, tablespace=None):
    conn = connect(dsn)
    cur = conn.cursor()
    if AM == "gbtree":
        cur.execute("SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS gbtree")
    else:
        cur.execute("SET client_min_messages = warning")
    if tablespace:
        # where batchers move indexes with entries pending
        cur.execute("SELECT count(*) FROM pg_tablespace WHERE spcname = 'fz_ts'")
        if cur.fetchone()[0] == 0:
            cur.execute("CREATE TABLESPACE fz_ts LOCATION %s", (tablespace,))
    for t in types:
        for side, am in (("g", AM), ("b", "btree")):
            cur.execute("DROP TABLE IF EXISTS fz_%s_%s" % (t, side))
            # ids are never negative: the batchers make statements fail
            # midway by inserting a negative one
            cur.execute("CREATE TABLE fz_%s_%s (id int8 CHECK (id >= 0), %s) WITH (autovacuum_enabled = off)"
                        % (t, side, col_decls(t)))
            cur.execute(index_sql(t, side, am))
    # (the third lane's batchers have exclusion tables of their own: its
    # writes leave the other lanes' results as they were)
    for x in ["fz_excl"] + (["fz_excl3"] if split_lanes(types)[2] else []):
        # an exclusion constraint's index is never batched: it must refuse
        # exactly what a unique btree refuses, within one statement too
        cur.execute("DROP TABLE IF EXISTS {x}_g, {x}_b".format(x=x))
        cur.execute(("CREATE TABLE {x}_g (id int8, k int8, CONSTRAINT {x}_g_x EXCLUDE USING %s (k WITH =))"
                     " WITH (autovacuum_enabled = off)" % AM).format(x=x))
        cur.execute(("CREATE INDEX {x}_g_id ON {x}_g USING %s (id)" % AM).format(x=x))
        cur.execute("CREATE TABLE {x}_b (id int8, k int8, CONSTRAINT {x}_b_x UNIQUE (k))"
                    " WITH (autovacuum_enabled = off)".format(x=x))
        cur.execute("CREATE INDEX {x}_b_id ON {x}_b USING btree (id)".format(x=x))
        # and so must a unique gbtree index (checked at insert time, never batched)
        cur.execute("DROP TABLE IF EXISTS {x}_u".format(x=x))
        cur.execute("CREATE TABLE {x}_u (id int8, k int8) WITH (autovacuum_enabled = off)".format(x=x))
        cur.execute(("CREATE UNIQUE INDEX {x}_u_k ON {x}_u USING %s (k)" % AM).format(x=x))
        cur.execute(("CREATE INDEX {x}_u_id ON {x}_u USING %s (id)" % AM).format(x=x))
    # scans from inside a running statement: count through the index and
    # through a seq scan (fresh snapshots: they see the statement's rows so
    # far) and raise if they differ
    cur.execute(r"""
CREATE OR REPLACE FUNCTION fz_count_idx(tbl text, pred text) RETURNS bigint LANGUAGE plpgsql
SET enable_seqscan = off SET enable_bitmapscan = off SET enable_indexscan = on SET enable_indexonlyscan = on
AS $f$ DECLARE n bigint; BEGIN EXECUTE format('SELECT count(*) FROM %I WHERE %s', tbl, pred) INTO n; RETURN n; END $f$;
CREATE OR REPLACE FUNCTION fz_count_seq(tbl text, pred text) RETURNS bigint LANGUAGE plpgsql
SET enable_seqscan = on SET enable_bitmapscan = off SET enable_indexscan = off SET enable_indexonlyscan = off
AS $f$ DECLARE n bigint; BEGIN EXECUTE format('SELECT count(*) FROM %I WHERE %s', tbl, pred) INTO n; RETURN n; END $f$;
CREATE OR REPLACE FUNCTION fz_selfcheck(tbl text, pred text) RETURNS bool LANGUAGE plpgsql AS $f$
DECLARE a bigint; b bigint;
BEGIN
    a := fz_count_idx(tbl, pred);
    b := fz_count_seq(tbl, pred);
    IF a IS DISTINCT FROM b THEN
        RAISE EXCEPTION 'fz_selfcheck: % WHERE %: % rows through the index, % by a seq scan', tbl, pred, a, b;
    END IF;
    RETURN true;
END $f$;
""")
    conn.close()


def diagnose(dsn, t):
    """After a mismatch: what gbtree_check(heapallindexed) says of the
    twin's index (missing entries, or entries in the wrong place).  Where
    the server has pageinspect, the index's pages are kept first in a table
    fz_pages_<t>_<pid> (blk, page), for a look after the run: later writes
    or a REINDEX may repair it before anybody looks."""
    if AM != "gbtree":
        return "(--am %s: no gbtree_check)" % AM
    try:
        conn = connect(dsn)
        cur = conn.cursor()
        if HAVE_PAGEINSPECT:
            try:
                cur.execute("CREATE TABLE fz_pages_%s_%d AS SELECT blk, get_raw_page('fz_%s_g_k', blk::int) AS page "
                            "FROM generate_series(0, pg_relation_size('fz_%s_g_k') / 8192 - 1) blk"
                            % (t, os.getpid(), t, t))
            except psycopg2.Error:
                pass
        cur.execute("SELECT gbtree_check('fz_%s_g_k', true)" % t)
        out = "gbtree_check(fz_%s_g_k, heapallindexed) passed" % t
        audit = audit_entries(cur, t)
        conn.close()
        return out + "; " + (audit or "index scan audit: every row once")
    except psycopg2.Error as e:
        return "gbtree_check(fz_%s_g_k, heapallindexed): %s [%s]" % (t, str(e).strip(), e.pgcode)


def audit_entries(cur, t):
    """The index's entries against the heap, the other way round from
    heapallindexed: a plain index scan of every key (NULLs too) must
    return each visible row once, with a key in the scan's order; an
    entry left behind for a vacuumed tuple whose slot a new row took
    returns that row twice, or out of order."""
    c = tcols(t)[0][0]
    cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
    try:
        cur.execute("SELECT ctid::text, id FROM fz_%s_g" % t)
        heap = collections.Counter(r for r in cur.fetchall())
        for s in ("SET LOCAL enable_seqscan = off", "SET LOCAL enable_bitmapscan = off",
                  "SET LOCAL enable_indexonlyscan = off", "SET LOCAL enable_sort = off"):
            cur.execute(s)
        got = collections.Counter()
        for pred in ("%s IS NOT NULL" % c, "%s IS NULL" % c):
            cur.execute("SELECT ctid::text, id FROM fz_%s_g WHERE %s ORDER BY %s" % (t, pred, c))
            got.update(r for r in cur.fetchall())
    finally:
        cur.execute("ROLLBACK")
    if got == heap:
        return None
    extra, missing = sorted((got - heap).elements()), sorted((heap - got).elements())
    return "index scan audit: %d rows in the heap; from the index %d not in it or twice: %s; %d missing: %s" % (
        len(heap), len(extra), extra[:10], len(missing), missing[:10])


def split_lanes(types):
    """The one-word types, the multi-word ones, and the INCLUDE and unique
    twins (each in --types order)."""
    return ([t for t in types if t not in MULTIWORD_TYPES + NEW_TYPES], [t for t in types if t in MULTIWORD_TYPES],
            [t for t in types if t in NEW_TYPES])


def pick_lane(lrnd, lanes, nrnd=None):
    """Which lane the next operation of a session takes (0: one-word, 1:
    multi-word types, 2: INCLUDE and unique twins), each type as likely as
    any other.  Each lane draws on random generators of its own, so that
    adding multi-word types leaves the one-word lane's operations as a
    seed made them before; the third lane is chosen by a generator of its
    own (nrnd), lrnd choosing between the other two as before: adding it
    leaves their operations, and their order, as they were."""
    old, new, third = lanes
    if third and (not (old or new) or nrnd.random() < len(third) / (len(old) + len(new) + len(third))):
        return 2
    if new and (not old or lrnd.random() < len(new) / (len(old) + len(new))):
        return 1
    return 0


def lane_rnd(seed, who):
    """The multi-word lane's random generator of session who, and the one
    choosing between the lanes (str seeds hash the same in every run)."""
    return random.Random("multiword-%d-%s" % (seed, who)), random.Random("lane-%d-%s" % (seed, who))


def new_lane_rnd(seed, who):
    """The third lane's (INCLUDE and unique twins) random generator, and
    the one choosing it (pick_lane)."""
    return random.Random("includeunique-%d-%s" % (seed, who)), random.Random("lane3-%d-%s" % (seed, who))


# ---- unique twins: conflicts on both twins alike -------------------------------

def uuid_rand(rnd):
    h = "%032x" % rnd.getrandbits(128)
    return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])


def gen_utext(t, i, rnd, small, rare=0.03):
    """A value (text; None for NULL) for column i of unique twin t: a key
    column's from its handful (small), or spread (from the handful at the
    odds rare); an INCLUDE column's anything."""
    ct = tcols(t)[i][1]
    if i >= nkeys(t):
        return gen_text(ct, rnd, text_bytes(t))
    if rnd.random() < 0.1:
        return None
    if small or rnd.random() < rare:
        return rnd.choice(UNIQUE_DOMAIN[ct])
    if ct == "uuid":
        return uuid_rand(rnd)
    if ct in TEXT_TYPES:
        # a run of 'p's at times (neighbours far into the field), then at
        # least 6 random bytes: hardly ever twice
        w = stored_width(t, rnd)
        head = "p" * rnd.randint(0, w - 6) if rnd.random() < 0.5 else ""
        return head + "".join(rnd.choice(TEXT_CHARS) for _ in range(rnd.randint(6, w - len(head))))
    lo, hi = INT_LIMITS[ct]
    return str(rnd.randint(lo, hi))


def lit(v, ct):
    return "NULL" if v is None else "'%s'::%s" % (v, ct)


def gen_urow(t, rnd, small):
    """The column values of a new row of unique twin t, as SQL literals."""
    return [lit(gen_utext(t, i, rnd, small), ct) for i, (_, ct, _) in enumerate(tcols(t))]


def gen_uchange(t, rnd, newids):
    """One change of unique twin t, the statements ({tbl}) that each twin
    runs in turn: multi-row inserts of a handful of keys (conflicts with
    stored rows and within the statement) or of spread ones, updates of
    keys to constants (whatever order the rows are met in, the statement
    fails exactly when its result has a duplicate), updates keeping the
    keys (a new index entry each, equal to the row's old one), a key
    deleted and inserted again.  newids(n): the first of n fresh ids."""
    cols = tcols(t)
    nk = nkeys(t)
    r = rnd.random()
    if r < 0.5:
        small = rnd.random() < 0.7
        n = rnd.choice([1, 1, 2, 3, 5]) if small else rnd.choice([20, 100, 400])
        rows = [gen_urow(t, rnd, small) for _ in range(n)]
        if rnd.random() < 0.1:
            # a duplicate within the statement, at its end at times
            k = len(rows) if rnd.random() < 0.5 else rnd.randint(0, len(rows))
            rows.insert(k, rnd.choice(rows))
        first = newids(len(rows))
        return ["INSERT INTO {tbl} VALUES " + ", ".join("(%d, %s)" % (first + j, ", ".join(v))
                                                          for j, v in enumerate(rows))]
    m = rnd.choice([3, 30, 300, 3000])
    where = " WHERE id %% %d = %d" % (m, rnd.randint(0, m - 1))
    if r < 0.65:
        which = sorted(rnd.sample(range(len(cols)), rnd.randint(1, len(cols))))
        if not any(i < nk for i in which):
            which = [rnd.randrange(nk)] + which
        return ["UPDATE {tbl} SET " + ", ".join("%s = %s" % (cols[i][0], lit(gen_utext(t, i, rnd, True), cols[i][1]))
                                                for i in which) + where]
    if r < 0.75:
        c = rnd.choice(["id = id", "%s = %s" % (cols[0][0], cols[0][0])]
                       + ["%s = %s # 1" % (cols[i][0], cols[i][0]) for i in range(nk, len(cols))])
        return ["UPDATE {tbl} SET " + c + where]
    row = gen_urow(t, rnd, True)
    match = " AND ".join("%s IS NOT DISTINCT FROM %s" % (c, v) for (c, _, _), v in zip(cols[:nk], row))
    out = ["DELETE FROM {tbl} WHERE " + match, "INSERT INTO {tbl} VALUES (%d, %s)" % (newids(1), ", ".join(row))]
    if rnd.random() < 0.3:
        # and once more: a duplicate, unless NULL keeps it distinct
        out.append("INSERT INTO {tbl} VALUES (%d, %s)" % (newids(1), ", ".join(row)))
    return out


def unique_lock_id(t):
    """The advisory lock that a change of unique twin t holds across both
    twins (a key of its own, apart from any other advisory lock)."""
    return 7340000 + UNIQUE_TYPES.index(t)


def unique_apply(cur, t, stmts, copy=None):
    """Run stmts ({tbl}; copy: COPY data for a one-statement COPY) on the
    gbtree twin, then on the btree twin, each under a savepoint of its
    own (rolled back on a unique violation), in the caller's transaction:
    {side: (outcome, row counts, error detail)}; the outcome is "ok" or
    "23505 in statement N".  Other errors propagate.

    The change holds the twin's advisory lock from its first statement on
    the gbtree twin to its last on the btree twin, so that no other change
    of the twin runs in between.  Without it the twins may rightly
    disagree: when the gbtree twin's part fails, rolling it back releases
    another session waiting there on one of its entries, and that session
    can insert and commit the key on both twins before this change reaches
    the btree twin, which then fails where the gbtree twin did not (btree
    against btree does the same).  Other transactions' entries, committed,
    aborted or in progress, still meet every change: each waits for an
    inserter of its key in progress as before, and deadlocks with it (the
    lock is a heavyweight lock, the deadlock detector sees both) end in
    40P01, which the callers retry."""
    out = {}
    lock = unique_lock_id(t)
    cur.execute("SELECT pg_advisory_lock(%d)" % lock)
    try:
        for side in ("g", "b"):
            tbl = "fz_%s_%s" % (t, side)
            cur.execute("SAVEPOINT fz_u")
            counts = []
            try:
                for st in stmts:
                    if copy is not None:
                        cur.copy_expert(st.format(tbl=tbl), io.StringIO(copy))
                    else:
                        cur.execute(st.format(tbl=tbl))
                    counts.append(cur.rowcount)
                cur.execute("RELEASE SAVEPOINT fz_u")
                out[side] = ("ok", counts, None)
            except psycopg2.Error as e:
                # back to a transaction that can still run the unlock
                cur.execute("ROLLBACK TO SAVEPOINT fz_u")
                cur.execute("RELEASE SAVEPOINT fz_u")
                if e.pgcode != "23505":
                    raise
                out[side] = ("23505 in statement %d" % (len(counts) + 1), counts,
                             (e.diag.message_detail or "").strip())
    finally:
        # a session lock: the caller's ROLLBACK would not let go of it
        cur.execute("SELECT pg_advisory_unlock(%d)" % lock)
    return out


@contextlib.contextmanager
def unique_change_lock(cur, t):
    """A writer's change of twin t outside unique_apply (a delete of both
    twins' rows) holds, for a unique twin, the lock that unique_apply
    holds, through its commit: otherwise it can run between another
    change's statements on the two twins, and that change then rightly
    meets a key on the gbtree twin that is gone by the time it reaches
    the btree twin.  A ROLLBACK first where the change failed midway, so
    that the unlock can run."""
    lock = unique_lock_id(t) if t in UNIQUE_TWINS else None
    if lock is not None:
        cur.execute("SELECT pg_advisory_lock(%d)" % lock)
    try:
        yield
    except psycopg2.Error:
        if lock is not None:
            cur.execute("ROLLBACK")
        raise
    finally:
        if lock is not None:
            cur.execute("SELECT pg_advisory_unlock(%d)" % lock)


def unique_conflict_rows(dsn, t, out):
    """After the twins of a unique text twin differ on a 23505: the rows of
    each whose key begins with the conflicting key's field, by seq scan
    and by the index, and whether the conflict holds on a second try."""
    m = re.search(r"Key \((\w+)\)=\((.*)\) already exists", out["g"][2] or "", re.S)
    if not m or t not in UNIQUE_TWINS or not text_bytes(t):
        return ""
    c, v = m.group(1), m.group(2)
    w = text_bytes(t)
    conn = connect(dsn)
    cur = conn.cursor()
    lines = []
    try:
        for side, settings in (("g", SEQ), ("b", SEQ), ("g", MODES["index"])):
            cur.execute("BEGIN")
            for st in settings:
                cur.execute(st)
            cur.execute("SELECT ctid::text, xmin::text, xmax::text, id, octet_length(%s), %s = %%s "
                        "FROM fz_%s_%s WHERE substr(%s, 1, %d) = substr(%%s, 1, %d)" % (c, c, t, side, c, w, w),
                        (v, v))
            lines.append("  %s (%s): %r" % (side, "seq" if settings is SEQ else "index", cur.fetchall()))
            cur.execute("ROLLBACK")
        cur.execute("BEGIN")
        try:
            cur.execute("INSERT INTO fz_%s_g (id, %s) VALUES (2000000000000, %%s)" % (t, c), (v,))
            lines.append("  a second try on the gbtree twin: ok")
        except psycopg2.Error as e:
            lines.append("  a second try on the gbtree twin: %s %s" % (e.pgcode, (e.diag.message_detail or "")[:80]))
        cur.execute("ROLLBACK")
    finally:
        conn.close()
    return "\n rows whose key begins as the conflicting one's (ctid, xmin, xmax, id, bytes, equal):\n" + "\n".join(lines)


def unique_differs(t, stmts, out):
    """None, or what differs between the twins' outcomes."""
    if out["g"][:2] == out["b"][:2]:
        return None
    return ("unique twins %s: the same change, different outcomes:\n gbtree twin: %s, rows %r%s\n"
            " btree twin: %s, rows %r%s\n statements: %s" % (
                t, out["g"][0], out["g"][1], " (%s)" % out["g"][2] if out["g"][2] else "",
                out["b"][0], out["b"][1], " (%s)" % out["b"][2] if out["b"][2] else "",
                "; ".join(st.format(tbl="fz_%s_g" % t) for st in stmts)))


def check_overlong(cur, t, rnd, nextids, lane):
    """Have the gbtree twin of t alone write a text value whose rest past its
    column's field is longer than any tail (gbt_tail_max), under a savepoint: a multi-row INSERT with it among
    valid rows (a unique twin's: NULL keys, which never conflict), or an
    UPDATE of a row to it.  The statement must fail with 54000 (no row to
    update will do too), and then the twins hold as many rows, through
    either index and a seq scan.  None, or what happened instead."""
    cols = tcols(t)
    i = rnd.choice([j for j, (_, ct, _) in enumerate(cols) if ct in TEXT_TYPES])
    c, ct = cols[i][:2]
    w = text_bytes(t)
    val = "'%s'::%s" % ("p" * (w + 1500) + rnd.choice(["p", "\x01", "\xff", "z" * 20]), ct)
    if rnd.random() < 0.6:
        rows = []
        for _ in range(rnd.choice([1, 3, 50])):
            if t in UNIQUE_TWINS:
                rows.append(", ".join("NULL" for _ in cols))
            else:
                rows.append(gen_mrow(t, rnd))
        rows.insert(rnd.randint(0, len(rows)), ", ".join(val if j == i else "NULL" for j in range(len(cols))))
        first = nextids[lane]
        nextids[lane] += len(rows)
        sql = "INSERT INTO fz_%s_g VALUES %s" % (t, ", ".join("(%d, %s)" % (first + j, r) for j, r in enumerate(rows)))
    else:
        sql = "UPDATE fz_%s_g SET %s = %s WHERE id = (SELECT min(id) FROM fz_%s_g)" % (t, c, val, t)
    cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
    try:
        cur.execute("SAVEPOINT fz_l")
        try:
            cur.execute(sql)
            outcome = "no error, %d rows" % cur.rowcount
            if cur.rowcount == 0:
                outcome = None          # an empty table: nothing to update
        except psycopg2.Error as e:
            outcome = None if e.pgcode == "54000" else "%s [%s]" % (str(e).strip(), e.pgcode)
            if e.pgcode in RETRY_CODES:
                raise
        cur.execute("ROLLBACK TO SAVEPOINT fz_l")
        if outcome is None:
            counts = [run_query(cur, settings, "SELECT count(*) FROM fz_%s_%s WHERE %s IS NOT NULL OR %s IS NULL"
                                % (t, side, lead_col(t), lead_col(t)))[0][0]
                      for side, settings in (("g", MODES["index"]), ("b", MODES["index"]), ("g", SEQ))]
            if len(set(counts)) > 1:
                outcome = ("54000 as it should, but then rows (index %d, btree %d, seq scan %d)"
                           % tuple(counts))
    finally:
        cur.execute("ROLLBACK")
    if outcome:
        return "a value 1,500 bytes longer than the %d of %s's field, on the gbtree twin alone: %s\n statement: %s" % (
            w, c, outcome, sql)
    return None


def writer(dsn, types, seed, wid, deadline, counter, am="gbtree", ucounts=None, lcounts=None):
    set_am(am)
    lanes = split_lanes(types)
    mrnd, lrnd = lane_rnd(seed, "writer-%d" % wid)
    nrnd, n3rnd = new_lane_rnd(seed, "writer-%d" % wid)
    rnds = [random.Random(seed * 1000 + wid), mrnd, nrnd]
    conn = connect(dsn)
    cur = conn.cursor()
    nextids = [wid * 10 ** 9, wid * 10 ** 9 + 5 * 10 ** 8, wid * 10 ** 9 + 2 * 10 ** 8]
    ops = 0
    uok = udup = 0
    overlong = reindexed = fitted = 0
    while time.time() < deadline:
        lane = pick_lane(lrnd, lanes, n3rnd)
        rnd = rnds[lane]
        t = rnd.choice(lanes[lane])
        r = rnd.random()
        if t in UNIQUE_TWINS and 0.7 <= r < 0.8:
            r = 0.6         # no other updates than gen_uchange's: a delete
        try:
            if t in UNIQUE_TWINS and r < 0.7:
                # one change, on each twin under a savepoint: both succeed or
                # both fail with 23505
                def newids(n, lane=lane):
                    first = nextids[lane]
                    nextids[lane] += n
                    return first
                stmts = gen_uchange(t, rnd, newids)
                cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
                out = unique_apply(cur, t, stmts)
                err = unique_differs(t, stmts, out)
                if err:
                    cur.execute("ROLLBACK")
                    print("gbtree_fuzz: FAILED with seed %d\nwriter %d: %s%s\nwriter %d: %s"
                          % (seed, wid, err, unique_conflict_rows(dsn, t, out), wid, diagnose(dsn, t)), flush=True)
                    conn.close()
                    sys.exit(3)
                cur.execute("COMMIT")
                if out["g"][0] == "ok":
                    uok += 1
                else:
                    udup += 1
            elif r < 0.55:
                n = rnd.choice([1, 5, 50, 400])
                rows = []
                for _ in range(n):
                    if t in COMPOSITE:
                        rows.append("(%d, %s)" % (nextids[lane], gen_mrow(t, rnd)))
                    else:
                        v = gen_value(t, rnd)
                        rows.append("(%d, %s)" % (nextids[lane], v if v is not None else "NULL"))
                    nextids[lane] += 1
                vals = ", ".join(rows)
                cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ; INSERT INTO fz_{0}_g VALUES {1}; INSERT INTO fz_{0}_b VALUES {1}; COMMIT"
                            .format(t, vals))
            elif r < 0.70:
                m = rnd.randint(2, 9)
                rr = rnd.randint(0, m - 1)
                with unique_change_lock(cur, t):
                    cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ; DELETE FROM fz_{0}_g WHERE id % {1} = {2} AND id / 1000 % 7 = {3}; "
                                "DELETE FROM fz_{0}_b WHERE id % {1} = {2} AND id / 1000 % 7 = {3}; COMMIT"
                                .format(t, m, rr, rnd.randint(0, 6)))
            elif r < 0.80:
                if t in COMPOSITE:
                    sets = gen_mset(t, rnd)
                else:
                    v = gen_value(t, rnd)
                    sets = "k = " + (v if v is not None else "NULL")
                m = rnd.randint(5, 50)
                cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ; UPDATE fz_{0}_g SET {1} WHERE id % {2} = {3}; "
                            "UPDATE fz_{0}_b SET {1} WHERE id % {2} = {3}; COMMIT"
                            .format(t, sets, m, rnd.randint(0, m - 1)))
            elif r < 0.86:
                # the predicate may be answered by either index: compare counts
                pred = gen_any_pred(t, rnd)
                ns = None
                with unique_change_lock(cur, t):
                    cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
                    if rnd.random() < 0.5:
                        cur.execute("SET LOCAL enable_seqscan = off")
                    cur.execute("SAVEPOINT fz_d")
                    cur.execute("DELETE FROM fz_{0}_g WHERE {1}".format(t, pred))
                    ng = cur.rowcount
                    cur.execute("DELETE FROM fz_{0}_b WHERE {1}".format(t, pred))
                    nb = cur.rowcount
                    if ng != nb:
                        # the seq scan, on the same snapshot, says which
                        # twin is wrong
                        cur.execute("ROLLBACK TO SAVEPOINT fz_d")
                        ns = run_query(cur, SEQ, "SELECT count(*) FROM fz_{0}_g WHERE {1}".format(t, pred))[0][0]
                    cur.execute("ROLLBACK" if ng != nb else "COMMIT")
                if ng != nb and ng == ns:
                    # (a writer keeps no query stats: every one is shown)
                    note_btree_wrong(collections.Counter(), "writer %d's DELETE): DELETE FROM fz_%s_b WHERE %s "
                                     "removed %d rows, the gbtree twin %d, a seq scan counts %d"
                                     % (wid, t, pred, nb, ng, ns))
                elif ng != nb:
                    print("gbtree_fuzz: FAILED with seed %d\nwriter %d: DELETE FROM fz_%s_g WHERE %s removed %d rows, "
                          "btree twin %d, a seq scan counts %d\nwriter %d: %s"
                          % (seed, wid, t, pred, ng, nb, ns, wid, diagnose(dsn, t)), flush=True)
                    conn.close()
                    sys.exit(3)
            elif r < 0.95:
                cur.execute("VACUUM fz_%s_g" % t)
            elif r < 0.965 and text_bytes(t) and AM == "gbtree":
                # (a share of the REINDEXes: the other types' draws stay)
                err = check_overlong(cur, t, rnd, nextids, lane)
                if err:
                    print("gbtree_fuzz: FAILED with seed %d\nwriter %d: %s\nwriter %d: %s"
                          % (seed, wid, err, wid, diagnose(dsn, t)), flush=True)
                    conn.close()
                    sys.exit(3)
                overlong += 1
            else:
                cur.execute(("REINDEX INDEX fz_%s_g_k" if r < 0.98 else
                             "REINDEX INDEX CONCURRENTLY fz_%s_g_k") % t)
                if TEXT_FIT and HAVE_PAGEINSPECT and text_bytes(t) and AM == "gbtree":
                    cur.execute("SELECT get_byte(get_raw_page('fz_%s_g_k', 0), 56)" % t)
                    words = cur.fetchone()[0]
                    reindexed += 1
                    fitted += words < 4
            ops += 1
        except psycopg2.Error as e:
            cur.execute("ROLLBACK")
            if e.pgcode in ("40P01", "40001", "55P03"):
                continue
            print("writer %d: unexpected error: %s" % (wid, e), file=sys.stderr)
            if e.pgcode == "XX002":
                # what the checker makes of the index, for the log
                print("writer %d: %s" % (wid, diagnose(dsn, t)), file=sys.stderr, flush=True)
            conn.close()
            sys.exit(2)
    with counter.get_lock():
        counter.value += ops
    if ucounts is not None:
        with ucounts.get_lock():
            ucounts[0] += uok
            ucounts[1] += udup
    if lcounts is not None:
        with lcounts.get_lock():
            lcounts[0] += overlong
            lcounts[1] += reindexed
            lcounts[2] += fitted
    conn.close()


GUC_DEFAULTS = {"parallel_setup_cost": "1000", "parallel_tuple_cost": "0.1",
                "min_parallel_index_scan_size": "512kB", "max_parallel_workers_per_gather": "2",
                "parallel_leader_participation": "on", "min_parallel_table_scan_size": "8MB"}


def as_select(stmt):
    """SET LOCAL x = v / RESET x as SELECT set_config(): not a utility
    statement, so that nothing but the query itself (its executor start,
    its index scan start) makes a batching gbtree flush what is pending."""
    if stmt.startswith("SET LOCAL "):
        name, val = stmt[len("SET LOCAL "):].split(" = ")
    elif stmt.startswith("RESET "):
        name = stmt[len("RESET "):]
        if name.startswith("gbtree."):
            # the session's reset value, whatever this gbtree's default is
            # (an integer within the range it allows: set explicitly, it
            # goes to parallel workers too)
            return ("SELECT set_config(name, CASE WHEN vartype = 'integer' THEN "
                    "least(reset_val::int8, max_val::int8)::text ELSE reset_val END, true) "
                    "FROM pg_settings WHERE name = '%s'" % name)
        val = GUC_DEFAULTS.get(name, "on")
    else:
        raise ValueError(stmt)
    return "SELECT set_config('%s', '%s', true)" % (name, val)


def run_query(cur, settings, sql, sel=False):
    for s in settings:
        cur.execute(as_select(s) if sel else s)
    cur.execute(sql)
    rows = cur.fetchall()
    for s in RESET:
        cur.execute(as_select(s) if sel else s)
    return rows


def kexpr(t, col="k"):
    """How to fetch k (or another column of type t): floats as numbers (to
    fold -0.0), the rest as text (exact, and datetimes outside Python's
    range survive)."""
    return col if t in ("float4", "float8") else col + "::text"


def query_stats():
    """The counters of a session's query checks (checker, batchers)."""
    return collections.Counter({"queries": 0, "rows": 0, "cursors": 0, "explained": 0, "index_used": 0,
                                "array_scan_used": 0, "btree_wrong": 0})


def gen_check(t, rnd, kind=None):
    """A query on fz_<t>_{side} and whether its row order counts; None
    for kind >= 0.85 (a cursor check)."""
    if kind is None:
        kind = rnd.random()
    if t in COMPOSITE:
        return gen_mcheck(t, rnd, kind)
    # (one-word types: k::text keeps its name k, and ORDER BY k then sorts
    # the text: only the float types get the index's order)
    ke = col_exprs(t)
    pred = gen_pred(t, rnd)
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
        # (no min/max of uuid in PostgreSQL 15)
        agg = "count(*)" if t in ("bool", "uuid") else "count(*), (min(k)%s)::text, (max(k)%s)::text" % (fold, fold)
        q = "SELECT " + agg + " FROM fz_%s_{side} WHERE " + pred
        ordered = True
    else:
        return None
    return q % t, ordered


def row_form(rows, ordered):
    """rows in the form they are compared in.  ordered: True, their order
    counts (keys folded: -0 and 0, NaN); False, a multiset; ("groups", lo,
    hi, limit): the order of columns lo..hi-1 counts (folded), the rows
    equal in them are a multiset, and where the LIMIT limit was reached,
    the last of those by its size alone (which of its rows made it is up
    to the plan)."""
    if isinstance(ordered, tuple):
        _, lo, hi, limit = ordered
        groups = []
        for r in rows:
            key = tuple(norm_key(x) for x in r[lo:hi])
            if groups and groups[-1][0] == key:
                groups[-1][1].append(repr(r))
            else:
                groups.append((key, [repr(r)]))
        out = [(k, sorted(v)) for k, v in groups]
        if limit is not None and len(rows) >= limit and out:
            out[-1] = (out[-1][0], len(out[-1][1]))
        return out
    if ordered:
        return [tuple(norm_key(x) for x in r) for r in rows]
    return sorted(map(repr, rows))


def note_btree_wrong(stats, what):
    """btree's index answered what the table does not hold (its seq scan is
    the truth, and gbtree's index agrees with it): a bug in this
    PostgreSQL's btree, counted and its first two shown, not gbtree's
    difference.  what: "<mode> scans): <the query and answers>"."""
    stats["btree_wrong"] += 1
    if stats["btree_wrong"] <= 2:
        print("gbtree_fuzz: btree's index disagrees with the seq scan, gbtree's agrees (" + what, flush=True)


def compare_check(cur, t, rnd, q, ordered, mode, stats, sel=False, settings=None):
    """Run q on both twins and as a seq scan, in the caller's transaction;
    None, or what differs.  sel: set the planner's switches with SELECT
    set_config() (no utility statements).  settings: the twins' planner
    switches, instead of MODES[mode] (mode then names them)."""
    if settings is None:
        settings = MODES[mode]
    g = run_query(cur, settings, q.format(side="g"), sel)
    b = run_query(cur, settings, q.format(side="b"), sel)
    s = run_query(cur, SEQ, q.format(side="g"), sel)
    if rnd.random() < 0.05:
        cur.execute("SET LOCAL enable_seqscan = off")
        cur.execute("EXPLAIN (COSTS OFF) " + q.format(side="g"))
        plan = "\n".join(r[0] for r in cur.fetchall())
        cur.execute("RESET enable_seqscan")
        stats["explained"] += 1
        if "fz_%s_g_k" % t in plan:
            stats["index_used"] += 1
        if "GbtreeArrayScan" in plan:
            stats["array_scan_used"] += 1
    fg, fb, fs = row_form(g, ordered), row_form(b, ordered), row_form(s, ordered)
    stats["queries"] += 1
    stats["rows"] += len(g)
    if fg == fs and fb != fs:
        note_btree_wrong(stats, "%s scans): %s\n gbtree %d rows, btree %d rows, seqscan %d rows; "
                         "btree's extra or missing: %r"
                         % (mode, q.format(side="b"), len(g), len(b), len(s),
                            [x for x in fb if x not in fs][:3] + [x for x in fs if x not in fb][:3]))
        return None
    if fg != fb or fg != fs:
        diff_gb = [x for x in fg if x not in fb][:5] + [x for x in fb if x not in fg][:5]
        diff_gs = [x for x in fg if x not in fs][:5] + [x for x in fs if x not in fg][:5]
        return ("query (%s scans): %s\n gbtree %d rows, btree %d rows, seqscan %d rows\n"
                " gbtree vs btree differ in %r\n gbtree vs seqscan differ in %r") % (
            mode, q.format(side="g"), len(g), len(b), len(s), diff_gb, diff_gs)
    return None


# ---- INCLUDE and unique twins: their own checks ---------------------------------

def gen_kcheck(t, rnd):
    """A query on twin t (INCLUDE, unique) that selects every column (an
    index-only scan returns the INCLUDE ones), under conditions on its key
    columns (at times on an INCLUDE column too), ORDER BY key columns (a
    prefix, or those after an equality prefix; the index's order or its
    reverse, at times one it cannot give), at times with a LIMIT; rows
    equal in the ordered columns are compared as a multiset."""
    cols = tcols(t)
    nk = nkeys(t)
    pred, pinned = gen_mpred(t, rnd, nk) if rnd.random() < 0.85 else ("true", 0)
    if len(cols) > nk and rnd.random() < 0.25:
        pred = "(%s) AND %s" % (pred, gen_colpred(t, rnd.randrange(nk, len(cols)), rnd))
    order, ocols = gen_morder(t, rnd, pinned, full=rnd.random() < 0.4, n=nk)
    lo = cols.index(ocols[0])
    limit = rnd.choice([None, None, 1, 10, 100, 1000])
    sel = col_exprs(t) + (", id" if rnd.random() < 0.15 else "")
    q = "SELECT %s FROM fz_%s_{side} WHERE %s ORDER BY %s%s" % (sel, t, pred, order,
                                                                 " LIMIT %d" % limit if limit else "")
    return q, ("groups", lo, lo + len(ocols), limit)


def gen_onescan(t, rnd):
    """A query on the leading column of twin t of the shapes that the
    count and array-scan custom scans take on a one-column one-word
    index: count(*) (or of a column) WHERE lead = ANY(array), or another
    condition on it alone; the rows of lead = ANY(array).  And whether its
    row order counts."""
    c = lead_col(t)
    r = rnd.random()
    if r < 0.45:
        pred = gen_many(t, 0, rnd)
    elif r < 0.6:
        pred = "%s IS %sNULL" % (c, rnd.choice(["", "NOT "]))
    elif r < 0.8:
        pred = gen_colpred(t, 0, rnd)
    else:
        pred = gen_many(t, 0, rnd) + " AND " + gen_colpred(t, 0, rnd)
    if rnd.random() < 0.7:
        agg = rnd.choice(["count(*)", "count(*)", "count(%s)" % c, "count(%s)" % tcols(t)[-1][0],
                          "count(*), count(%s)" % tcols(t)[-1][0]])
        return "SELECT %s FROM fz_%s_{side} WHERE %s" % (agg, t, pred), True
    return "SELECT %s FROM fz_%s_{side} WHERE %s" % (col_exprs(t) + rnd.choice(["", ", id"]), t, pred), False


def one_word_scans(cur, settings, sql, reset, sel=False):
    """The one-word custom scans in sql's plan under settings, and the plan."""
    for st in settings:
        cur.execute(as_select(st) if sel else st)
    cur.execute("EXPLAIN (COSTS OFF) " + sql)
    plan = "\n".join(r[0] for r in cur.fetchall())
    for st in reset:
        cur.execute(as_select(st) if sel else st)
    return [n for n in ONE_WORD_SCANS if n in plan], plan


def check_onescan(cur, t, rnd, stats, sel=False):
    """gen_onescan's query on both twins and a seq scan, under the
    planner's defaults or forced scans; the gbtree twin's plan must not
    hold a one-word custom scan.  In the caller's transaction."""
    q, ordered = gen_onescan(t, rnd)
    mode = rnd.choice(["default", "default", "array", "array_parallel", "ios", "bitmap"])
    settings = [] if mode == "default" else MODES[mode]
    err = compare_check(cur, t, rnd, q, ordered, mode, stats, sel, settings)
    stats["new_onescan"] += 1
    if err:
        return err
    found, plan = one_word_scans(cur, settings, q.format(side="g"), RESET, sel)
    stats["new_plans"] += 1
    stats["new_key_column_scans"] += 1 if any(n in plan for n in KEY_COLUMN_SCANS) else 0
    if found:
        return "query (%s scans): %s\n planned with %s on an index of twin %s (%s):\n%s" % (
            mode, q.format(side="g"), ", ".join(found), t, index_def(t), plan)
    return None


def gen_njoin(t, rnd):
    """A join of an outer side o(id, x) (random keys of the type of t's
    leading column or of its family: NULLs, duplicates; or a generated
    set) with twin t on its leading column: inner, left (at times counted
    per outer key), semi (EXISTS, IN), anti; with conditions on the inner
    row's other columns at times; the inner row's columns (INCLUDE ones
    too) selected."""
    c, ct, _ = tcols(t)[0]
    xt = rnd.choice(cross_types(ct))
    kind = rnd.choice(["inner", "left", "left_agg", "exists", "not_exists", "in"])
    few = kind in ("inner", "left")
    if rnd.random() < 0.7:
        vals = []
        for _ in range(rnd.choice([1, 3, 10, 30] if few else [1, 10, 100, 500])):
            if vals and rnd.random() < 0.2:
                vals.append(rnd.choice(vals))
                continue
            v = gen_mvalue(t, 0, rnd) if xt == ct and rnd.random() < 0.6 else gen_value(xt, rnd)
            vals.append(v if v is not None else "NULL::%s" % xt)
        if rnd.random() < 0.5:
            outer = "(VALUES %s) o(id, x)" % ", ".join("(%d, %s)" % (j + 1, v) for j, v in enumerate(vals))
        else:
            outer = "unnest(ARRAY[%s]::%s[]) WITH ORDINALITY o(x, id)" % (", ".join(vals), xt)
    else:
        n = rnd.choice([1, 20, 300] if few else [100, 2000])
        outer = "(SELECT g AS id, %s AS x FROM generate_series(1, %d) g) o" % (det_value(xt, salted("g", rnd)), n)
    extra = ""
    if len(tcols(t)) > 1 and rnd.random() < 0.4:
        extra = " AND " + gen_colpred(t, rnd.randrange(1, len(tcols(t))), rnd)
    tbl = "fz_%s_{side}" % t
    ocols = "o.id, " + kexpr(xt, "o.x")
    icols = ", ".join(kexpr(ict, "i." + ic) for ic, ict, _ in tcols(t)) + rnd.choice(["", ", i.id"])
    cond = rnd.choice(["i.%s = o.x" % c, "o.x = i.%s" % c]) + extra
    if kind in ("inner", "left"):
        ncols = 2 + icols.count(",") + 1
        frm = ("%s JOIN %s i ON %s" if kind == "inner" else "%s LEFT JOIN %s i ON %s") % (outer, tbl, cond)
        return "SELECT %s, %s FROM %s ORDER BY %s LIMIT %d" % (
            ocols, icols, frm, ", ".join(str(j + 1) for j in range(ncols)), JOIN_ROW_CAP), kind
    if kind == "left_agg":
        return "SELECT %s, count(*), count(i.%s), count(i.%s) FROM %s LEFT JOIN %s i ON %s GROUP BY o.x" % (
            kexpr(xt, "o.x"), c, tcols(t)[-1][0], outer, tbl, cond), kind
    if kind == "in":
        where = " WHERE " + gen_colpred(t, rnd.randrange(len(tcols(t))), rnd) if rnd.random() < 0.5 else ""
        return "SELECT %s FROM %s WHERE o.x IN (SELECT %s FROM %s%s)" % (ocols, outer, c, tbl, where), kind
    return "SELECT %s FROM %s WHERE %sEXISTS (SELECT 1 FROM %s i WHERE %s)" % (
        ocols, outer, "NOT " if kind == "not_exists" else "", tbl, cond), kind


def join_takes(t):
    """Whether GbtreeJoin may take twin t's index: one uuid or text column,
    or one column of one word (u1), or a leading column whose equal keys are
    equal values before others or INCLUDE ones (join.c; the one-word twins
    have their own joins)."""
    cols = tcols(t)
    if len(cols) > 1:
        return cols[0][1] in ("int2", "int4", "int8", "date", "timestamp", "timestamptz", "uuid")
    return cols[0][1] in ("uuid", "text", "varchar") or cols[0][1] in ONE_WORD_TYPES


def njoin_heap_rows(cur, t, kind, g, b, fg, fb, sel):
    """After a join mismatch: each twin's rows, by seq scan in the same
    snapshot, whose key column equals the outer key of a row only one side
    gave (at most three keys): whether the twins' heaps differ there, or
    one side's scan."""
    diff = fg - fb if fg - fb else fb - fg
    keys = []
    for r in g + b:
        if repr(tuple(norm_key(x) for x in r)) in diff:
            k = r[0] if kind == "left_agg" else r[1]
            if k is not None and k not in keys:
                keys.append(k)
    out = []
    c = tcols(t)[0][0]
    try:
        for k in keys[:3]:
            for side in ("g", "b"):
                rows = run_query(cur, SEQ, cur.mogrify(
                    "SELECT id, xmin::text, xmax::text, ctid::text FROM fz_%s_%s WHERE %s::text = %%s" % (t, side, c),
                    (k,)).decode(), sel)
                out.append(" seq scan of fz_%s_%s for %r: %r" % (t, side, k, rows[:6]))
    except psycopg2.Error as e:
        out.append(" (the twins' rows: %s)" % str(e).strip())
    return "\n".join(out)


def unique_proof_explains(cur, t, kind, fg, fb, sel):
    """Whether a join of unique twin t answers differently from its btree
    twin only on keys that the snapshot holds twice.  An MVCC snapshot can:
    a row deleted by a transaction that committed after the snapshot was
    taken, and a row of the same key inserted since.  The planner proves
    both twins' inner sides unique from their unique indexes (the btree
    twin's for inner_unique and semi joins made inner joins, gbtree's too
    where only the = operator's membership in the operator family counts,
    as in unique-ified semi joins), and then a plan meets one row of such
    a key or both, by its shape: the two twins' plans differ there, not
    their indexes.  So: both twins, by seq scan, hold the same keys twice,
    and every row that one side alone gave has one of those keys."""
    if nkeys(t) != 1:
        return False
    c = tcols(t)[0][0]
    nn = "" if "NOT DISTINCT" in UNIQUE_TWINS[t] else " WHERE %s IS NOT NULL" % c
    dups = {}
    for side in ("g", "b"):
        dups[side] = sorted(r[0] for r in run_query(
            cur, SEQ, "SELECT %s::text FROM fz_%s_%s%s GROUP BY %s HAVING count(*) > 1" % (c, t, side, nn, c), sel))
    if not dups["b"] or dups["g"] != dups["b"]:
        return False
    keys = set(repr(norm_key(k)) for k in dups["b"])
    at = 0 if kind == "left_agg" else 1
    diff = list(((fg - fb) + (fb - fg)).elements())
    return all(repr(norm_key(ast.literal_eval(r)[at])) in keys for r in diff)


def check_njoin(cur, t, rnd, stats, sel=False):
    """gen_njoin's join on both twins (the gbtree twin's at times with the
    core's join methods off, parallel at times), in the caller's
    transaction: the same multiset of rows, and no one-word custom scan
    (GbtreeJoin above all) in the gbtree twin's plan, but GbtreeJoin on a
    twin it takes (join_takes)."""
    q, kind = gen_njoin(t, rnd)
    common = JOIN_PARALLEL if rnd.random() < 0.2 else []
    gset = common + (JOIN_FORCE if rnd.random() < 0.6 else [])
    g = run_query(cur, gset, q.format(side="g"), sel)
    for st in NJOIN_RESET:
        cur.execute(as_select(st) if sel else st)
    b = run_query(cur, common, q.format(side="b"), sel)
    for st in NJOIN_RESET:
        cur.execute(as_select(st) if sel else st)
    stats["new_joins"] += 1
    stats["new_join_rows"] += len(g)
    fg = collections.Counter(repr(tuple(norm_key(x) for x in r)) for r in g)
    fb = collections.Counter(repr(tuple(norm_key(x) for x in r)) for r in b)
    if fg != fb and t in UNIQUE_TWINS and unique_proof_explains(cur, t, kind, fg, fb, sel):
        stats["new_join_unique_proof"] += 1
        return None
    if fg != fb:
        only_g, only_b = sorted((fg - fb).elements()), sorted((fb - fg).elements())
        # for the record: the gbtree run's plan, and whether the same
        # query, run again at once in the same snapshot, still differs
        _, plan = one_word_scans(cur, gset, q.format(side="g"), NJOIN_RESET, sel)
        again = run_query(cur, gset, q.format(side="g"), sel)
        for st in NJOIN_RESET:
            cur.execute(as_select(st) if sel else st)
        fa = collections.Counter(repr(tuple(norm_key(x) for x in r)) for r in again)
        _, bplan = one_word_scans(cur, common, q.format(side="b"), NJOIN_RESET, sel)
        return ("join (%s; gbtree run: %s): %s\n gbtree %d rows, btree %d rows\n only from gbtree (%d): %s\n"
                " only from btree (%d): %s\n run again at once: %s\n gbtree plan:\n%s\n btree plan:\n%s\n%s") % (
                    kind, "; ".join(gset) or "planner defaults", q.format(side="g"),
                    len(g), len(b), len(only_g), ", ".join(only_g[:10]), len(only_b),
                    ", ".join(only_b[:10]),
                    "the same rows as btree" if fa == fb else "the same rows as the first run" if fa == fg
                    else "%d rows, neither" % len(again), plan, bplan,
                    njoin_heap_rows(cur, t, kind, g, b, fg, fb, sel))
    found, plan = one_word_scans(cur, gset, q.format(side="g"), NJOIN_RESET, sel)
    stats["new_plans"] += 1
    if join_takes(t) and "GbtreeJoin" in found:
        found.remove("GbtreeJoin")
        stats["new_taken_gbtree_joins"] += 1
    if found:
        return "join (%s; gbtree run: %s): %s\n planned with %s on an index of twin %s (%s):\n%s" % (
            kind, "; ".join(gset) or "planner defaults", q.format(side="g"), ", ".join(found), t, index_def(t), plan)
    return None


def check_new(cur, t, rnd, stats):
    """One random check on an INCLUDE or unique twin t, in a snapshot of
    its own: gen_kcheck's (index-only scans mostly), check_onescan's,
    check_njoin's, or any other check of a composite."""
    k = rnd.random()
    cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
    try:
        if k < 0.3:
            q, ordered = gen_kcheck(t, rnd)
            mode = "ios" if rnd.random() < 0.5 else rnd.choice(list(MODES))
            stats["new_key_order"] += 1
            err = compare_check(cur, t, rnd, q, ordered, mode, stats)
            if not err and rnd.random() < 0.1:
                found, plan = one_word_scans(cur, MODES[mode], q.format(side="g"), RESET)
                stats["new_key_order_explained"] += 1
                stats["new_key_order_ios"] += 1 if "Index Only Scan using fz_%s_g_k" % t in plan else 0
                if found:
                    err = "query (%s scans): %s\n planned with %s on an index of twin %s:\n%s" % (
                        mode, q.format(side="g"), ", ".join(found), t, plan)
            return err
        if k < 0.45:
            return check_onescan(cur, t, rnd, stats)
        if k < 0.6:
            return check_njoin(cur, t, rnd, stats)
    finally:
        cur.execute("COMMIT")
    kind = rnd.random()
    mode = rnd.choice(list(MODES))
    gq = gen_check(t, rnd, kind)
    if gq is None:
        return check_cursor(cur, t, rnd, stats)
    q, ordered = gq
    cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
    try:
        return compare_check(cur, t, rnd, q, ordered, mode, stats)
    finally:
        cur.execute("COMMIT")


def check_once(cur, t, rnd, stats, joins=False, types=None):
    """One random check on the fz_<t> twins in a snapshot of its own; joins:
    this gbtree has GbtreeJoin (types: the twins an outer side may read)."""
    if t in NEW_TYPES:
        return check_new(cur, t, rnd, stats)
    if joins and t in MULTIWORD_TYPES and rnd.random() < MULTIWORD_JOIN_SHARE:
        # joins on the leading column, as the INCLUDE and unique twins'
        cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        try:
            return check_njoin(cur, t, rnd, stats)
        finally:
            cur.execute("COMMIT")
    if joins and t not in MULTIWORD_TYPES and rnd.random() < JOIN_SHARE:
        cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        try:
            return compare_join(cur, t, rnd, types or [t], stats)
        finally:
            cur.execute("COMMIT")
    kind = rnd.random()
    mode = rnd.choice(list(MODES))
    gq = gen_check(t, rnd, kind)
    if gq is None:
        return check_cursor(cur, t, rnd, stats)
    q, ordered = gq
    cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
    try:
        return compare_check(cur, t, rnd, q, ordered, mode, stats)
    finally:
        cur.execute("COMMIT")


def cursor_moves(rnd):
    """A random walk of a scrollable cursor (check_mcursor's)."""
    return [rnd.choice(["NEXT", "PRIOR", "FORWARD %d" % rnd.randint(1, 300), "BACKWARD %d" % rnd.randint(1, 300),
                        "ABSOLUTE %d" % rnd.randint(-50, 400), "RELATIVE %d" % rnd.randint(-100, 100),
                        "FIRST", "LAST", "FORWARD ALL", "BACKWARD ALL"])
            for _ in range(rnd.randint(3, 12))]


def check_mcursor(cur, t, rnd, stats):
    """check_cursor for composite t: ORDER BY index columns (either way),
    through an index scan or an index-only scan."""
    pred, pinned = gen_mpred(t, rnd) if rnd.random() < 0.6 else ("true", 0)
    order, ocols = gen_morder(t, rnd, pinned, full=rnd.random() < 0.5)
    mode = rnd.choice(["index", "ios"])
    moves = cursor_moves(rnd)
    q = "SELECT %s FROM fz_%s_{side} WHERE %s ORDER BY %s" % (col_exprs(t, ocols), t, pred, order)
    results = {}

    def walk(side, settings, table_side):
        for s in settings:
            cur.execute(s)
        cur.execute("DECLARE c_%s SCROLL CURSOR FOR %s" % (side, q.format(side=table_side)))
        out = []
        for m in moves:
            cur.execute("FETCH %s FROM c_%s" % (m, side))
            out.append([tuple(norm_key(x) for x in r) for r in cur.fetchall()])
        results[side] = out
        for s in RESET:
            cur.execute(s)

    cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
    try:
        walk("g", MODES[mode], "g")
        walk("b", MODES[mode], "b")
        if results["g"] != results["b"]:
            # the same walk over a seq scan and a sort, in the same snapshot
            walk("s", SEQ, "g")
    finally:
        cur.execute("COMMIT")
    stats["cursors"] += 1
    if results["g"] != results["b"] and results["g"] == results["s"]:
        note_btree_wrong(stats, "cursor, %s scans): %s, moves %s" % (mode, q.format(side="b"), moves))
        return None
    if results["g"] != results["b"]:
        j = next(j for j in range(len(moves)) if results["g"][j] != results["b"][j])
        return "cursor (%s scans) on %s, moves %s\n first difference at move %d (%s):\n gbtree %r\n btree %r" % (
            mode, q.format(side="g"), moves, j, moves[j], results["g"][j][:20], results["b"][j][:20])
    return None


def check_cursor(cur, t, rnd, stats):
    if t in COMPOSITE:
        return check_mcursor(cur, t, rnd, stats)
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
                        % (side, col_exprs(t), t, side, pred, desc))
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


# ---- joins through GbtreeJoin ------------------------------------------------

JOIN_GUC = "gbtree.enable_join"
JOIN_BATCH_GUC = "gbtree.join_batch_size"
# the share of a session's checks that are joins, where gbtree has them
JOIN_SHARE = 0.2
# the gbtree twin's run: the core's join methods off (a custom path is not
# subject to them), so that GbtreeJoin is the plan wherever it is offered
JOIN_FORCE = ["SET LOCAL enable_hashjoin = off", "SET LOCAL enable_mergejoin = off",
              "SET LOCAL enable_nestloop = off"]
# both runs, at times: parallel outer scans (GbtreeJoin in each worker)
JOIN_PARALLEL = ["SET LOCAL parallel_setup_cost = 0", "SET LOCAL parallel_tuple_cost = 0",
                 "SET LOCAL min_parallel_table_scan_size = 0", "SET LOCAL max_parallel_workers_per_gather = 2"]
JOIN_RESET = ["SET LOCAL enable_hashjoin = on", "SET LOCAL enable_mergejoin = on", "SET LOCAL enable_nestloop = on",
              "RESET " + JOIN_BATCH_GUC, "RESET min_parallel_table_scan_size"] + RESET
# check_njoin's: without gbtree's setting (absent with --am btree)
NJOIN_RESET = [st for st in JOIN_RESET if JOIN_BATCH_GUC not in st]
JOIN_KINDS = {"inner": "inner", "in": "IN", "exists": "EXISTS", "not_exists": "NOT EXISTS", "left": "LEFT"}
# an outer key of each type that no twin holds (gen_value and det_value
# never make it; int2's whole range can be made: unlikely there): a left
# join's outer rows always include it and a NULL, both null-extended
JOIN_MISS = {"int2": "'32765'::int2", "int4": "'1234567'::int4", "int8": "'1234567'::int8",
             "oid": "'1234567'::oid", "money": "'1234567'::money",
             "float4": "'0.3'::float4", "float8": "'0.3'::float8",
             "timestamptz": "'2020-01-01 00:00:00.5+00'::timestamptz",
             "timestamp": "'2020-01-01 00:00:00.5'::timestamp",
             "date": "'2060-01-01'::date", "time": "'12:34:56.5'::time", "bool": None}
# inner joins on heavy duplicates (bool keys above all) can pair every
# outer row with half the table: the first rows of a total order only
JOIN_ROW_CAP = 20000


def join_available(cur):
    """Whether the installed gbtree has GbtreeJoin; loads the library, so
    that its planner hook is in place in this session."""
    if AM != "gbtree":
        return False
    cur.execute("LOAD 'gbtree'")
    cur.execute("SELECT current_setting(%s, true) IS NOT NULL", (JOIN_GUC,))
    return cur.fetchone()[0]


def salted(src, rnd):
    """x for det_value from an int8 expression, salted per statement."""
    return "((%s)::int8 %% 1000003 * %d + %d) %% 1000003" % (src, rnd.randint(1, 999983), rnd.randint(0, 1000002))


def gen_join_keys(ct, rnd, n):
    """n literals of type ct (NULLs, nasty values), a quarter of them
    repeating an earlier one."""
    vals = []
    for _ in range(n):
        if vals and rnd.random() < 0.25:
            vals.append(rnd.choice(vals))
        else:
            v = gen_value(ct, rnd)
            vals.append(v if v is not None else "NULL::%s" % ct)
    return vals


def gen_join_outer(t, rnd, types, few, misses=False):
    """The outer side o(id, x) of a join on fz_<t>_{side}, x's type (t or
    another of its family) and the most rows it has (None: a share of a
    twin): random keys as a VALUES list or an unnested array, a generated
    set (det_value: NULLs, extremes, heavy duplicates), or rows of a twin
    of the family, the same rows in both runs (without a LIMIT, parallel
    workers can share them).  few: a small outer side (an inner join's; a
    bool key pairs a row with half the table: 3 rows).  misses: a NULL key
    and one that matches nothing are among the rows (a left join's), in
    the list or appended with negative ids."""
    def size(choices):
        n = rnd.choice(choices)
        return min(n, 3) if few and t == "bool" else n

    def miss(ct):
        return ["NULL::%s" % ct] + ([JOIN_MISS[ct]] if JOIN_MISS[ct] else [])
    r = rnd.random()
    if r < 0.5:
        ct = rnd.choice(cross_types(t))
        vals = gen_join_keys(ct, rnd, size([1, 3, 10, 50, 200] if few else [1, 10, 50, 200, 600]))
        for v in miss(ct) if misses else []:
            vals.insert(rnd.randint(0, len(vals)), v)
        if r < 0.3:
            return ("(VALUES %s) o(id, x)" % ", ".join("(%d, %s)" % (i + 1, v) for i, v in enumerate(vals)),
                    ct, len(vals))
        return "unnest(ARRAY[%s]::%s[]) WITH ORDINALITY o(x, id)" % (", ".join(vals), ct), ct, len(vals)
    if r < 0.75:
        ct = rnd.choice(cross_types(t))
        n = size([1, 20, 300] if few else [100, 2000, 20000])
        outer = "(SELECT g AS id, %s AS x FROM generate_series(1, %d) g) o" % (det_value(ct, salted("g", rnd)), n)
    else:
        outer, ct, n = gen_join_outer_twin(t, rnd, types, few, size)
    if misses:
        extra = miss(ct)
        outer = "(SELECT o.id, o.x FROM %s UNION ALL VALUES %s) o" % (
            outer, ", ".join("(%d::int8, %s)" % (-1 - i, v) for i, v in enumerate(extra)))
        n = None if n is None else n + len(extra)
    return outer, ct, n


def gen_join_outer_twin(t, rnd, types, few, size):
    """gen_join_outer's rows of a twin of t's family."""
    ct = rnd.choice([c for c in cross_types(t) if c in types] or [t])
    m = rnd.choice([1, 3, 10, 50])
    sub = "SELECT id, k AS x FROM fz_%s_%s WHERE id %% %d = %d" % (ct, rnd.choice("gb"), m, rnd.randint(0, m - 1))
    n = None
    if few or rnd.random() < 0.3:
        # (id, k) orders the rows totally: both runs get the same ones
        n = size([1, 10, 100])
        sub += " ORDER BY id, k LIMIT %d" % n
    return "(%s) o" % sub, ct, n


def gen_join_key(ct, rnd):
    """The outer key: o.x, or an expression of it."""
    if rnd.random() < 0.8:
        return "o.x"
    v = None
    while v is None:
        v = gen_value(ct, rnd)
    return "coalesce(o.x, %s)" % v


def gen_join_extra(t, rnd):
    """What a pair must pass besides the key: nothing, a predicate of the
    inner row's key, of its id, or of both rows."""
    r = rnd.random()
    if r < 0.4:
        return ""
    if r < 0.65:
        return " AND " + gen_pred(t, rnd)          # k: the inner row's (o has x)
    if r < 0.8:
        m = rnd.randint(2, 9)
        return " AND i.id %% %d = %d" % (m, rnd.randint(0, m - 1))
    if r < 0.92:
        return " AND (i.id + o.id) % 3 <> 0"
    return " AND i.k >= o.x"


def gen_join_left_where(t, rnd):
    """A filter after a left join, on its inner side (NULL in the rows
    that found no match) or on both: as it is (a left join with a qual),
    reduced to an anti join (the key IS NULL) or to an inner join (a
    strict one)."""
    r = rnd.random()
    if r < 0.25:
        return "i.id IS NULL"
    if r < 0.35:
        return "i.k IS NULL"
    if r < 0.55:
        return "(i.id IS NULL OR %s)" % gen_pred(t, rnd)       # k: the inner row's
    if r < 0.7:
        m = rnd.randint(2, 5)
        return "i.id %% %d = %d" % (m, rnd.randint(0, m - 1))
    if r < 0.85:
        return "coalesce(i.id, o.id) % 2 = 0"
    return gen_pred(t, rnd)


def gen_join_left(t, rnd, types):
    """A left join of an outer side o (with a NULL key and one that
    matches nothing) and fz_<t>_{side} i, at times written as i RIGHT
    JOIN o: the pairs and the outer rows without one, null-extended, at
    times filtered after the join, or counted per outer key."""
    agg = rnd.random() < 0.25
    outer, ct, nouter = gen_join_outer(t, rnd, types, not agg or t == "bool" or rnd.random() < 0.5, misses=True)
    key = gen_join_key(ct, rnd)
    extra = gen_join_extra(t, rnd)
    if rnd.random() < 0.1:
        # on the outer row alone: such an outer row keeps its NULLs
        m = rnd.randint(2, 4)
        extra += " AND o.id %% %d <> %d" % (m, rnd.randint(0, m - 1))
    tbl = "fz_%s_{side}" % t
    cond = rnd.choice(["i.k = " + key, key + " = i.k"]) + extra
    if rnd.random() < 0.3:
        frm = "%s i RIGHT JOIN %s ON %s" % (tbl, outer, cond)
    else:
        frm = "%s LEFT JOIN %s i ON %s" % (outer, tbl, cond)
    where = " WHERE " + gen_join_left_where(t, rnd) if rnd.random() < 0.4 else ""
    if agg:
        # count(i.k) alone needs no inner column but the key
        aggs = rnd.choice(["count(i.id)", "count(i.k)", "count(*), count(i.id)", "count(*), count(i.k), min(o.id)"])
        return "SELECT %s, %s FROM %s%s GROUP BY o.x" % (kexpr(ct, "o.x"), aggs, frm, where), nouter
    return ("SELECT o.id, %s, i.id, %s FROM %s%s ORDER BY 1, 2, 3, 4 LIMIT %d"
            % (kexpr(ct, "o.x"), kexpr(t, "i.k"), frm, where, JOIN_ROW_CAP)), nouter


def gen_join(t, rnd, types):
    """A join of an outer side o with the twin fz_<t>_{side} i on i.k = an
    expression of o (inner, semi by IN or EXISTS, anti by NOT EXISTS,
    left), and its kind and the most outer rows (None: unknown); the rows
    it returns are compared as a multiset."""
    kind = rnd.choice(list(JOIN_KINDS))
    if kind == "left":
        q, nouter = gen_join_left(t, rnd, types)
        return q, kind, nouter
    outer, ct, nouter = gen_join_outer(t, rnd, types, kind == "inner")
    key = gen_join_key(ct, rnd)
    extra = gen_join_extra(t, rnd)
    tbl = "fz_%s_{side}" % t
    cols = "o.id, " + kexpr(ct, "o.x")
    if kind == "inner":
        cond = rnd.choice(["i.k = " + key, key + " = i.k"]) + extra
        if rnd.random() < 0.5:
            q = "SELECT %s, i.id, %s FROM %s JOIN %s i ON %s" % (cols, kexpr(t, "i.k"), outer, tbl, cond)
        else:
            q = "SELECT %s, i.id, %s FROM %s i, %s WHERE %s" % (cols, kexpr(t, "i.k"), tbl, outer, cond)
        q += " ORDER BY 1, 2, 3, 4 LIMIT %d" % JOIN_ROW_CAP
    elif kind == "in":
        pred = " WHERE " + gen_pred(t, rnd) if rnd.random() < 0.7 else ""
        q = "SELECT %s FROM %s WHERE %s IN (SELECT k FROM %s%s)" % (cols, outer, key, tbl, pred)
    else:
        q = "SELECT %s FROM %s WHERE %sEXISTS (SELECT 1 FROM %s i WHERE i.k = %s%s)" % (
            cols, outer, "NOT " if kind == "not_exists" else "", tbl, key, extra)
    return q, kind, nouter


def run_join(cur, settings, sql, sel=False, explain=False):
    """The rows of sql under settings (SET LOCAL), or with explain its plan."""
    for s in settings:
        cur.execute(as_select(s) if sel else s)
    cur.execute(("EXPLAIN (COSTS OFF) " if explain else "") + sql)
    rows = cur.fetchall()
    for s in JOIN_RESET:
        cur.execute(as_select(s) if sel else s)
    return rows


def compare_join(cur, t, rnd, types, stats, sel=False):
    """A random join on both twins, in the caller's transaction: the gbtree
    twin's with the core's join methods off (GbtreeJoin, wherever it is
    offered), at times in small batches, the btree twin's as the planner
    likes; None, or what differs.  Outer sides read the twins of types."""
    q, kind, nouter = gen_join(t, rnd, types)
    common = JOIN_PARALLEL if rnd.random() < 0.2 else []
    gset = common + JOIN_FORCE
    if rnd.random() < 0.4:
        # many batches, but some 2000 at most (an index lookup each)
        size = max(rnd.choice([1, 3, 17, 100]), (nouter or 100000) // 2000)
        gset = gset + ["SET LOCAL %s = %d" % (JOIN_BATCH_GUC, size)]
        stats["join_small_batches"] += 1
    g = run_join(cur, gset, q.format(side="g"), sel)
    b = run_join(cur, common, q.format(side="b"), sel)
    # after both runs: planning alone flushes nothing before them
    plan = "\n".join(r[0] for r in run_join(cur, gset, q.format(side="g"), sel, explain=True))
    stats["joins"] += 1
    stats["join_" + kind] += 1
    stats["join_parallel"] += 1 if common else 0
    stats["join_rows"] += len(g)
    stats["join_explained"] += 1
    stats["join_gbtree"] += 1 if "GbtreeJoin" in plan else 0
    stats["join_gbtree_" + kind] += 1 if "GbtreeJoin" in plan else 0
    # a left join can be reduced to an inner or anti join by its WHERE
    stats["join_gbtree_type_left"] += 1 if "GbtreeJoin" in plan and "Join Type: Left" in plan else 0
    stats["join_gbtree_workers"] += 1 if "GbtreeJoin" in plan and "Gather" in plan else 0
    fg = collections.Counter(repr(tuple(norm_key(x) for x in r)) for r in g)
    fb = collections.Counter(repr(tuple(norm_key(x) for x in r)) for r in b)
    if fg != fb:
        only_g, only_b = sorted((fg - fb).elements()), sorted((fb - fg).elements())
        return ("join query (%s; gbtree run: %s): %s\n gbtree %d rows, btree %d rows\n"
                " only from gbtree (%d): %s\n only from btree (%d): %s\n gbtree plan:\n%s") % (
            JOIN_KINDS[kind], "; ".join(gset), q.format(side="g"), len(g), len(b),
            len(only_g), ", ".join(only_g[:10]), len(only_b), ", ".join(only_b[:10]), plan)
    return None


# ---- transactions of batched writes -------------------------------------------

BATCH_GUC = "gbtree.insert_batch_memory"
BASE_TS = datetime.datetime(2020, 1, 1)
BASE_DATE = datetime.date(2020, 1, 1)

# Every transaction of a batcher features one of these (dealt in turn from
# a shuffled deck) and ends in one of ENDINGS (another deck).
FEATURES = ["copy", "insert_select", "values", "update_keys", "update_pred", "delete", "self_insert",
            "merge", "savepoint", "fail_savepoint", "copy_fail", "plpgsql", "midstatement_scan",
            "cursor", "truncate", "reindex", "extra_index", "alter", "tablespace", "memory_change", "exclusion"]
ENDINGS = ["commit", "commit", "rollback", "prepare_commit", "prepare_rollback", "fail_then_end"]
# the extra steps a transaction takes besides its feature
EXTRA = ["copy", "copy", "insert_select", "insert_select", "values", "update_keys", "update_pred", "delete", "delete",
         "self_insert", "merge", "savepoint", "savepoint", "fail_savepoint", "copy_fail", "plpgsql",
         "midstatement_scan", "cursor", "memory_change", "exclusion"]
# steps taken inside a savepoint
NESTED = ["copy", "insert_select", "values", "update_keys", "update_pred", "delete", "self_insert", "merge",
          "fail_savepoint", "copy_fail", "midstatement_scan", "memory_change", "savepoint", "truncate",
          "reindex"]
RETRY_CODES = ("40P01", "40001", "55P03")


class Mismatch(Exception):
    pass


def sql_str(s):
    return "'" + s.replace("'", "''") + "'"


def gen_text(t, rnd, width=None):
    """A random value of type t in its text form (COPY, or a literal with
    a cast), None for NULL; the same biases as gen_value (width too)."""
    r = rnd.random()
    if r < 0.06:
        return None
    if t in TEXT_FAMILY:
        return text_value(rnd, width or rnd.choice(TEXT_CONST_WIDTH))
    if t in INT_LIMITS or t == "oid" or t == "money":
        lo, hi = INT_LIMITS.get(t, (0, 4294967295) if t == "oid" else (-92233720368547758, 92233720368547758))
        if r < 0.10:
            v = rnd.choice([lo, hi, lo + 1, hi - 1, 0, -1 if lo < 0 else 1])
        elif r < 0.45:
            v = rnd.randint(-20, 20) if lo < 0 else rnd.randint(0, 40)
        else:
            v = rnd.randint(max(lo, -100000), min(hi, 100000))
        return str(v)
    if t in ("float4", "float8"):
        if r < 0.16:
            return rnd.choice(["NaN", "Infinity", "-Infinity", "-0", "0", "1e-300" if t == "float8" else "1e-30",
                               "-1.5", "3.4e38" if t == "float4" else "1.7e308"])
        if r < 0.5:
            return repr(rnd.randint(-20, 20) / 4.0)
        return repr(rnd.uniform(-1e6, 1e6))
    if t in ("timestamptz", "timestamp"):
        if r < 0.12:
            return rnd.choice(["infinity", "-infinity", "4713-01-01 00:00:00 BC", "294276-12-31 23:59:59"])
        v = BASE_TS + datetime.timedelta(seconds=rnd.randint(-100, 100) * (1 if r < 0.5 else 3600))
        return v.strftime("%Y-%m-%d %H:%M:%S")
    if t == "date":
        if r < 0.12:
            return rnd.choice(["infinity", "-infinity", "4713-01-01 BC", "5874897-12-31"])
        return (BASE_DATE + datetime.timedelta(days=rnd.randint(-60, 60))).isoformat()
    if t == "time":
        if r < 0.12:
            return rnd.choice(["00:00", "24:00", "23:59:59.999999"])
        return "%02d:%02d" % (rnd.randint(0, 23), rnd.choice([0, 30]))
    if t == "bool":
        return rnd.choice(["t", "f"])
    if t == "uuid":
        return uuid_text(rnd, r)
    if t == NUMERIC_T:
        return numeric_text(rnd, r)
    raise ValueError(t)


def det_text(t, x, w):
    """det_value for a type of the text family, at most w bytes: the
    field's whole length (of 'z', of 0xff, of 'p' and a last byte apart,
    of chr(1)), '', e-acute in UTF-8; heavy duplicates: a run of 'p's and one of 41
    last bytes (chr(1) to chr(241)), or a prefix of 'abab...' (of each
    other, '' and the whole field among them); spread: a random byte in
    md5 digits, of any length up to w."""
    specials = ["", "\x01", "z" * w, "\xff" * w, "p" * (w - 1) + "\x80", "\x01" * w, "\xc3\xa9"]
    sp = "ARRAY[%s]::text[]" % ", ".join(sql_str(v) for v in specials)
    dup = ("CASE WHEN ({x}) % 2 = 0 THEN repeat('p', {w1}) || chr((1 + ({x}) % 41 * 6)::int) "
           "ELSE left(repeat('ab', {w}), (({x}) % 41 % {w2})::int) END").format(x=x, w=w, w1=w - 1, w2=w + 1)
    spread = ("left(left(md5(({x})::text), (({x}) % 9)::int) || chr((1 + ({x}) % 255)::int) || md5((({x}) + 1)::text), "
              "(1 + ({x}) % {w})::int)").format(x=x, w=w)
    return ("(CASE WHEN ({x}) % 23 = 0 THEN NULL WHEN ({x}) % 29 = 0 THEN ({sp})[1 + ({x}) % {n}] "
            "WHEN ({x}) % 3 = 0 THEN {dup} ELSE {spread} END)::{t}").format(
        x=x, sp=sp, n=len(specials), dup=dup, spread=spread, t=t)


def det_value(t, x, width=None):
    """A value of type t computed from x, an SQL expression of a
    non-negative int8: the same on both twins, NULLs, extreme values, heavy
    duplicates and spread keys.  width: a text value's most bytes (a
    stored one's: its field; by default up to 40)."""
    if t in TEXT_FAMILY:
        return det_text(t, x, width or 40)
    specials = {
        "int2": "ARRAY[-32768, 32767, 0, -1]::int2[]",
        "int4": "ARRAY[-2147483648, 2147483647, 0, -1]::int4[]",
        "int8": "ARRAY[-9223372036854775808, 9223372036854775807, 0, -1]::int8[]",
        "oid": "ARRAY[0, 4294967295, 1]::oid[]",
        "money": "ARRAY['-92233720368547758.08', '92233720368547758.07', '0']::money[]",
        "float4": "ARRAY['NaN', 'Infinity', '-Infinity', '-0', '1e-30', '3.4e38']::float4[]",
        "float8": "ARRAY['NaN', 'Infinity', '-Infinity', '-0', '1e-300', '1.7e308']::float8[]",
        "timestamptz": "ARRAY['infinity', '-infinity', '4713-01-01 00:00:00+00 BC', '294276-12-31 23:59:59+00']::timestamptz[]",
        "timestamp": "ARRAY['infinity', '-infinity', '4713-01-01 00:00:00 BC', '294276-12-31 23:59:59']::timestamp[]",
        "date": "ARRAY['infinity', '-infinity', '4713-01-01 BC', '5874897-12-31']::date[]",
        "time": "ARRAY['00:00', '24:00', '23:59:59.999999']::time[]",
        "bool": "ARRAY[true, false]",
        "uuid": "ARRAY[%s]::uuid[]" % ", ".join("'%s'" % u for u in UUID_SPECIAL),
        NUMERIC_T: "ARRAY[%s]::%s[]" % (", ".join("'%s'" % v for v in NUMERIC_SPECIAL), NUMERIC_T),
    }[t]
    dup = {
        "int2": "(({x}) % 41 - 20)::int2", "int4": "(({x}) % 41 - 20)::int4", "int8": "(({x}) % 41 - 20)::int8",
        "oid": "(({x}) % 41)::int8::oid", "money": "(({x}) % 41 - 20)::int8::money",
        "float4": "((({x}) % 41 - 20) / 4.0)::float4", "float8": "((({x}) % 41 - 20) / 4.0)::float8",
        "timestamptz": "'2020-01-01'::timestamptz + (({x}) % 41 - 20) * interval '1 hour'",
        "timestamp": "'2020-01-01'::timestamp + (({x}) % 41 - 20) * interval '1 hour'",
        "date": "'2020-01-01'::date + (({x}) % 41 - 20)::int4",
        "time": "'00:00'::time + (({x}) % 41) * interval '30 minutes'",
        "bool": "(({x}) % 2 = 0)",
        # 41 uuids differing in their last byte only (00-14, ec-ff)
        "uuid": "('" + UUID_DUP_PREFIX + "' || lpad(to_hex((({x}) % 41 - 20) & 255), 2, '0'))::uuid",
        NUMERIC_T: "((({x}) % 41 - 20) / 8.0)::" + NUMERIC_T,
    }[t]
    spread = {
        "int2": "(({x}) % 60001 - 30000)::int2", "int4": "(({x}) * 4294 - 2147483648)::int4",
        "int8": "(({x}) * 9000000000000 - 4500000000000000000)::int8",
        "oid": "(({x}) * 4294)::int8::oid", "money": "(({x}) - 500000)::int8::money",
        "float4": "((({x}) - 500000) * 1.37)::float4", "float8": "((({x}) - 500000) * 1.37)::float8",
        "timestamptz": "'2020-01-01'::timestamptz + (({x}) - 500000) * interval '1 second'",
        "timestamp": "'2020-01-01'::timestamp + (({x}) - 500000) * interval '1 second'",
        "date": "'2020-01-01'::date + (({x}) % 20001 - 10000)::int4",
        "time": "'00:00'::time + (({x}) % 86400) * interval '1 second'",
        "bool": "(({x}) % 3 = 0)",
        "uuid": "md5(({x})::text)::uuid",
        NUMERIC_T: "((({x}) - 500000) * 1.37 * power(10::numeric, ({x}) % 7 - 3))::" + NUMERIC_T,
    }[t]
    return ("CASE WHEN ({x}) % 23 = 0 THEN NULL WHEN ({x}) % 29 = 0 THEN ({sp})[1 + ({x}) % array_length({sp}, 1)] "
            "WHEN ({x}) % 3 = 0 THEN {dup} ELSE {spread} END").format(
        x=x, sp=specials, dup=dup.format(x=x), spread=spread.format(x=x))


def batcher(dsn, types, seed, bid, nbatchers, deadline, out, am="gbtree"):
    set_am(am)
    b = Batcher(dsn, types, seed, bid, nbatchers)
    status = "ok"
    try:
        b.run(deadline)
    except Mismatch as m:
        print("gbtree_fuzz: FAILED with seed %d\nbatcher %d, %s transaction, step %s: %s\n"
              "batcher %d: the transaction's steps: %s\nbatcher %d: %s"
              % (seed, bid, b.t, b.step, m, bid, ", ".join(b.trail), bid, diagnose(dsn, b.t)), flush=True)
        status = "fail"
    except psycopg2.Error as e:
        print("batcher %d: unexpected error in step %s (%s transaction): %s [%s]" % (bid, b.step, b.t, e, e.pgcode),
              file=sys.stderr, flush=True)
        if e.pgcode == "XX002":
            print("batcher %d: %s" % (bid, diagnose(dsn, b.t)), file=sys.stderr, flush=True)
        status = "error"
    finally:
        if b.prepared:
            # never leave a prepared transaction holding locks behind
            try:
                b.cur2.execute("ROLLBACK PREPARED '%s'" % b.prepared)
            except psycopg2.Error:
                pass
        out.put((bid, status, dict(b.stats), b.cstats, b.guc_min, b.can_prepare))
    sys.exit(0 if status == "ok" else 3)


class Batcher:
    def __init__(self, dsn, types, seed, bid, nbatchers=1):
        self.rnd = random.Random(seed * 1000 + 500 + bid)
        self.seed = seed
        self.nbatchers = nbatchers
        self.types = types
        self.bid = bid
        self.conn = connect(dsn)
        self.cur = self.conn.cursor()
        # another session: checks after the transaction ended, COMMIT PREPARED
        self.conn2 = connect(dsn)
        self.cur2 = self.conn2.cursor()
        self.nextid = (100 + bid) * 10 ** 12
        self.firstid = self.nextid
        # the lanes (pick_lane): the one-word types' random choices, ids
        # and decks, and the multi-word types' own
        self.lanes = split_lanes(types)
        mrnd, self.lrnd = lane_rnd(seed, "batcher-%d" % bid)
        self.n3rnd = new_lane_rnd(seed, "batcher-%d" % bid)[1]
        self.lane = 0
        self.lane_state = [
            {"rnd": self.rnd, "nextid": self.nextid, "firstid": self.firstid, "fdeck": [], "edeck": [], "rounds": 0},
            {"rnd": mrnd, "nextid": self.nextid + 5 * 10 ** 11, "firstid": self.nextid + 5 * 10 ** 11,
             "fdeck": [], "edeck": [], "rounds": 0},
            {"rnd": new_lane_rnd(seed, "batcher-%d" % bid)[0], "nextid": self.nextid + 2 * 10 ** 11,
             "firstid": self.nextid + 2 * 10 ** 11, "fdeck": [], "edeck": [], "rounds": 0}]
        self.stats = collections.Counter()
        self.cstats = query_stats()
        self.t = None
        self.step = None
        self.trail = []
        self.in_txn = False
        self.nsp = 0
        self.ngid = 0
        self.prepared = None
        # the GUC exists once the library is loaded, if this gbtree has it
        r = None
        if AM == "gbtree":
            self.cur.execute("LOAD 'gbtree'")
            self.cur.execute("SELECT min_val::int FROM pg_settings WHERE name = %s", (BATCH_GUC,))
            r = self.cur.fetchone()
        self.guc_min = r[0] if r else None
        self.joins = join_available(self.cur) and join_available(self.cur2)
        self.cur.execute("SHOW max_prepared_transactions")
        self.can_prepare = int(self.cur.fetchone()[0]) > 0
        self.cur.execute("SELECT count(*) FROM pg_tablespace WHERE spcname = 'fz_ts'")
        self.tablespace = self.cur.fetchone()[0] > 0

    # -- helpers --

    def use_lane(self, lane):
        """Switch to a lane's random choices and ids."""
        self.lane_state[self.lane]["nextid"] = self.nextid
        self.lane = lane
        st = self.lane_state[lane]
        self.rnd, self.nextid, self.firstid = st["rnd"], st["nextid"], st["firstid"]

    def comp(self):
        """Whether this transaction's twins have a composite index."""
        return self.t in COMPOSITE

    def pred(self):
        return gen_any_pred(self.t, self.rnd)

    def det_cols(self, xsrc):
        """A composite's column values computed from the int8 expressions
        xsrc (one a column: det_value; the leading column's values mostly
        among a few dozen), as a list of SQL expressions."""
        out = []
        for i, (c, ct, _) in enumerate(tcols(self.t)):
            x = xsrc[i]
            if i == 0:
                x = "(CASE WHEN (%s) %% 4 = 0 THEN (%s) ELSE (%s) * 3 END)" % (x, x, x)
            out.append(det_value(ct, x, stored_width(self.t, self.rnd)))
        return out

    def det_set(self, src):
        """An UPDATE's SET list of values computed from src (an int8
        expression): k, or one or more of a composite's columns."""
        if not self.comp():
            return "k = " + det_value(self.t, self.x(src))
        cols = tcols(self.t)
        which = sorted(self.rnd.sample(range(len(cols)), self.rnd.randint(1, len(cols))))
        vals = self.det_cols([self.x(src) for _ in cols])
        return ", ".join("%s = %s" % (cols[i][0], vals[i]) for i in which)

    def lateral_x(self, src):
        """LATERAL (SELECT ... ) s: s.x (and a composite's s.x1, s.x2 ...)
        salted from src."""
        return "LATERAL (SELECT %s) s" % ", ".join(
            "%s AS x%s" % (self.x(src), i or "") for i in range(len(tcols(self.t))))

    def det_select(self):
        """The column values from lateral_x's s, as a select list."""
        if not self.comp():
            return det_value(self.t, "s.x")
        return ", ".join(self.det_cols(["s.x%s" % (i or "") for i in range(len(tcols(self.t)))]))

    def x(self, src):
        """x for det_value from an int8 expression, salted per statement."""
        return salted(src, self.rnd)

    def ids(self, n):
        first = self.nextid
        self.nextid += n
        return first

    def nrows(self):
        # 64 kB hold 4096 entries: the larger statements flush midway
        return self.rnd.choice([1, 3, 20, 200, 1000, 5000] + ([20000] if self.rnd.random() < 0.1 else []))

    def twin(self, sql, counted=True):
        """Run sql ({tbl}: the table) on the gbtree twin, then on the btree
        twin; both must affect as many rows.  A statement with a row
        comparison runs behind a savepoint: where the twins disagree, the
        btree twin's statement is run again as a seq scan, and if that
        agrees with gbtree's, btree is wrong (note_btree_wrong) and the
        twins stay equal with the seq scan's change."""
        rowcmp = counted and ROW_COMPARE.search(sql)
        if rowcmp:
            self.cur.execute("SAVEPOINT fz_twin")
        self.cur.execute(sql.format(tbl="fz_%s_g" % self.t))
        ng = self.cur.rowcount
        self.cur.execute(sql.format(tbl="fz_%s_b" % self.t))
        nb = self.cur.rowcount
        if rowcmp and ng != nb:
            self.cur.execute("ROLLBACK TO SAVEPOINT fz_twin")
            self.cur.execute(sql.format(tbl="fz_%s_g" % self.t))
            ng2 = self.cur.rowcount
            for st in SEQ:
                self.cur.execute(st)
            self.cur.execute(sql.format(tbl="fz_%s_b" % self.t))
            ns = self.cur.rowcount
            for st in RESET:
                self.cur.execute(st)
            if ng2 == ng and ns == ng:
                note_btree_wrong(self.cstats, "batcher, the statement's scans): %s\n btree's index %d rows, "
                                 "gbtree's %d, a seq scan %d" % (sql.format(tbl="fz_%s_b" % self.t), nb, ng, ns))
                nb = ng
        if counted and ng != nb:
            raise Mismatch("%s: %d rows on the gbtree twin, %d on the btree twin" % (sql.format(tbl="fz_%s_g" % self.t),
                                                                                   ng, nb))
        self.stats["rows_written"] += max(ng, 0)
        return ng

    def set_memory(self, allow_zero=True):
        """SET LOCAL gbtree.insert_batch_memory: mostly small (flushes in
        the middle of statements), sometimes 0 (no batching from here on,
        with entries still pending)."""
        if self.guc_min is None:
            return
        small = max(64, self.guc_min)
        v = self.rnd.choice([small, small, small, 128, 256, 1024, 16384, 65536])
        if allow_zero and self.rnd.random() < 0.25 and self.guc_min == 0:
            v = 0
        self.cur.execute("SET LOCAL %s = %d" % (BATCH_GUC, v))
        self.stats["memory_%dkB" % v] += 1
        self.trail.append("memory=%dkB" % v)

    def force_index(self):
        mode = self.rnd.choice(["index", "ios", "bitmap"])
        for s in MODES[mode]:
            self.cur.execute(as_select(s))
        return mode

    def reset_modes(self):
        for s in RESET:
            self.cur.execute(as_select(s))

    def count_check(self, why):
        """In another session: every row of the twins, counted through the
        gbtree index (values and NULLs), through btree and by a seq scan."""
        c = self.cur2
        mode = self.rnd.choice(["index", "ios", "bitmap"])
        c.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        try:
            res = []
            for side, settings in (("g", MODES[mode]), ("b", MODES["index"]), ("g", SEQ)):
                res.append(tuple(run_query(c, settings, "SELECT count(*) FROM fz_%s_%s WHERE %s %s"
                                           % (self.t, side, lead_col(self.t), cond))[0][0]
                                 for cond in ("IS NOT NULL", "IS NULL")))
        finally:
            c.execute("COMMIT")
        self.stats["count_checks"] += 1
        if res[0] != res[1] or res[0] != res[2]:
            raise Mismatch("%s: rows (not NULL, NULL) in the %s twins: gbtree (%s scans) %r, btree %r, seq scan %r"
                           % (why, self.t, mode, res[0], res[1], res[2]))

    def compare(self, why="in the transaction"):
        """The gbtree twin answers like the btree twin and a seq scan,
        the transaction's own rows included."""
        kind = self.rnd.random()
        new = self.rnd.random() if self.t in NEW_TYPES else 1.0
        if new < 0.2:
            # INCLUDE and unique twins: no one-word custom scan takes them
            def check(sel):
                return check_onescan(self.cur, self.t, self.rnd, self.cstats, sel)
        elif new < 0.35:
            def check(sel):
                return check_njoin(self.cur, self.t, self.rnd, self.cstats, sel)
        elif new < 0.65:
            # every column (INCLUDE ones) in the order of key columns
            q, ordered = gen_kcheck(self.t, self.rnd)
            mode = "ios" if self.rnd.random() < 0.5 else self.rnd.choice(list(MODES))
            self.cstats["new_key_order"] += 1

            def check(sel):
                return compare_check(self.cur, self.t, self.rnd, q, ordered, mode, self.cstats, sel)
        elif self.joins and self.t not in MULTIWORD_TYPES + NEW_TYPES and self.rnd.random() < JOIN_SHARE:
            # GbtreeJoin's lookups see the transaction's pending entries;
            # in it, the outer side reads no other type's twins
            def check(sel):
                return compare_join(self.cur, self.t, self.rnd, [self.t] if sel else self.types, self.cstats, sel)
        else:
            if kind < 0.25:
                # count(*) of index quals alone: the GbtreeCount custom scan
                pred = self.pred()
                q, ordered = "SELECT count(*) FROM fz_%s_{side} WHERE %s" % (self.t, pred), True
            else:
                q, ordered = gen_check(self.t, self.rnd, self.rnd.random() * 0.85)
            mode = self.rnd.choice(list(MODES))

            def check(sel):
                return compare_check(self.cur, self.t, self.rnd, q, ordered, mode, self.cstats, sel)
        if self.in_txn:
            err = check(True)
            self.stats["compared_in_txn"] += 1
        else:
            # (a prepared transaction that truncated or reindexed holds
            # its locks until this batcher settles it: do not wait for it)
            self.cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
            self.cur.execute("SET LOCAL lock_timeout = '500ms'")
            try:
                err = check(False)
            except psycopg2.Error as e:
                if e.pgcode != "55P03":
                    raise
                err = None
                self.stats["compare_lock_timeout"] += 1
            finally:
                self.cur.execute("ROLLBACK")
            self.stats["compared_after"] += 1
        if err:
            raise Mismatch("%s: %s" % (why, err))

    def copy_data(self, n, bad_at=None, bad_kind=None):
        if self.comp():
            return self.copy_mdata(n, bad_at, bad_kind)
        first = self.ids(n)
        lines = []
        for i in range(n):
            v = gen_text(self.t, self.rnd)
            ident = first + i
            if bad_at is not None and i == bad_at:
                if bad_kind == "check":
                    ident = -1 - i
                else:
                    v = "zz%d" % i
            lines.append("%d\t%s\n" % (ident, "\\N" if v is None else v))
        return "".join(lines)

    def copy_mdata(self, n, bad_at=None, bad_kind=None):
        """copy_data for a composite: a bad input in any column (in the id
        where the column is text: any text is good input)."""
        first = self.ids(n)
        ncols = len(tcols(self.t))
        lines = []
        for i in range(n):
            vals = [gen_mtext(self.t, j, self.rnd) for j in range(ncols)]
            ident = first + i
            if bad_at is not None and i == bad_at:
                if bad_kind == "check":
                    ident = -1 - i
                else:
                    j = self.rnd.randrange(ncols)
                    if tcols(self.t)[j][1] in TEXT_TYPES:
                        ident = "zz%d" % i
                    else:
                        vals[j] = "zz%d" % i
            lines.append("%s\t%s\n" % (ident, "\t".join("\\N" if v is None else v for v in vals)))
        return "".join(lines)

    def copy_twins(self, n, freeze=False):
        data = self.copy_data(n)
        opts = " WITH (FREEZE)" if freeze else ""
        counts = []
        for side in ("g", "b"):
            self.cur.copy_expert("COPY fz_%s_%s (id, %s) FROM STDIN%s" % (self.t, side, col_names(self.t), opts),
                                 io.StringIO(data))
            counts.append(self.cur.rowcount)
        if counts[0] != counts[1]:
            raise Mismatch("COPY of %d rows: %r" % (n, counts))
        self.stats["rows_written"] += n

    def insert_select_sql(self, n, fail=None):
        """INSERT ... SELECT of n computed rows; fail = (kind, at): the
        statement fails at row at, by a division by zero or a CHECK
        violation, after the rows before it went in."""
        first = self.ids(n)
        idexpr = "%d + g" % first
        where = ""
        if fail is not None:
            kind, at = fail
            if kind == "div":
                where = " WHERE 1 / (g - %d) IS NOT NULL" % at
            else:
                idexpr = "CASE WHEN g = %d THEN -1 ELSE %d + g END" % (at, first)
        if self.comp():
            return ("INSERT INTO {tbl} SELECT " + idexpr + ", " + self.det_select()
                    + " FROM generate_series(1, %d) g, %s" % (n, self.lateral_x("g")) + where)
        return ("INSERT INTO {tbl} SELECT " + idexpr + ", " + det_value(self.t, "s.x")
                + " FROM generate_series(1, %d) g, LATERAL (SELECT %s AS x) s" % (n, self.x("g")) + where)

    def savepoint(self):
        self.nsp += 1
        name = "sp%d" % self.nsp
        self.cur.execute("SAVEPOINT " + name)
        return name

    def expect_error(self, codes, sql=None, fn=None):
        """Run a statement that must fail with one of codes (SQLSTATE
        prefixes); returns the code."""
        try:
            if fn is not None:
                fn()
            else:
                self.cur.execute(sql)
        except psycopg2.Error as e:
            if e.pgcode in RETRY_CODES or "fz_selfcheck" in str(e):
                raise
            if not any(e.pgcode and e.pgcode.startswith(c) for c in codes):
                raise
            return e.pgcode
        raise Mismatch("statement did not fail: %s" % (sql or fn))

    # -- steps: each leaves the twins with equal contents --

    def step_copy(self):
        self.copy_twins(self.nrows())

    def step_insert_select(self):
        self.twin(self.insert_select_sql(self.nrows()))

    def step_values(self):
        n = self.rnd.choice([1, 5, 50, 400])
        first = self.ids(n)
        rows = []
        for i in range(n):
            if self.comp():
                vals = []
                for j, (c, ct, _) in enumerate(tcols(self.t)):
                    v = gen_mtext(self.t, j, self.rnd)
                    vals.append("NULL" if v is None else "'%s'::%s" % (v, ct))
                rows.append("(%d, %s)" % (first + i, ", ".join(vals)))
                continue
            v = gen_text(self.t, self.rnd)
            rows.append("(%d, %s)" % (first + i, "NULL" if v is None else "'%s'::%s" % (v, self.t)))
        self.twin("INSERT INTO {tbl} VALUES " + ", ".join(rows))

    def step_update_keys(self):
        m = self.rnd.randint(2, 40)
        self.twin("UPDATE {tbl} SET " + self.det_set("id")
                  + " WHERE id %% %d = %d" % (m, self.rnd.randint(0, m - 1)))

    def step_update_pred(self):
        # found through a forced scan of the index being updated
        pred = self.pred()
        self.force_index()
        self.twin("UPDATE {tbl} SET " + self.det_set("id") + " WHERE " + pred)
        self.reset_modes()

    def step_delete(self):
        if self.rnd.random() < 0.5:
            m = self.rnd.randint(2, 9)
            self.twin("DELETE FROM {tbl} WHERE id %% %d = %d" % (m, self.rnd.randint(0, m - 1)))
        else:
            pred = self.pred()
            self.force_index()
            self.twin("DELETE FROM {tbl} WHERE " + pred)
            self.reset_modes()

    def step_self_insert(self):
        # an INSERT ... SELECT that reads its own target through the index
        # while its entries are gathered (and flushed, when memory is small)
        pred = self.pred()
        self.cur.execute("SELECT count(*) FROM fz_%s_b WHERE %s" % (self.t, pred))
        if self.cur.fetchone()[0] > 4000:
            pred = lead_col(self.t) + " IS NULL"
        self.force_index()
        self.twin("INSERT INTO {tbl} SELECT id + 10000000000000, " + col_names(self.t) + " FROM {tbl} WHERE " + pred)
        self.reset_modes()

    def step_merge(self):
        n = self.rnd.choice([10, 500, 3000])
        span = max(self.nextid - self.firstid, 1)
        first = self.firstid + self.rnd.randint(0, span)
        if self.comp():
            names = [c for c, _, _ in tcols(self.t)]
            vals = ", ".join("%s AS %s" % (v, c) for v, c in zip(self.det_cols(["s.x%s" % (i or "") for i in
                                                                                 range(len(names))]), names))
            self.twin("MERGE INTO {tbl} t USING (SELECT %d + g AS id, %s FROM generate_series(1, %d) g, %s) v "
                      "ON t.id = v.id "
                      "WHEN MATCHED AND v.id %% 5 = 0 THEN DELETE "
                      "WHEN MATCHED THEN UPDATE SET %s "
                      "WHEN NOT MATCHED THEN INSERT VALUES (v.id, %s)"
                      % (first, vals, n, self.lateral_x("g"), ", ".join("%s = v.%s" % (c, c) for c in names),
                         ", ".join("v." + c for c in names)))
            return
        self.twin("MERGE INTO {tbl} t USING (SELECT %d + g AS id, %s AS k FROM generate_series(1, %d) g, "
                  "LATERAL (SELECT %s AS x) s) v ON t.id = v.id "
                  "WHEN MATCHED AND v.id %% 5 = 0 THEN DELETE "
                  "WHEN MATCHED THEN UPDATE SET k = v.k "
                  "WHEN NOT MATCHED THEN INSERT VALUES (v.id, v.k)"
                  % (first, det_value(self.t, "s.x"), n, self.x("g")))

    def step_savepoint(self, depth=0):
        name = self.savepoint()
        for _ in range(self.rnd.randint(1, 3)):
            st = self.rnd.choice(NESTED)
            if st == "savepoint":
                if depth < 2:
                    self.step_savepoint(depth + 1)
                continue
            self.run_step(st)
        if self.rnd.random() < 0.5:
            self.compare("inside savepoint %s" % name)
        if self.rnd.random() < 0.55:
            self.cur.execute("ROLLBACK TO " + name)
            self.stats["rollback_to"] += 1
            self.compare("after ROLLBACK TO %s" % name)
            if self.rnd.random() < 0.5:
                self.run_step(self.rnd.choice(["copy", "insert_select", "values"]))
        self.cur.execute("RELEASE " + name)

    def step_fail_savepoint(self):
        name = self.savepoint()
        if self.rnd.random() < 0.5:
            self.run_step(self.rnd.choice(["copy", "insert_select"]))
        n = self.rnd.choice([50, 3000, 6000])
        kind = self.rnd.choice(["div", "check"])
        at = self.rnd.randint(n // 2, n)
        code = self.expect_error(["22012", "23514"], self.insert_select_sql(n, (kind, at)).format(tbl="fz_%s_g" % self.t))
        self.stats["failed_" + code] += 1
        self.cur.execute("ROLLBACK TO " + name)
        if self.rnd.random() < 0.6:
            self.compare("after a failed statement and ROLLBACK TO")
        if self.rnd.random() < 0.5:
            self.run_step("insert_select")
        self.cur.execute("RELEASE " + name)

    def step_copy_fail(self):
        name = self.savepoint()
        n = self.rnd.choice([100, 3000, 6000])
        kind = self.rnd.choice(["input", "check"])
        data = self.copy_data(n, self.rnd.randint(n // 2, n - 1), kind)
        code = self.expect_error(["22", "23514"], fn=lambda: self.cur.copy_expert(
            "COPY fz_%s_g (id, %s) FROM STDIN" % (self.t, col_names(self.t)), io.StringIO(data)))
        self.stats["failed_copy_" + code] += 1
        self.cur.execute("ROLLBACK TO " + name)
        self.cur.execute("RELEASE " + name)

    def step_plpgsql(self):
        # exception blocks: a subtransaction each, one failing midway
        pred = self.pred()
        n1, n2, n3 = self.rnd.choice([10, 2000]), self.rnd.choice([100, 5000]), self.rnd.choice([10, 3000])
        at = self.rnd.randint(1, n2)
        body = ("DO $do$ BEGIN\n"
                "  " + self.insert_select_sql(n1) + ";\n"
                "  BEGIN\n"
                "    " + self.insert_select_sql(n2, ("div", at)) + ";\n"
                "  EXCEPTION WHEN division_by_zero THEN NULL;\n"
                "  END;\n"
                "  BEGIN\n"
                "    " + self.insert_select_sql(n3) + ";\n"
                "    PERFORM fz_selfcheck('{tbl}', " + sql_str(pred) + ");\n"
                "  EXCEPTION WHEN division_by_zero THEN NULL;\n"
                "  END;\n"
                "  PERFORM fz_selfcheck('{tbl}', " + sql_str(pred) + ");\n"
                "END $do$")
        self.twin(body, counted=False)

    def step_midstatement_scan(self):
        # every N rows the INSERT calls a function that scans the table,
        # through the index and sequentially: the rows this statement
        # inserted so far are visible to it, pending or not
        pred = self.pred()
        n = self.rnd.choice([500, 3000, 9000])
        every = self.rnd.choice([97, 499, 2999])
        sql = self.insert_select_sql(n) + " WHERE (g %% %d <> 0 OR fz_selfcheck('{tbl}', %s))" % (every, sql_str(pred))
        self.twin(sql)

    def step_cursor(self):
        # a scrollable cursor over the index, open while the transaction
        # inserts (and, with little memory, flushes into the leaves it is on)
        if self.comp():
            return self.step_mcursor()
        pred = gen_pred(self.t, self.rnd) if self.rnd.random() < 0.6 else "true"
        desc = self.rnd.choice(["", " DESC"])
        data = self.copy_data(self.rnd.choice([100, 3000, 9000]))
        ins = self.insert_select_sql(self.rnd.choice([10, 3000]))
        moves1 = ["FORWARD %d" % self.rnd.randint(1, 50), "NEXT"]
        moves2 = [self.rnd.choice(["NEXT", "PRIOR", "FORWARD %d" % self.rnd.randint(1, 300),
                                   "BACKWARD %d" % self.rnd.randint(1, 300), "ABSOLUTE %d" % self.rnd.randint(-50, 400),
                                   "RELATIVE %d" % self.rnd.randint(-100, 100), "FIRST", "LAST"])
                  for _ in range(self.rnd.randint(3, 10))]
        results = {}
        for side in ("g", "b"):
            tbl = "fz_%s_%s" % (self.t, side)
            for s in MODES["index"]:
                self.cur.execute(as_select(s))
            self.cur.execute("DECLARE cb_%s SCROLL CURSOR FOR SELECT %s FROM %s WHERE %s ORDER BY k%s"
                             % (side, col_exprs(self.t), tbl, pred, desc))
            self.reset_modes()
            res = []
            for m in moves1:
                self.cur.execute("FETCH %s FROM cb_%s" % (m, side))
                res.append([norm_key(r[0]) for r in self.cur.fetchall()])
            self.cur.execute(ins.format(tbl=tbl))
            self.cur.copy_expert("COPY %s (id, k) FROM STDIN" % tbl, io.StringIO(data))
            for m in moves2:
                self.cur.execute("FETCH %s FROM cb_%s" % (m, side))
                res.append([norm_key(r[0]) for r in self.cur.fetchall()])
            self.cur.execute("CLOSE cb_%s" % side)
            results[side] = res
        self.stats["cursor_fetches"] += len(moves1) + len(moves2)
        if results["g"] != results["b"]:
            raise Mismatch("cursor on %s WHERE %s ORDER BY k%s open across inserts, moves %s then %s\n gbtree %r\n btree %r"
                           % (self.t, pred, desc, moves1, moves2, results["g"], results["b"]))

    def step_mcursor(self):
        """step_cursor on a composite: ORDER BY index columns either way,
        an index or index-only scan."""
        pred, pinned = gen_mpred(self.t, self.rnd) if self.rnd.random() < 0.6 else ("true", 0)
        order, ocols = gen_morder(self.t, self.rnd, pinned, full=self.rnd.random() < 0.5)
        mode = self.rnd.choice(["index", "ios"])
        data = self.copy_data(self.rnd.choice([100, 3000, 9000]))
        ins = self.insert_select_sql(self.rnd.choice([10, 3000]))
        moves1 = ["FORWARD %d" % self.rnd.randint(1, 50), "NEXT"]
        moves2 = cursor_moves(self.rnd)
        q = "SELECT %s FROM fz_%s_{side} WHERE %s ORDER BY %s" % (col_exprs(self.t, ocols), self.t, pred, order)
        results = {}

        def fetch(name, moves):
            out = []
            for m in moves:
                self.cur.execute("FETCH %s FROM %s" % (m, name))
                out.append([tuple(norm_key(x) for x in r) for r in self.cur.fetchall()])
            return out

        # the truth: the same walk over a seq scan and a sort, declared
        # before any insert (a cursor sees its transaction as of its
        # DECLARE), read where the twins differ (a btree bug: note_btree_wrong)
        for s in SEQ:
            self.cur.execute(as_select(s))
        self.cur.execute("DECLARE cb_s SCROLL CURSOR FOR %s" % q.format(side="b"))
        self.reset_modes()
        for side in ("g", "b"):
            tbl = "fz_%s_%s" % (self.t, side)
            for s in MODES[mode]:
                self.cur.execute(as_select(s))
            self.cur.execute("DECLARE cb_%s SCROLL CURSOR FOR %s" % (side, q.format(side=side)))
            self.reset_modes()
            res = fetch("cb_" + side, moves1)
            self.cur.execute(ins.format(tbl=tbl))
            self.cur.copy_expert("COPY %s (id, %s) FROM STDIN" % (tbl, col_names(self.t)), io.StringIO(data))
            res += fetch("cb_" + side, moves2)
            self.cur.execute("CLOSE cb_%s" % side)
            results[side] = res
        self.stats["cursor_fetches"] += len(moves1) + len(moves2)
        moves = moves1 + moves2
        seq = fetch("cb_s", moves) if results["g"] != results["b"] else None
        self.cur.execute("CLOSE cb_s")
        if seq is not None and results["g"] == seq:
            note_btree_wrong(self.cstats, "cursor, %s scans, batcher): %s, moves %s" % (mode, q.format(side="b"), moves))
            return
        if results["g"] != results["b"]:
            j = next(j for j in range(len(moves)) if results["g"][j] != results["b"][j])
            raise Mismatch("cursor (%s scans) on %s open across inserts, moves %s then %s\n first difference at "
                           "move %d (%s):\n gbtree %r\n btree %r"
                           % (mode, q.format(side="g"), moves1, moves2, j, moves[j], results["g"][j][:20],
                              results["b"][j][:20]))

    def step_truncate(self):
        wrap = self.rnd.random() < 0.75
        name = self.savepoint() if wrap else None
        self.cur.execute("TRUNCATE fz_%s_g, fz_%s_b" % (self.t, self.t))
        # COPY FREEZE: allowed right after the TRUNCATE of this subtransaction
        self.copy_twins(self.rnd.choice([100, 3000, 6000]), freeze=self.rnd.random() < 0.5)
        self.run_step(self.rnd.choice(["insert_select", "update_keys", "values"]))
        self.compare("after TRUNCATE and new rows")
        if TEXT_FIT and HAVE_PAGEINSPECT and text_bytes(self.t) and AM == "gbtree":
            # the empty index kept four words (gbtree.fit_min_rows = 1);
            # its first flush fitted them, unless inside the savepoint
            self.cur.execute("SELECT get_byte(get_raw_page('fz_%s_g_k', 0), 56)" % self.t)
            self.stats["truncate_then_fitted" if self.cur.fetchone()[0] < 4 else
                       "truncate_then_four_words"] += 1
        if wrap:
            if self.rnd.random() < 0.8:
                self.cur.execute("ROLLBACK TO " + name)
                self.stats["truncate_rolled_back"] += 1
                self.compare("after ROLLBACK TO undid a TRUNCATE")
            self.cur.execute("RELEASE " + name)

    def step_reindex(self):
        self.run_step(self.rnd.choice(["copy", "insert_select"]))
        wrap = self.rnd.random() < 0.4
        name = self.savepoint() if wrap else None
        if self.rnd.random() < 0.5:
            self.cur.execute("REINDEX INDEX fz_%s_g_k" % self.t)
        else:
            self.cur.execute("REINDEX TABLE fz_%s_g" % self.t)
        self.run_step(self.rnd.choice(["copy", "insert_select", "update_keys"]))
        self.compare("after REINDEX and new rows")
        if wrap:
            if self.rnd.random() < 0.5:
                self.cur.execute("ROLLBACK TO " + name)
                self.compare("after ROLLBACK TO undid a REINDEX")
            self.cur.execute("RELEASE " + name)

    def step_extra_index(self):
        # a second gbtree index, made and gone within the transaction
        name = self.savepoint()
        ix = "fz_%s_g_k2_%d" % (self.t, self.bid)
        if self.t in INCLUDED:
            # the key columns the other way round, every direction flipped,
            # and the INCLUDE columns too
            nk = nkeys(self.t)
            cols = ", ".join(c + ("" if "DESC" in o else " DESC") for c, _, o in reversed(tcols(self.t)[:nk]))
            cols += ") INCLUDE (" + ", ".join(c for c, _, _ in reversed(tcols(self.t)[nk:]))
        elif self.comp():
            # the columns the other way round, every direction flipped
            cols = ", ".join(c + ("" if "DESC" in o else " DESC") for c, _, o in reversed(tcols(self.t)))
        else:
            cols = "k DESC"
        self.cur.execute("CREATE INDEX %s ON fz_%s_g USING %s (%s)" % (ix, self.t, AM, cols))
        self.run_step(self.rnd.choice(["copy", "insert_select"]))
        self.run_step(self.rnd.choice(["update_keys", "delete", "values"]))
        self.compare("with a second gbtree index made in the transaction")
        if self.rnd.random() < 0.6:
            self.cur.execute("ROLLBACK TO " + name)
        else:
            self.run_step("insert_select")
            self.cur.execute("DROP INDEX %s" % ix)
        self.cur.execute("RELEASE " + name)

    def step_alter(self):
        self.run_step("insert_select")
        if self.rnd.random() < 0.5:
            self.cur.execute("ALTER INDEX fz_%s_g_k SET (fillfactor = %d)" % (self.t, self.rnd.choice([50, 70, 90, 100])))
        else:
            self.cur.execute("ALTER TABLE fz_%s_g ALTER COLUMN %s SET STATISTICS %d"
                             % (self.t, lead_col(self.t), self.rnd.randint(10, 200)))
        self.run_step("copy")

    def step_tablespace(self):
        # ALTER INDEX ... SET TABLESPACE copies the index's pages into a new
        # file: the entries still pending must be in them first
        if not self.tablespace:
            self.stats["tablespace_unavailable"] += 1
            return
        self.run_step(self.rnd.choice(["copy", "insert_select", "update_keys"]))
        self.cur.execute("SELECT coalesce(s.spcname, 'pg_default') FROM pg_class c "
                         "LEFT JOIN pg_tablespace s ON s.oid = c.reltablespace WHERE c.relname = 'fz_%s_g_k'" % self.t)
        target = "pg_default" if self.cur.fetchone()[0] == "fz_ts" else "fz_ts"
        wrap = self.rnd.random() < 0.3
        name = self.savepoint() if wrap else None
        self.cur.execute("ALTER INDEX fz_%s_g_k SET TABLESPACE %s" % (self.t, target))
        self.run_step(self.rnd.choice(["copy", "insert_select"]))
        self.compare("after ALTER INDEX SET TABLESPACE %s" % target)
        if wrap:
            self.cur.execute("ROLLBACK TO " + name)
            self.compare("after ROLLBACK TO undid ALTER INDEX SET TABLESPACE")
            self.cur.execute("RELEASE " + name)

    def step_memory_change(self):
        self.run_step(self.rnd.choice(["copy", "insert_select"]))
        self.set_memory()
        self.run_step(self.rnd.choice(["copy", "insert_select", "update_keys"]))

    def step_exclusion(self):
        ex = "fz_excl3" if self.lane == 2 else "fz_excl"
        n = self.rnd.choice([1, 5, 50, 300])
        keys = [self.rnd.randint(0, 2000000) if self.rnd.random() > 0.05 else None for _ in range(n)]
        if self.rnd.random() < 0.3:
            keys.append(self.rnd.choice(keys))        # a conflict within the statement
        if self.rnd.random() < 0.3:
            self.cur.execute("SELECT k FROM %s_b WHERE k IS NOT NULL LIMIT 1 OFFSET %d" % (ex, self.rnd.randint(0, 50)))
            r = self.cur.fetchone()
            if r:
                keys.append(r[0])                     # a conflict with a stored row
        first = self.ids(len(keys))
        vals = ", ".join("(%d, %s)" % (first + i, "NULL" if k is None else str(k)) for i, k in enumerate(keys))
        outcome = {}
        for side in ("g", "b", "u"):
            name = self.savepoint()
            try:
                self.cur.execute("INSERT INTO %s_%s VALUES %s" % (ex, side, vals))
                outcome[side] = "ok"
                self.cur.execute("RELEASE " + name)
            except psycopg2.Error as e:
                if e.pgcode not in ("23P01", "23505"):
                    raise
                outcome[side] = "conflict"
                self.cur.execute("ROLLBACK TO " + name)
                self.cur.execute("RELEASE " + name)
        self.stats["exclusion_" + outcome["g"]] += 1
        if outcome["g"] != outcome["b"] or outcome["u"] != outcome["b"]:
            raise Mismatch("exclusion constraint (gbtree) %s, unique gbtree %s, unique btree %s, for keys %r"
                           % (outcome["g"], outcome["u"], outcome["b"], keys))
        if self.rnd.random() < 0.3:
            m = self.rnd.randint(3, 9)
            r = self.rnd.randint(0, m - 1)
            for side in ("g", "b", "u"):
                self.cur.execute("DELETE FROM %s_%s WHERE k %% %d = %d" % (ex, side, m, r))
        lo = self.rnd.randint(0, 2000000)
        hi = lo + self.rnd.choice([1000, 100000])
        res = {}
        for side in ("g", "b", "u"):
            self.force_index()
            self.cur.execute("SELECT id, k FROM %s_%s WHERE k BETWEEN %d AND %d ORDER BY k" % (ex, side, lo, hi))
            res[side] = self.cur.fetchall()
            self.reset_modes()
        if res["g"] != res["b"] or res["u"] != res["b"]:
            raise Mismatch("exclusion tables differ in the transaction: %d and %d rows against %d"
                           % (len(res["g"]), len(res["u"]), len(res["b"])))

    def run_step(self, st):
        outer = self.step
        self.step = st if outer is None else outer + ">" + st
        self.trail.append(self.step)
        getattr(self, "step_" + st)()
        self.stats[st] += 1
        self.step = outer

    # -- transactions --

    def end(self, ending):
        cur = self.cur
        if ending.startswith("prepare") and not self.can_prepare:
            self.stats["prepare_unavailable"] += 1
            ending = "commit" if ending == "prepare_commit" else "rollback"
        if ending == "commit":
            cur.execute("COMMIT")
        elif ending == "rollback":
            cur.execute("ROLLBACK")
        elif ending.startswith("prepare"):
            self.ngid += 1
            gid = "fzb_%d_%d" % (self.bid, self.ngid)
            cur.execute("PREPARE TRANSACTION '%s'" % gid)
            self.in_txn = False
            self.prepared = gid
            # settled from this session or from another one
            c = cur if self.rnd.random() < 0.5 else self.cur2
            if self.rnd.random() < 0.3:
                self.compare("while prepared")
            c.execute("%s PREPARED '%s'" % ("COMMIT" if ending == "prepare_commit" else "ROLLBACK", gid))
            self.prepared = None
        else:
            # a statement fails midway: the transaction is over, whatever
            # it did; COMMIT answers ROLLBACK
            n = self.rnd.choice([100, 5000])
            if self.rnd.random() < 0.5:
                sql = self.insert_select_sql(n, (self.rnd.choice(["div", "check"]), self.rnd.randint(n // 2, n)))
                self.expect_error(["22012", "23514"] + (["23505"] if self.t in UNIQUE_TWINS else []),
                                  sql.format(tbl="fz_%s_g" % self.t))
            else:
                data = self.copy_data(n, self.rnd.randint(n // 2, n - 1), "input")
                self.expect_error(["22"] + (["23505"] if self.t in UNIQUE_TWINS else []), fn=lambda: cur.copy_expert(
                    "COPY fz_%s_g (id, %s) FROM STDIN" % (self.t, col_names(self.t)), io.StringIO(data)))
            cur.execute(self.rnd.choice(["COMMIT", "ROLLBACK"]))
        self.in_txn = False
        self.stats["end_" + ending] += 1

    def txn(self, feature, ending):
        """A transaction featuring feature, ended by ending; False where
        it was a unique twin's (the feature left for the next one)."""
        self.t = self.rnd.choice(self.lanes[self.lane])
        self.step = None
        self.trail = []
        if self.t in UNIQUE_TWINS:
            self.unique_txn(ending)
            return False
        self.cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        self.in_txn = True
        if self.rnd.random() < 0.85:
            self.set_memory(allow_zero=False)
        steps = [feature] + [self.rnd.choice(EXTRA) for _ in range(self.rnd.randint(0, 3))]
        self.rnd.shuffle(steps)
        for st in steps:
            self.run_step(st)
            if self.rnd.random() < 0.5:
                self.compare()
        if self.rnd.random() < 0.5:
            self.compare()
        if self.rnd.random() < 0.6:
            # entries still pending when the transaction ends
            self.run_step(self.rnd.choice(["copy", "insert_select", "values", "update_keys"]))
        self.step = "end:" + ending
        self.trail.append(self.step)
        self.end(ending)
        # another session sees exactly what committed
        self.count_check("after the transaction ended (%s), in another session" % ending)
        if self.rnd.random() < 0.5:
            err = check_once(self.cur2, self.t, self.rnd, self.cstats, self.joins, self.types)
            self.stats["compared_after"] += 1
            if err:
                raise Mismatch("after the transaction ended (%s), in another session: %s" % (ending, err))
        self.stats["transactions"] += 1
        self.stats["transactions_" + self.t] += 1
        return True

    # -- unique twins --

    def unique_txn(self, ending):
        """A transaction on a unique twin: changes applied to each twin
        under a savepoint of its own (unique_apply), both succeeding or
        both failing with 23505; nested savepoints rolled back at times;
        the twins compared in it and after it."""
        self.cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        self.in_txn = True
        if self.rnd.random() < 0.85:
            self.set_memory(allow_zero=False)
        for _ in range(self.rnd.randint(1, 6)):
            self.run_step(self.rnd.choice(["uchange", "uchange", "uchange", "ucopy", "ubulk", "usavepoint"]))
            if self.rnd.random() < 0.4:
                self.compare()
        self.step = "end:" + ending
        self.trail.append(self.step)
        self.end(ending)
        self.count_check("after the transaction ended (%s), in another session" % ending)
        if self.rnd.random() < 0.5:
            err = check_once(self.cur2, self.t, self.rnd, self.cstats, self.joins, self.types)
            self.stats["compared_after"] += 1
            if err:
                raise Mismatch("after the transaction ended (%s), in another session: %s" % (ending, err))
        self.stats["transactions"] += 1
        self.stats["transactions_" + self.t] += 1

    def unique_twin(self, stmts, copy=None):
        out = unique_apply(self.cur, self.t, stmts, copy)
        err = unique_differs(self.t, stmts, out)
        if err:
            raise Mismatch(err)
        ok = out["g"][0] == "ok"
        self.stats["unique_ok" if ok else "unique_23505"] += 1
        self.stats["rows_written"] += sum(max(n, 0) for n in out["g"][1]) if ok else 0

    def step_uchange(self):
        self.unique_twin(gen_uchange(self.t, self.rnd, self.ids))

    def step_ucopy(self):
        n = self.rnd.choice([1, 5, 50, 1000, 5000])
        small = n <= 5 or self.rnd.random() < 0.2
        rare = self.rnd.choice([0, 0.0005, 0.03])
        ncols = len(tcols(self.t))
        rows = [[gen_utext(self.t, i, self.rnd, small, rare) for i in range(ncols)] for _ in range(n)]
        if self.rnd.random() < 0.2:
            rows.insert(self.rnd.randint(0, len(rows)), self.rnd.choice(rows))
        first = self.ids(len(rows))
        data = "".join("%d\t%s\n" % (first + j, "\t".join("\\N" if v is None else v for v in r))
                       for j, r in enumerate(rows))
        self.unique_twin(["COPY {tbl} (id, %s) FROM STDIN" % col_names(self.t)], copy=data)

    def step_ubulk(self):
        # many spread keys, new ones (salted) each time; at times one of
        # them twice, the second at the statement's end
        n = self.rnd.choice([100, 2000, 10000])
        first = self.ids(n + 1)
        salt = self.rnd.randint(0, 10 ** 6)
        dup = " UNION ALL SELECT %d, %d" % (n + 1, self.rnd.randint(1, n)) if self.rnd.random() < 0.3 else ""
        exprs = ", ".join(e.format(h="s.h", salt=salt) for e in UNIQUE_BULK[self.t])
        self.unique_twin(["INSERT INTO {tbl} SELECT %d + s.g, %s FROM (SELECT g, g AS h FROM generate_series(1, %d) g%s) s"
                          % (first, exprs, n, dup)])

    def step_usavepoint(self):
        name = self.savepoint()
        for _ in range(self.rnd.randint(1, 3)):
            self.run_step(self.rnd.choice(["uchange", "uchange", "ucopy"]))
        if self.rnd.random() < 0.5:
            self.compare("inside savepoint %s" % name)
        if self.rnd.random() < 0.5:
            self.cur.execute("ROLLBACK TO " + name)
            self.stats["rollback_to"] += 1
            self.compare("after ROLLBACK TO %s" % name)
            if self.rnd.random() < 0.5:
                self.run_step("uchange")
        self.cur.execute("RELEASE " + name)

    def run(self, deadline):
        while time.time() < deadline:
            # each lane deals from decks of its own
            self.use_lane(pick_lane(self.lrnd, self.lanes, self.n3rnd))
            st = self.lane_state[self.lane]
            fdeck, edeck = st["fdeck"], st["edeck"]
            if not fdeck:
                # every batcher deals the same shuffle of a round, each from
                # its own offset, so that together they reach every feature
                # after len(FEATURES) / nbatchers transactions each (a
                # loaded machine gives a 60 s run fewer transactions)
                fdeck[:] = FEATURES[:]
                random.Random(self.seed * 7919 + st["rounds"] if self.lane == 0 else
                              "multiword-deck-%d-%d" % (self.seed, st["rounds"]) if self.lane == 1 else
                              "includeunique-deck-%d-%d" % (self.seed, st["rounds"])).shuffle(fdeck)
                st["rounds"] += 1
                k = self.bid * len(fdeck) // self.nbatchers
                fdeck[:] = fdeck[k:] + fdeck[:k]
                fdeck.reverse()
            if not edeck:
                edeck[:] = ENDINGS[:]
                self.rnd.shuffle(edeck)
            feature, ending = fdeck.pop(), edeck.pop()
            try:
                if self.txn(feature, ending) is False:
                    fdeck.append(feature)
            except psycopg2.Error as e:
                if self.in_txn:
                    self.cur.execute("ROLLBACK")
                    self.in_txn = False
                if "fz_selfcheck" in str(e):
                    raise Mismatch(str(e).strip())
                if e.pgcode in RETRY_CODES:
                    self.stats["retried_" + e.pgcode] += 1
                    # dealt again: a feature whose every try was retried
                    # would never be counted (a 60 s run must reach all)
                    fdeck.append(feature)
                    edeck.append(ending)
                    continue
                raise
            except Mismatch:
                if self.in_txn:
                    self.cur.execute("ROLLBACK")
                    self.in_txn = False
                raise
        self.conn.close()
        self.conn2.close()



# the racers' sessions per unique twin type (each picks a type per
# transaction), and how many keys each insert-only round shares among them
# (a new set each round)
RACER_THREADS = 2
RACER_KEYS = 4


def racer_key(t, k):
    """Key k of unique type t's racer table (an int; NULL in a column at
    times): SQL literals of its key columns.  u2's NULL rows never
    conflict (NULLS DISTINCT); un's do (NULLS NOT DISTINCT)."""
    lits = []
    for i, (_, ct, _) in enumerate(tcols(t)[:nkeys(t)]):
        if ct == "uuid":
            v = "'a0eebc99-9c0b-4ef8-%04x-%012x'::uuid" % (k % 65536, (k * 2654435761) % 2 ** 48)
        elif ct == "int2":
            v = "NULL" if i == 0 and k % 5 == 4 and t == "un" else "%d::int2" % (k % 32768 - (k % 2) * 32768)
        elif ct in TEXT_TYPES:
            # k's digits, at times 0xff bytes after them to the field's end
            key = ("r%d" % k).ljust(text_bytes(t) if k % 3 == 0 else 0, "\xff")
            v = "NULL" if k % 7 == 6 else "'%s'::%s" % (key, ct)
        else:
            v = "NULL" if k % 7 == 6 else "%d::%s" % (k * 101 - 2 ** 31 if k % 2 else k, ct)
        lits.append(v)
    return lits


def racer_match(t, lits):
    return " AND ".join("%s IS NOT DISTINCT FROM %s" % (c, v)
                        for (c, _, _), v in zip(tcols(t)[:nkeys(t)], lits))


def racer_nulls_distinct(t, lits):
    return UNIQUE_TWINS[t] == "" and "NULL" in lits


def racer(dsn, types, seed, deadline, rout, am="gbtree"):
    """Sessions that insert the same keys into one unique index at the same
    moment, with no twin: what no outcome comparison can check (two
    changes of a twin never overlap, see unique_apply) is checked here
    against the invariants of a unique index.  Per unique type t, table
    fz_<t>_r with t's unique index; RACER_THREADS sessions a type run
    transactions of 1-4 changes, each under a savepoint (rolled back at
    times, with pauses in between): inserts of a handful of keys, updates
    that keep the key (a new index entry of it where an INCLUDE column
    changes, or where the update cannot be HOT), and, on a second set of
    keys, deletes; transactions commit or roll back.
     - No key of the first set is ever deleted, so a 23505 on one means a
       committed row holds it: a fresh snapshot must then count exactly
       one (none: a false conflict).  The set moves on every round.
     - A seq scan never finds two live rows of one key (a missed
       conflict), while the sessions run and at the end.
     - gbtree_check(index, heapallindexed) passes at the end."""
    import threading
    set_am(am)
    ts = [t for t in types if t in UNIQUE_TWINS]
    conn = connect(dsn)
    cur = conn.cursor()
    cur.execute("SET client_min_messages = warning")
    for t in ts:
        cur.execute("DROP TABLE IF EXISTS fz_%s_r" % t)
        cur.execute("CREATE TABLE fz_%s_r (id bigserial, %s, pay int8 DEFAULT 0) WITH (autovacuum_enabled = off)"
                    % (t, col_decls(t)))
        cur.execute("CREATE UNIQUE INDEX fz_%s_r_k ON fz_%s_r USING %s (%s)%s"
                    % (t, t, AM, index_def(t), UNIQUE_TWINS[t]))
    stats = collections.Counter()
    fails = []
    t0 = time.time()

    def session(n):
        rnd = random.Random("%d-racer-%d" % (seed, n))
        filler = [0]
        c = connect(dsn)
        cu = c.cursor()
        while time.time() < deadline and not fails:
            t = rnd.choice(ts)
            cols = tcols(t)
            tbl = "fz_%s_r" % t
            try:
                cu.execute("BEGIN")
                for _ in range(rnd.randint(1, 4)):
                    stable = rnd.random() < 0.6
                    rnd_ = int((time.time() - t0) / 0.4)
                    k = rnd.randrange(RACER_KEYS) + (10 ** 6 + rnd_ * RACER_KEYS if stable else 0)
                    lits = racer_key(t, k)
                    r = rnd.random()
                    cu.execute("SAVEPOINT r")
                    try:
                        if r < 0.65:
                            def row(ls):
                                extra = ["%d::%s" % (rnd.randrange(1000), ct) for _, ct, _ in cols[nkeys(t):]]
                                # NULLs typed: a VALUES list under a SELECT
                                # gives an all-NULL column type text
                                typed = ["NULL::%s" % ct if v == "NULL" else v
                                         for v, (_, ct, _) in zip(ls, cols)]
                                return "(%s)" % ", ".join(typed + extra)
                            rows = [row(lits)]
                            batched = False
                            if rnd.random() < 0.5:
                                # the key after a key of this session's own
                                # (a statement's entries after its first
                                # wait for its end, checked as they come and
                                # again there), and another at times
                                for at in ([0, 2] if rnd.random() < 0.5 else [0]):
                                    filler[0] += 1
                                    rows.insert(at, row(racer_key(t, 1500000 + n * 100000 + filler[0])))
                                batched = True
                            if len(rows) > 1 and rnd.random() < 0.5:
                                # a pause after each row: the key waits
                                # longer between its two checks
                                cu.execute("INSERT INTO %s (%s) SELECT * FROM (VALUES %s) v "
                                           "WHERE pg_sleep(0.002)::text = ''"
                                           % (tbl, col_names(t), ", ".join(rows)))
                            else:
                                cu.execute("INSERT INTO %s (%s) VALUES %s" % (tbl, col_names(t), ", ".join(rows)))
                            stats["insert_batched"] += batched
                            op = "insert"
                        elif r < 0.85 or stable:
                            # the key kept: a new entry of it when an
                            # INCLUDE column changes or the page has no
                            # room for a HOT update
                            sets = ("%s = %s + 1" % (cols[-1][0], cols[-1][0]) if t in INCLUDED
                                    else "pay = pay + 1, %s = %s" % (cols[0][0], cols[0][0]))
                            cu.execute("UPDATE %s SET %s WHERE %s" % (tbl, sets, racer_match(t, lits)))
                            op = "update"
                        else:
                            cu.execute("DELETE FROM %s WHERE %s" % (tbl, racer_match(t, lits)))
                            op = "delete"
                        if rnd.random() < 0.3:
                            time.sleep(rnd.random() * 0.005)
                        if rnd.random() < 0.2:
                            cu.execute("ROLLBACK TO SAVEPOINT r")
                            stats["rolled_back"] += 1
                        else:
                            cu.execute("RELEASE SAVEPOINT r")
                        stats[op] += 1
                    except psycopg2.Error as e:
                        if e.pgcode != "23505":
                            raise
                        cu.execute("ROLLBACK TO SAVEPOINT r")
                        stats["23505"] += 1
                        if racer_nulls_distinct(t, lits):
                            fails.append("%s: 23505 on a key with a NULL, NULLS DISTINCT: %s" % (t, lits))
                        elif stable:
                            # a fresh snapshot (READ COMMITTED), no index
                            cu.execute("SELECT count(*) FROM %s WHERE %s" % (tbl, racer_match(t, lits)))
                            m = cu.fetchone()[0]
                            stats["conflicts_checked"] += 1
                            if m != 1:
                                fails.append("%s: 23505 on key %s, never deleted, which %d committed rows hold"
                                             % (t, ", ".join(lits), m))
                if rnd.random() < 0.3:
                    cu.execute("ROLLBACK")
                else:
                    cu.execute("COMMIT")
                # a breath: the twins' sessions share the machine
                time.sleep(0.002)
            except psycopg2.Error as e:
                cu.execute("ROLLBACK")
                if e.pgcode in ("40P01", "40001"):
                    stats["retried_" + e.pgcode] += 1
                    continue
                fails.append("racer %d: unexpected error: %s" % (n, e))
        c.close()

    def duplicates(t):
        cols = ", ".join(c for c, _, _ in tcols(t)[:nkeys(t)])
        where = "" if UNIQUE_TWINS[t] else " WHERE " + " AND ".join(
            "%s IS NOT NULL" % c for c, _, _ in tcols(t)[:nkeys(t)])
        cur.execute("SELECT %s, count(*) FROM fz_%s_r%s GROUP BY %s HAVING count(*) > 1" % (cols, t, where, cols))
        return cur.fetchall()

    threads = [threading.Thread(target=session, args=(n,)) for n in range(RACER_THREADS * len(ts))]
    cur.execute("SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off")
    for th in threads:
        th.start()
    while any(th.is_alive() for th in threads):
        for t in ts:
            d = duplicates(t)
            stats["scans"] += 1
            if d:
                fails.append("%s: live rows with equal keys (a missed conflict): %r" % (t, d[:3]))
        time.sleep(0.2)
    for th in threads:
        th.join()
    for t in ts:
        d = duplicates(t)
        if d:
            fails.append("%s: live rows with equal keys at the end (a missed conflict): %r" % (t, d[:3]))
        if AM == "gbtree" and not fails:
            cur.execute("SELECT gbtree_check('fz_%s_r_k', true)" % t)
    conn.close()
    rout.put((fails[:5], dict(stats)))


def checker(dsn, types, seed, deadline, result, am="gbtree"):
    set_am(am)
    lanes = split_lanes(types)
    mrnd, lrnd = lane_rnd(seed, "checker")
    nrnd, n3rnd = new_lane_rnd(seed, "checker")
    rnds = [random.Random(seed * 1000 + 999), mrnd, nrnd]
    conn = connect(dsn)
    cur = conn.cursor()
    stats = query_stats()
    joins = join_available(cur)
    stats["has_join_guc"] = int(joins)
    # the text twins' entries audited against their heap now and then
    # (audit_entries): a wrong entry shows there long before a query
    # happens to meet it
    audited = [t for t in types if text_bytes(t) and AM == "gbtree"]
    next_audit = time.time() + 2
    while time.time() < deadline:
        if audited and time.time() >= next_audit:
            t = audited[stats["entry_audits"] % len(audited)]
            stats["entry_audits"] += 1
            next_audit = time.time() + 2
            try:
                err = audit_entries(cur, t)
            except psycopg2.Error as e:
                cur.execute("ROLLBACK")
                err = None if e.pgcode in ("40001", "40P01", "55P03", "57014") else "error: %s" % e
            if err:
                result.put(("fail", "twin %s: %s" % (t, err), stats))
                conn.close()
                return
        lane = pick_lane(lrnd, lanes, n3rnd)
        rnd = rnds[lane]
        t = rnd.choice(lanes[lane])
        stats["checks_" + t] += 1
        try:
            err = check_once(cur, t, rnd, stats, joins, types)
        except psycopg2.Error as e:
            cur.execute("ROLLBACK")
            if e.pgcode in ("40001", "40P01", "55P03", "57014"):
                continue
            err = "error: %s" % e
        if err:
            result.put(("fail", err, stats))
            conn.close()
            return
    # final full comparison of every twin pair (again after a deadlock or
    # serialization failure: a batcher may still be truncating a table)
    for t in types:
        while True:
            try:
                cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
                g = run_query(cur, MODES["ios"], "SELECT id, %s FROM fz_%s_g WHERE %s IS NOT NULL OR %s IS NULL"
                              % (col_exprs(t), t, lead_col(t), lead_col(t)))
                b = run_query(cur, SEQ, "SELECT id, %s FROM fz_%s_b" % (col_exprs(t), t))
                ordered = []
                if t in COMPOSITE:
                    # and every key in the index's order, forward and backward
                    for rev in (False, True):
                        order = index_order(t, rev)
                        og = run_query(cur, MODES["ios"], "SELECT %s FROM fz_%s_g ORDER BY %s" % (col_exprs(t), t, order))
                        ob = run_query(cur, SEQ, "SELECT %s FROM fz_%s_b ORDER BY %s" % (col_exprs(t), t, order))
                        if [tuple(map(norm_key, r)) for r in og] != [tuple(map(norm_key, r)) for r in ob]:
                            ordered.append(order)
                if t in INCLUDED:
                    # every row, the INCLUDE columns too, in the order of the key
                    # columns alone: the index-only scan's own order
                    for rev in (False, True):
                        order = ", ".join(index_order(t, rev).split(", ")[:nkeys(t)])
                        form = ("groups", 0, nkeys(t), None)
                        og = run_query(cur, MODES["ios"], "SELECT %s FROM fz_%s_g ORDER BY %s" % (col_exprs(t), t, order))
                        ob = run_query(cur, SEQ, "SELECT %s FROM fz_%s_b ORDER BY %s" % (col_exprs(t), t, order))
                        if row_form(og, form) != row_form(ob, form):
                            ordered.append(order)
                cur.execute("COMMIT")
                break
            except psycopg2.Error as e:
                cur.execute("ROLLBACK")
                if e.pgcode not in RETRY_CODES:
                    raise
        if sorted(map(repr, g)) != sorted(map(repr, b)):
            result.put(("fail", "final contents of %s differ: gbtree %d rows, heap %d rows" % (t, len(g), len(b)), stats))
            return
        if ordered:
            result.put(("fail", "final contents of %s ORDER BY %s (index-only scan) differ from a sort of the heap"
                        % (t, " and ORDER BY ".join(ordered)), stats))
            return
        if AM == "gbtree":
            cur.execute("SELECT gbtree_check('fz_%s_g_k', true)" % t)
    # the exclusion-constraint twins hold the same rows
    for x in ["fz_excl"] + (["fz_excl3"] if lanes[2] else []):
        cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        g = run_query(cur, MODES["index"], "SELECT id, k FROM %s_g WHERE k IS NOT NULL OR k IS NULL" % x)
        b = run_query(cur, SEQ, "SELECT id, k FROM %s_b" % x)
        gi = run_query(cur, MODES["index"], "SELECT id, k FROM %s_g WHERE id IS NOT NULL" % x)
        u = run_query(cur, MODES["index"], "SELECT id, k FROM %s_u WHERE k IS NOT NULL OR k IS NULL" % x)
        cur.execute("COMMIT")
        if (sorted(map(repr, g)) != sorted(map(repr, b)) or sorted(map(repr, gi)) != sorted(map(repr, b)) or
                sorted(map(repr, u)) != sorted(map(repr, b))):
            result.put(("fail", "final contents of %s differ: gbtree %d and %d rows, unique gbtree %d, heap %d rows"
                        % (x, len(g), len(gi), len(u), len(b)), stats))
            return
        if AM == "gbtree":
            cur.execute("SELECT gbtree_check('{x}_g_x', true), gbtree_check('{x}_g_id', true), "
                        "gbtree_check('{x}_u_k', true)".format(x=x))
    result.put(("ok", None, stats))
    conn.close()


def main():
    # run-fuzz.sh asks a run that does not end for every process's stacks
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    ap = argparse.ArgumentParser()
    ap.add_argument("--dsn", required=True)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--writers", type=int, default=3)
    ap.add_argument("--batchers", type=int, default=1)
    ap.add_argument("--tablespace", default=None, help="an empty directory for a second tablespace")
    ap.add_argument("--types", default=None,
                    help="a comma list of key types (%s), of multi-word twins (%s: c2 is (int4, timestamptz), "
                         "c3 (int2 DESC NULLS FIRST, float8, uuid), tx (text), ct (int4, varchar DESC NULLS FIRST)), "
                         "of twins with INCLUDE columns (%s) or unique indexes (%s), or the groups oneword, "
                         "multiword, include, unique and text (tx, ct, ut); "
                         "default: every one-word type, and the others the installed gbtree can index"
                         % (",".join(ONE_WORD_TYPES), ",".join(MULTIWORD_TYPES), ", ".join(
                             "%s (%s)" % (t, index_def(t)) for t in INCLUDE_TYPES), ", ".join(
                             "%s (%s)%s" % (t, index_def(t), UNIQUE_TWINS[t]) for t in UNIQUE_TYPES)))
    ap.add_argument("--am", default="gbtree", choices=["gbtree", "btree"],
                    help="the access method of the \"gbtree\" twins (btree: check the fuzzer itself on a "
                         "PostgreSQL without gbtree)")
    args = ap.parse_args()
    # text values are bytes (LATIN1, connect): printed as they were sent
    for f in (sys.stdout, sys.stderr):
        f.reconfigure(encoding="latin-1", errors="backslashreplace")
    set_am(args.am)
    seed = args.seed if args.seed is not None else random.randrange(1, 2 ** 31)
    unsupported = multiword_support(args.dsn)
    if args.types is None:
        types = ONE_WORD_TYPES + [t for t in MULTIWORD_TYPES + NEW_TYPES if t not in unsupported]
        for t in MULTIWORD_TYPES + NEW_TYPES:
            if t in unsupported:
                print("gbtree_fuzz: type %s left out: %s" % (t, unsupported[t]), flush=True)
    else:
        groups = {"oneword": ONE_WORD_TYPES, "multiword": MULTIWORD_TYPES, "include": INCLUDE_TYPES,
                  "unique": UNIQUE_TYPES, "text": [t for t in MULTIWORD_TYPES + NEW_TYPES if text_bytes(t)]}
        types = []
        for t in args.types.split(","):
            for u in groups.get(t, [t]):
                if u not in types:
                    types.append(u)
        bad = [t for t in types if t not in ONE_WORD_TYPES + MULTIWORD_TYPES + NEW_TYPES]
        if bad:
            ap.error("unknown types: %s" % ", ".join(bad))
        if any(t in unsupported for t in types):
            print("gbtree_fuzz: %s cannot index %s" % (AM, "; ".join("%s (%s)" % (t, unsupported[t])
                                                                    for t in types if t in unsupported)),
                  file=sys.stderr, flush=True)
            sys.exit(2)
    print("gbtree_fuzz: seed %d, %d writers, %d batchers, %.0f s, types %s%s"
          % (seed, args.writers, args.batchers, args.seconds, ",".join(types),
             "" if AM == "gbtree" else " (--am %s: both twins btree)" % AM), flush=True)
    setup(args.dsn, types, args.tablespace)
    deadline = time.time() + args.seconds
    global TEXT_FIT_LONG_FROM
    TEXT_FIT_LONG_FROM = time.time() + args.seconds / 2
    counter = mp.Value("l", 0)
    # the unique twins' changes in the writers: both twins ok, both 23505
    ucounts = mp.Array("l", 2)
    # the text twins' values longer than the field, refused (54000)
    lcounts = mp.Array("l", 3)
    result = mp.Queue()
    procs = [mp.Process(target=writer, args=(args.dsn, types, seed, w, deadline, counter, AM, ucounts, lcounts))
             for w in range(args.writers)]
    bout = mp.Queue()
    bprocs = [mp.Process(target=batcher, args=(args.dsn, types, seed, i, args.batchers, deadline, bout, AM))
              for i in range(args.batchers)]
    chk = mp.Process(target=checker, args=(args.dsn, types, seed, deadline, result, AM))
    rout = mp.Queue()
    racers = [mp.Process(target=racer, args=(args.dsn, types, seed, deadline, rout, AM))] \
        if any(t in UNIQUE_TWINS for t in types) else []
    for p in procs + bprocs + [chk] + racers:
        p.start()
    status, err, stats = result.get()
    bstats = collections.Counter()
    bstatus = []
    guc_min, can_prepare = None, True
    for p in bprocs:
        # each batcher reports once, however it ended (a killed one: never)
        try:
            bid, st, bs, cs, guc_min, can_prepare = bout.get(timeout=max(30, deadline - time.time() + 120))
        except Exception:
            bstatus.append("no report")
            continue
        bstatus.append(st)
        bstats.update(bs)
        for k in ["queries", "rows", "cursors", "array_scan_used", "btree_wrong"] + \
                [k for k in cs if k.startswith(("join", "new_"))]:
            stats[k] += cs[k]
    for p in procs + bprocs:
        p.join()
    chk.join()
    bad_writers = [p.exitcode for p in procs + bprocs if p.exitcode != 0]
    print("gbtree_fuzz: seed %d: %d writer operations, %d queries (%d rows) and %d cursors compared, "
          "index used in %d of %d sampled plans (GbtreeArrayScan in %d)" % (
              seed, counter.value, stats["queries"], stats["rows"], stats["cursors"],
              stats["index_used"], stats["explained"], stats["array_scan_used"]))
    if stats["btree_wrong"]:
        print("gbtree_fuzz: btree's index answered differently from the seq scan in %d queries, gbtree's as "
              "the seq scan did (a btree bug of this PostgreSQL, not counted as a difference)"
              % stats["btree_wrong"])
    mw = [t for t in types if t in MULTIWORD_TYPES]
    if mw:
        print("gbtree_fuzz: multi-word twins: checker's checks %s; batched transactions %s; "
              "joins on the leading column, with the INCLUDE and unique twins' %d (%d rows), "
              "through GbtreeJoin where it takes the index %d"
              % (", ".join("%s %d" % (t, stats["checks_" + t]) for t in mw),
                 ", ".join("%s %d" % (t, bstats["transactions_" + t]) for t in mw),
                 stats["new_joins"], stats["new_join_rows"], stats["new_taken_gbtree_joins"]))
    nw = [t for t in types if t in NEW_TYPES]
    if nw:
        print("gbtree_fuzz: INCLUDE and unique twins: checker's checks %s; batched transactions %s; "
              "every column ORDER BY key columns: %d queries (index-only scans in %d of %d sampled plans); "
              "count/array-scan shapes %d, joins %d (%d rows; differing only on keys that the snapshot holds twice, "
              "not counted: %d), in %d plans explained none by %s "
              "but GbtreeJoin where it takes the index (%d) (%d by %s)"
              % (", ".join("%s %d" % (t, stats["checks_" + t]) for t in nw),
                 ", ".join("%s %d" % (t, bstats["transactions_" + t]) for t in nw),
                 stats["new_key_order"], stats["new_key_order_ios"], stats["new_key_order_explained"],
                 stats["new_onescan"], stats["new_joins"], stats["new_join_rows"], stats["new_join_unique_proof"],
                 stats["new_plans"],
                 "/".join(ONE_WORD_SCANS), stats["new_taken_gbtree_joins"], stats["new_key_column_scans"],
                 "/".join(KEY_COLUMN_SCANS)))
    if any(text_bytes(t) for t in types):
        print("gbtree_fuzz: text twins (fields of %s bytes): writes of a value past the longest tail on the gbtree twin, "
              "refused with 54000: %d; entries audited against the heap (audit_entries): %d times"
              % (", ".join("%s %d" % (t, text_bytes(t)) for t in types if text_bytes(t)), lcounts[0],
                 stats["entry_audits"]))
        if TEXT_FIT:
            print("gbtree_fuzz: FUZZ_TEXT_FIT: stored values mostly of %s bytes; REINDEXes of text twins %s"
                  % (", ".join("%s %d" % (t, stored_width(t)) for t in types if text_bytes(t)),
                     "%d, of which fitted to fewer than four words %d" % (lcounts[1], lcounts[2])
                     if HAVE_PAGEINSPECT else "not counted (no pageinspect)"))
    if LONG_TEXT and any(text_bytes(t) for t in types):
        # how many stored values the gbtree twins hold past their fields
        conn = connect(args.dsn)
        cur = conn.cursor()
        held = []
        for t in types:
            if not text_bytes(t):
                continue
            conds = " OR ".join("octet_length(%s::text) > %d" % (c, text_bytes(t))
                                for c, ct, _ in tcols(t) if ct in TEXT_TYPES)
            cur.execute("SELECT count(*), coalesce(max(greatest(%s)), 0) FROM fz_%s_g WHERE %s"
                        % (", ".join("octet_length(%s::text)" % c for c, ct, _ in tcols(t) if ct in TEXT_TYPES),
                           t, conds))
            n, longest = cur.fetchone()
            held.append("%s %d (longest %d bytes)" % (t, n, longest))
        conn.close()
        print("gbtree_fuzz: rows with a text past its field at the end: %s" % ", ".join(held))
    if any(t in UNIQUE_TWINS for t in types):
        print("gbtree_fuzz: unique twins' changes (the same outcome on both): writers %d ok, %d 23505; "
              "batchers %d ok, %d 23505 (%d transactions)"
              % (ucounts[0], ucounts[1], bstats["unique_ok"], bstats["unique_23505"],
                 sum(bstats["transactions_" + t] for t in UNIQUE_TWINS)))
        try:
            rfails, rstats = rout.get(timeout=max(30, deadline - time.time() + 120))
        except Exception:
            rfails, rstats = ["the racers never reported"], {}
        for p in racers:
            p.join()
        rstats = collections.Counter(rstats)
        print("gbtree_fuzz: unique racers (one index, no twin): inserts %d (%d after a key of the session's own, "
              "so batched), updates %d, deletes %d, "
              "23505 %d (%d on keys never deleted, each held by one committed row), rolled back to a "
              "savepoint %d, seq scans for duplicates %d; retried: 40P01 %d, 40001 %d"
              % (rstats["insert"], rstats["insert_batched"], rstats["update"], rstats["delete"], rstats["23505"],
                 rstats["conflicts_checked"], rstats["rolled_back"], rstats["scans"],
                 rstats["retried_40P01"], rstats["retried_40001"]))
        if rfails and status == "ok":
            status, err = "fail", "unique racers: " + "; ".join(rfails)
        if (args.seconds >= 60 and status == "ok" and not bad_writers
                and (rstats["conflicts_checked"] == 0 or rstats["insert"] == 0)):
            status, err = "fail", "the unique racers never met a conflict on a key never deleted"
        if (args.seconds >= 60 and status == "ok" and not bad_writers and args.writers > 0
                and (ucounts[0] == 0 or ucounts[1] == 0)):
            status, err = "fail", "the unique twins' changes never %s" % ("succeeded" if ucounts[0] == 0 else
                                                                            "met a duplicate")
    if stats["has_join_guc"]:
        print("gbtree_fuzz: join queries: %d, through GbtreeJoin: %d (of %d plans explained); %d rows; "
              "per kind (through GbtreeJoin): %s; GbtreeJoins of Join Type Left: %d; "
              "small %s %d, parallel %d (GbtreeJoin under a Gather: %d)"
              % (stats["joins"], stats["join_gbtree"], stats["join_explained"], stats["join_rows"],
                 ", ".join("%s %d (%d)" % (v, stats["join_" + k], stats["join_gbtree_" + k])
                           for k, v in JOIN_KINDS.items()),
                 stats["join_gbtree_type_left"],
                 JOIN_BATCH_GUC, stats["join_small_batches"], stats["join_parallel"], stats["join_gbtree_workers"]))
    else:
        print("gbtree_fuzz: %s: absent in this gbtree: no join queries" % JOIN_GUC)
    if args.batchers > 0:
        print("gbtree_fuzz: %s: %s" % (BATCH_GUC, "absent in this gbtree: batched transactions ran without it"
                                       if guc_min is None else "set per transaction (min %d kB)" % guc_min))
        print("gbtree_fuzz: batched transactions: %d (%d rows written; %d comparisons inside them, %d after); "
              "retried: %s" % (bstats["transactions"], bstats["rows_written"], bstats["compared_in_txn"],
                              bstats["compared_after"],
                              ", ".join("%s %d" % (k[8:], v) for k, v in sorted(bstats.items())
                                        if k.startswith("retried_")) or "none"))
        print("gbtree_fuzz: batch features: " + ", ".join("%s %d" % (f, bstats[f]) for f in FEATURES))
        print("gbtree_fuzz: batch endings: " + ", ".join("%s %d" % (e, bstats["end_" + e])
                                                         for e in dict.fromkeys(ENDINGS)))
        other = sorted((k, v) for k, v in bstats.items()
                       if k.startswith(("memory_", "failed_", "exclusion_", "truncate_then_")) or k in (
                           "rollback_to", "truncate_rolled_back", "cursor_fetches", "prepare_unavailable",
                           "tablespace_unavailable", "count_checks", "compare_lock_timeout"))
        print("gbtree_fuzz: batch details: " + ", ".join("%s %d" % kv for kv in other))
        # every kind must have run in a run of normal length (features:
        # where some type is not a unique twin's, whose transactions are
        # of their own)
        missing = [f for f in FEATURES if bstats[f] == 0 and not (f == "tablespace" and not args.tablespace)
                   and any(t not in UNIQUE_TWINS for t in types)]
        missing += ["ending " + e for e in dict.fromkeys(ENDINGS) if bstats["end_" + e] == 0]
        if guc_min is not None and not any(bstats["memory_%dkB" % v] for v in (64, max(64, guc_min))):
            missing.append("a small %s" % BATCH_GUC)
        if not can_prepare:
            missing.append("PREPARE TRANSACTION (max_prepared_transactions = 0)")
        if missing and args.seconds >= 60 and status == "ok" and not bad_writers:
            status, err = "fail", "batched transactions never reached: " + ", ".join(missing)
    if status != "ok" or bad_writers:
        print("gbtree_fuzz: FAILED with seed %d\n%s" % (seed, err or "a writer or batcher failed (%s)"
                                                        % ", ".join(bstatus)), flush=True)
        sys.exit(1)
    print("gbtree_fuzz: ok, 0 differences", flush=True)


if __name__ == "__main__":
    main()
