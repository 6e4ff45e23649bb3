
# Copyright: gbtree project.
#
# The GPU path on a machine without a GPU (what CI always is).
#
# gbtree.so must not link CUDA; a server with gbtree in
# shared_preload_libraries must start and stay up; the GPU service must
# report why it has no device; gbtree_device_info() must answer;
# gbtree.device = 'gpu' must fail with a clear error and SQLSTATE, and
# 'auto' must give btree's answers (on the CPU), counting no fallbacks for
# batches below gbtree.gpu_min_batch.  Without the preload the same
# function reports that the service is not loaded.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use GbtreeTestLib;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# gbtree.so links no CUDA library
my $pkglib = `pg_config --pkglibdir`;
chomp $pkglib;
my $ldd = `ldd $pkglib/gbtree.so 2>&1`;
unlike($ldd, qr/libcuda|libcudart/, 'gbtree.so does not link CUDA');

my $node = PostgreSQL::Test::Cluster->new('gpu_cpu');
$node->init;
$node->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'gbtree'
autovacuum = off
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION gbtree');

# the service starts, finds no device (or no CUDA library), exits for good
my $state;
foreach my $i (1 .. 60)
{
	$state = $node->safe_psql('postgres',
		"SELECT value FROM gbtree_device_info() WHERE name = 'service'");
	last if $state eq 'no device';
	sleep 1;
}
is($state, 'no device', 'service reports no device');
my $detail = $node->safe_psql('postgres',
	"SELECT value FROM gbtree_device_info() WHERE name = 'detail'");
like($detail, qr/cannot load|no CUDA device|lacks|ABI/, "service says why: $detail");
is( $node->safe_psql(
		'postgres', "SELECT count(*) > 10 FROM gbtree_device_info()"),
	't', 'gbtree_device_info() answers');

$node->safe_psql('postgres', q{
CREATE TABLE g (id int, k int8);
INSERT INTO g SELECT i, CASE WHEN i % 50 = 0 THEN NULL ELSE (i * 7919) % 40000 END
FROM generate_series(1, 100000) i;
CREATE TABLE b AS SELECT * FROM g;
CREATE INDEX g_k ON g USING gbtree (k);
CREATE INDEX b_k ON b USING btree (k);
VACUUM ANALYZE g; VACUUM ANALYZE b;
});

# gbtree.device = gpu: a clear error, with its SQLSTATE
my ($ret, $stdout, $stderr) = $node->psql(
	'postgres', q{
\set VERBOSITY verbose
SET enable_seqscan = off;
SET gbtree.device = gpu;
SELECT count(*) FROM g WHERE k = ANY(ARRAY[1, 2, 3]);
});
isnt($ret, 0, 'gbtree.device = gpu fails without a GPU');
like($stderr, qr/55000: gbtree: the GPU cannot serve a scan of index "g_k"/,
	'clear error with SQLSTATE 55000');
like($stderr, qr/GPU service state "no device"/, 'error says why');

# gbtree.device = auto (and min batch 1, so every scan asks): btree's answers
foreach my $q (
	'SELECT count(*), sum(id) FROM %s WHERE k = ANY(ARRAY(SELECT generate_series(0, 40000, 3)::int8))',
	'SELECT count(*), sum(id) FROM %s WHERE k BETWEEN 100 AND 20000',
	'SELECT count(*), sum(id) FROM %s WHERE k IS NULL',
	'SELECT string_agg(k::text, \',\' ORDER BY k DESC) FROM (SELECT k FROM %s WHERE k < 500 ORDER BY k DESC) s')
{
	my $set = 'SET enable_seqscan = off; SET gbtree.device = auto; SET gbtree.gpu_min_batch = 1;';
	my $g = $node->safe_psql('postgres', $set . sprintf($q, 'g'));
	my $b = $node->safe_psql('postgres', $set . sprintf($q, 'b'));
	is($g, $b, "auto gives btree's answer: " . sprintf($q, 'g'));
}
ok( $node->safe_psql('postgres',
		"SELECT value::int > 0 FROM gbtree_device_info() WHERE name = 'fallbacks'") eq 't',
	'fallbacks are counted');

# CREATE INDEX: under auto the preloaded service without a device means the
# CPU build, and the index checks; under gpu a clear error and no index
$node->safe_psql('postgres',
	'SET gbtree.gpu_min_batch = 1; CREATE INDEX g_k2 ON g USING gbtree (k)');
is($node->safe_psql('postgres', "SELECT 'checked' FROM gbtree_check('g_k2', true)"),
	'checked', 'auto without a device: CREATE INDEX builds on the CPU and checks');
is( $node->safe_psql('postgres',
		"SELECT value FROM gbtree_device_info() WHERE name = 'gpu_builds'"),
	'0', 'no GPU builds counted');
($ret, $stdout, $stderr) = $node->psql(
	'postgres', q{
\set VERBOSITY verbose
SET gbtree.device = gpu;
CREATE INDEX g_k3 ON g USING gbtree (k);
});
isnt($ret, 0, 'gpu without a device: CREATE INDEX fails');
like($stderr, qr/55000: gbtree: the GPU cannot build index "g_k3"/,
	'build error with SQLSTATE 55000');
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_class WHERE relname = 'g_k3'"),
	'0', 'no half-built index left behind');

# the server stayed up, and still starts with the preload
$node->restart;
is($node->safe_psql('postgres', 'SELECT count(*) FROM g'), '100000', 'server restarts with the preload');

# without the preload
my $plain = PostgreSQL::Test::Cluster->new('gpu_plain');
$plain->init;
$plain->start;
$plain->safe_psql('postgres', 'CREATE EXTENSION gbtree');
is( $plain->safe_psql('postgres',
		"SELECT value FROM gbtree_device_info() WHERE name = 'service'"),
	'not loaded', 'without the preload: service not loaded');
($ret, $stdout, $stderr) = $plain->psql(
	'postgres', q{
CREATE TABLE t AS SELECT g::int8 AS k FROM generate_series(1, 1000) g;
CREATE INDEX ON t USING gbtree (k);
SET enable_seqscan = off;
SET gbtree.device = gpu;
SELECT count(*) FROM t WHERE k = 5;
});
like($stderr, qr/shared_preload_libraries/, 'without the preload, gpu mode says what to do');

$plain->stop;
$node->stop;
done_testing();
