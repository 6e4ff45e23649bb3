
# Copyright: gbtree project.
#
# A gbtree index on a logical replication subscriber.  The apply worker
# inserts through the executor without its hooks, so its entries wait in
# the insert batch until the remote transaction commits, and it runs
# TRUNCATE without the utility hook that flushes them: one remote
# transaction that truncates, inserts, truncates again and inserts again
# truncates the second time in place (the table and index got their new
# relfilenodes from the first TRUNCATE in the same transaction), and the
# heap's TIDs start over.  Entries still pending for the rows of the first
# insert must go with them; flushed at commit, they would point at the
# second insert's rows under the wrong keys.  After every replicated
# transaction the subscriber's gbtree index must answer like a sequential
# scan and pass gbtree_check(index, heapallindexed).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $pub = PostgreSQL::Test::Cluster->new('publisher');
$pub->init(allows_streaming => 'logical');
$pub->start;

my $sub = PostgreSQL::Test::Cluster->new('subscriber');
$sub->init;
$sub->append_conf('postgresql.conf', "autovacuum = off\n");
$sub->start;

$pub->safe_psql('postgres', q{
	CREATE TABLE lr (id int8 PRIMARY KEY, k int8);
	CREATE PUBLICATION lr_pub FOR TABLE lr;
});
$sub->safe_psql('postgres', q{
	CREATE EXTENSION gbtree;
	CREATE TABLE lr (id int8 PRIMARY KEY, k int8);
	CREATE INDEX lr_k ON lr USING gbtree (k);
});
my $connstr = $pub->connstr . ' dbname=postgres';
$sub->safe_psql('postgres',
	"CREATE SUBSCRIPTION lr_sub CONNECTION '$connstr' PUBLICATION lr_pub");
$sub->wait_for_subscription_sync($pub, 'lr_sub');

# count(*) and sum(id) for each predicate: through the gbtree index (plain
# and bitmap scans) and through a sequential scan, which must agree
my @preds = ('k >= 0', 'k < 0', 'k BETWEEN 1000 AND 1999', 'k BETWEEN 5000 AND 5999', 'k IS NULL');

sub check_subscriber
{
	my ($what) = @_;
	for my $p (@preds)
	{
		my $q = "SELECT count(*), coalesce(sum(id), 0) FROM lr WHERE $p";
		my $seq = $sub->safe_psql('postgres',
			"SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off; $q");
		my $idx = $sub->safe_psql('postgres',
			"SET enable_seqscan = off; SET enable_bitmapscan = off; SET gbtree.enable_count_scan = off; $q");
		my $bmp = $sub->safe_psql('postgres',
			"SET enable_seqscan = off; SET enable_indexscan = off; SET enable_indexonlyscan = off; $q");
		is($idx, $seq, "$what: $p: index scan answers like a seq scan");
		is($bmp, $seq, "$what: $p: bitmap scan answers like a seq scan");
	}
	my ($ret, $out, $err) = $sub->psql('postgres', "SELECT gbtree_check('lr_k', true)");
	is($ret, 0, "$what: gbtree_check(heapallindexed) passes") or diag($err);
}

# run sql on the publisher, wait for the subscriber, check the rows it
# holds (count and min(id): expected, if given) and its index
sub replicate_and_check
{
	my ($what, $sql, $expected) = @_;
	$pub->safe_psql('postgres', $sql);
	$pub->wait_for_catchup('lr_sub');
	is($sub->safe_psql('postgres', 'SELECT count(*), min(id) FROM lr'), $expected,
		"$what: the subscriber holds the rows it should")
	  if defined $expected;
	check_subscriber($what);
}

replicate_and_check('initial copy and insert',
	'INSERT INTO lr SELECT g, g FROM generate_series(1, 3000) g');

# rows with keys 1000-1999 (and a few NULLs), then a second TRUNCATE in the
# same transaction, then rows with keys 5000-5999: the heap slots of the
# first rows are reused by the second
replicate_and_check('TRUNCATE, insert, TRUNCATE, insert in one transaction', q{
	BEGIN;
	TRUNCATE lr;
	INSERT INTO lr SELECT g, CASE WHEN g % 100 = 0 THEN NULL ELSE 1000 + g % 1000 END
	  FROM generate_series(10001, 12000) g;
	TRUNCATE lr;
	INSERT INTO lr SELECT g, 5000 + g % 1000 FROM generate_series(20001, 22000) g;
	COMMIT;
}, '2000|20001');

# once more with the first TRUNCATE in an earlier transaction: the second
# gets a new relfilenode, which the batch notices
replicate_and_check('insert, TRUNCATE, insert in one transaction', q{
	BEGIN;
	INSERT INTO lr SELECT g, 1000 + g % 1000 FROM generate_series(30001, 31000) g;
	TRUNCATE lr;
	INSERT INTO lr SELECT g, 5000 + g % 1000 FROM generate_series(40001, 41500) g;
	COMMIT;
}, '1500|40001');

$sub->stop;
$pub->stop;
done_testing();
