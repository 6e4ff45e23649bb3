#!/usr/bin/env python3
"""
test/pgsuite/compare.py: compare the outputs of two runs of PostgreSQL's
regression suite, the left one btree (as is, or refusing what gbtree
refused) and the right one rewritten to gbtree, against a list of known
differences (README.md in this directory explains it).

    compare.py --schedule FILE --orig-sql DIR
               --left-sql DIR --left-out DIR --right-sql DIR --right-out DIR
               --allowed FILE [--subst FROM=TO]... [--prefix P]
               [--record FILE] [--pg-version V]
    compare.py --schedule FILE --right-out DIR --refused FILE

The first form prints "ok   PTEST" or "FAIL PTEST (why)" for every test of
the schedule, the differing hunks that failed, and a summary; it exits 1
if any test failed.  The SQL directories are the scripts each run ran and
the unchanged ones.  --record writes the differences found as a new list
to FILE (review it before committing: it records whatever this run
produced).  The second form writes "TEST N" for every statement that the
gbtree run refused as unsupported, for rewrite.py --only.

Each differing hunk (difflib, after the echoed statements that the rewrite
changed are put back as they were and "gbtree" reads "btree" everywhere) is
one of:

  unsupported  only error messages, and on the gbtree side only errors
               that gbtree does not support a statement (UNSUPPORTED
               below); counted per kind, and a test may not have more of
               a kind than the list records
  plan         only lines of EXPLAIN output (plan shape, estimates)
  knock-on     anything else after the test's first unsupported error:
               allowed only as recorded, hunk by hunk (its lines'
               fingerprint), so a changed or new row fails
  order        the same lines in another order, no unsupported error
               before: allowed only as recorded, like knock-on
  other        none of these: a failure unless recorded, hunk by hunk, with
               the reason (the list's comment) why it is right
"""

import argparse
import collections
import difflib
import hashlib
import os
import re
import sys

# Errors that say gbtree lacks a feature (gbtree side only).  The kind
# names what is missing; it is what the list counts.
UNSUPPORTED = [
    (re.compile(r'access method "gbtree" does not support (unique indexes|'
                r'multicolumn indexes|included columns|exclusion constraints|'
                r'[a-z ]+)'), None),
    (re.compile(r'data type (\S+(?: \S+)*?) has no default operator class '
                r'for access method "gbtree"'), 'no operator class for type'),
    (re.compile(r'operator class "([^"]+)" does not exist for access method '
                r'"gbtree"'), 'no such operator class'),
    (re.compile(r'gbtree indexes support only one key column'),
     'multicolumn indexes'),
    (re.compile(r'gbtree does not support indexes on type'),
     'no operator class for type'),
    # multi-word keys (src/README, "Multi-word keys"): not yet unique, at
    # most 256 bits and 16 columns
    (re.compile(r'gbtree does not support unique indexes of several columns or on uuid'),
     'unique indexes of several columns or on uuid'),
    (re.compile(r'gbtree index keys are at most \d+ bits'), 'keys wider than 256 bits'),
    (re.compile(r'gbtree indexes support at most \d+ columns'), 'more than 16 columns'),
    (re.compile(r'gbtree does not support INCLUDE columns of type (\S+(?: \S+)*)'),
     'no INCLUDE column of type'),
    # text keys (src/README, "Text keys"): under "C", "POSIX", C.UTF-8 or a
    # deterministic ICU collation (none in the suite's SQL_ASCII), and a
    # value whose rest past the key's words fits a tail (the first pattern
    # is the refusal of any value past the words, before tails); the error
    # of a value comes at the INSERT or UPDATE that writes it, which run 3
    # cannot mirror
    (re.compile(r'gbtree supports text keys only under the "C",? (?:or )?"POSIX"'),
     'text key under a collation that does not order by bytes'),
    (re.compile(r'gbtree does not support nondeterministic collations'),
     'text key under a nondeterministic collation'),
    (re.compile(r'value too long for gbtree index "[^"]+"'), 'text longer than the key'),
    (re.compile(r'index row too long for gbtree index "[^"]+"'), 'index row too long'),
    (re.compile(r'cannot cluster on index "[^"]+" because access method does '
                r'not support clustering'), 'clustering'),
    # a unique or primary key constraint needs a (unique) btree index
    (re.compile(r'index "[^"]+" is not a btree'), 'constraint on a gbtree index'),
    # a foreign key must reference a btree unique index (tablecmds.c):
    # the core's internal error, which gbtree's utility hook turns into
    # 0A000 (unique.c, gbt_refuse_fk_index)
    (re.compile(r'only b-tree indexes are supported for foreign keys|'
                r'a foreign key needs a btree unique index on the referenced columns'),
     'foreign key to a gbtree unique index'),
    # before PostgreSQL 18 the executor's speculative insertion is btree's
    # only: gbtree refuses ON CONFLICT on a table with a unique gbtree index
    (re.compile(r'INSERT \.\.\. ON CONFLICT is not supported on table "[^"]+", '
                r'which has the unique gbtree index'), 'ON CONFLICT with a unique gbtree index'),
    # core code that takes only a btree unique index: REFRESH ...
    # CONCURRENTLY (matview.c), a unique index on a partitioned table
    (re.compile(r'cannot refresh materialized view "[^"]+" concurrently'),
     'refresh concurrently by a gbtree unique index'),
    (re.compile(r'cannot match partition key to an index using access method "gbtree"'),
     'unique index on a partitioned table'),
]

