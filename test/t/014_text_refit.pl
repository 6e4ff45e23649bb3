
# Copyright: gbtree project.
#
# An empty index fits its text words at its first flush (src/README, "Text
# keys", fitting an empty index), on a hot standby and through a crash.
#
# The fitting rewrites the metapage and both roots of a live index, which
# every backend had cached at four words: the primary sends the relcache
# invalidation at once and logs it for standbys.  A standby session that
# read the index while it was empty (its cache says four words) must,
# after the load is replayed, answer from the fitted pages exactly as the
# btree twin and a sequential scan do; so must a new one, and the primary.
# Every generic WAL record (gbtree's, here) is checked on replay
# (wal_consistency_checking).
#
# Then a load that fits an index and never commits, because the server is
# killed: recovery replays the fitting, the index keeps its words and the
# dead entries, and takes new rows.
#
# The fitted shape shows in the index's size: 12,000 keys of at most 6
# bytes take two words (304 entries a leaf) rather than four (176).

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use GbtreeTestLib;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $forced = q{SET enable_seqscan = off; SET enable_bitmapscan = off;};
my $seq = q{SET enable_seqscan = on; SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off;};

# count and md5 of the rows with k > $lo in key order
sub answer
{
	my ($table, $lo) = @_;
	return "SELECT count(*) || ':' || coalesce(md5(string_agg(k || '/' || id, ',' ORDER BY k, id)), '') "
	  . "FROM $table WHERE k > '$lo'";
}

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', q{
autovacuum = off
log_min_messages = warning
wal_consistency_checking = generic
wal_keep_size = 512MB
max_wal_size = 1GB
});
$primary->start;
$primary->safe_psql('postgres', q{
CREATE EXTENSION gbtree;
CREATE TABLE tg (id int4, k text COLLATE "C");
CREATE TABLE tb (id int4, k text COLLATE "C");
CREATE INDEX tg_k ON tg USING gbtree (k);
CREATE INDEX tb_k ON tb USING btree (k);
});
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->append_conf('postgresql.conf', q{
hot_standby = on
max_standby_streaming_delay = -1
});
$standby->start;
$primary->wait_for_catchup($standby);

# a standby session reads the empty index: its cache says four words
my $reader = psql_session($standby);
session_do($reader, $forced);
is(session_do($reader, answer('tg', 'k')), '0:', 'standby reads the empty index');
my $pages0 = $primary->safe_psql('postgres', q{SELECT pg_relation_size('tg_k') / 8192});

$primary->safe_psql('postgres', q{
BEGIN;
INSERT INTO tg SELECT g, 'k' || g FROM generate_series(1, 12000) g;
INSERT INTO tb SELECT g, 'k' || g FROM generate_series(1, 12000) g;
COMMIT;
});
$primary->wait_for_catchup($standby);
my $pages = $primary->safe_psql('postgres', q{SELECT pg_relation_size('tg_k') / 8192});
ok($pages0 == 3 && $pages < 60, "the load fitted the index to fewer words ($pages pages)");

for my $lo ('k', 'k5', 'k11999', 'l')
{
	my $want = $primary->safe_psql('postgres', "$seq " . answer('tb', $lo));
	is(session_do($reader, answer('tg', $lo)), $want,
		"standby session that cached four words: k > '$lo'");
	is($standby->safe_psql('postgres', "$forced " . answer('tg', $lo)), $want,
		"new standby session: k > '$lo'");
	is($primary->safe_psql('postgres', "$forced " . answer('tg', $lo)), $want,
		"primary: k > '$lo'");
	is($standby->safe_psql('postgres', "$seq " . answer('tg', $lo)), $want,
		"standby sequential scan: k > '$lo'");
}
session_end($reader);
is($standby->safe_psql('postgres', q{SELECT gbtree_check('tg_k', true)}), '', 'standby: gbtree_check');

# a fitting load that never commits: the server is killed
$primary->safe_psql('postgres', q{
CREATE TABLE cg (id int4, k text COLLATE "C");
CREATE INDEX cg_k ON cg USING gbtree (k);
CHECKPOINT;
});
my $loader = psql_session($primary);
session_do($loader, 'BEGIN');
session_do($loader, q{INSERT INTO cg SELECT g, 'c' || g FROM generate_series(1, 12000) g});
# a statement naming the table flushes the batch: the fitting happens here
is(session_do($loader, q{SELECT count(*) FROM cg}), '12000', 'the loading transaction sees its rows');
crash_all_processes($primary);
session_end($loader);
$primary->start;
my $cpages = $primary->safe_psql('postgres', q{SELECT pg_relation_size('cg_k') / 8192});
ok($cpages < 60, "after the crash the index kept its fitted words ($cpages pages)");
is($primary->safe_psql('postgres', "$forced SELECT count(*) FROM cg WHERE k > ''"), '0',
	'after the crash: no row of the lost load');
$primary->safe_psql('postgres', q{
INSERT INTO cg SELECT g, 'c' || g || '-after-the-crash' FROM generate_series(1, 500) g;
});
is($primary->safe_psql('postgres', "$forced " . answer('cg', 'c')),
	$primary->safe_psql('postgres', "$seq " . answer('cg', 'c')),
	'after the crash: new rows, some with tails, found through the index');
is($primary->safe_psql('postgres', q{SELECT gbtree_check('cg_k', true)}), '', 'after the crash: gbtree_check');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', "$forced " . answer('cg', 'c')),
	$primary->safe_psql('postgres', "$seq " . answer('cg', 'c')),
	'standby after the crash: the same rows');

node_log_ok($primary, "refit");
node_log_ok($standby, "refit");
$standby->stop;
$primary->stop;
done_testing();
