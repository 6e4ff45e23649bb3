
# Copyright: gbtree project.
#
# Queue tables through WAL: VACUUM deletes inner pages (a parent whose
# only child is an empty leaf, the leftmost of each level included) and
# moves a parent's last child to its right sibling (src/README, "VACUUM",
# gbt_give_last_child), each by a generic WAL record of up to four pages.
# A streaming standby, cloned before the tables existed, replays it all
# while its readers scan the queue's head over and over (forward and
# backward); it must answer as the primary does and as a sequential scan
# does, and pass gbtree_check.  Then the primary is killed (SIGKILL to
# every process) right after such a VACUUM, and its crash recovery must
# give an index that passes gbtree_check(heapallindexed) and the same
# answers, whose queue head is read in a few pages, not one page for each
# parent the queue went through.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use GbtreeTestLib;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf(
	'postgresql.conf', q{
autovacuum = off
log_min_messages = warning
shared_buffers = 32MB
});
$primary->start;
$primary->backup('base');

my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->append_conf('postgresql.conf', q{
hot_standby = on
max_standby_streaming_delay = -1
});
$standby->start;
# (no hot_standby_feedback: its xmin, behind replay, would keep the
# primary's VACUUM from removing the rows just deleted; the standby's
# readers make replay wait instead of being cancelled)

# one-word keys (qq) and two-word keys (qw), gbtree and btree twins, trees
# of three levels (fill factor 10)
$primary->safe_psql('postgres', q{
CREATE EXTENSION gbtree;
CREATE TABLE qq (id int8, pay int) WITH (autovacuum_enabled = off);
CREATE TABLE qw (t int4, id int8) WITH (autovacuum_enabled = off);
INSERT INTO qq SELECT g, g % 97 FROM generate_series(1, 100000) g;
INSERT INTO qw SELECT 7, g FROM generate_series(1, 100000) g;
CREATE INDEX qq_g ON qq USING gbtree (id) WITH (fillfactor = 10);
CREATE INDEX qw_g ON qw USING gbtree (t, id) WITH (fillfactor = 10);
});

# the queue's head and a few other answers, under the given scan settings
sub answers
{
	my ($node, $mode) = @_;
	my $set = $mode eq 'seq'
	  ? 'SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off;'
	  : 'SET enable_seqscan = off; SET enable_bitmapscan = off;';
	return $node->safe_psql('postgres', "SET jit = off; $set" . q{
SELECT string_agg(id::text, ',') FROM (SELECT id FROM qq ORDER BY id LIMIT 5) s;
SELECT string_agg(id::text, ',') FROM (SELECT id FROM qq ORDER BY id DESC LIMIT 5) s;
SELECT count(*), sum(id) FROM qq WHERE id > 0;
SELECT string_agg(id::text, ',') FROM (SELECT id FROM qq WHERE id BETWEEN 19990 AND 80010 ORDER BY id) s;
SELECT string_agg(id::text, ',') FROM (SELECT id FROM qw WHERE t = 7 ORDER BY t, id LIMIT 5) s;
SELECT count(*), sum(id) FROM qw WHERE t = 7;
});
}

# pages read by the head of the queue: the plan's top node's shared
# buffers (the first Buffers line; planning's comes after the plan), in a
# session that ran the query once already (a fresh one, right after crash
# recovery, reads catalog pages on the index's first use)
sub head_pages
{
	my ($node, $q) = @_;
	my $out = $node->safe_psql('postgres',
		"SET enable_seqscan = off; SET enable_bitmapscan = off; SET jit = off; $q; "
		  . "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF) $q");
	my ($line) = grep { /Buffers: shared/ } split /\n/, $out;
	my ($hit) = ($line // '') =~ /hit=(\d+)/;
	my ($read) = ($line // '') =~ /read=(\d+)/;
	return ($hit // 0) + ($read // 0);
}

# standby readers scan the head while the primary deletes and vacuums
my $reader = psql_session($standby, 'postgres');
session_do($reader, 'SET enable_seqscan = off; SET enable_bitmapscan = off; SET jit = off;');
my $reader_bad = 0;

my @rounds = (
	'DELETE FROM qq WHERE id <= 95000; DELETE FROM qw WHERE id <= 95000;',
	'INSERT INTO qq SELECT g, 0 FROM generate_series(100001, 150000) g;
	 INSERT INTO qw SELECT 7, g FROM generate_series(100001, 150000) g;
	 DELETE FROM qq WHERE id <= 140000; DELETE FROM qw WHERE id <= 140000;',
	'INSERT INTO qq SELECT g, 1 FROM generate_series(150001, 250000) g;
	 DELETE FROM qq WHERE id BETWEEN 160001 AND 230000;');
for my $i (0 .. $#rounds)
{
	$primary->safe_psql('postgres', $rounds[$i]);
	$primary->safe_psql('postgres', 'VACUUM qq; VACUUM qw;');
	for (1 .. 5)
	{
		my $got = session_do($reader,
			'SELECT count(*) = count(DISTINCT id) AND bool_and(id > 0) FROM (SELECT id FROM qq ORDER BY id LIMIT 200) s;');
		$reader_bad++ unless defined $got && $got =~ /^t/m;
	}
	$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
	my $p = answers($primary, 'seq');
	is(answers($primary, 'index'), $p, "round $i: the primary's index answers as its seq scan");
	is(answers($standby, 'index'), $p, "round $i: the standby's index answers as the primary's seq scan");
}
session_end($reader);
is($reader_bad, 0, 'the standby reader found distinct positive ids at the head each time');
check_structure($standby, 'after replay');
check_structure($primary, 'before the crash');

my $head_before = head_pages($primary, 'SELECT id FROM qq ORDER BY id LIMIT 1');
cmp_ok($head_before, '<=', 5, "the queue's head is read in $head_before pages");

# a last round, then SIGKILL right after its VACUUM
$primary->safe_psql('postgres', q{
INSERT INTO qq SELECT g, 2 FROM generate_series(250001, 300000) g;
INSERT INTO qw SELECT 7, g FROM generate_series(150001, 200000) g;
DELETE FROM qq WHERE id <= 290000;
DELETE FROM qw WHERE id <= 190000;
});
$primary->safe_psql('postgres', 'VACUUM qq; VACUUM qw;');
# (VACUUM's transaction takes no xid, so its commit flushes no WAL: a
# switch to the next WAL file flushes all of it, so that none of VACUUM's
# records are lost with the crash)
$primary->safe_psql('postgres', 'SELECT pg_switch_wal()');
my $p = answers($primary, 'seq');
crash_all_processes($primary);
$primary->start;
is(answers($primary, 'index'), $p, 'after crash recovery: the index answers as before the crash');
is(answers($primary, 'seq'), $p, 'after crash recovery: the seq scan answers as before the crash');
check_structure($primary, 'after crash recovery');
# (after recovery an index-only scan may visit a heap page or two more,
# where the visibility map's bits came back later than the entries'
# removal; before inner pages were deleted, the heads here read dozens)
my $head_after = head_pages($primary, 'SELECT id FROM qq ORDER BY id LIMIT 1');
cmp_ok($head_after, '<=', 8, "after crash recovery the queue's head is read in $head_after pages");
my $wide_head = head_pages($primary, 'SELECT t, id FROM qw ORDER BY t, id LIMIT 1');
cmp_ok($wide_head, '<=', 8, "the two-word queue's head is read in $wide_head pages");

$standby->stop;
$primary->stop;
done_testing();