ERROR_CONT = re.compile(r'^(LINE \d+: |DETAIL:  |HINT:  |CONTEXT:  |\s*\^\s*$)')
PLAN_HEADER = re.compile(r'^\s*(QUERY PLAN|\w*explain\w*)\s*$', re.I)
RULE = re.compile(r'^-+$')
RULE_LINE = re.compile(r'^-+(\+-+)*$')
OID = re.compile(r'\b\d{5,}\b')
MESSAGE = re.compile(r'^(ERROR|WARNING|NOTICE|DETAIL|HINT|CONTEXT):')
INSERTED = 'USING "gbtree"'     # what rewrite.py inserts
MARK = re.compile(r'/\*pgsuite:(\d+)\*/')    # and how it numbers statements
POSITION = re.compile(r'^(LINE \d+: |\s*\^\s*$)')
ROWS = re.compile(r'^\((\d+) rows?\)$')


def read_lines(path):
    with open(path, encoding='utf-8', errors='surrogateescape') as f:
        return f.read().split('\n')


def unsupported_kind(line):
    if not line.startswith('ERROR:  '):
        return None
    for pat, kind in UNSUPPORTED:
        m = pat.search(line)
        if m:
            if kind is None:
                return m.group(1)
            if kind in ('no operator class for type', 'no INCLUDE column of type') and m.groups():
                return '%s %s' % (kind, m.group(1))
            return kind
    return None


def error_blocks(lines, only_unsupported):
    """Line numbers of error messages (ERROR and its LINE, caret, DETAIL,
    HINT, CONTEXT lines), and {ERROR line: kind} for the unsupported ones."""
    marks, kinds = set(), {}
    for i, line in enumerate(lines):
        if not line.startswith('ERROR:  '):
            continue
        kind = unsupported_kind(line)
        if only_unsupported and kind is None:
            continue
        if kind is not None:
            kinds[i] = kind
        marks.add(i)
        j = i + 1
        while j < len(lines) and ERROR_CONT.match(lines[j]):
            marks.add(j)
            j += 1
    return marks, kinds


def explain_lines(lines):
    """Line numbers of EXPLAIN output: a one-column result headed QUERY
    PLAN (or a column named like an explain wrapper function), up to and
    including its "(N rows)"."""
    marks = set()
    i = 0
    while i + 1 < len(lines):
        if PLAN_HEADER.match(lines[i]) and RULE.match(lines[i + 1]):
            j = i + 2
            while j < len(lines) and not ROWS.match(lines[j]):
                j += 1
            if j < len(lines):
                marks.update(range(i, j + 1))
            i = j + 1
        else:
            i += 1
    return marks


def fingerprint(old, new):
    # Object OIDs in messages ("could not find commutator for operator
    # 30114") depend on what the tests running beside this one created;
    # numbers in rows count.
    def masked(line):
        return OID.sub('#', line) if MESSAGE.match(line) else line
    h = hashlib.sha1()
    for line in old:
        h.update(('-' + masked(line) + '\n').encode('utf-8', 'surrogateescape'))
    for line in new:
        h.update(('+' + masked(line) + '\n').encode('utf-8', 'surrogateescape'))
    return h.hexdigest()[:12]


def excerpt(old, new):
    first = ('-' + old[0]) if old else ('+' + new[0])
    first = ' '.join(first.split())
    if len(first) > 70:
        first = first[:67] + '...'
    return '%d-/%d+ %s' % (len(old), len(new), first)


