
# Copyright: gbtree project.
#
# The insert batch (gbtree.insert_batch_memory): index entries that a
# transaction makes wait in its backend and reach the pages in sorted runs
# (mid-statement when the memory fills, before a scan of the table, before
# utility statements, at savepoints, COMMIT and PREPARE TRANSACTION).  What
# must hold whatever the batch does:
#
#  (a) kill -9 in the middle of flushes: a long INSERT ... SELECT under a
#      64 kB batch (flushing every few thousand entries) is running, with
#      a ledger session committing numbered batches and pgbench clients
#      writing in batches (savepoints rolled back, updates of keys,
#      deletes); the server is killed (every process at once, then just
#      the flushing backend) once the long insert's entries are seen
#      reaching the index.  After recovery every gbtree index answers
#      like its btree twin and a seq scan, passes gbtree_check(idx, true),
#      every acknowledged ledger row is found through it, and no row of
#      the killed insert is anywhere.
#  (b) a crash between a flush and the commit: the transaction inserted,
#      read its rows (which flushes them), and is still open at the kill;
#      after recovery its rows are gone everywhere.  Two transactions
#      PREPAREd after batched inserts (a savepoint rolled back, keys
#      updated) survive the crash invisible; COMMIT PREPARED shows one's
#      rows through gbtree as through btree, ROLLBACK PREPARED drops the
#      other's.
#  (c) replication: with wal_consistency_checking on the primary (for
#      generic WAL, and for gbtree's resource manager when it is preloaded
#      and the installed gbtree has one), a streaming standby replays
#      batched COPYs with savepoints rolled back, transactions rolled back
#      after flushing, updates, VACUUM and concurrent batched writers,
#      checking every page image on replay; it answers like the primary
#      (gbtree on the standby = btree on the standby = the primary), then
#      is promoted and takes more batched writes.
#  (d) INSERT ... ON CONFLICT DO NOTHING that loses a race with another
#      inserter: its heap tuple is "super-deleted" (dead to everyone) while
#      its transaction goes on, so VACUUM may remove it and another
#      transaction reuse its TID before the transaction commits.  Its
#      gbtree entry must then not point at the new tuple (an entry that
#      waited in the batch and reached the index only at commit would).
#  (e) the same with the rows of a rolled-back savepoint and of a PL/pgSQL
#      block that ended in its handler (dead at once): VACUUM, TID reuse,
#      then the transaction commits.
#  (f) a query cancel just as a PL/pgSQL block (a subtransaction) starts,
#      with 1M entries pending: the enclosing block's handler catches it,
#      the session lives on, and the rolled-back rows are nowhere.
#
# Twin tables T_g (gbtree indexes T_g_C) and T_b (btree indexes T_b_C)
# receive the same statements in the same transactions, so they hold the
# same rows; every query is compared on T_g through each gbtree scan kind,
# on T_b through btree, and as a seq scan of both.  Where the installed
# gbtree has no gbtree.insert_batch_memory the same workload runs without
# setting it (every entry goes straight into the pages).

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use GbtreeTestLib;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(time usleep);

# key ranges of k (int4)
use constant LEDGER_BASE => 2_000_000;    # ledger: LEDGER_BASE + batch * 5000 + 0..4999
use constant LEDGER_ROWS => 5000;
use constant OPEN_BASE => 3_000_000;      # rows of transactions open at a crash
use constant PREP1_BASE => 5_000_000;     # prepared, then committed
use constant PREP2_BASE => 6_000_000;     # prepared, then rolled back
# id residues mod 16 of the rows other than pgbench's
use constant LEDGER_RES => 15;
use constant OPEN_RES => 14;
use constant PREP_RES => 13;

