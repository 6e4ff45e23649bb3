
# Copyright: gbtree project.
#
# gbtree under wal_level = minimal.
#
# With wal_level = minimal, a relation created (or truncated) in the
# current transaction is not WAL-logged page by page: at commit it is
# either fsynced (when larger than wal_skip_threshold) or WAL-logged in
# one go.  gbtree's generic WAL calls and its index build must fit that
# scheme: after a crash right after such transactions committed, every
# gbtree index (built on a loaded table, filled by inserts, rebuilt by
# TRUNCATE) must agree with a sequential scan, and keep working.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use GbtreeTestLib;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $m = PostgreSQL::Test::Cluster->new('minimal');
$m->init;
$m->append_conf(
	'postgresql.conf', q{
wal_level = minimal
max_wal_senders = 0
autovacuum = off
log_statement = none
# "small" (3000 rows) stays below it and is WAL-logged at commit, "big"
# (250000 rows) is above it and is fsynced at commit
wal_skip_threshold = '1MB'
});
$m->start;
$m->safe_psql('postgres', 'CREATE EXTENSION gbtree');
# indexes built before and after loading, in the creating transaction;
# then TRUNCATE (a new relfilenode) and a reload in one transaction
$m->safe_psql('postgres', q{
BEGIN;
CREATE TABLE small (k int4);
CREATE INDEX small_k_g ON small USING gbtree (k);
INSERT INTO small SELECT g % 500 FROM generate_series(1, 3000) g;
COMMIT;
BEGIN;
CREATE TABLE big (k int4, f float8);
INSERT INTO big SELECT (g * 7919) % 100000, g FROM generate_series(1, 200000) g;
CREATE INDEX big_k_g ON big USING gbtree (k);
INSERT INTO big SELECT g, g FROM generate_series(1, 50000) g;
CREATE INDEX big_f_g ON big USING gbtree (f);
COMMIT;
BEGIN;
TRUNCATE small;
INSERT INTO small SELECT g FROM generate_series(1, 20000) g;
COMMIT;
});
# crash with all of it committed, nothing checkpointed since
crash_all_processes($m);
$m->start;
my @checks;
for my $ix ([ 'small', 'k' ], [ 'big', 'k' ], [ 'big', 'f' ])
{
	my ($t, $c) = @$ix;
	push @checks,
	  {
		name => "${t}_${c}_order", index => "${t}_${c}_g", modes => [qw(idx ios)], ios => 1,
		sql => "SELECT count(*) || ':' || md5(string_agg($c\::text, ',')) FROM (SELECT $c FROM $t ORDER BY $c) x"
	  },
	  {
		# a point lookup of every distinct key
		name => "${t}_${c}_lookup", index => "${t}_${c}_g", modes => [qw(idx bitmap)],
		sql => "SELECT count(*) || ':' || coalesce(sum(l.c), 0) || ':' || count(*) FILTER (WHERE l.c <> e.n)
		        FROM (SELECT $c AS v, count(*) AS n FROM $t GROUP BY $c) e,
		             LATERAL (SELECT count(*) AS c FROM $t x WHERE x.$c = e.v) l",
		seq_sql => "SELECT count(DISTINCT $c) || ':' || count($c) || ':0' FROM $t"
	  };
}
compare_with_seq($m, 'wal_level=minimal after crash', \@checks, qw(idx ios bitmap));
check_structure($m, 'wal_level=minimal after crash');
is($m->safe_psql('postgres', 'SELECT count(*) FROM small'), '20000', 'small has its rows');
is($m->safe_psql('postgres', 'SELECT count(*) FROM big'), '250000', 'big has its rows');
$m->safe_psql('postgres',
	'INSERT INTO big SELECT g, g FROM generate_series(1, 30000) g; INSERT INTO small SELECT g FROM generate_series(1, 30000) g;');
compare_with_seq($m, 'wal_level=minimal after more inserts', \@checks, qw(idx ios bitmap));
node_log_ok($m, 'minimal');
$m->stop;

done_testing();