class Result:
    def __init__(self, name):
        self.name = name
        self.missing = None
        self.unsupported = collections.Counter()
        self.plan = 0
        self.position = 0
        self.hunks = []         # (class, fingerprint, excerpt, old, new, line)


def restored(name, outdir, sqldir, origdir):
    """A run's output of test name, with the echo of each statement line
    that the rewrite changed as it was before the rewrite."""
    out = os.path.join(outdir, 'results', name + '.out')
    if not os.path.exists(out):
        raise LookupError('no %s' % out)
    lines = read_lines(out)
    orig = read_lines(os.path.join(origdir, name + '.sql'))
    new = read_lines(os.path.join(sqldir, name + '.sql'))
    if len(orig) != len(new):
        raise LookupError('the rewrite changed the number of lines of %s.sql' % name)
    back = {n: o for o, n in zip(orig, new) if o != n}
    return [back.get(line, line) for line in lines]


def compare_test(name, args, subst):
    """Compare the left run's output (btree, or the third run) with the
    right run's (gbtree)."""
    res = Result(name)
    try:
        a = restored(name, args.left_out, args.left_sql, args.orig_sql)
        b = restored(name, args.right_out, args.right_sql, args.orig_sql)
    except LookupError as e:
        res.missing = str(e)
        return res

    unsup_marks, unsup = error_blocks(b, True)
    err_a, _ = error_blocks(a, False)

    def norm(lines):
        # The method's name, and the padding of result columns that it
        # widens, do not count.
        out = []
        for line in lines:
            for f, t in subst:
                line = line.replace(f, t)
            line = MARK.sub('', line)
            line = line.replace(INSERTED + ' ', '').replace(' ' + INSERTED, '')
            line = re.sub(r'\bgbtree\b', 'btree', line)
            if RULE_LINE.match(line):
                line = '-'
            out.append(' '.join(line.split()))
        return out
    an, bn = norm(a), norm(b)
    plan_a, plan_b = explain_lines(an), explain_lines(bn)

    # Unsupported errors count where the runs differ: against the third
    # run, which refuses the same statements, only those it did not.
    ops = [op for op in difflib.SequenceMatcher(None, an, bn, autojunk=False).get_opcodes()
           if op[0] != 'equal']
    differing = [j for op in ops for j in range(op[3], op[4]) if j in unsup]
    for j in differing:
        res.unsupported[unsup[j]] += 1
    first_unsup = min(differing) if differing else None
    for tag, i1, i2, j1, j2 in ops:
        ia, jb = range(i1, i2), range(j1, j2)
        if jb and all(j in unsup_marks for j in jb) and all(i in err_a for i in ia):
            continue            # counted in res.unsupported
        if all(i in plan_a for i in ia) and all(j in plan_b for j in jb):
            res.plan += 1
            continue
        if all(POSITION.match(a[i]) for i in ia) and all(POSITION.match(b[j]) for j in jb):
            # where an error points into a rewritten statement
            res.position += 1
            continue
        old, newl = an[i1:i2], bn[j1:j2]
        if first_unsup is not None and first_unsup < j2:
            cls = 'knock-on'
        elif sorted(old) == sorted(newl):
            cls = 'order'
        else:
            cls = 'other'
        # EXPLAIN lines in a mixed hunk (a plan on one side, an error on
        # the other) stay out of its fingerprint: plans may change
        fp = fingerprint([an[i] for i in ia if i not in plan_a],
                         [bn[j] for j in jb if j not in plan_b])
        res.hunks.append((cls, fp, excerpt(old, newl),
                          old, newl, i1 + 1))
    return res


def read_allowed(path):
    """{test: {'unsupported': Counter, 'hunks': Counter((cls, fp)),
    'plan': n}} from the list's "test", "unsupported", "plan" and "hunk"
    lines."""
    allowed = {}
    cur = None
    with open(path, encoding='utf-8') as f:
        for lineno, line in enumerate(f, 1):
            s = line.split('#', 1)[0].rstrip() if not line.lstrip().startswith('hunk') \
                else line.rstrip()
            if not s.strip():
                continue
            w = s.split()
            if w[0] == 'test' and len(w) == 2:
                cur = allowed.setdefault(w[1], {'unsupported': collections.Counter(),
                                                'hunks': collections.Counter(),
                                                'plan': 0})
            elif cur is None:
                raise SystemExit('%s:%d: entry before any "test" line' % (path, lineno))
            elif w[0] == 'unsupported' and len(w) >= 3:
                cur['unsupported'][' '.join(w[2:])] += int(w[1])
            elif w[0] == 'plan' and len(w) == 2:
                cur['plan'] = int(w[1])
            elif w[0] == 'hunk' and len(w) >= 4:
                cur['hunks'][(w[2], w[1])] += int(w[3])
            else:
                raise SystemExit('%s:%d: cannot parse: %s' % (path, lineno, line.rstrip()))
    return allowed


