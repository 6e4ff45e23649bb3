#!/usr/bin/env python3
"""
test/pgsuite/rewrite.py: make every btree CREATE INDEX of PostgreSQL's
regression scripts a gbtree one.

    rewrite.py [--list] [--only LIST] FILE...

Rewrites each FILE (sql/TEST.sql) in place and prints "rewritten N" (N:
statements changed, all files together).  --list also prints each change
as "file:line: old -> new"; --only rewrites just the statements that LIST
names ("TEST N" lines: the Nth statement of TEST that would be rewritten).

A statement is changed when its method is btree or left out:

    CREATE [UNIQUE] INDEX [CONCURRENTLY] [[IF NOT EXISTS] name]
        ON [ONLY] table [USING btree] (...)

"USING btree" becomes "USING gbtree"; with no USING clause, 'USING "gbtree"'
goes before the column list (the quotes mark what was inserted: compare.py
removes it from the statements that the output shows).  Other methods (hash, gist, gin, brin, spgist,
test access methods) are left alone.  The scanner knows just enough SQL and
psql to find statements: comments, quoted identifiers, string literals
(a CREATE INDEX built in a string, for EXECUTE or \\gexec, is left alone),
dollar quotes (function bodies are searched too), psql backslash commands
and COPY ... FROM stdin data.
"""

import os
import re
import sys

INSERTED = 'USING "gbtree"'
# after the method: numbers each statement, so that the statements gbtree
# refused can be found in the output and refused in the third run too
MARK = '/*pgsuite:%d*/'
WORD = re.compile(r'[A-Za-z_\x80-\uffff][A-Za-z0-9_$\x80-\uffff]*')
DOLLAR = re.compile(r'\$([A-Za-z_][A-Za-z0-9_]*)?\$')


