
# Copyright: gbtree project.
#
# GbtreeTestLib: helpers shared by the gbtree TAP tests (test/t/*.pl).
#
# The tests have no verification function to call, so they check the index
# by comparison: a sequential scan of the heap is the oracle, and every
# query is run again with the planner restricted to one kind of gbtree
# scan (plain index scan, index-only scan, bitmap scan) and, where a table
# also carries btree twins of its gbtree indexes, to btree.  Answers must
# be identical, and the plan must really use the index we mean to test.
#
# Index naming convention: the gbtree index on column C of table T is
# named T_C_g; an optional btree twin is T_C_b.  While one kind of index is
# under test the other kind is hidden by dropping it inside a transaction
# that is rolled back (so this needs a writable node when both kinds exist;
# on a standby the tables carry gbtree indexes only and nothing is dropped).
# Tests must compare values of the column's own type (cast literals), so
# that no cross-type operator support is assumed.

package GbtreeTestLib;

use strict;
use warnings;

use Exporter 'import';
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

our @EXPORT = qw(
  run_checks compare_with_seq compare_nodes check_structure
  crash_all_processes crash_one_backend
  start_pgbench stop_pgbench
  psql_session session_do session_end
  node_log_ok wal_workload wal_checks
);

# Scan kinds: planner settings for each.  In PostgreSQL 15
# enable_indexscan = off penalizes index-only scans too, and the planner
# makes an index-only path instead of a plain one whenever it can, so ios
# mode keeps enable_indexscan on.
my %MODE_GUCS = (
	seq => { seqscan => 'on', indexscan => 'off', indexonlyscan => 'off', bitmapscan => 'off' },
	idx => { seqscan => 'off', indexscan => 'on', indexonlyscan => 'off', bitmapscan => 'off' },
	ios => { seqscan => 'off', indexscan => 'on', indexonlyscan => 'on', bitmapscan => 'off' },
	bitmap => { seqscan => 'off', indexscan => 'off', indexonlyscan => 'off', bitmapscan => 'on' },
	btree => { seqscan => 'off', indexscan => 'on', indexonlyscan => 'off', bitmapscan => 'off' },
);

# A check is a hash:
#   name    short unique name
#   sql     a query returning one row of one text column
#   index   the gbtree index the plan must use (T_C_g)
#   modes   scan kinds besides seq it applies to (default: idx, ios, bitmap,
#           btree); btree applies only if the btree twin exists
#   seq_sql optional cheaper query computing the same answer for seq mode
#   ios     if true, ios mode must produce an index-only scan
#
# run_checks($node, $mode, \@checks): run every check that applies to
# $mode on $node, in one session, inside a transaction that is rolled back.
# Returns { name => { value => ..., plan => ... } }.
sub run_checks
{
	my ($node, $mode, $checks, %opt) = @_;
	my $g = $MODE_GUCS{$mode} or die "unknown mode $mode";

	my @tables = uniq(map { index_table($_->{index}) } @$checks);
	my $tables_sql = join(', ', map { "'$_'::regclass" } @tables);

	# Hide the other kind of index: the btree twins (T_C_b) unless
	# testing btree, else the gbtree indexes (T_C_g).  By name, not by
	# access method, so that the scripts can be tried with btree standing
	# in for gbtree.
	my $hide = $mode eq 'btree' ? 'g' : 'b';
	my $drops = '';
	if ($mode ne 'seq')
	{
		$drops = $node->safe_psql(
			'postgres', qq{
			SELECT string_agg(format('DROP INDEX %s;', c.oid::regclass), ' ')
			FROM pg_index i
			JOIN pg_class c ON c.oid = i.indexrelid
			WHERE i.indrelid IN ($tables_sql) AND c.relname ~ '_[^_]+_$hide\$'});
	}

	my $script = "BEGIN;\n";
	$script .= "SET LOCAL enable_$_ = $g->{$_};\n" for sort keys %$g;
	$script .= "SET LOCAL max_parallel_workers_per_gather = 0;\n";
	$script .= "SET LOCAL jit = off;\n";
	$script .= "$drops\n";

	my @run;
	for my $c (@$checks)
	{
		next unless check_applies($c, $mode);
		my $sql = $c->{sql};
		$sql = $c->{seq_sql} if $mode eq 'seq' && defined $c->{seq_sql};
		$sql =~ s/;\s*$//;
		push @run, $c;
		$script .= "\\echo \@\@plan $c->{name}\n";
		$script .= "EXPLAIN (COSTS OFF) $sql;\n" if $mode ne 'seq';
		$script .= "\\echo \@\@value $c->{name}\n";
		$script .= "$sql;\n";
	}
	$script .= "\\echo \@\@end\nROLLBACK;\n";

	my $out = $node->safe_psql('postgres', $script, %opt);

	my %res;
	my ($cur, $what);
	for my $line (split /\n/, $out)
	{
		if ($line =~ /^\@\@(plan|value) (\S+)$/)
		{
			($what, $cur) = ($1, $2);
			$res{$cur}{$what} = '';
			next;
		}
		if ($line eq '@@end') { $cur = undef; next; }
		next unless defined $cur;
		$res{$cur}{$what} .= ($res{$cur}{$what} eq '' ? '' : "\n") . $line;
	}
	return \%res;
}