def check(res, allowed):
    """Return (failures, notes) for one test."""
    fails, notes = [], []
    if res.missing:
        return [res.missing], notes
    al = allowed.get(res.name, {'unsupported': collections.Counter(),
                                'hunks': collections.Counter(), 'plan': 0})
    for kind, n in sorted(res.unsupported.items()):
        m = al['unsupported'].get(kind, 0)
        if n > m:
            fails.append('%d unsupported errors "%s", %d listed' % (n, kind, m))
        elif n < m:
            notes.append('%d unsupported errors "%s", %d listed (update the list)'
                         % (n, kind, m))
    for kind, m in sorted(al['unsupported'].items()):
        if kind not in res.unsupported:
            notes.append('no unsupported errors "%s", %d listed (update the list)'
                         % (kind, m))
    seen = collections.Counter()
    for cls, fp, ex, old, new, line in res.hunks:
        seen[(cls, fp)] += 1
        if seen[(cls, fp)] <= al['hunks'].get((cls, fp), 0):
            continue
        if cls == 'other':
            fails.append('line %d: a difference that is neither an unsupported '
                         'error, EXPLAIN output, nor after one, and not in the '
                         'list (%s): %s' % (line, fp, ex))
        else:
            fails.append('line %d: %s difference %s not in the list: %s'
                         % (line, cls, fp, ex))
    for key, m in al['hunks'].items():
        if seen[key] < m:
            notes.append('%s difference %s listed %d times, seen %d (update the list)'
                         % (key[0], key[1], m, seen[key]))
    return fails, notes


def show_hunk(old, new, line):
    print('    @@ line %d (btree run: -, gbtree run: +)' % line)
    for s in old[:15]:
        print('    -' + s)
    if len(old) > 15:
        print('    ... %d more' % (len(old) - 15))
    for s in new[:15]:
        print('    +' + s)
    if len(new) > 15:
        print('    ... %d more' % (len(new) - 15))


def schedule_tests(path):
    """The schedule's tests, and those it says to ignore (random)."""
    tests, ignored = [], set()
    with open(path, encoding='utf-8') as f:
        for line in f:
            w = line.split()
            if len(w) >= 2 and w[0] == 'test:':
                tests.extend(w[1:])
            elif len(w) >= 2 and w[0] == 'ignore:':
                ignored.update(w[1:])
    return tests, ignored


def recorded_version(path):
    with open(path, encoding='utf-8') as f:
        for line in f:
            if line.startswith('# recorded with PostgreSQL '):
                return line.split()[-1]
    return ''


def write_list(path, results, why, version):
    with open(path, 'w', encoding='utf-8') as f:
        f.write('# test/pgsuite/%s: the known differences between two runs of\n'
                '# PostgreSQL\'s regression suite (README.md in this directory):\n'
                '# allowed.txt: btree as is against gbtree; allowed-same.txt: btree\n'
                '# refusing the statements gbtree refused against gbtree.  Written by\n'
                '# compare.py --record; the "why" comments are kept from the previous\n'
                '# list.\n'
                '# recorded with PostgreSQL %s\n'
                '#\n' % (os.path.basename(path), version))
        f.write('#   unsupported N KIND         N errors "gbtree does not support KIND"\n'
                '#   plan N                     N hunks of EXPLAIN output (not checked)\n'
                '#   hunk FINGERPRINT CLASS N   a differing hunk, N times: its -/+ line\n'
                '#                              counts and first line follow\n')
        for res in results:
            if res.missing or not (res.unsupported or res.plan or res.hunks):
                continue
            f.write('\ntest %s\n' % res.name)
            for line in why.get(res.name, []):
                f.write(line)
            for kind, n in sorted(res.unsupported.items()):
                f.write('  unsupported %d %s\n' % (n, kind))
            if res.plan:
                f.write('  plan %d\n' % res.plan)
            counts = collections.Counter((c, fp) for c, fp, *_ in res.hunks)
            done = set()
            for cls, fp, ex, *_ in res.hunks:
                if (cls, fp) in done:
                    continue
                done.add((cls, fp))
                f.write('  hunk %s %s %d  %s\n' % (fp, cls, counts[(cls, fp)], ex))


