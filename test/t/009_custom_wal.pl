
# Copyright: gbtree project.
#
# gbtree's own WAL records (its custom resource manager, registered when
# gbtree is in shared_preload_libraries), under WAL consistency checking.
#
# The same workload as 003_wal_consistency.pl (GbtreeTestLib), on a primary and a standby
# that both preload gbtree, with wal_consistency_checking = 'gbtree': the
# primary adds a full image of every page each gbtree record touches and
# the standby (and the primary's own crash recovery) compares the page its
# redo rebuilt from the logical record with it.  Besides: no generic WAL
# is written for gbtree pages any more, pg_waldump and pg_walinspect show
# the records, the standby is promoted and takes batched writes, and a
# standby without the preload stops at the first gbtree record with
# PostgreSQL's own message instead of crashing or going on.
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

my $primary = PostgreSQL::Test::Cluster->new('rm_primary');
$primary->init(allows_streaming => 1);
$primary->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'gbtree'
wal_consistency_checking = 'gbtree'
autovacuum = off
log_min_messages = warning
log_statement = none
shared_buffers = 16MB
checkpoint_timeout = 1h
max_wal_size = 4GB
});
$primary->start;
$primary->backup('base');

my $standby = PostgreSQL::Test::Cluster->new('rm_standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->append_conf('postgresql.conf', q{
hot_standby = on
max_standby_streaming_delay = -1
});
$standby->start;

# a standby without the preload, from the same backup
my $bare = PostgreSQL::Test::Cluster->new('rm_bare_standby');
$bare->init_from_backup($primary, 'base', has_streaming => 1);
$bare->append_conf('postgresql.conf', q{
shared_preload_libraries = ''
wal_consistency_checking = ''
hot_standby = on
});
$bare->start;

is($primary->safe_psql('postgres', 'SHOW wal_consistency_checking'),
	'gbtree', 'wal_consistency_checking is on for gbtree records');
my $start_lsn = $primary->lsn('insert');

# (after a checkpoint, so that splits of pages built before it log the
# left page whole)
wal_workload($primary, checkpoint => 1);

# multi-word inserts one entry at a time (no insert batch), so that leaves
# split through split_page: in halves, cut after a group's run (k, ts),
# with tails (long text), and inner pages too: their WSPLIT records
$primary->safe_psql('postgres', q{
SET gbtree.insert_batch_memory = 0;
CREATE TABLE ws (id int, k int4, ts timestamptz, t text);
CREATE INDEX ws_kts_g ON ws USING gbtree (k, ts);
CREATE INDEX ws_t_g ON ws USING gbtree (t);
INSERT INTO ws SELECT g, g % 40, '2026-01-01'::timestamptz + g * interval '1 second',
       repeat('gbtree split ', 3) || (g * 7919 % 100003)::text
FROM generate_series(1, 30000) g;
INSERT INTO ws SELECT g, (g * 37) % 41, '2025-01-01'::timestamptz + (g * 7919 % 100003) * interval '1 minute',
       repeat('gbtree split ', 3) || (g::int8 * 104729 % 100019)::text || ' and some more'
FROM generate_series(1, 30000) g;
});

