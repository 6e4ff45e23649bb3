
# Copyright: gbtree project.
#
# What a DBA does with a database holding gbtree indexes besides querying
# it: a logical backup restored elsewhere (pg_dump -Fc, pg_restore -j 2,
# which builds the indexes in parallel sessions), and pg_upgrade, which
# copies the index files as they are and restores the catalogs in
# binary-upgrade mode.  The indexes: a unique one with a fill factor, two
# columns DESC NULLS FIRST with text and an INCLUDE column, a partial
# uuid one, a deduplicated one, a unique NULLS NOT DISTINCT numeric one, a
# float one with NaN, -0 and infinities, and an exclusion constraint; each
# with a btree twin on the same table.  After each step every index
# answers as the source's did under index, index-only and bitmap scans,
# and as a sequential scan does, gbtree_check passes, the definitions are
# the same, and the upgraded cluster takes writes.  pg_upgrade runs from
# the same major to itself, as PostgreSQL's own pg_upgrade test does.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use Cwd qw(getcwd);
use File::Spec;
use File::Temp qw(tempdir);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use GbtreeTestLib;

my $conf = q{
shared_preload_libraries = 'gbtree'
autovacuum = off
max_parallel_workers_per_gather = 0
};

my $old = PostgreSQL::Test::Cluster->new('old');
$old->init;
$old->append_conf('postgresql.conf', $conf);
$old->start;
my $bindir = $old->config_data('--bindir');

$old->safe_psql('postgres', q{
CREATE EXTENSION gbtree;
CREATE TABLE d (id int8 NOT NULL, ts timestamptz, k text COLLATE "C", u uuid,
				f float8, n numeric, r int4, pay int4);
INSERT INTO d
SELECT g,
	   CASE WHEN g % 97 = 0 THEN NULL ELSE '2020-01-01 00:00+00'::timestamptz + (g % 5000) * interval '3 min' END,
	   CASE WHEN g % 89 = 0 THEN NULL WHEN g % 7 = 0 THEN repeat('x', 40) || g ELSE md5(g::text) END,
	   CASE WHEN g % 83 = 0 THEN NULL WHEN g = 3 THEN '00000000-0000-0000-0000-000000000000'
			WHEN g = 4 THEN 'ffffffff-ffff-ffff-ffff-ffffffffffff' ELSE md5(g::text)::uuid END,
	   CASE WHEN g % 79 = 0 THEN NULL WHEN g % 13 = 0 THEN 'NaN' WHEN g % 13 = 1 THEN '-0'
			WHEN g % 13 = 2 THEN 'Infinity' WHEN g % 13 = 3 THEN '-Infinity' ELSE g / 7.0 END,
	   CASE WHEN g % 71 = 0 THEN NULL ELSE (g % 300) / 4.0 END,
	   g % 50,
	   g
FROM generate_series(1, 30000) g;
CREATE UNIQUE INDEX d_id_g ON d USING gbtree (id) WITH (fillfactor = 80);
CREATE UNIQUE INDEX d_id_b ON d USING btree (id) WITH (fillfactor = 80);
CREATE INDEX d_tsk_g ON d USING gbtree (ts DESC NULLS FIRST, k) INCLUDE (pay);
CREATE INDEX d_tsk_b ON d USING btree (ts DESC NULLS FIRST, k) INCLUDE (pay);
CREATE INDEX d_u_g ON d USING gbtree (u) WHERE id > 100;
CREATE INDEX d_u_b ON d USING btree (u) WHERE id > 100;
CREATE INDEX d_r_g ON d USING gbtree (r) WITH (deduplicate_items = on);
CREATE INDEX d_r_b ON d USING btree (r);
CREATE UNIQUE INDEX d_n_g ON d USING gbtree (n, id) NULLS NOT DISTINCT;
CREATE UNIQUE INDEX d_n_b ON d USING btree (n, id) NULLS NOT DISTINCT;
CREATE INDEX d_f_g ON d USING gbtree (f);
CREATE INDEX d_f_b ON d USING btree (f);
ALTER TABLE d ADD EXCLUDE USING gbtree (pay WITH =);
-- rows after the build, so that leaves were split and merged by inserts
INSERT INTO d SELECT g, now(), 'late' || g, gen_random_uuid(), g, g % 7, g % 50, g
FROM generate_series(30001, 34000) g;
DELETE FROM d WHERE id % 11 = 0;
VACUUM ANALYZE d;
});

