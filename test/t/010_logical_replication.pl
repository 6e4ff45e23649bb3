
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

# A subscriber whose table has no primary key and a unique gbtree index as
# its replica identity: the apply worker finds the rows that an UPDATE or
# DELETE names through that index (RelationFindReplTupleByIndex, with the
# operator of btree's equality strategy, which gbtree's opfamilies share),
# key changes included.
$pub->safe_psql('postgres', q{
	CREATE TABLE ri (id int8 PRIMARY KEY, k int8, v text);
	ALTER PUBLICATION lr_pub ADD TABLE ri;
});
$sub->safe_psql('postgres', q{
	CREATE TABLE ri (id int8 NOT NULL, k int8, v text);
	CREATE UNIQUE INDEX ri_id_g ON ri USING gbtree (id);
	CREATE INDEX ri_k_g ON ri USING gbtree (k);
});
# PostgreSQL 17's apply takes btree and hash replica identity indexes only
# (its workers would stop at the first UPDATE): gbtree refuses the
# statement there, and the table gets a btree one instead
my ($ri_rc, $ri_out, $ri_err) = $sub->psql('postgres',
	'ALTER TABLE ri REPLICA IDENTITY USING INDEX ri_id_g');
if ($sub->safe_psql('postgres', 'SHOW server_version_num') =~ /^17/)
{
	like($ri_err, qr/gbtree index "ri_id_g" cannot be a replica identity on PostgreSQL 17/,
		'PostgreSQL 17: a gbtree replica identity is refused with 0A000');
	$sub->safe_psql('postgres', q{
		CREATE UNIQUE INDEX ri_id_b ON ri USING btree (id);
		ALTER TABLE ri REPLICA IDENTITY USING INDEX ri_id_b;
	});
}
else
{
	is($ri_rc, 0, 'a unique gbtree index becomes the replica identity') or diag($ri_err);
}
$sub->safe_psql('postgres', 'ALTER SUBSCRIPTION lr_sub REFRESH PUBLICATION');
$sub->wait_for_subscription_sync($pub, 'lr_sub');
$pub->safe_psql('postgres', q{
	INSERT INTO ri SELECT g, g % 100, 'v' || g FROM generate_series(1, 5000) g;
	UPDATE ri SET v = 'u' || id WHERE id % 7 = 0;
	UPDATE ri SET id = id + 100000 WHERE id % 11 = 0;
	DELETE FROM ri WHERE id % 13 = 0;
	UPDATE ri SET k = -k WHERE id % 17 = 0;
});
$pub->wait_for_catchup('lr_sub');
my $ri_rows = q{SELECT count(*), md5(string_agg(id || ':' || k || ':' || v, ',' ORDER BY id)) FROM ri};
is($sub->safe_psql('postgres', $ri_rows), $pub->safe_psql('postgres', $ri_rows),
	"replica identity through a unique gbtree index: the subscriber holds the publisher's rows");
for my $ix (qw(ri_id_g ri_k_g))
{
	my ($ret, $out, $err) = $sub->psql('postgres', "SELECT gbtree_check('$ix', true)");
	is($ret, 0, "replica identity: gbtree_check('$ix', true) passes") or diag($err);
}
is($sub->safe_psql('postgres',
		"SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT count(*) FROM ri WHERE id > 100000"),
	$pub->safe_psql('postgres', 'SELECT count(*) FROM ri WHERE id > 100000'),
	'replica identity: the moved keys are found through the index');

$sub->stop;
$pub->stop;
done_testing();