my $node = PostgreSQL::Test::Cluster->new('batch');
$node->init;
$node->append_conf(
	'postgresql.conf', q{
# small: index pages are evicted and written while flushes run
shared_buffers = 4MB
autovacuum = off
restart_after_crash = on
max_prepared_transactions = 10
max_wal_size = 256MB
checkpoint_timeout = 1h
log_min_messages = warning
log_statement = none
jit = off
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION gbtree');

# the setting exists once the library is loaded, in a gbtree that batches
my $have_guc = $node->safe_psql('postgres',
	"LOAD 'gbtree'; SELECT count(*) FROM pg_settings WHERE name = 'gbtree.insert_batch_memory'");
note($have_guc
	? 'gbtree.insert_batch_memory present: batches of 64 kB and the default'
	: 'gbtree.insert_batch_memory absent: the workload runs without batching');

# SET [LOCAL] gbtree.insert_batch_memory = $kb, or nothing
sub mem
{
	my ($kb, $local) = @_;
	return '' unless $have_guc;
	return 'SET ' . ($local ? 'LOCAL ' : '') . "gbtree.insert_batch_memory = $kb;";
}

# ---- twins and their comparison ---------------------------------------------

sub create_twins
{
	my ($n, $base) = @_;
	my $sql = '';
	for my $side (qw(g b))
	{
		my $am = $side eq 'g' ? 'gbtree' : 'btree';
		$sql .= "CREATE TABLE ${base}_$side (id int8, k int4, f float8);\n";
		$sql .= "CREATE INDEX ${base}_${side}_$_ ON ${base}_$side USING $am ($_);\n" for qw(k f id);
	}
	$n->safe_psql('postgres', $sql);
	return;
}

# a statement for both twins: @T stands for the table
sub on_twins
{
	my ($base, $sql) = @_;
	my $out = '';
	$out .= ($sql =~ s/\@T/${base}_$_/gr) . ";\n" for qw(g b);
	return $out;
}

# rows id0 + 1 .. id0 + n with id = res (mod 16) when res is given, keys
# from salt: heavy duplicates, NULLs, -0.0, spread values
sub rows_sql
{
	my ($id0, $n, $salt, $res) = @_;
	my $id = defined $res ? "($id0 + g) * 16 + $res" : "$id0 + g";
	return "INSERT INTO \@T SELECT $id, "
	  . "CASE WHEN g % 53 = 0 THEN NULL WHEN g % 3 = 0 THEN g % 41 ELSE (g * 7919 + $salt) % 1000000 END, "
	  . "CASE WHEN g % 17 = 0 THEN NULL WHEN g % 29 = 0 THEN -0.0 ELSE (g % 5000) / 4.0 END "
	  . "FROM generate_series(1, $n) g";
}

# COPY text of the same kind of rows
sub copy_data
{
	my ($id0, $n, $salt) = @_;
	my $d = '';
	for my $g (1 .. $n)
	{
		my $k = $g % 53 == 0 ? '\N' : $g % 3 == 0 ? $g % 41 : ($g * 7919 + $salt) % 1000000;
		my $f = $g % 17 == 0 ? '\N' : $g % 29 == 0 ? '-0' : ($g % 5000) / 4.0;
		$d .= ($id0 + $g) . "\t$k\t$f\n";
	}
	return $d;
}

sub copy_twins
{
	my ($base, $id0, $n, $salt) = @_;
	my $d = copy_data($id0, $n, $salt);
	return join('', map { "COPY ${base}_$_ (id, k, f) FROM STDIN;\n$d\\.\n" } qw(g b));
}

my %GUCS = (
	seq => 'SET LOCAL enable_seqscan = on; SET LOCAL enable_indexscan = off; '
	  . 'SET LOCAL enable_indexonlyscan = off; SET LOCAL enable_bitmapscan = off;',
	idx => 'SET LOCAL enable_seqscan = off; SET LOCAL enable_indexscan = on; '
	  . 'SET LOCAL enable_indexonlyscan = off; SET LOCAL enable_bitmapscan = off;',
	ios => 'SET LOCAL enable_seqscan = off; SET LOCAL enable_indexscan = on; '
	  . 'SET LOCAL enable_indexonlyscan = on; SET LOCAL enable_bitmapscan = off;',
	bitmap => 'SET LOCAL enable_seqscan = off; SET LOCAL enable_indexscan = off; '
	  . 'SET LOCAL enable_indexonlyscan = off; SET LOCAL enable_bitmapscan = on;',);

# The queries: {T} is the table, col the indexed column the plan must use,
# modes the gbtree scan kinds that apply.
my @queries = (
	{ name => 'k_order', col => 'k', modes => [qw(idx ios)],
	  sql => q{SELECT count(*) || ':' || md5(string_agg(coalesce(k::text, 'N'), ',')) FROM (SELECT k FROM {T} ORDER BY k) s} },
	{ name => 'k_desc', col => 'k', modes => [qw(idx ios)],
	  sql => q{SELECT count(*) || ':' || md5(string_agg(coalesce(k::text, 'N'), ',')) FROM (SELECT k FROM {T} ORDER BY k DESC) s} },
	{ name => 'k_groups', col => 'k', modes => [qw(idx bitmap)],
	  sql => q{SELECT count(*) || ':' || md5(string_agg(k || ':' || c || ':' || s, ','))
	           FROM (SELECT k, count(*) AS c, sum(id) AS s FROM {T} WHERE k IS NOT NULL GROUP BY k ORDER BY k) x} },
	{ name => 'k_range', col => 'k', modes => [qw(idx bitmap)],
	  sql => q{SELECT count(*) || ':' || coalesce(sum(id), 0) FROM {T} WHERE k >= 100 AND k < 600000} },
	{ name => 'k_any', col => 'k', modes => [qw(idx bitmap)],
	  sql => q{SELECT count(*) || ':' || coalesce(sum(id), 0) FROM {T}
	           WHERE k = ANY (ARRAY[0, 7, 40, 7919, 15838, 2000007, 3000001, 5000003, 6000003])} },
	{ name => 'k_null', col => 'k', modes => [qw(idx bitmap)],
	  sql => q{SELECT count(*) || ':' || coalesce(sum(id), 0) FROM {T} WHERE k IS NULL} },
	{ name => 'k_count', col => 'k', modes => [qw(ios)],
	  sql => q{SELECT count(*) FROM {T} WHERE k BETWEEN 2000000 AND 7000000} },
	{ name => 'f_order', col => 'f', modes => [qw(idx ios)],
	  sql => q{SELECT count(*) || ':' || md5(string_agg(coalesce((f + 0)::text, 'N'), ',')) FROM (SELECT f FROM {T} ORDER BY f DESC) s} },
	{ name => 'f_range', col => 'f', modes => [qw(idx bitmap)],
	  sql => q{SELECT count(*) || ':' || coalesce(sum(id), 0) FROM {T} WHERE f > 10.5 AND f <= 300} },
	{ name => 'f_null', col => 'f', modes => [qw(idx bitmap)],
	  sql => q{SELECT count(*) || ':' || coalesce(sum(id), 0) FROM {T} WHERE f IS NULL} },
	{ name => 'id_order', col => 'id', modes => [qw(idx ios)],
	  sql => q{SELECT count(*) || ':' || md5(string_agg(id::text, ',')) FROM (SELECT id FROM {T} ORDER BY id) s} },
	{ name => 'id_range', col => 'id', modes => [qw(idx bitmap)],
	  sql => q{SELECT count(*) || ':' || coalesce(sum(k), 0) FROM {T} WHERE id BETWEEN 20000 AND 400000} },);

# { name => { value, plan } } for the queries that apply to $mode, run on
# $table in one REPEATABLE READ transaction
sub answers
{
	my ($n, $table, $mode, $qs) = @_;
	my $gucs = $GUCS{ $mode eq 'btree' ? 'idx' : $mode };
	my $script = "BEGIN ISOLATION LEVEL REPEATABLE READ;\n$gucs\nSET LOCAL max_parallel_workers_per_gather = 0;\n";
	for my $q (@$qs)
	{
		next unless $mode eq 'seq' || $mode eq 'btree' || grep { $_ eq $mode } @{ $q->{modes} };
		my $sql = $q->{sql} =~ s/\{T\}/$table/gr;
		$script .= "\\echo \@\@plan $q->{name}\nEXPLAIN (COSTS OFF) $sql;\n" unless $mode eq 'seq';
		$script .= "\\echo \@\@value $q->{name}\n$sql;\n";
	}
	$script .= "\\echo \@\@end\nCOMMIT;\n";
	my $out = $n->safe_psql('postgres', $script);
	my (%res, $cur, $what);
	for my $line (split /\n/, $out)
	{
		if ($line =~ /^\@\@(plan|value) (\S+)$/) { ($what, $cur) = ($1, $2); $res{$cur}{$what} = ''; next; }
		if ($line eq '@@end') { $cur = undef; next; }
		next unless defined $cur;
		$res{$cur}{$what} .= ($res{$cur}{$what} eq '' ? '' : "\n") . $line;
	}
	return \%res;
}

# The gbtree twin answers through every scan kind like the btree twin and
# like seq scans of both; returns { name => answer }.
sub twin_check
{
	my ($n, $label, $base) = @_;
	my $ref = answers($n, "${base}_g", 'seq', \@queries);
	my $refb = answers($n, "${base}_b", 'seq', \@queries);
	is_deeply({ map { $_ => $refb->{$_}{value} } keys %$refb },
		{ map { $_ => $ref->{$_}{value} } keys %$ref },
		"$label: both twins hold the same rows (seq scans) on " . $n->name);
	for my $mode (qw(idx ios bitmap btree))
	{
		my $side = $mode eq 'btree' ? 'b' : 'g';
		my $got = answers($n, "${base}_$side", $mode, \@queries);
		for my $q (@queries)
		{
			next unless exists $got->{ $q->{name} };
			my $ix = "${base}_${side}_$q->{col}";
			my $plan = $got->{ $q->{name} }{plan} // '';
			my $value = $got->{ $q->{name} }{value};
			my $plan_ok = $plan =~ /\b\Q$ix\E\b/
			  && ($mode ne 'ios' || $plan =~ /Index Only Scan|GbtreeCount/);
			ok($plan_ok && defined $value && $value eq $ref->{ $q->{name} }{value},
				"$label: $mode: $q->{name} on " . $n->name)
			  or diag("plan (must use $ix):\n$plan\nseq scan: $ref->{$q->{name}}{value}\ngot: " . ($value // '(none)'));
		}
	}
	return { map { $_ => $ref->{$_}{value} } keys %$ref };
}

# count of rows with k in [lo, hi) on each twin, through each index kind
# and a seq scan: "g_idx/g_bitmap/g_seq/b_idx/b_seq"
sub range_counts
{
	my ($n, $base, $lo, $hi) = @_;
	my $q = "SELECT count(*) FROM \@T WHERE k >= $lo AND k < $hi";
	my @out;
	for my $c ([ g => 'idx' ], [ g => 'bitmap' ], [ g => 'seq' ], [ b => 'idx' ], [ b => 'seq' ])
	{
		my ($side, $mode) = @$c;
		push @out,
		  $n->safe_psql('postgres',
			"BEGIN; $GUCS{$mode} " . ($q =~ s/\@T/${base}_$side/r) . "; COMMIT;");
	}
	return join('/', @out);
}

# ---- (a) kill -9 in the middle of flushes -----------------------------------------

create_twins($node, 't');
$node->safe_psql('postgres', on_twins('t', rows_sql(0, 50000, 11)) . on_twins('t', 'VACUUM ANALYZE @T'));

my $ledger_acked = 0;
my $ledger = psql_session($node);
session_do($ledger, mem(64));

# one ledger batch: 5000 rows in each twin, one transaction
sub ledger_batch
{
	my $b = $ledger_acked + 1;
	my $ins = "INSERT INTO \@T SELECT ($b * 10000 + g) * 16 + " . LEDGER_RES . ', '
	  . LEDGER_BASE . " + $b * " . LEDGER_ROWS . " + g, g FROM generate_series(0, " . (LEDGER_ROWS - 1) . ") g";
	session_do($ledger, 'BEGIN; ' . on_twins('t', $ins) . ' COMMIT');
	$ledger_acked = $b;
	return;
}

# pgbench clients writing in batches, each to its own ids (above 10^13,
# = client_id mod 16): under READ COMMITTED, each statement on the twins
# then matches the same rows, whatever commits in between
my $pgb_script = q{
\set r random(1, 100000000)
BEGIN;
} . mem(64, 1) . q{
} . on_twins('t', 'INSERT INTO @T SELECT 10000000000000 + (:r::int8 * 10000 + g) * 16 + :client_id, (:r + g * 31) % 100000, '
	  . 'CASE WHEN g % 17 = 0 THEN NULL ELSE g / 4.0 END FROM generate_series(1, 3000) g') . q{
SAVEPOINT a;
} . on_twins('t', 'UPDATE @T SET k = k + 1, f = f - 1 WHERE id > 10000000000000 AND id % 16 = :client_id AND k % 97 = :r % 97') . q{
\if :r % 3 = 0
ROLLBACK TO a;
\endif
} . on_twins('t', 'DELETE FROM @T WHERE id > 10000000000000 AND id % 16 = :client_id AND k % 89 = :r % 89') . q{
\if :r % 5 = 0
ROLLBACK;
\else
COMMIT;
\endif
};

# Start the long insert that the crash interrupts: 2M rows, k >= OPEN_BASE,
# under a 64 kB batch.  Returns the session and its backend's pid.
sub start_open_insert
{
	my $s = psql_session($node);
	my $pid = session_do($s, 'SELECT pg_backend_pid()');
	session_do($s, mem(64));
	$s->{in} .= 'BEGIN; '
	  . on_twins('t',
		"INSERT INTO \@T SELECT (1000000 + g) * 16 + " . OPEN_RES . ', ' . OPEN_BASE
		  . ' + (g * 7919) % 1000000, g FROM generate_series(1, 2000000) g')
	  . "COMMIT;\n";
	$s->{run}->pump_nb while length $s->{in};
	return ($s, $pid);
}

# Run ledger batches until the open insert's entries are seen reaching
# t_g_k (its size grew by 2 MB), then a few more.
sub load_until_flushing
{
	my ($label) = @_;
	my $size0 = $node->safe_psql('postgres', "SELECT pg_relation_size('t_g_k')");
	my $deadline = time + 120;
	my $grown = 0;
	while (time < $deadline)
	{
		ledger_batch();
		my $size = $node->safe_psql('postgres', "SELECT pg_relation_size('t_g_k')");
		if ($size - $size0 > 2 * 1024 * 1024) { $grown = 1; last; }
	}
	ok($grown, "$label: the open insert's entries reach the index while it runs");
	ledger_batch() for 1 .. 2;
	return;
}

sub verify_crash
{
	my ($label) = @_;
	twin_check($node, $label, 't');
	my ($lo, $hi) = (LEDGER_BASE, OPEN_BASE);
	my @c = split m{/}, range_counts($node, 't', $lo, $hi);
	my $want = $ledger_acked * LEDGER_ROWS;
	ok($c[0] == $want || $c[0] == $want + LEDGER_ROWS,
		"$label: all $ledger_acked acknowledged ledger batches are found through the gbtree index ($c[0] rows)");
	is(join('/', @c), join('/', ($c[2]) x 5), "$label: ledger rows: gbtree = btree = seq scans");
	is(range_counts($node, 't', OPEN_BASE, OPEN_BASE + 1_000_000), '0/0/0/0/0',
		"$label: no row of the killed insert, through any index or seq scan");
	check_structure($node, $label);
	return;
}

# round 1: every process killed at once
my $b = start_pgbench($node, 'round 1', { 'batch.sql' => $pgb_script }, 2, 120);
my ($open, $open_pid) = start_open_insert();
load_until_flushing('round 1');
crash_all_processes($node);
stop_pgbench($b, 0);
session_end($open);
session_end($ledger);
$node->start;
verify_crash('(a) round 1, all processes killed during flushes');

# round 2: the flushing backend itself killed; the postmaster reinitializes
$ledger = psql_session($node);
session_do($ledger, mem(64));
$b = start_pgbench($node, 'round 2', { 'batch.sql' => $pgb_script }, 2, 120);
($open, $open_pid) = start_open_insert();
load_until_flushing('round 2');
crash_one_backend($node, $open_pid);
stop_pgbench($b, 0);
session_end($open);
session_end($ledger);
verify_crash('(a) round 2, the flushing backend killed');

# ---- (b) a crash between a flush and the commit; prepared transactions ---------

my $o = psql_session($node);
session_do($o, 'BEGIN');
session_do($o, on_twins('t', "INSERT INTO \@T SELECT (2000000 + g) * 16 + " . OPEN_RES . ', ' . OPEN_BASE
	  . ' + g % 70000, g FROM generate_series(1, 60000) g'));
# reading the table flushes the transaction's entries into the pages
my $seen = session_do($o, 'SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; '
	  . 'SELECT count(*) FROM t_g WHERE k >= ' . OPEN_BASE . '; '
	  . 'SELECT count(*) FROM t_b WHERE k >= ' . OPEN_BASE);
is($seen, "60000\n60000", '(b) the open transaction sees its rows through gbtree and btree');

# two transactions prepared after batched inserts, a savepoint rolled back
# and keys updated
for my $p ([ 'b1', PREP1_BASE, 3000000 ], [ 'b2', PREP2_BASE, 3100000 ])
{
	my ($gid, $base, $id0) = @$p;
	$node->safe_psql('postgres',
		"BEGIN; " . mem(64, 1)
		  . on_twins('t', "INSERT INTO \@T SELECT ($id0 + g) * 16 + " . PREP_RES . ", $base + g % 20000, g FROM generate_series(1, 30000) g")
		  . "SAVEPOINT s;\n"
		  . on_twins('t', "INSERT INTO \@T SELECT ($id0 + 50000 + g) * 16 + " . PREP_RES . ", $base + g, g FROM generate_series(1, 8000) g")
		  . "ROLLBACK TO s;\n"
		  . on_twins('t', "UPDATE \@T SET k = k + 1, f = -f WHERE k >= $base AND k < $base + 20000 AND id % 32 = " . PREP_RES)
		  . "PREPARE TRANSACTION '$gid';");
}
is(range_counts($node, 't', PREP1_BASE, PREP2_BASE + 1_000_000), '0/0/0/0/0',
	'(b) prepared rows are invisible before the crash');

crash_all_processes($node);
session_end($o);
$node->start;

is(range_counts($node, 't', OPEN_BASE, OPEN_BASE + 1_000_000), '0/0/0/0/0',
	'(b) rows of the transaction open at the crash (flushed, not committed) are gone everywhere');
is($node->safe_psql('postgres', 'SELECT string_agg(gid, \',\' ORDER BY gid) FROM pg_prepared_xacts'),
	'b1,b2', '(b) both prepared transactions survive the crash');
is(range_counts($node, 't', PREP1_BASE, PREP2_BASE + 1_000_000), '0/0/0/0/0',
	'(b) prepared rows are invisible after the crash');
$node->safe_psql('postgres', "COMMIT PREPARED 'b1'");
$node->safe_psql('postgres', "ROLLBACK PREPARED 'b2'");
is(range_counts($node, 't', PREP1_BASE, PREP1_BASE + 1_000_000), join('/', (30000) x 5),
	'(b) COMMIT PREPARED after the crash: its rows through gbtree = btree = seq scans');
is(range_counts($node, 't', PREP2_BASE, PREP2_BASE + 1_000_000), '0/0/0/0/0',
	'(b) ROLLBACK PREPARED after the crash: its rows are gone');
twin_check($node, '(b) after the prepared transactions', 't');
check_structure($node, '(b) after the prepared transactions');

# ---- (d) a lost ON CONFLICT race: a dead tuple inside a live transaction --------
#
# A's INSERT ... ON CONFLICT DO NOTHING passes the arbiter's pre-check,
# inserts its heap tuple and its x_k_g entry (which may wait in A's batch),
# then blocks in the expression index x_blk (an advisory lock), ordered
# before the unique index x_id.  B inserts and commits the same id.  A
# goes on, finds the conflict in x_id, super-deletes its tuple and does
# nothing, its transaction still open.  VACUUM removes the dead tuple
# (and any index entry for it), C's new row takes its TID, A commits.
# x_k_g must not then lead k = 555 to C's row.

$node->safe_psql(
	'postgres', q{
CREATE FUNCTION blk(i int4) RETURNS int4 LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
	IF current_setting('gbt.block', true) = 'on' THEN
		PERFORM pg_advisory_lock_shared(4242);
		PERFORM pg_advisory_unlock_shared(4242);
	END IF;
	RETURN i;
END $$;
CREATE TABLE x (id int4, k int8);
CREATE INDEX x_k_g ON x USING gbtree (k);
CREATE INDEX x_blk ON x (blk(id));
CREATE UNIQUE INDEX x_id ON x (id);
CREATE INDEX x_k_b ON x USING btree (k);
INSERT INTO x VALUES (1, 10), (2, 20);
});
my $lock = psql_session($node);
session_do($lock, 'SELECT pg_advisory_lock(4242)');
my $a = psql_session($node);
my $a_pid = session_do($a, 'SELECT pg_backend_pid()');
session_do($a, mem(65536) . " SET gbt.block = 'on'; BEGIN");
$a->{in} .= "INSERT INTO x VALUES (5, 555) ON CONFLICT (id) DO NOTHING;\n\\echo \@\@a done\n";
$a->{run}->pump_nb while length $a->{in};
$node->poll_query_until('postgres',
	"SELECT count(*) > 0 FROM pg_locks WHERE pid = $a_pid AND locktype = 'advisory' AND NOT granted")
  or die 'A did not block in x_blk';
is($node->safe_psql('postgres', 'INSERT INTO x VALUES (5, 777) RETURNING ctid'),
	'(0,4)', '(d) B inserts id 5 beside A\'s speculative tuple (0,3) and commits');
session_do($lock, 'SELECT pg_advisory_unlock(4242)');
session_end($lock);
my $t0 = time;
until ($a->{out} =~ /\@\@a done/ || $a->{err} =~ /ERROR/ || time > $t0 + 60)
{
	$a->{run}->pump_nb;
	usleep(1000);
}
unlike($a->{err}, qr/ERROR/, '(d) A\'s INSERT ... ON CONFLICT DO NOTHING ends without error');
$a->{out} = '';
# (asked in another session: a read of x in A's would flush A's batch)
is($node->safe_psql('postgres', 'SELECT count(*) FROM x WHERE id = 5'), '1',
	'(d) A inserted nothing: only B\'s row has id 5');
$node->safe_psql('postgres', 'VACUUM (INDEX_CLEANUP ON) x');
is($node->safe_psql('postgres', 'INSERT INTO x VALUES (6, 666) RETURNING ctid'),
	'(0,3)', '(d) C\'s row takes the TID of A\'s dead speculative tuple');
session_do($a, 'COMMIT');
session_end($a);
my @x_checks = (
	{
		name => 'x_555', index => 'x_k_g', modes => [qw(idx ios bitmap btree)],
		sql => q{SELECT count(*) || ':' || coalesce(sum(id), 0) FROM x WHERE k = 555}
	},
	{
		name => 'x_666', index => 'x_k_g', modes => [qw(idx ios bitmap btree)],
		sql => q{SELECT count(*) || ':' || coalesce(sum(id), 0) FROM x WHERE k = 666}
	},
	{
		name => 'x_all', index => 'x_k_g', modes => [qw(idx ios btree)],
		sql => q{SELECT count(*) || ':' || string_agg(k::text, ',') FROM (SELECT k FROM x ORDER BY k) s}
	},);
my $xref = compare_with_seq($node, '(d) after A committed', \@x_checks, qw(idx ios bitmap btree));
is($xref->{x_555}, '0:0', '(d) no row has k = 555');
check_structure($node, '(d) after A committed');
# (so that a damaged x_k_g is reported here only)
$node->safe_psql('postgres', 'DROP TABLE x');

# ---- (e) aborted subtransactions: their entries never reach the index -------
#
# The rows of a rolled-back savepoint, and of a PL/pgSQL block that ended
# in its exception handler, are dead at once while their transaction goes
# on: VACUUM removes them and another transaction's rows take their TIDs.
# Entries of theirs reaching the index later (at COMMIT) would lead to
# those rows.  (ROLLBACK TO starts the savepoint's subtransaction again; a
# PL/pgSQL block's is just gone.)

$node->safe_psql(
	'postgres', q{
CREATE TABLE y (id int4, k int8);
CREATE INDEX y_k_g ON y USING gbtree (k);
CREATE INDEX y_k_b ON y USING btree (k);
INSERT INTO y VALUES (1, 10), (2, 20);
});
my $e = psql_session($node);
session_do($e, mem(65536) . ' BEGIN');
session_do($e, 'INSERT INTO y VALUES (100, 1000)');
session_do($e, 'SAVEPOINT s');
session_do($e, 'INSERT INTO y SELECT 200 + g, 2000 + g FROM generate_series(1, 50) g');
session_do($e, 'ROLLBACK TO s');
session_do($e, q{DO $$ BEGIN
	INSERT INTO y SELECT 400 + g, 4000 + g FROM generate_series(1, 50) g;
	RAISE division_by_zero;
EXCEPTION WHEN division_by_zero THEN NULL;
END $$});
$node->safe_psql('postgres', 'VACUUM (INDEX_CLEANUP ON) y');
is( $node->safe_psql('postgres',
		'WITH i AS (INSERT INTO y SELECT 300 + g, 3000 + g FROM generate_series(1, 100) g RETURNING ctid) '
		  . "SELECT min(ctid)::text || ' ' || max(ctid)::text FROM i"),
	'(0,4) (0,103)',
	'(e) another transaction\'s rows take the TIDs of the aborted subtransactions\' rows');
session_do($e, 'COMMIT');
session_end($e);
my @y_checks = (
	{
		name => 'y_2000', index => 'y_k_g', modes => [qw(idx ios bitmap btree)],
		sql => q{SELECT count(*) || ':' || coalesce(sum(id), 0) FROM y WHERE k BETWEEN 2000 AND 2100}
	},
	{
		name => 'y_4000', index => 'y_k_g', modes => [qw(idx ios bitmap btree)],
		sql => q{SELECT count(*) || ':' || coalesce(sum(id), 0) FROM y WHERE k BETWEEN 4000 AND 4100}
	},
	{
		name => 'y_3000', index => 'y_k_g', modes => [qw(idx ios bitmap btree)],
		sql => q{SELECT count(*) || ':' || coalesce(sum(id), 0) FROM y WHERE k BETWEEN 3000 AND 3100}
	},
	{
		name => 'y_all', index => 'y_k_g', modes => [qw(idx ios btree)],
		sql => q{SELECT count(*) || ':' || md5(string_agg(k::text, ',')) FROM (SELECT k FROM y ORDER BY k) s}
	},);
my $yref = compare_with_seq($node, '(e) after the transaction committed', \@y_checks, qw(idx ios bitmap btree));
is($yref->{y_2000} . ' ' . $yref->{y_4000}, '0:0 0:0', '(e) no row of the aborted subtransactions');
check_structure($node, '(e) after the transaction committed');
$node->safe_psql('postgres', 'DROP TABLE y');

# ---- (f) a query cancel while a subtransaction's start flushes -------------------
#
# PL/pgSQL: an outer block with an exception handler (a subtransaction)
# inserts 1M rows (negative keys) under a large batch, then enters an inner block (another
# subtransaction, whose start may merge the pending entries into the
# index); the test cancels the query just after the inner block is
# entered.  The outer handler must catch the cancel like any error in its
# block, its rows must be gone, and the session must live on.  (Where a
# subtransaction's start flushes, an error raised there leaves PL/pgSQL's
# handler rolling back a subtransaction that never began.)

$node->safe_psql(
	'postgres', q{
CREATE TABLE z (id int8, k int8);
CREATE INDEX z_k_g ON z USING gbtree (k);
CREATE INDEX z_k_b ON z USING btree (k);
INSERT INTO z SELECT g, g FROM generate_series(1, 1000) g;
CREATE SEQUENCE z_signal;
CREATE FUNCTION z_load() RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text := 'inner block entered, no cancel';
BEGIN
	BEGIN
		INSERT INTO z SELECT 10000 + g, hashint8(g) - 2147483649 FROM generate_series(1, 1000000) g;
		PERFORM nextval('z_signal');
		BEGIN
			r := 'inner block entered, no cancel';
		EXCEPTION WHEN division_by_zero THEN
			r := 'inner handler';
		END;
		PERFORM pg_sleep(5);
	EXCEPTION WHEN query_canceled THEN
		r := 'outer handler caught the cancel';
	END;
	RETURN r;
END $$;
});
my $f = psql_session($node);
my $f_pid = session_do($f, 'SELECT pg_backend_pid()');
session_do($f, mem(1048576));
$f->{in} .= "SELECT 'z_load: ' || z_load();\n\\echo \@\@f done\n";
$f->{run}->pump_nb while length $f->{in};
my $watch = psql_session($node);
my $t1 = time;
usleep(2000) until session_do($watch, 'SELECT is_called FROM z_signal') eq 't' || time > $t1 + 120;
session_do($watch, "SELECT pg_cancel_backend($f_pid)");
session_end($watch);
$t1 = time;
until ($f->{out} =~ /\@\@f done/ || !$f->{run}->pumpable || time > $t1 + 120)
{
	$f->{run}->pump_nb;
	usleep(1000);
}
like($f->{out}, qr/^z_load: (outer handler caught the cancel|inner block entered, no cancel)$/m,
	'(f) a cancel at the inner block\'s start: the outer block\'s handler catches it')
  or diag("output: $f->{out}\nerrors: $f->{err}");
unlike($f->{err}, qr/FATAL|server closed the connection/, '(f) the session lives on')
  or diag($f->{err});
# (rows stay only if the cancel came after the function returned)
my $f_rows = $f->{out} =~ /inner block entered, no cancel/ ? 1000000 : 0;
eval { session_end($f); };
is(range_counts_z(), join('/', ($f_rows) x 4),
	"(f) the outer block's rows: $f_rows through gbtree (index and bitmap scans), btree and a seq scan");
check_structure($node, '(f) after the cancel');

sub range_counts_z
{
	my @out;
	for my $c ([ z_k_b => 'idx' ], [ z_k_g => 'idx' ], [ z_k_g => 'bitmap' ], [ '' => 'seq' ])
	{
		my ($hide, $mode) = @$c;
		my $drop = $hide eq 'z_k_b' ? 'DROP INDEX z_k_b;' : $hide eq 'z_k_g' ? 'DROP INDEX z_k_g;' : '';
		push @out, $node->safe_psql('postgres',
			"BEGIN; $GUCS{$mode} $drop "
			  . 'SELECT count(*) FROM z WHERE k < 0; ROLLBACK;');
	}
	return join('/', @out);
}

# ---- (g) multi-word indexes under concurrent batches whose runs interleave ----
# Two clients flush ascending runs of uuid and text keys at the right end
# of the tree, two transactions a range (a sequence's value halved), with
# keys interleaved (4g + client), so one backend's append and merge
# splits cut pages the other is filling (whether a backend finds the
# other's entries on the page its last append split made, which
# append_at_leaf must look for, is up to timing).  The twins must agree through
# every kind of scan, and the indexes pass gbtree_check.
$node->safe_psql('postgres', q{
CREATE TABLE mw_g (c int, u uuid, s text COLLATE "C");
CREATE INDEX mw_g_u ON mw_g USING gbtree (u);
CREATE INDEX mw_g_s ON mw_g USING gbtree (s);
CREATE TABLE mw_b (c int, u uuid, s text COLLATE "C");
CREATE INDEX mw_b_u ON mw_b USING btree (u);
CREATE INDEX mw_b_s ON mw_b USING btree (s);
CREATE SEQUENCE mw_seq;
});
my $mw_rows = q{SELECT :client_id, ('00000000-0000-0000-0000-' || lpad(to_hex(g * 4 + :client_id), 12, '0'))::uuid,
	'k' || lpad((g * 4 + :client_id)::text, 12, '0') FROM generate_series(:base * 1000, :base * 1000 + 2999) g};
$b = start_pgbench($node, '(g) interleaved runs',
	{ 'mw.sql' => "SELECT nextval('mw_seq') / 2 AS base \\gset\nBEGIN;\n" . mem(4096, 1)
		  . "\nINSERT INTO mw_g $mw_rows;\nINSERT INTO mw_b $mw_rows;\nCOMMIT;\n" },
	2, 8);
stop_pgbench($b, 1);
for my $col (qw(u s))
{
	my @ans;
	for my $mode (qw(idx bitmap seq))
	{
		for my $t (qw(mw_g mw_b))
		{
			push @ans, $node->safe_psql('postgres', "BEGIN; $GUCS{$mode} "
				  . "SELECT count(*) || ':' || md5(string_agg(${col}::text, ',')) FROM "
				  . "(SELECT $col FROM $t WHERE $col IS NOT NULL ORDER BY $col) x; ROLLBACK;");
		}
	}
	my $n = $node->safe_psql('postgres', 'SELECT count(*) FROM mw_g');
	cmp_ok($n, '>', 6000, "(g) the clients wrote $n rows");
	is(join('/', @ans), join('/', ($ans[0]) x scalar @ans),
		"(g) $col: gbtree (index and bitmap scans) = btree = seq scans");
	is($node->safe_psql('postgres', "SELECT gbtree_check('mw_g_$col', true)"), '',
		"(g) mw_g_$col passes gbtree_check");
}

node_log_ok($node, 'crash and prepared transactions');
$node->stop;

# ---- (c) a standby replays batched writes, under wal_consistency_checking ------
#
# Twice: with generic WAL (gbtree not preloaded), and with gbtree's own
# resource manager (preloaded, wal_consistency_checking = 'gbtree') where
# the installed gbtree has one.

sub replicate
{
	my ($tag, $conf, $rm, $rm_re) = @_;
	my $primary = PostgreSQL::Test::Cluster->new("batch_primary_$tag");
	$primary->init(allows_streaming => 1);
	$primary->append_conf(
		'postgresql.conf', $conf . q{
autovacuum = off
shared_buffers = 16MB
max_wal_size = 2GB
checkpoint_timeout = 1h
log_min_messages = warning
log_statement = none
jit = off
});
	if (!$primary->start(fail_ok => 1))
	{
		note "(c, $rm) a primary with these settings does not start (no such resource manager): skipped";
		return;
	}
	$primary->backup('base');
	my $standby = PostgreSQL::Test::Cluster->new("batch_standby_$tag");
	$standby->init_from_backup($primary, 'base', has_streaming => 1);
	$standby->append_conf('postgresql.conf', q{
hot_standby = on
hot_standby_feedback = on
max_standby_streaming_delay = -1
});
	$standby->start;
	my $L = "(c, $rm)";

	$primary->safe_psql('postgres', 'CREATE EXTENSION gbtree');
	create_twins($primary, 's');
	# keep the WAL for pg_waldump (every gbtree record carries page images)
	$primary->safe_psql('postgres', "SELECT pg_create_physical_replication_slot('batch_keep', true)");
	my $start_lsn = $primary->lsn('insert');

	# batched COPYs: a savepoint rolled back, a second one released, keys
	# updated, a read in the middle (a flush), heavy duplicates and NULLs
	$primary->safe_psql('postgres',
		"BEGIN;\n" . mem(64, 1) . "\n"
		  . copy_twins('s', 0, 15000, 1)
		  . "SAVEPOINT a;\n"
		  . copy_twins('s', 100000, 5000, 2)
		  . "ROLLBACK TO a;\n"
		  . copy_twins('s', 200000, 4000, 3)
		  . "RELEASE a;\n"
		  . "SELECT count(*) FROM s_g WHERE k > 500000;\n"
		  . on_twins('s', 'UPDATE @T SET k = k + 7, f = f * 2 WHERE id % 5 = 0')
		  . on_twins('s', 'INSERT INTO @T SELECT 300000 + g, 42, NULL FROM generate_series(1, 3000) g')
		  . "COMMIT;\n");
	# a transaction that flushed (64 kB) and then rolled back
	$primary->safe_psql('postgres',
		"BEGIN;\n" . mem(64, 1) . "\n" . copy_twins('s', 400000, 10000, 4)
		  . "SELECT count(*) FROM s_g WHERE k > 0;\nROLLBACK;\n");
	# the default batch: flushed at COMMIT only
	$primary->safe_psql('postgres',
		"BEGIN;\n" . on_twins('s', rows_sql(500000, 20000, 5))
		  . on_twins('s', 'DELETE FROM @T WHERE id % 7 = 3') . "COMMIT;\n");
	$primary->safe_psql('postgres', on_twins('s', 'VACUUM @T'));
	# concurrent batched writers (own ids, savepoints, rollbacks)
	my $pgb_s = $pgb_script =~ s/\bt_([gb])\b/s_$1/gr =~ s/generate_series\(1, 3000\)/generate_series(1, 500)/gr;
	my $b = start_pgbench($primary, "primary $tag", { 'batch.sql' => $pgb_s }, 2, 5);
	$primary->safe_psql('postgres',
		"BEGIN;\n" . mem(128, 1) . "\n" . copy_twins('s', 600000, 8000, 6) . "SAVEPOINT b;\n"
		  . on_twins('s', 'UPDATE @T SET k = -k WHERE id BETWEEN 600000 AND 603000') . "ROLLBACK TO b;\n"
		  . on_twins('s', 'UPDATE @T SET k = k + 1 WHERE id BETWEEN 603000 AND 606000') . "COMMIT;\n");
	stop_pgbench($b, 1);

	my $end_lsn = $primary->lsn('insert');
	$primary->wait_for_catchup($standby, 'replay', $end_lsn);

	# the replay did check page images: with wal_consistency_checking
	# every block of a record has one, to apply (a full page write) or to
	# compare the replayed page with
	my ($stdout, $stderr);
	IPC::Run::run(
		[ 'pg_waldump', '-p', $primary->data_dir . '/pg_wal', '-s', $start_lsn, '-e', $end_lsn, '-b' ],
		'>', \$stdout, '2>', \$stderr);
	my @recs = grep { /$rm_re/ } split /\n(?=rmgr: )/, $stdout;
	my @blocks = grep { /^\s+blkref/ } map { split /\n/ } @recs;
	my $nimg = grep { /FPW/ } @blocks;
	diag("pg_waldump: $stderr") if $stderr ne '';
	note "$L: " . scalar(@recs) . " records, " . scalar(@blocks) . " block references, $nimg with an image";
	cmp_ok(scalar(@recs), '>', 500, "$L: the batched load wrote gbtree's WAL records");
	is($nimg, scalar(@blocks), "$L: every block of every gbtree WAL record carries a page image");
	is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't', "$L: standby is up and replaying");
	unlike(slurp_file($standby->logfile), qr/inconsistent page found/, "$L: standby: replay found no inconsistent page");

	my $p_ans = twin_check($primary, "$L primary", 's');
	my $s_ans = twin_check($standby, "$L standby", 's');
	is_deeply($s_ans, $p_ans, "$L: standby's answers equal the primary's");
	check_structure($standby, "$L standby");

	# promotion, then more batched writes on the new primary
	$standby->promote;
	$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die 'standby was not promoted';
	$standby->safe_psql('postgres',
		"BEGIN;\n" . mem(64, 1) . "\n" . copy_twins('s', 700000, 12000, 7) . "SAVEPOINT a;\n"
		  . copy_twins('s', 800000, 3000, 8) . "ROLLBACK TO a;\n"
		  . on_twins('s', 'UPDATE @T SET k = k % 1000 WHERE id % 11 = 0') . "COMMIT;\n");
	$standby->safe_psql('postgres',
		"BEGIN;\n" . on_twins('s', rows_sql(900000, 15000, 9)) . "SELECT count(*) FROM s_g WHERE k < 10;\n"
		  . on_twins('s', rows_sql(950000, 5000, 10)) . "COMMIT;\n");
	twin_check($standby, "$L promoted standby", 's');
	check_structure($standby, "$L promoted standby");

	node_log_ok($primary, "$L replication");
	node_log_ok($standby, "$L replication");
	$standby->stop;
	$primary->stop;
	return;
}

replicate('generic', "wal_consistency_checking = 'generic'\n", 'generic WAL', qr/^rmgr: Generic /);
# gbtree's resource manager: 161 to pg_waldump, which knows only built-in names
replicate('rm', "shared_preload_libraries = 'gbtree'\nwal_consistency_checking = 'gbtree'\n",
	'gbtree resource manager', qr/^rmgr: custom161 /);

done_testing();
