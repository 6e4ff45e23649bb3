
# Copyright: gbtree project.
#
# WAL consistency checking of gbtree's generic WAL records.
#
# With wal_consistency_checking = 'generic' the primary adds a full image
# of every page a generic WAL record touches, and whoever replays the
# record (the standby here, and the primary itself in crash recovery)
# compares the page it rebuilt from the record with that image; any
# difference (outside the unused space between pd_lower and pd_upper,
# which generic WAL ignores) stops replay with "inconsistent page found".
# So a page change that is not WAL-logged, or logged differently from what
# was done, is caught at the record that reveals it.
#
# The workload touches every gbtree code path that writes: build, inserts
# with splits (leaf, internal, root), heavy duplicates, NULLs, deletes,
# updates, VACUUM (entry removal, page deletion and reuse), REINDEX,
# CREATE INDEX CONCURRENTLY, concurrent inserts and scans (in case scans
# change pages).  The standby must stay up, replay everything, and agree
# with the primary; then the primary is crashed and must recover with the
# same checks.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use GbtreeTestLib;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(time usleep);

my $primary = PostgreSQL::Test::Cluster->new('wcc_primary');
$primary->init(allows_streaming => 1);
$primary->append_conf(
	'postgresql.conf', q{
wal_consistency_checking = 'generic'
autovacuum = off
log_min_messages = warning
log_statement = none
shared_buffers = 16MB
checkpoint_timeout = 1h
max_wal_size = 4GB
});
$primary->start;
$primary->backup('base');

my $standby = PostgreSQL::Test::Cluster->new('wcc_standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->append_conf('postgresql.conf', q{
hot_standby = on
max_standby_streaming_delay = -1
});
$standby->start;

is($primary->safe_psql('postgres', 'SHOW wal_consistency_checking'),
	'generic', 'wal_consistency_checking is on for generic WAL');
my $start_lsn = $primary->lsn('insert');

wal_workload($primary);

my $end_lsn = $primary->lsn('insert');
$primary->wait_for_catchup($standby, 'replay', $end_lsn);

# the checks did happen: generic records carry images for verification
my ($stdout, $stderr);
IPC::Run::run(
	[
		'pg_waldump', '-p', $primary->data_dir . '/pg_wal',
		'-s', $start_lsn, '-e', $end_lsn, '-r', 'Generic', '-b'
	],
	'>', \$stdout, '2>', \$stderr);
my $nrec = () = $stdout =~ /^rmgr: Generic/mg;
diag("pg_waldump: $stderr") if $stderr ne '';
my $nver = () = $stdout =~ /for WAL verification/g;
note "$nrec generic WAL records, $nver page images for verification";
# (batched inserts write one record per leaf, not per row: about 4,500-5,000 here)
cmp_ok($nrec, '>', 1000, 'the workload wrote many generic WAL records');
cmp_ok($nver, '>=', $nrec, 'every generic WAL record carries images for verification');

is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
	't', 'standby is up and replaying after the workload');
my $log = slurp_file($standby->logfile);
unlike($log, qr/inconsistent page found/, 'standby: replay found no inconsistent page');

my @checks = @{ wal_checks() };

my $p = compare_with_seq($primary, 'primary', \@checks, qw(idx ios bitmap));
my $s = compare_with_seq($standby, 'standby', \@checks, qw(idx ios bitmap));
is_deeply($s, $p, "standby's answers equal primary's");
check_structure($standby, 'after replay');

# crash the primary: its own recovery replays (and checks) the records
# written since the last checkpoint, which is all of them
crash_all_processes($primary);
$primary->start;
$primary->poll_query_until('postgres', 'SELECT 1', '1');
$log = slurp_file($primary->logfile);
unlike($log, qr/inconsistent page found/, 'primary: crash recovery found no inconsistent page');
like($log, qr/redo done at/, 'primary: crash recovery replayed WAL');
my $p2 = compare_with_seq($primary, 'primary after crash recovery', \@checks, qw(idx ios));
is_deeply($p2, $p, 'primary answers the same after crash recovery');
check_structure($primary, 'after crash recovery');

node_log_ok($primary, 'wal consistency');
node_log_ok($standby, 'wal consistency');

$standby->stop;
$primary->stop;

done_testing();