# multi-word leaves in posting form (deduplicate_items): a build that
# packs them, single inserts into them, full plain leaves of duplicates
# taking the form, a batch's merges: WMERGE records of the entries
# merged, each leaf laid out again at redo (wide_post.c); and a key of two
# columns that fits one word, whose posting leaves are node_post.c's
# (their body fills the page: pd_lower must cover it, or full-page images
# would drop its end); and a text key whose later values outgrow its
# fitted words (tails, in plain leaves beside the posting ones)
$primary->safe_psql('postgres', q{
CREATE TABLE wd (id int, k int4, j int4);
INSERT INTO wd SELECT g, g % 300, g % 5 FROM generate_series(1, 30000) g;
CREATE INDEX wd_kj_g ON wd USING gbtree (k, j) WITH (deduplicate_items = on);
SET gbtree.insert_batch_memory = 0;
INSERT INTO wd SELECT g, g % 301, g % 5 FROM generate_series(30001, 33000) g;
INSERT INTO wd SELECT g, 7, 1 FROM generate_series(33001, 36000) g;
RESET gbtree.insert_batch_memory;
INSERT INTO wd SELECT g, g % 307, g % 5 FROM generate_series(36001, 60000) g;
CREATE TABLE wo (id int, k int2, d date);
INSERT INTO wo SELECT g, g % 20, '2024-01-01'::date + g % 9 FROM generate_series(1, 30000) g;
CREATE INDEX wo_kd_g ON wo USING gbtree (k, d) WITH (deduplicate_items = on);
SET gbtree.insert_batch_memory = 0;
INSERT INTO wo SELECT g, g % 21, '2024-01-01'::date + g % 9 FROM generate_series(30001, 36000) g;
RESET gbtree.insert_batch_memory;
INSERT INTO wo SELECT g, g % 23, '2024-01-02'::date FROM generate_series(36001, 60000) g;
DELETE FROM wo WHERE id % 5 = 0;
VACUUM wo;
CREATE TABLE wt (id int, s text COLLATE "C");
INSERT INTO wt SELECT g, (ARRAY['active', 'pending', 'closed', repeat('q', 24)])[1 + g % 4]
FROM generate_series(1, 30000) g;
CREATE INDEX wt_s_g ON wt USING gbtree (s) WITH (deduplicate_items = on);
SET gbtree.insert_batch_memory = 0;
INSERT INTO wt SELECT g, CASE WHEN g % 2 = 0 THEN repeat('q', 24) || g ELSE 'pending' END
FROM generate_series(30001, 31000) g;
RESET gbtree.insert_batch_memory;
INSERT INTO wt SELECT g, CASE WHEN g % 3 = 0 THEN 'closed' || repeat('z', 30) ELSE 'active' END
FROM generate_series(31001, 50000) g;
DELETE FROM wt WHERE id % 7 = 0;
VACUUM wt;
});

my $end_lsn = $primary->lsn('insert');
$primary->wait_for_catchup($standby, 'replay', $end_lsn);

# the checks did happen: gbtree's records (custom resource manager 161 to
# pg_waldump, which knows only built-in names) carry images for
# verification, and gbtree wrote no generic WAL but for multi-word indexes
my ($stdout, $stderr);
IPC::Run::run(
	[
		'pg_waldump', '-p', $primary->data_dir . '/pg_wal',
		'-s', $start_lsn, '-e', $end_lsn, '-b'
	],
	'>', \$stdout, '2>', \$stderr);
diag("pg_waldump: $stderr") if $stderr ne '';
my @gbt = grep { /^rmgr: custom161 / } split /\n(?=rmgr: )/, $stdout;
my $nrec = scalar @gbt;
# (a block's first change after the checkpoint logs a full image instead)
my $nver = grep { /for WAL verification|FPW/ } @gbt;
# multi-word indexes (w_kts_g, w_ki_g, u_x_g, q_x_g, ew_x_g, ew_t_g, ws_kts_g, ws_t_g,
# wd_kj_g, wo_kd_g, wt_s_g) log generic WAL for batches' leaves, root splits and splits of
# posting leaves
# (src/README, "Multi-word keys"); no other index may
my %wide = map { $_ => 1 } split /\n/, $primary->safe_psql('postgres',
	"SELECT pg_relation_filenode(c) FROM unnest(ARRAY['w_kts_g', 'w_ki_g', 'u_x_g', 'q_x_g', 'ew_x_g', 'ew_t_g', 'ws_kts_g', 'ws_t_g', 'wd_kj_g', 'wo_kd_g', 'wt_s_g']::regclass[]) c");
my @generic = grep { /^rmgr: Generic/ } split /\n(?=rmgr: )/, $stdout;
my $nwide = grep { /rel \d+\/\d+\/(\d+)/ && $wide{$1} } @generic;
my $ngeneric = scalar(@generic) - $nwide;
note "$nrec gbtree WAL records, $nver with page images for verification, "
  . "$nwide generic records of multi-word indexes";
cmp_ok($nrec, '>', 500, 'pg_waldump shows many records of resource manager 161');
is($nver, $nrec, 'every gbtree record carries images for verification');
cmp_ok($nwide, '>', 0, 'the multi-word indexes logged generic WAL');
is($ngeneric, 0, 'no generic WAL records of one-word indexes');