def tokens(text):
    """Yield (kind, value, start, end) for the top-level tokens of a psql
    script; kind is 'word', 'ident' (quoted), 'punct' or 'eos' (a ';').
    Literals, comments and COPY data yield nothing."""
    i, n = 0, len(text)
    at_line_start = True
    copy_from_stdin = False     # the statement being read is COPY ... FROM stdin
    stmt_words = []
    while i < n:
        c = text[i]
        if c == '\n':
            at_line_start = True
            i += 1
            continue
        if c in ' \t\r\f':
            i += 1
            continue
        if at_line_start and c == '\\':
            # a psql meta-command: the rest of the line
            j = text.find('\n', i)
            i = n if j < 0 else j
            continue
        at_line_start = False
        if text.startswith('--', i):
            j = text.find('\n', i)
            i = n if j < 0 else j
            continue
        if text.startswith('/*', i):
            depth, i = 1, i + 2     # SQL block comments nest
            while i < n and depth:
                if text.startswith('/*', i):
                    depth, i = depth + 1, i + 2
                elif text.startswith('*/', i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
            continue
        if c == "'" or (c in 'eEbBxXuUnN' and text.startswith("'", i + 1)) or \
                (c in 'uU' and text.startswith("&'", i + 1)):
            # string literal; E'' strings take backslash escapes
            escapes = c in 'eE'
            i = text.index("'", i) + 1
            while i < n:
                if escapes and text[i] == '\\':
                    i += 2
                elif text[i] == "'":
                    if text.startswith("''", i):
                        i += 2
                    else:
                        i += 1
                        break
                else:
                    i += 1
            continue
        if c == '"':
            j = i + 1
            while True:
                j = text.index('"', j)
                if text.startswith('""', j):
                    j += 2
                else:
                    break
            yield ('ident', text[i + 1:j], i, j + 1)
            stmt_words.append(text[i + 1:j])
            i = j + 1
            continue
        if c == '$':
            m = DOLLAR.match(text, i)
            if m:
                # a function body: its statements count too (PL/pgSQL, SQL)
                j = text.find(m.group(0), m.end())
                if j < 0:
                    j = n
                for t in tokens(text[m.end():j]):
                    yield (t[0], t[1], t[2] + m.end(), t[3] + m.end())
                i = j + len(m.group(0))
                continue
        m = WORD.match(text, i)
        if m:
            yield ('word', m.group(0), i, m.end())
            stmt_words.append(m.group(0).lower())
            i = m.end()
            continue
        if c == ';':
            yield ('eos', c, i, i + 1)
            if stmt_words[:1] == ['copy'] and 'from' in stmt_words and \
                    stmt_words[stmt_words.index('from') + 1:][:1] == ['stdin']:
                copy_from_stdin = True
            stmt_words = []
            i += 1
            if copy_from_stdin:
                # The data follows the statement's line, up to "\.".  A
                # COPY that fails at once (the suite has some) has none:
                # psql reads SQL again, so a blank line ends the search.
                j = text.find('\n', i)
                k = text.find('\n\\.', j) if j >= 0 else -1
                if k >= 0 and '\n\n' not in text[j:k + 1]:
                    i = k + 3
                copy_from_stdin = False
            continue
        yield ('punct', c, i, i + 1)
        i += 1


def mark(n):
    return MARK % n


def rewrite(text, only=None):
    """Return (new_text, [(offset, old, new)]) for one script: every
    statement, or those whose numbers (1, 2, ... in the script) are in
    only."""
    toks = list(tokens(text))
    edits = []
    k = 0
    while k < len(toks):
        t = toks[k]
        if not (t[0] == 'word' and t[1].lower() == 'create'):
            k += 1
            continue
        j = k + 1

        def word_at(idx, *words):
            return idx < len(toks) and toks[idx][0] == 'word' and \
                toks[idx][1].lower() in words

        if word_at(j, 'unique'):
            j += 1
        if not word_at(j, 'index'):
            k += 1
            continue
        # ON at this level (the name, if any, comes before it)
        while j < len(toks) and toks[j][0] != 'eos' and not word_at(j, 'on'):
            j += 1
        if not word_at(j, 'on'):
            k = j
            continue
        j += 1
        if word_at(j, 'only'):
            j += 1
        # table name: ident(.ident)*
        j += 1
        while j + 1 < len(toks) and toks[j][1] == '.' and toks[j + 1][0] in ('word', 'ident'):
            j += 2
        if word_at(j, 'using'):
            m = toks[j + 1]
            if m[0] in ('word', 'ident') and m[1].lower() == 'btree':
                edits.append((m[2], m[3], 'gbtree' + mark(len(edits) + 1), toks[k][2]))
        elif j < len(toks) and toks[j][1] == '(':
            # Quoted, so that compare.py can take exactly this text out
            # again wherever the statement is shown (echo, LINE, CONTEXT).
            at = toks[j][2]
            ins = INSERTED + mark(len(edits) + 1)
            ins = ins + ' ' if text[at - 1].isspace() else ' ' + ins
            edits.append((at, at, ins, toks[k][2]))
        else:
            raise ValueError('unexpected CREATE INDEX at offset %d: %r' %
                             (toks[k][2], text[toks[k][2]:toks[k][2] + 120]))
        k = j
    out = []
    last = 0
    changes = []
    for n, (start, end, new, stmt) in enumerate(edits, 1):
        if only is not None and n not in only:
            continue
        out.append(text[last:start])
        out.append(new)
        last = end
        changes.append((stmt, text[start:end], new))
    out.append(text[last:])
    return ''.join(out), changes


def main(argv):
    show = False
    only = None
    if argv and argv[0] == '--list':
        show, argv = True, argv[1:]
    if len(argv) >= 2 and argv[0] == '--only':
        # "test number" lines: rewrite just those statements
        only = {}
        with open(argv[1], encoding='utf-8') as f:
            for line in f:
                w = line.split()
                if len(w) == 2:
                    only.setdefault(w[0], set()).add(int(w[1]))
        argv = argv[2:]
    total = 0
    for path in argv:
        with open(path, encoding='utf-8', newline='') as f:
            text = f.read()
        test = os.path.basename(path)[:-len('.sql')]
        new, changes = rewrite(text, None if only is None else only.get(test, set()))
        for stmt, old, rep in changes:
            line = text.count('\n', 0, stmt) + 1
            if show:
                print('%s:%d: %r -> %r' % (path, line, old, rep))
        if changes:
            with open(path, 'w', encoding='utf-8', newline='') as f:
                f.write(new)
        total += len(changes)
    print('rewritten %d' % total)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