sub uniq
{
	my %seen;
	return grep { !$seen{$_}++ } @_;
}

# T_C_g -> T
sub index_table
{
	my ($index) = @_;
	$index =~ /^(.*)_[^_]+_g$/ or die "index name $index does not follow T_C_g";
	return $1;
}

sub check_applies
{
	my ($c, $mode) = @_;
	return 1 if $mode eq 'seq';
	my $modes = $c->{modes} // [qw(idx ios bitmap btree)];
	return scalar grep { $_ eq $mode } @$modes;
}

# The index a check's plan must mention under $mode.
sub expected_index
{
	my ($c, $mode) = @_;
	my $ix = $c->{index};
	$ix =~ s/_g$/_b/ if $mode eq 'btree';
	return $ix;
}

# Does the plan use the index meant for this check and mode?  Checks
# marked ios => 1 must be answered by an index-only scan in ios mode.
sub plan_ok
{
	my ($c, $mode, $plan) = @_;
	my $ix = expected_index($c, $mode);
	return 0 unless defined $plan && $plan =~ /\b\Q$ix\E\b/;
	return 0 if $mode eq 'ios' && $c->{ios} && $plan !~ /Index Only Scan (Backward )?using \Q$ix\E\b/;
	return 1;
}

# compare_with_seq($node, $label, \@checks, @modes): the oracle is the
# sequential scan; every other mode must give the same answers and use the
# index it is meant to.  btree mode is skipped for tables without btree
# twins.  Returns the seq answers ({ name => value }).
sub compare_with_seq
{
	my ($node, $label, $checks, @modes) = @_;
	my $ref = run_checks($node, 'seq', $checks);

	for my $mode (@modes)
	{
		my @cs = grep { check_applies($_, $mode) } @$checks;
		if ($mode eq 'btree')
		{
			@cs = grep { has_index($node, expected_index($_, 'btree')) } @cs;
			next unless @cs;
		}
		my $got = run_checks($node, $mode, \@cs);
		for my $c (@cs)
		{
			my $n = $c->{name};
			my $ix = expected_index($c, $mode);
			my $plan = $got->{$n}{plan} // '';
			my $value = $got->{$n}{value};
			my $plan_ok = plan_ok($c, $mode, $plan);
			my $ok = $plan_ok && defined $value && $value eq $ref->{$n}{value};
			ok($ok, "$label: $mode: $n") or diag(
				"plan (must use $ix):\n$plan\n"
				  . "expected (seq scan): $ref->{$n}{value}\n"
				  . "got: " . ($value // '(none)'));
		}
	}
	return { map { $_ => $ref->{$_}{value} } keys %$ref };
}

my %has_index_cache;
sub has_index
{
	my ($node, $ix) = @_;
	my $key = $node->name . "/$ix";
	return $has_index_cache{$key} //=
	  $node->safe_psql('postgres', "SELECT count(*) FROM pg_class WHERE relname = '$ix'") > 0;
}

# compare_nodes($label, \@checks, $mode, $node_a, $node_b): both nodes give
# the same answers under $mode (and both plans use the index).
sub compare_nodes
{
	my ($label, $checks, $mode, $a, $b) = @_;
	my $ra = run_checks($a, $mode, $checks);
	my $rb = run_checks($b, $mode, $checks);
	for my $c (@$checks)
	{
		next unless check_applies($c, $mode);
		my $n = $c->{name};
		my $ix = expected_index($c, $mode);
		my $plan_ok = $mode eq 'seq'
		  || (plan_ok($c, $mode, $ra->{$n}{plan}) && plan_ok($c, $mode, $rb->{$n}{plan}));
		my $ok = $plan_ok
		  && defined $ra->{$n}{value}
		  && defined $rb->{$n}{value}
		  && $ra->{$n}{value} eq $rb->{$n}{value};
		ok($ok, "$label: $mode: $n: " . $a->name . " = " . $b->name) or diag(
			"plan on " . $a->name . ":\n" . ($ra->{$n}{plan} // '') . "\n"
			  . "plan on " . $b->name . ":\n" . ($rb->{$n}{plan} // '') . "\n"
			  . $a->name . ": " . ($ra->{$n}{value} // '(none)') . "\n"
			  . $b->name . ": " . ($rb->{$n}{value} // '(none)'));
	}
	return;
}

# check_structure($node, $label): run gbtree's own verification function,
# gbtree_check(index, heapallindexed => true), on every gbtree index of the
# database; skipped where the function does not exist.
sub check_structure
{
	my ($node, $label) = @_;
	my $have = $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_proc WHERE proname = 'gbtree_check'");
	return unless $have;
	my @ixs = split /\n/, $node->safe_psql(
		'postgres', q{
		SELECT c.oid::regclass FROM pg_class c JOIN pg_am a ON a.oid = c.relam
		WHERE a.amname = 'gbtree' AND c.relkind = 'i' ORDER BY 1});
	for my $ix (@ixs)
	{
		my ($rc, $out, $err) =
		  $node->psql('postgres', "SELECT gbtree_check('$ix', true)");
		ok($rc == 0, "$label: gbtree_check('$ix', true) on " . $node->name)
		  or diag($err);
	}
	return;
}

# ---- crashes ----------------------------------------------------------------

sub postmaster_pid
{
	my ($node) = @_;
	my $pidfile = $node->data_dir . '/postmaster.pid';
	open my $fh, '<', $pidfile or die "cannot open $pidfile: $!";
	my $pid = <$fh>;
	close $fh;
	chomp $pid;
	$pid =~ /^\d+$/ or die "bad pid '$pid' in $pidfile";
	return $pid;
}

sub children_of
{
	my ($ppid) = @_;
	my @kids;
	opendir my $dh, '/proc' or die "cannot read /proc: $!";
	for my $p (grep { /^\d+$/ } readdir $dh)
	{
		open my $fh, '<', "/proc/$p/stat" or next;
		my $stat = <$fh>;
		close $fh;
		next unless defined $stat;
		# pid (comm) state ppid ...; comm may contain spaces
		$stat =~ s/^.*\)\s+//s;
		my (undef, $pp) = split /\s+/, $stat;
		push @kids, $p if defined $pp && $pp == $ppid;
	}
	closedir $dh;
	return @kids;
}

sub alive
{
	my ($pid) = @_;
	open my $fh, '<', "/proc/$pid/stat" or return 0;
	my $stat = <$fh>;
	close $fh;
	return 0 unless defined $stat;
	$stat =~ s/^.*\)\s+//s;
	my ($state) = split /\s+/, $stat;
	return $state ne 'Z' && $state ne 'X';
}

# crash_all_processes($node): SIGKILL the postmaster and every child of it
# at once, as if the machine had lost power (minus the OS cache): the
# postmaster is first stopped with SIGSTOP so that it cannot fork or react,
# then its children and itself are killed.  Waits until they are gone.
# The node is then down; start it with $node->start.
sub crash_all_processes
{
	my ($node) = @_;
	my $pm = postmaster_pid($node);
	kill 'STOP', $pm;
	my @kids = children_of($pm);
	kill 'KILL', @kids if @kids;
	$node->kill9;    # SIGKILL to the postmaster; the node forgets its pid
	my $deadline = time + 60;
	while (grep { alive($_) } ($pm, @kids))
	{
		die "processes of node " . $node->name . " survived SIGKILL"
		  if time > $deadline;
		usleep(20_000);
	}
	# Where no init process reaps orphans (containers), the killed
	# postmaster stays a zombie, and a new postmaster would take its lock
	# file for a live one.  After a real crash the pid in the lock file is
	# simply gone; remove the file to get the same start-up.
	# The same goes for the socket's lock file.
	for my $f ($node->data_dir . '/postmaster.pid',
		$node->host . '/.s.PGSQL.' . $node->port . '.lock')
	{
		unlink $f if -e $f;
	}
	note "crashed node " . $node->name . ": killed postmaster $pm and "
	  . scalar(@kids) . " children";
	return;
}

# crash_one_backend($node, $pid): SIGKILL one backend; the postmaster then
# kills all others and runs crash recovery.  Waits until the node accepts
# connections again.
sub crash_one_backend
{
	my ($node, $pid) = @_;
	my $offset = -s $node->logfile;
	kill 'KILL', $pid or die "cannot kill $pid: $!";
	$node->wait_for_log(qr/all server processes terminated; reinitializing/, $offset);
	$node->wait_for_log(qr/database system is ready to accept connections/, $offset);
	$node->poll_query_until('postgres', 'SELECT 1', '1')
	  or die "node did not come back after crash";
	note "crashed backend $pid of node " . $node->name;
	return;
}

# ---- workload ---------------------------------------------------------------

# A quiet psql session for many small statements (BackgroundPsql logs every
# query).  psql_session($node) returns a handle; session_do($h, $sql) runs
# one statement and dies on error; session_end($h) closes it (also fine
# after the server has crashed).
sub psql_session
{
	my ($node) = @_;
	my $h = { in => '', out => '', err => '', n => 0 };
	$h->{run} = IPC::Run::start(
		[
			$node->installed_command('psql'), '-XAtq', '-v', 'ON_ERROR_STOP=1',
			'-d', $node->connstr('postgres'), '-f', '-'
		],
		'<', \$h->{in}, '>', \$h->{out}, '2>', \$h->{err});
	return $h;
}

sub session_do
{
	my ($h, $sql) = @_;
	my $tag = "\@\@done " . ++$h->{n};
	$h->{in} .= "$sql;\n\\echo $tag\n";
	my $deadline = time + 180;
	while ($h->{out} !~ /^\Q$tag\E$/m)
	{
		die "psql session failed: $h->{err}" if $h->{err} =~ /ERROR|FATAL|could not/;
		die "psql session timed out on: $sql" if time > $deadline;
		die "psql session ended: $h->{err}" unless $h->{run}->pumpable;
		$h->{run}->pump_nb;
		usleep(1000) if $h->{out} !~ /^\Q$tag\E$/m;
	}
	my $out = $h->{out};
	$out =~ s/^\Q$tag\E\n?//m;
	$out =~ s/\n$//;
	$h->{out} = '';
	return $out;
}

sub session_end
{
	my ($h) = @_;
	$h->{in} .= "\\q\n";
	eval { $h->{run}->finish; 1 } or eval { $h->{run}->kill_kill; };
	return;
}

# start_pgbench($node, $name, \%scripts, $clients, $seconds, $rate): run
# pgbench in the background with the given custom scripts ({ file => text },
# a file name may carry pgbench's @weight suffix), at most $rate
# transactions per second in all if given.  Returns a handle for
# stop_pgbench.  Its sessions have application_name gbtree_pgbench.
my $pgbench_seq = 0;
sub start_pgbench
{
	my ($node, $name, $scripts, $clients, $seconds, $rate) = @_;
	my @opts;
	push @opts, '-R', $rate if $rate;
	$pgbench_seq++;
	for my $f (sort keys %$scripts)
	{
		my ($base, $weight) = $f =~ /^(.*?)(\@\d+)?$/;
		my $path = $node->basedir . "/pgbench_${pgbench_seq}_$base";
		open my $fh, '>', $path or die "cannot write $path: $!";
		print $fh $scripts->{$f};
		close $fh;
		push @opts, '-f', $path . ($weight // '');
	}
	my ($out, $err) = ('', '');
	local $ENV{PGAPPNAME} = 'gbtree_pgbench';
	my $h = IPC::Run::start(
		[
			$node->installed_command('pgbench'), '-n',
			'-h', $node->host, '-p', $node->port,
			'-c', $clients, '-j', $clients, '-T', $seconds,
			@opts, 'postgres'
		],
		'>', \$out, '2>', \$err,
		IPC::Run::timeout($seconds + 120));
	return { h => $h, out => \$out, err => \$err, name => $name };
}

# stop_pgbench($b, $expect_ok): wait for pgbench to end (after a crash its
# clients abort).  If $expect_ok, it must have succeeded.
sub stop_pgbench
{
	my ($b, $expect_ok) = @_;
	my $ok = eval { $b->{h}->finish; 1 };
	if (!$ok)
	{
		eval { $b->{h}->kill_kill; };
	}
	my $rc = $b->{h}->result(0);
	if ($expect_ok)
	{
		is($rc, 0, "pgbench $b->{name} succeeded") or diag(${ $b->{err} });
	}
	my ($tps) = ${ $b->{out} } =~ /number of transactions actually processed: (\d+)/;
	note "pgbench $b->{name}: exit status " . ($rc // 'none')
	  . (defined $tps ? ", $tps transactions" : '');
	return;
}

# node_log_ok($node, $label): no PANIC, TRAP or corruption reports in the
# node's log.
sub node_log_ok
{
	my ($node, $label) = @_;
	my $log = slurp_file($node->logfile);
	my @bad = grep {
		/PANIC:|TRAP:|inconsistent page found|could not read block|invalid page|unexpected zero page|corrupt/i
	} split /\n/, $log;
	ok(!@bad, "$label: no PANIC/assertion/corruption messages in log of " . $node->name)
	  or diag(join("\n", @bad[0 .. ($#bad < 20 ? $#bad : 19)]));
	return;
}

# wal_workload($node, checkpoint => 0|1): the write workload of the WAL
# tests (003, 009): tables w and e with gbtree indexes, every code path
# that writes (build, inserts with splits of every kind, duplicates, NULLs,
# deletes, updates, VACUUM with page deletion and reuse, REINDEX [CONCURRENTLY],
# CREATE INDEX CONCURRENTLY, concurrent inserts and scans).  checkpoint: a
# CHECKPOINT before the inserts, so that pages built before it change for
# the first time after it.
sub wal_workload
{
	my ($node, %opts) = @_;
	$node->safe_psql(
		'postgres', q{
	CREATE EXTENSION gbtree;
	CREATE TABLE w (id bigint GENERATED BY DEFAULT AS IDENTITY, k int4, f float8, ts timestamptz);
	INSERT INTO w (k, f, ts)
	  SELECT (g * 7919) % 20000, CASE WHEN g % 11 = 0 THEN NULL ELSE g / 3.0 END,
	         timestamptz '2024-01-01 00:00+00' + g * interval '1 minute'
	  FROM generate_series(1, 10000) g;
	CREATE INDEX w_k_g ON w USING gbtree (k);
	CREATE INDEX w_f_g ON w USING gbtree (f);
	CREATE INDEX w_id_g ON w USING gbtree (id);
	-- multi-word keys (src/README, "Multi-word keys"): two columns, a uuid
	CREATE INDEX w_kts_g ON w USING gbtree (k, ts DESC);
	CREATE INDEX w_ki_g ON w USING gbtree (k) INCLUDE (f);
	CREATE TABLE u (id int, x uuid);
	INSERT INTO u SELECT g, md5(g::text)::uuid FROM generate_series(1, 5000) g;
	CREATE INDEX u_x_g ON u USING gbtree (x);
	-- an index built on an empty table, filled only by inserts
	CREATE TABLE e (k int8);
	CREATE INDEX e_k_g ON e USING gbtree (k);
	-- multi-word indexes built empty, filled by batches whose sorted runs
	-- go in by append splits (a new right page takes the run, the full
	-- leaf keeps its entries and takes a new high key)
	CREATE TABLE ew (id int, x uuid, t text);
	CREATE INDEX ew_x_g ON ew USING gbtree (x);
	CREATE INDEX ew_t_g ON ew USING gbtree (t);
	-- unique indexes, one word and two: each row goes in alone, a record
	-- a row (its delta sought where the insert says it changed the leaf)
	CREATE TABLE q (id int, x uuid);
	INSERT INTO q SELECT g, md5(g::text)::uuid FROM generate_series(1, 300) g;
	CREATE UNIQUE INDEX q_id_g ON q USING gbtree (id);
	CREATE UNIQUE INDEX q_x_g ON q USING gbtree (x, id);
	});

	# inserts: random, rightmost, heavy duplicates, NULLs
	$node->safe_psql('postgres', 'CHECKPOINT') if $opts{checkpoint};
	$node->safe_psql(
		'postgres', q{
	INSERT INTO w (k, f, ts)
	  SELECT (g * 104729) % 20000, g * 1.5, now() FROM generate_series(1, 5000) g;
	INSERT INTO w (k, f) SELECT 777, NULL FROM generate_series(1, 2000) g;
	-- leaves in posting form (src/README, "Deduplication"): built, then
	-- taking single rows and batches, split, and shrunk by VACUUM below
	CREATE TABLE d (k int8);
	INSERT INTO d SELECT g % 3 FROM generate_series(1, 6000) g;
	CREATE INDEX d_k_g ON d USING gbtree (k);
	DO $$ BEGIN FOR i IN 1..300 LOOP INSERT INTO d VALUES (i % 4); END LOOP; END $$;
	INSERT INTO d SELECT 1 FROM generate_series(1, 3000) g;
	INSERT INTO e SELECT g FROM generate_series(1, 6000) g;
	INSERT INTO e SELECT -g FROM generate_series(1, 2000) g;
	INSERT INTO e SELECT NULL FROM generate_series(1, 1000) g;
	INSERT INTO ew SELECT g, md5(g::text)::uuid, substr(md5(g::text), 1, 10) || '@example.com'
	  FROM generate_series(1, 8000) g;
	INSERT INTO ew SELECT g, md5(g::text)::uuid, substr(md5(g::text), 1, 12) || '@example.org'
	  FROM generate_series(8001, 12000) g;
	INSERT INTO u SELECT g, CASE WHEN g % 50 = 0 THEN NULL ELSE md5((g % 9000)::text)::uuid END
	  FROM generate_series(5001, 15000) g;
	INSERT INTO q SELECT g, CASE WHEN g % 40 = 0 THEN NULL ELSE md5((g % 700)::text)::uuid END
	  FROM generate_series(301, 1500) g;
	INSERT INTO q SELECT -g, md5(g::text)::uuid FROM generate_series(1, 300) g;
	});

	# concurrent inserts with scans running beside them
	my $b = start_pgbench(
		$node, 'concurrent',
		{
			'ins.sql@4' => q{
	\set n random(5, 30)
	INSERT INTO w (k, f) SELECT (random() * 20000)::int4, random() * 1000 FROM generate_series(1, :n);
	INSERT INTO e SELECT (random() * 1000000)::int8 FROM generate_series(1, :n);
	},
			'scan.sql@2' => q{
	\set k random(0, 20000)
	SET enable_seqscan = off;
	SET enable_bitmapscan = off;
	SELECT count(*) FROM w WHERE k BETWEEN :k AND :k + 500;
	SELECT count(*) FROM (SELECT k FROM w WHERE k < :k ORDER BY k DESC LIMIT 200) x;
	SELECT count(*) FROM e WHERE k = ANY (ARRAY[1, 2, 3, :k]::int8[]);
	},
			'del.sql@1' => q{
	\set k random(0, 20000)
	DELETE FROM w WHERE k BETWEEN :k AND :k + 50;
	}
		},
		2, 3, 100);
	stop_pgbench($b, 1);

	# deletes (whole pages and ranges), scans over the dead entries, updates,
	# vacuum, reuse of the freed space and pages
	$node->safe_psql(
		'postgres', q{
	DELETE FROM w WHERE k BETWEEN 5000 AND 12000;
	DELETE FROM w WHERE k = 777 AND id % 3 <> 0;
	DELETE FROM e WHERE k BETWEEN 100 AND 5000;
	DELETE FROM d WHERE ctid::text LIKE '%1)' OR k = 2;
	DELETE FROM u WHERE id % 3 = 0;
	SET enable_seqscan = off;
	SET enable_bitmapscan = off;
	SELECT count(*) FROM w WHERE k BETWEEN 4000 AND 13000;
	SELECT count(*) FROM e WHERE k BETWEEN 0::int8 AND 20000::int8;
	RESET enable_seqscan;
	RESET enable_bitmapscan;
	UPDATE w SET k = k + 1, f = f + 1 WHERE id % 31 = 0;
	VACUUM w;
	VACUUM e;
	VACUUM d;
	VACUUM u;
	INSERT INTO u SELECT g, md5(g::text)::uuid FROM generate_series(1, 3000) g;
	INSERT INTO d SELECT g % 5 FROM generate_series(1, 2000) g;
	INSERT INTO w (k, f) SELECT 5000 + g % 7000, g FROM generate_series(1, 4000) g;
	INSERT INTO e SELECT g FROM generate_series(100, 5000, 3) g;
	VACUUM w;
	});

	# rebuilds
	$node->safe_psql(
		'postgres', q{
	REINDEX INDEX w_k_g;
	REINDEX TABLE e;
	CREATE INDEX CONCURRENTLY w_ts_g ON w USING gbtree (ts);
	REINDEX INDEX CONCURRENTLY w_f_g;
	INSERT INTO w (k, f, ts) SELECT g, g, now() + g * interval '1 second' FROM generate_series(1, 1000) g;
	});
	return;
}

# wal_checks(): the queries that compare the WAL tests' tables through
# their gbtree indexes with a sequential scan
sub wal_checks
{
	my @checks = (
		{
			name => 'k_order', index => 'w_k_g', modes => [qw(idx ios)], ios => 1,
			sql => q{SELECT count(*) || ':' || md5(string_agg(coalesce(k::text, 'N'), ',')) FROM (SELECT k FROM w ORDER BY k) x}
		},
		{
			name => 'k_lookup', index => 'w_k_g', modes => [qw(idx bitmap)],
			sql => q{SELECT count(*) || ':' || coalesce(sum(l.c), 0) || ':' || count(*) FILTER (WHERE l.c <> e.n)
			         FROM (SELECT k, count(*) AS n FROM w WHERE k IS NOT NULL GROUP BY k) e,
			              LATERAL (SELECT count(*) AS c FROM w x WHERE x.k = e.k) l},
			seq_sql => q{SELECT count(DISTINCT k) || ':' || count(k) || ':0' FROM w}
		},
		{
			name => 'f_desc', index => 'w_f_g', modes => [qw(idx ios)], ios => 1,
			sql => q{SELECT count(*) || ':' || md5(string_agg(coalesce(f::text, 'N'), ',')) FROM (SELECT f FROM w ORDER BY f DESC) x}
		},
		{
			name => 'f_null', index => 'w_f_g',
			sql => q{SELECT count(*) || ':' || coalesce(sum(id), 0) FROM w WHERE f IS NULL}
		},
		{
			name => 'id_lookup', index => 'w_id_g', modes => [qw(idx bitmap)],
			sql => q{SELECT count(*) || ':' || count(*) FILTER (WHERE l.c <> 1)
			         FROM w a, LATERAL (SELECT count(*) AS c FROM w b WHERE b.id = a.id) l},
			seq_sql => q{SELECT count(*) || ':0' FROM w}
		},
		{
			name => 'ts_order', index => 'w_ts_g', modes => [qw(idx ios)], ios => 1,
			sql => q{SELECT count(*) || ':' || md5(string_agg(coalesce(ts::text, 'N'), ',')) FROM (SELECT ts FROM w ORDER BY ts) x}
		},
		{
			name => 'kts_order', index => 'w_kts_g', modes => [qw(idx ios)], ios => 1,
			sql => q{SELECT count(*) || ':' || md5(string_agg(coalesce(k::text, 'N') || '/' || coalesce(ts::text, 'N'), ',')) FROM (SELECT k, ts FROM w ORDER BY k, ts DESC) x}
		},
		{
			name => 'kts_range', index => 'w_kts_g', modes => [qw(idx ios bitmap)],
			sql => q{SELECT count(*) || ':' || coalesce(sum(k), 0) FROM w WHERE k BETWEEN 100 AND 9000 AND ts > timestamptz '2024-01-03 00:00+00'}
		},
		{
			name => 'q_order', index => 'q_x_g', modes => [qw(idx ios)], ios => 1,
			sql => q{SELECT count(*) || ':' || md5(string_agg(coalesce(x::text, 'N') || '/' || id, ',')) FROM (SELECT x, id FROM q ORDER BY x, id) s}
		},
		{
			name => 'q_id', index => 'q_id_g', modes => [qw(idx ios bitmap)],
			sql => q{SELECT count(*) || ':' || coalesce(sum(id), 0) FROM q WHERE id BETWEEN -100 AND 900}
		},
		{
			name => 'ki_ios', index => 'w_ki_g', modes => [qw(ios)], ios => 1,
			sql => q{SELECT count(*) || ':' || md5(string_agg(k || '/' || coalesce(f::text, 'N'), ',' ORDER BY k, f)) FROM w WHERE k BETWEEN 100 AND 15000}
		},
		{
			name => 'u_order', index => 'u_x_g', modes => [qw(idx ios)], ios => 1,
			sql => q{SELECT count(*) || ':' || md5(string_agg(coalesce(x::text, 'N'), ',')) FROM (SELECT x FROM u ORDER BY x DESC) x}
		},
		{
			name => 'u_lookup', index => 'u_x_g', modes => [qw(idx bitmap)],
			sql => q{SELECT count(*) || ':' || coalesce(sum(l.c), 0) || ':' || count(*) FILTER (WHERE l.c <> e.n)
			         FROM (SELECT x, count(*) AS n FROM u WHERE x IS NOT NULL GROUP BY x) e,
			              LATERAL (SELECT count(*) AS c FROM u y WHERE y.x = e.x) l},
			seq_sql => q{SELECT count(DISTINCT x) || ':' || count(x) || ':0' FROM u}
		},
		{
			name => 'ew_x', index => 'ew_x_g', modes => [qw(idx ios)], ios => 1,
			sql => q{SELECT count(*) || ':' || md5(string_agg(x::text, ',')) FROM (SELECT x FROM ew ORDER BY x) s}
		},
		{
			name => 'ew_t', index => 'ew_t_g', modes => [qw(idx bitmap)],
			sql => q{SELECT count(*) || ':' || coalesce(sum(id), 0) FROM ew WHERE t >= '4' AND t < 'c'}
		},
		{
			name => 'e_order', index => 'e_k_g', modes => [qw(idx ios)], ios => 1,
			sql => q{SELECT count(*) || ':' || md5(string_agg(coalesce(k::text, 'N'), ',')) FROM (SELECT k FROM e ORDER BY k) x}
		},
		{
			name => 'e_desc', index => 'e_k_g', modes => [qw(idx ios)], ios => 1,
			sql => q{SELECT count(*) || ':' || md5(string_agg(coalesce(k::text, 'N'), ',')) FROM (SELECT k FROM e ORDER BY k DESC) x}
		},
		{
			name => 'e_range', index => 'e_k_g',
			sql => q{SELECT count(*) || ':' || coalesce(sum(k), 0) FROM e WHERE k >= 50::int8 AND k < 18000::int8}
		},
		{
			name => 'd_posting', index => 'd_k_g', modes => [qw(idx ios bitmap)], ios => 1,
			sql => q{SELECT count(*) || ':' || count(*) FILTER (WHERE k = 1) || ':' || coalesce(sum(k), 0) FROM d WHERE k BETWEEN 0::int8 AND 3::int8}
		},);
	return \@checks;
}

1;