# pg_walinspect runs inside the server, which knows the records' names
# (contrib: the assertion-enabled build of test/cassert installs none)
SKIP:
{
	skip 'pg_walinspect is not installed', 14
	  unless $primary->safe_psql('postgres',
		"SELECT count(*) FROM pg_available_extensions WHERE name = 'pg_walinspect'") eq '1';
	$primary->safe_psql('postgres', 'CREATE EXTENSION pg_walinspect');	# needs: pg_walinspect
	my $kinds = $primary->safe_psql('postgres', qq{
	SELECT string_agg(record_type, ',' ORDER BY record_type)
	FROM (SELECT DISTINCT record_type FROM pg_get_wal_records_info('$start_lsn', '$end_lsn')
	      WHERE resource_manager = 'gbtree') r});
	like($kinds, qr/INSERT/, "pg_walinspect: gbtree INSERT records ($kinds)");
	like($kinds, qr/MERGE/, 'pg_walinspect: gbtree MERGE records');
	like($kinds, qr/(^|,)SPLIT/, 'pg_walinspect: gbtree SPLIT records');
	like($kinds, qr/ROOT_SPLIT/, 'pg_walinspect: gbtree ROOT_SPLIT records');
	like($kinds, qr/VACUUM/, 'pg_walinspect: gbtree VACUUM records');
	like($kinds, qr/DELETE_PAGE/, 'pg_walinspect: gbtree DELETE_PAGE records');
	like($primary->safe_psql('postgres', qq{
	SELECT description FROM pg_get_wal_records_info('$start_lsn', '$end_lsn')
	WHERE resource_manager = 'gbtree' AND record_type = 'SPLIT' LIMIT 1}),
		qr/^level: \d+, right entries: \d+, separator: /, 'pg_walinspect: a split record is described');
	# both forms of a split's left page: its new entries, or (first change
	# since a checkpoint) all its entries instead of a full image
	is($primary->safe_psql('postgres', qq{
	SELECT count(*) FILTER (WHERE description LIKE '%left page whole%') > 0
	   AND count(*) FILTER (WHERE description LIKE '%new left entries%') > 0
	FROM pg_get_wal_records_info('$start_lsn', '$end_lsn')
	WHERE resource_manager = 'gbtree' AND record_type = 'SPLIT'}), 't',
		'split records of both forms were written and replayed');
	# multi-word splits: the split page's input and the right page's
	# entries, not generic WAL's two page images (wide_wal.c); each kind
	# of split the workload makes, replayed and checked above
	like($kinds, qr/WSPLIT/, 'pg_walinspect: gbtree WSPLIT records');
	my %wk = map { split /\|/ } split /\n/, $primary->safe_psql('postgres', qq{
	SELECT substring(description FROM '^kind: ([a-z]+)'), count(*)
	FROM pg_get_wal_records_info('$start_lsn', '$end_lsn')
	WHERE resource_manager = 'gbtree' AND record_type = 'WSPLIT' GROUP BY 1});
	note 'WSPLIT records by kind: ' . join(', ', map { "$_ $wk{$_}" } sort keys %wk);
	cmp_ok($wk{halves} // 0, '>', 0, 'WSPLIT: splits in halves (leaves and inner pages)');
	cmp_ok($wk{append} // 0, '>', 0, 'WSPLIT: append splits of a batch');
	cmp_ok(($wk{merge} // 0) + ($wk{cut} // 0), '>', 0, 'WSPLIT: merge or cut splits of a batch');
	like($kinds, qr/WMERGE/, 'pg_walinspect: gbtree WMERGE records (posting leaves)');
	# the right page is laid out again from its entries at redo, never
	# logged whole (gbt_node_fill_page gives the split's bytes back)
	is($primary->safe_psql('postgres', qq{
	SELECT count(*) FROM pg_get_wal_records_info('$start_lsn', '$end_lsn')
	WHERE resource_manager = 'gbtree' AND record_type = 'WSPLIT'
	  AND description LIKE '%right page whole%'}), '0',
		'WSPLIT: every right page described by its entries');
}

# the standby without the preload stopped at the first gbtree record,
# with PostgreSQL's message and hint, without a crash
my $bare_log = '';
for (my $i = 0; $i < 600; $i++)
{
	$bare_log = slurp_file($bare->logfile);
	last if $bare_log =~ /resource manager with ID 161 not registered/;
	usleep(100_000);
}
like($bare_log, qr/resource manager with ID 161 not registered/,
	'standby without the preload: PostgreSQL names the missing resource manager');
like($bare_log, qr/shared_preload_libraries/, 'standby without the preload: the hint names shared_preload_libraries');
unlike($bare_log, qr/PANIC|terminated by signal|server process .* was terminated/,
	'standby without the preload: no crash');
# and it starts replaying once it preloads gbtree
$bare->stop('immediate', fail_ok => 1);
$bare->append_conf('postgresql.conf', "shared_preload_libraries = 'gbtree'\n");
$bare->start;
$bare->poll_query_until('postgres', 'SELECT pg_last_wal_replay_lsn() >= ' . "'$end_lsn'::pg_lsn", 't')
  or die 'the standby did not catch up once preloading gbtree';
pass('with the preload the same standby replays everything');

is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
	't', 'standby is up and replaying after the workload');
my $log = slurp_file($standby->logfile);
unlike($log, qr/inconsistent page found/, 'standby: replay found no inconsistent page');

my @checks = (@{ wal_checks() },
	{
		name => 'ws_kts_order', index => 'ws_kts_g', modes => [qw(idx ios)], ios => 1,
		sql => q{SELECT count(*) || ':' || md5(string_agg(k || '/' || ts, ',')) FROM (SELECT k, ts FROM ws ORDER BY k, ts) x}
	},
	{
		name => 'ws_t_order', index => 'ws_t_g', modes => [qw(idx ios)], ios => 1,
		sql => q{SELECT count(*) || ':' || md5(string_agg(t, ',')) FROM (SELECT t FROM ws ORDER BY t) x}
	},
	{
		name => 'wd_kj', index => 'wd_kj_g', modes => [qw(idx bitmap)],
		sql => q{SELECT count(*) || ':' || sum(id) || ':' || md5(string_agg(k || '/' || j, ',' ORDER BY id)) FROM wd WHERE k BETWEEN 5 AND 250}
	},
	{
		name => 'wo_kd', index => 'wo_kd_g', modes => [qw(idx bitmap)],
		sql => q{SELECT count(*) || ':' || sum(id) || ':' || md5(string_agg(k || '/' || d, ',' ORDER BY id)) FROM wo WHERE k BETWEEN 2 AND 17}
	},
	{
		name => 'wt_s', index => 'wt_s_g', modes => [qw(idx ios bitmap)], ios => 1,
		sql => q{SELECT count(*) || ':' || md5(string_agg(s, ',' ORDER BY s)) FROM wt WHERE s >= 'closed' AND s <= repeat('q', 25)}
	});

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

# promote the standby: it takes batched writes with its own records
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()', 't');
$standby->safe_psql('postgres', q{
BEGIN;
INSERT INTO w (k, f) SELECT (g * 7) % 20000, g FROM generate_series(1, 20000) g;
SAVEPOINT s;
INSERT INTO e SELECT g FROM generate_series(1, 5000) g;
ROLLBACK TO s;
INSERT INTO e SELECT -g FROM generate_series(1, 3000) g;
COMMIT;
});
my $pr = compare_with_seq($standby, 'promoted standby', \@checks, qw(idx ios bitmap));
ok(defined $pr, 'promoted standby answers through gbtree as a sequential scan does');
check_structure($standby, 'after promotion');
crash_all_processes($standby);
$standby->start;
$standby->poll_query_until('postgres', 'SELECT 1', '1');
my $pr2 = compare_with_seq($standby, 'promoted standby after crash recovery', \@checks, qw(idx ios));
is_deeply($pr2, $pr, 'promoted standby answers the same after crash recovery');
unlike(slurp_file($standby->logfile), qr/inconsistent page found/,
	'promoted standby: crash recovery found no inconsistent page');

node_log_ok($primary, 'custom wal');
node_log_ok($standby, 'custom wal');

$bare->stop;
$standby->stop;
$primary->stop;

done_testing();