my @checks = (
	{ name => 'id_range', index => 'd_id_g',
	  sql => 'SELECT count(*), sum(pay) FROM d WHERE id BETWEEN 1000 AND 5000' },
	{ name => 'id_any', index => 'd_id_g',
	  sql => "SELECT count(*), sum(pay) FROM d WHERE id = ANY ('{1,7,22,19999,33333,40000}')" },
	{ name => 'tsk', index => 'd_tsk_g',
	  sql => q{SELECT count(*), md5(string_agg(coalesce(k, '-') || pay, ',' ORDER BY ts DESC, k, pay)) FROM d
			   WHERE ts > '2020-01-05 00:00+00' AND ts < '2020-01-05 02:00+00'} },
	{ name => 'tsk_null', index => 'd_tsk_g',
	  sql => 'SELECT count(*), sum(pay) FROM d WHERE ts IS NULL' },
	{ name => 'u', index => 'd_u_g',
	  sql => q{SELECT count(*), sum(id) FROM d WHERE u > 'ff800000-0000-0000-0000-000000000000' AND id > 100} },
	{ name => 'u_ends', index => 'd_u_g',
	  sql => q{SELECT count(*) FROM d WHERE u = ANY ('{00000000-0000-0000-0000-000000000000,ffffffff-ffff-ffff-ffff-ffffffffffff}') AND id > 100} },
	{ name => 'r', index => 'd_r_g',
	  sql => 'SELECT count(*), sum(id) FROM d WHERE r BETWEEN 10 AND 12' },
	{ name => 'n', index => 'd_n_g',
	  sql => 'SELECT count(*), sum(id) FROM d WHERE n = 5' },
	{ name => 'n_null', index => 'd_n_g',
	  sql => 'SELECT count(*), sum(id) FROM d WHERE n IS NULL' },
	{ name => 'f_nan', index => 'd_f_g',
	  sql => q{SELECT count(*), sum(id) FROM d WHERE f = 'NaN'} },
	{ name => 'f_zero', index => 'd_f_g',
	  sql => 'SELECT count(*), sum(id) FROM d WHERE f = 0' },
	{ name => 'f_inf', index => 'd_f_g',
	  sql => q{SELECT count(*), sum(id) FROM d WHERE f >= 'Infinity'} });

my $before = compare_with_seq($old, 'source', \@checks, qw(idx ios bitmap btree));
check_structure($old, 'source');
my $defs_sql = q{SELECT string_agg(indexdef, E'\n' ORDER BY indexname) FROM pg_indexes WHERE tablename = 'd'};
my $defs = $old->safe_psql('postgres', $defs_sql);
like($defs, qr/USING gbtree \(ts DESC, k\) INCLUDE \(pay\)/, 'the source has the gbtree indexes');

# ---- pg_dump and pg_restore -j 2 ---------------------------------------
my $dumpdir = tempdir(CLEANUP => 1);
my $dump = "$dumpdir/d.dump";
command_ok([ "$bindir/pg_dump", '-Fc', '-h', $old->host, '-p', $old->port, '-f', $dump, 'postgres' ],
	'pg_dump of a database with gbtree indexes');

my $restored = PostgreSQL::Test::Cluster->new('restored');
$restored->init;
$restored->append_conf('postgresql.conf', $conf);
$restored->start;
command_ok([ "$bindir/pg_restore", '-j', '2', '-h', $restored->host, '-p', $restored->port,
		'-d', 'postgres', '--exit-on-error', $dump ],
	'pg_restore -j 2 of it');
is($restored->safe_psql('postgres', $defs_sql), $defs, 'restored: the same index definitions');
compare_with_seq($restored, 'restored', \@checks, qw(idx ios bitmap btree));
compare_nodes('restored', \@checks, $_, $old, $restored) for qw(idx ios bitmap);
check_structure($restored, 'restored');
$restored->stop;

# ---- pg_upgrade ---------------------------------------------------------
my $sizes_sql = q{SELECT string_agg(c.relname || ' ' || pg_relation_size(c.oid), ', ' ORDER BY c.relname)
				  FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE a.amname = 'gbtree'};
my $sizes = $old->safe_psql('postgres', $sizes_sql);
$old->stop;

my $new = PostgreSQL::Test::Cluster->new('upgraded');
$new->init;
$new->append_conf('postgresql.conf', $conf);
{
	# pg_upgrade may write its logs under the current directory: run it
	# from a scratch one (the data directories may be relative paths)
	my $here = getcwd();
	my $olddata = File::Spec->rel2abs($old->data_dir);
	my $newdata = File::Spec->rel2abs($new->data_dir);
	my $workdir = tempdir(CLEANUP => 1);
	chdir $workdir or die "chdir $workdir: $!";
	command_ok([ "$bindir/pg_upgrade", '--no-sync', '-d', $olddata, '-D', $newdata,
			'-b', $bindir, '-B', $bindir, '-s', $new->host, '-p', $old->port, '-P', $new->port ],
		'pg_upgrade of the cluster');
	chdir $here or die "chdir $here: $!";
}
$old->start;
$new->start;
is($new->safe_psql('postgres', $defs_sql), $defs, 'upgraded: the same index definitions');
is($new->safe_psql('postgres', $sizes_sql), $sizes, 'upgraded: the index files as they were');
compare_nodes('upgraded', \@checks, $_, $old, $new) for qw(seq idx ios bitmap);
check_structure($new, 'upgraded');

# the upgraded cluster takes writes, unique checks included
$new->safe_psql('postgres', q{
INSERT INTO d SELECT g, '2020-01-06 00:00+00', 'new' || g, gen_random_uuid(), -g, g % 9, g % 50, g
FROM generate_series(40001, 46000) g;
DELETE FROM d WHERE id % 13 = 0;
VACUUM d;
});
my ($rc, $out, $err) = $new->psql('postgres', 'INSERT INTO d (id, pay) VALUES (1, -1)');
like($err, qr/duplicate key value violates unique constraint "d_id_[gb]"/,
	'upgraded: a duplicate key is refused');
($rc, $out, $err) = $new->psql('postgres', 'INSERT INTO d (id, pay) VALUES (99999, 123)');
like($err, qr/conflicting key value violates exclusion constraint "d_pay_excl"/,
	'upgraded: the exclusion constraint through gbtree holds');
compare_with_seq($new, 'upgraded, after writes', \@checks, qw(idx ios bitmap btree));
check_structure($new, 'upgraded, after writes');

$new->stop;
$old->stop;
done_testing();
