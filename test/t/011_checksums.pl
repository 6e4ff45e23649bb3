
# Copyright: gbtree project.
#
# Data checksums (initdb turns them on by default from PostgreSQL 18).
#
# gbtree writes some pages itself, past the buffer manager: the build's
# pages (smgrextend after log_newpages) and an unlogged index's init fork.
# Every one of them must carry a valid checksum, as must the pages that
# splits, batched inserts, page deletion and page reuse write through
# shared buffers.  The cluster is initialized with checksums on every
# major, loaded, stopped cleanly, and pg_checksums --check must find no
# bad page; then, restarted with nothing cached, every index answers as a
# sequential scan does and no checksum failure is counted.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('checksums');
$node->init(extra => ['--data-checksums']);
$node->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'gbtree'
autovacuum = off
max_parallel_maintenance_workers = 2
});
$node->start;
is($node->safe_psql('postgres', 'SHOW data_checksums'), 'on', 'data checksums are on');

$node->safe_psql('postgres', q{
CREATE EXTENSION gbtree;
CREATE TABLE t (id int, k int8, f float8);
INSERT INTO t SELECT g, (g::int8 * 7919) % 200003, CASE WHEN g % 97 = 0 THEN NULL ELSE g / 7.0 END
FROM generate_series(1, 300000) g;
-- a serial build and a parallel one (the heap is large enough for workers)
SET max_parallel_maintenance_workers = 0;
CREATE INDEX t_k_g ON t USING gbtree (k);
SET max_parallel_maintenance_workers = 2;
CREATE INDEX t_f_g ON t USING gbtree (f);
-- an unlogged table: its index's init fork is written directly
CREATE UNLOGGED TABLE u (k int8);
CREATE INDEX u_k_g ON u USING gbtree (k);
INSERT INTO u SELECT g FROM generate_series(1, 50000) g;
});
# batched inserts, single-row inserts, page deletion and reuse
$node->safe_psql('postgres', q{
BEGIN;
INSERT INTO t SELECT g, g % 1000, g FROM generate_series(300001, 400000) g;
COMMIT;
INSERT INTO t VALUES (400001, 5, NULL);
INSERT INTO t VALUES (400002, -5, 'NaN');
DELETE FROM t WHERE k BETWEEN 10000 AND 120000;
VACUUM t;
INSERT INTO t SELECT g, 10000 + g % 110000, g FROM generate_series(400003, 460000) g;
CHECKPOINT;
});
$node->stop;

command_ok([ 'pg_checksums', '--check', '-D', $node->data_dir ],
	'pg_checksums finds every page valid, gbtree pages included');

$node->start;
my @queries = (
	[ 't_k_g', 'SELECT count(*), sum(id), sum(k) FROM t WHERE k BETWEEN 5000 AND 150000' ],
	[ 't_k_g', 'SELECT count(*), sum(id) FROM t WHERE k = ANY (ARRAY[5, -5, 999, 10001, 119999])' ],
	[ 't_f_g', 'SELECT count(*), sum(id) FROM t WHERE f > 1000' ],
	[ 't_f_g', 'SELECT count(*), sum(id) FROM t WHERE f IS NULL' ],
	[ 'u_k_g', 'SELECT count(*), sum(k) FROM u WHERE k > 100' ]);
for my $q (@queries)
{
	my ($index, $sql) = @$q;
	my $plan = $node->safe_psql('postgres',
		"SET enable_seqscan = off; SET enable_indexscan = off; SET max_parallel_workers_per_gather = 0; EXPLAIN (COSTS OFF) $sql");
	like($plan, qr/Bitmap Index Scan on $index/, "$index is used: $sql");
	my $via_index = $node->safe_psql('postgres',
		"SET enable_seqscan = off; SET enable_indexscan = off; SET max_parallel_workers_per_gather = 0; $sql");
	my $via_seq = $node->safe_psql('postgres',
		"SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off; $sql");
	is($via_index, $via_seq, "after the restart, $index answers as a sequential scan: $sql");
}
for my $index (qw(t_k_g t_f_g u_k_g))
{
	$node->safe_psql('postgres', "SELECT gbtree_check('$index')");
	pass("gbtree_check($index)");
}
is($node->safe_psql('postgres',
		'SELECT coalesce(sum(checksum_failures), 0) FROM pg_stat_database'),
	'0', 'no checksum failures counted');

$node->stop;
done_testing();
