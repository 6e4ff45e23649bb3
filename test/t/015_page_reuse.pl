
# Copyright: gbtree project.
#
# Pages a VACUUM deletes go to the free space map at the end of that same
# VACUUM where no snapshot can reach them any more (src/README, "VACUUM"),
# as btree's _bt_pendingfsm_finalize hands on its deleted pages.
#
# Twin tables, one with a gbtree index and one with its btree twin, for a
# one-word key (int8) and a multi-word key (int4, timestamptz).  The lower
# half of the keys is deleted, which empties the leaves that hold it.  A
# VACUUM slowed by vacuum_cost_delay deletes them while pgbench clients
# take xids (SELECT txid_current()), so the pages deleted early in the
# pass are safe to recycle by its end.  For each index, VACUUM VERBOSE
# must report pages newly deleted and pages reusable, btree's as the
# premise and gbtree's as the check.  The rows inserted next (new keys
# above the old ones) must then take the reused pages: the gbtree index
# grows by fewer pages than it deleted (before, it grew by all of them,
# its deleted pages reaching the map only at the next VACUUM).  Answers
# equal the sequential scan's and btree's, and gbtree_check passes.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use GbtreeTestLib;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('reuse');
$node->init;
$node->append_conf('postgresql.conf', q{
autovacuum = off
log_min_messages = warning
});
$node->start;

my %shape = (
	one => { cols => 'k int8', gen => 'g', idx => 'k' },
	multi => {
		cols => 'k int4, ts timestamptz',
		gen => q{g / 600, '2024-01-01'::timestamptz + g * interval '1 second'},
		idx => 'k, ts',
	},
);

# one table a key shape, with the gbtree index and its btree twin: one
# VACUUM deletes pages of both, under the same transactions
$node->safe_psql('postgres', 'CREATE EXTENSION gbtree');
for my $t (sort keys %shape)
{
	my $s = $shape{$t};
	$node->safe_psql('postgres', qq{
CREATE TABLE $t (id int8, $s->{cols}) WITH (autovacuum_enabled = off);
INSERT INTO $t SELECT g, $s->{gen} FROM generate_series(1, 60000) g;
CREATE INDEX ${t}_k_g ON $t USING gbtree ($s->{idx});
CREATE INDEX ${t}_k_b ON $t USING btree ($s->{idx});
VACUUM ANALYZE $t;
DELETE FROM $t WHERE id <= 30000;
});
}
# multi's keys are (id / 600, ts), 600 rows a k: the deleted half is the
# first 50 k's; the rows inserted later go after every key, as one
# shape's do

my $b = start_pgbench($node, 'xids', { 'xid.sql' => "SELECT txid_current();\n" }, 2, 20);
# the clients are taking xids before the VACUUMs start
$node->poll_query_until('postgres',
	"SELECT count(*) = 2 FROM pg_stat_activity WHERE application_name = 'gbtree_pgbench'")
  or die 'pgbench did not start';
sleep 1;

my %stats;
for my $t (sort keys %shape)
{
	my ($rc, $out, $err) = $node->psql('postgres', qq{
SET vacuum_cost_delay = 5;
SET vacuum_cost_limit = 20;
VACUUM (VERBOSE) $t});
	is($rc, 0, "VACUUM $t") or diag($err);
	for my $ix ("${t}_k_g", "${t}_k_b")
	{
		my ($total, $newly, $deleted, $reusable) = $err =~
		  /index "$ix": pages: (\d+) in total, (\d+) newly deleted, (\d+) currently deleted, (\d+) reusable/;
		ok(defined $newly, "$ix: VACUUM VERBOSE reports the index's pages") or diag($err);
		$stats{$ix} = { newly => $newly // 0, reusable => $reusable // 0 };
		note "$ix: " . ($total // '?') . " pages, " . ($newly // '?') . " newly deleted, "
		  . ($deleted // '?') . " currently deleted, " . ($reusable // '?') . " reusable";
	}
}
stop_pgbench($b, 0);

for my $t (sort keys %shape)
{
	my ($g, $bt) = ($stats{"${t}_k_g"}, $stats{"${t}_k_b"});
	# the premise, on btree: its pages deleted early were safe by the end
	ok($bt->{newly} > 0 && $bt->{reusable} > 0,
		"$t: btree deleted pages and handed some on at once ($bt->{reusable} of $bt->{newly})");
	ok($g->{newly} > 0, "$t: gbtree deleted pages ($g->{newly})");
	ok($g->{reusable} > 0 && $g->{reusable} <= $g->{newly},
		"$t: gbtree handed deleted pages on at once ($g->{reusable} of $g->{newly})");

	# the rows that follow take the reused pages
	my $s = $shape{$t};
	my $before = $node->safe_psql('postgres', "SELECT pg_relation_size('${t}_k_g') / 8192");
	$node->safe_psql('postgres',
		"INSERT INTO $t SELECT g, $s->{gen} FROM generate_series(60001, 90000) g");
	my $after = $node->safe_psql('postgres', "SELECT pg_relation_size('${t}_k_g') / 8192");
	ok($after - $before < $g->{newly},
		"$t: gbtree grew by fewer pages than it deleted ($before to $after; $g->{newly} deleted, $g->{reusable} reusable)");
	note "$t: btree index " . $node->safe_psql('postgres', "SELECT pg_relation_size('${t}_k_b') / 8192") . " pages";

	my @checks = (
		{ name => "${t}_all", index => "${t}_k_g",
		  sql => "SELECT count(*), sum(id), min(k), max(k) FROM $t WHERE k >= 0" },
		{ name => "${t}_range", index => "${t}_k_g",
		  sql => "SELECT count(*), sum(id) FROM $t WHERE k BETWEEN 40 AND 60" },
		{ name => "${t}_ordered", index => "${t}_k_g", modes => [qw(idx btree)],
		  sql => "SELECT string_agg(id::text, ',') FROM (SELECT id FROM $t WHERE k >= 57 ORDER BY $s->{idx} LIMIT 500) s" },
	);
	compare_with_seq($node, "$t after reuse", \@checks, qw(idx bitmap btree));
}
check_structure($node, 'after reuse');
node_log_ok($node, 'reuse');

$node->stop;
done_testing();