def read_why(path):
    """The comment lines under each "test" line of the old list."""
    why, cur = {}, None
    if not os.path.exists(path):
        return why
    with open(path, encoding='utf-8') as f:
        for line in f:
            w = line.split()
            if w[:1] == ['test'] and len(w) == 2:
                cur = why.setdefault(w[1], [])
            elif cur is not None and line.startswith('  #'):
                cur.append(line)
    return why


def refused_statements(lines):
    """The numbers of the rewritten statements that gbtree refused: an
    unsupported error right after the echo of the statement that carries
    the number (no statement ends between the two)."""
    found = []
    _, unsup = error_blocks(lines, True)
    for e in sorted(unsup):
        m = e - 1
        while m >= 0 and not MARK.search(lines[m]):
            m -= 1
        if m < 0 or any(';' in lines[i] for i in range(m, e - 1)):
            continue
        found.append(int(MARK.findall(lines[m])[-1]))
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--schedule', required=True)
    for opt in ('left-sql', 'right-sql', 'orig-sql', 'left-out', 'right-out',
                'allowed', 'refused', 'subst', 'record', 'pg-version', 'prefix'):
        ap.add_argument('--' + opt, action='append' if opt == 'subst' else 'store',
                        default=[] if opt == 'subst' else None)
    args = ap.parse_args()
    tests, ignored = schedule_tests(args.schedule)
    if args.refused:
        # --right-out DIR --refused FILE: "TEST N" for each statement the
        # gbtree run refused, for rewrite.py --only
        n = 0
        with open(args.refused, 'w', encoding='utf-8') as f:
            for name in tests:
                out = os.path.join(args.right_out, 'results', name + '.out')
                if os.path.exists(out):
                    for k in refused_statements(read_lines(out)):
                        f.write('%s %d\n' % (name, k))
                        n += 1
        print('refused %d' % n)
        return 0
    subst = [tuple(s.split('=', 1)) for s in args.subst]
    allowed = read_allowed(args.allowed)
    args.pg_version = args.pg_version or ''
    prefix = args.prefix or ''

    results = []
    nfail = 0
    totals = collections.Counter()
    for name in tests:
        res = compare_test(name, args, subst)
        results.append(res)
        fails, notes = check(res, allowed)
        totals['unsupported'] += sum(res.unsupported.values())
        totals['plan'] += res.plan
        for cls, *_ in res.hunks:
            totals[cls] += 1
        if fails and name in ignored:
            # its output may differ from run to run (pg_regress ignores it too)
            print('ok   %s%s (differs, but the schedule ignores it: %s)'
                  % (prefix, name, fails[0]))
        elif fails:
            nfail += 1
            print('FAIL %s%s (%s)' % (prefix, name, fails[0] if len(fails) == 1 else
                                     '%d problems' % len(fails)))
            for s in fails:
                print('    ' + s)
            for cls, fp, ex, old, new, line in res.hunks:
                if any(('line %d:' % line) in s for s in fails):
                    show_hunk(old, new, line)
        else:
            print('ok   %s%s' % (prefix, name))
        for s in notes:
            print('    note: ' + s)
    for name in sorted(set(allowed) - set(tests)):
        print('    note: %s is listed but not in the schedule' % name)
    was = recorded_version(args.allowed)
    if args.pg_version and was and was != args.pg_version:
        # another minor release's suite may differ in places
        print('    note: the list was recorded with PostgreSQL %s, this is %s'
              % (was, args.pg_version))

    differing = sum(1 for r in results if r.unsupported or r.plan or r.hunks)
    print('pgsuite: %d tests, %d with differences: %d unsupported errors, '
          '%d EXPLAIN hunks, %d knock-on hunks, %d order hunks, %d other hunks'
          % (len(tests), differing, totals['unsupported'], totals['plan'],
             totals['knock-on'], totals['order'], totals['other']))
    if args.record:
        write_list(args.record, results, read_why(args.allowed), args.pg_version)
        print('pgsuite: wrote %s' % args.record)
    return 1 if nfail else 0


if __name__ == '__main__':
    sys.exit(main())
