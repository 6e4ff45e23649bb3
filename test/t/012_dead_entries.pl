
# Copyright: gbtree project.
#
# Dead entries on a hot standby (src/README, "Dead entries").
#
# The primary marks entries whose heap tuples are dead to all its
# transactions and removes them from a full leaf before it splits.  A
# standby query may still see those tuples (hot_standby_feedback is off),
# so the removal must reach the standby only after such queries end:
# gbtree logs a recovery conflict first, and with
# max_standby_streaming_delay = -1 replay waits for them.  A REPEATABLE
# READ transaction on the standby, opened before the rows were deleted,
# must go on seeing all of them through a gbtree index scan while the
# primary reclaims their entries; once it ends, replay catches up and the
# standby answers as the primary does.  Both WAL modes: generic WAL and
# gbtree's resource manager (preloaded).
#
# The heap rows are wide enough that heap pages keep more than a tenth of
# their space free, so no heap pruning happens on the primary: its own
# conflict would otherwise hide a missing one from the index.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use GbtreeTestLib;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $scan = q{SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;};

sub run_mode
{
	my ($mode) = @_;
	my $primary = PostgreSQL::Test::Cluster->new("primary_$mode");
	$primary->init(allows_streaming => 1);
	# every record is checked on replay against the primary's page (with
	# the marks, which are hints, masked)
	$primary->append_conf('postgresql.conf', q{
autovacuum = off
log_min_messages = warning
wal_consistency_checking = all
});
	$primary->append_conf('postgresql.conf', "shared_preload_libraries = 'gbtree'\n")
	  if $mode eq 'rmgr';
	$primary->start;
	$primary->safe_psql('postgres', q{
CREATE EXTENSION gbtree;
CREATE TABLE t (k int4, pad text);
ALTER TABLE t ALTER COLUMN pad SET STORAGE PLAIN;
-- 6 rows of about 1.2 kB a heap page: over 800 bytes stay free
INSERT INTO t SELECT g, repeat('x', 1150) FROM generate_series(1, 3000) g;
CREATE INDEX t_k ON t USING gbtree (k);
});
	$primary->backup('base');
	my $standby = PostgreSQL::Test::Cluster->new("standby_$mode");
	$standby->init_from_backup($primary, 'base', has_streaming => 1);
	$standby->append_conf('postgresql.conf', q{
hot_standby = on
hot_standby_feedback = off
max_standby_streaming_delay = -1
log_recovery_conflict_waits = on
deadlock_timeout = 100ms
});
	$standby->start;
	$primary->wait_for_catchup($standby);

	# a standby snapshot that sees every row
	my $reader = psql_session($standby);
	session_do($reader, $scan);
	session_do($reader, 'BEGIN ISOLATION LEVEL REPEATABLE READ');
	my $q = 'SELECT count(*), sum(k) FROM t WHERE k BETWEEN 1 AND 3000';
	is(session_do($reader, $q), '3000|4501500', "$mode: standby snapshot sees all rows");

	# the primary deletes half the rows, marks their entries dead in an
	# index scan, then inserts into the same leaves until they are full
	my $size0 = $primary->safe_psql('postgres', q{SELECT pg_relation_size('t_k')});
	$primary->safe_psql('postgres', 'DELETE FROM t WHERE k % 2 = 0');
	$primary->safe_psql('postgres', "$scan SELECT count(*) FROM t WHERE k BETWEEN 1 AND 3000");
	$primary->safe_psql('postgres', q{
INSERT INTO t SELECT (g % 1500) * 2 + 1, 'new' FROM generate_series(1, 1500) g;
});
	my $size1 = $primary->safe_psql('postgres', q{SELECT pg_relation_size('t_k')});
	is($size1, $size0, "$mode: the inserts reused the dead entries' slots (no split)");

	# replay must wait for the reader, whose answers do not change
	my $stuck = 0;
	for (1 .. 50)
	{
		is(session_do($reader, $q), '3000|4501500', "$mode: standby snapshot still sees all rows")
		  if $_ % 10 == 0;
		if ($standby->log_contains('recovery still waiting'))
		{
			$stuck = 1;
			last;
		}
		usleep(100_000);
	}
	ok($stuck, "$mode: replay waited for the standby query (recovery conflict)");
	is(session_do($reader, $q), '3000|4501500', "$mode: standby snapshot sees all rows after the reclaim");
	session_do($reader, 'COMMIT');
	session_end($reader);

	$primary->wait_for_catchup($standby);
	my $all = 'SELECT count(*), sum(k), sum(length(pad)) FROM t WHERE k BETWEEN 1 AND 3000';
	my $want = $primary->safe_psql('postgres', "SET enable_indexscan = off; SET enable_bitmapscan = off; $all");
	is($primary->safe_psql('postgres', "$scan $all"), $want, "$mode: primary index scan matches a seq scan");
	is($standby->safe_psql('postgres', "$scan $all"), $want, "$mode: standby index scan matches the primary");
	is($primary->safe_psql('postgres', q{SELECT gbtree_check('t_k', true)}), '', "$mode: primary index checks out");
	is($standby->safe_psql('postgres', q{SELECT gbtree_check('t_k')}), '', "$mode: standby index checks out");

	$standby->stop;
	$primary->stop;
}

run_mode('generic');
run_mode('rmgr');

done_testing();
