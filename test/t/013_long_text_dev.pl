
# Copyright: gbtree project.
#
# Text longer than an index's words, as far as it is built (src/README,
# "Text keys", "What is left" item 4): such a value is cut and keeps its
# rest in a tail on a tailed page.  Builds, inserts with splits at every level
# (tails of every length up to the longest, which makes inner pages of a
# few entries and restarts the structure change with "tails ready"),
# deletes with VACUUM, REINDEX, NULLs, DESC and several text columns must
# leave trees that gbtree_check(idx, true) passes: order of (words, tail,
# TID), bounds, links, and every heap row's words and tail found at its
# TID.  Every page change is checked on replay (wal_consistency_checking
# of generic WAL and gbtree's records on a streaming standby, then the primary's own crash recovery), and the
# standby's and the recovered primary's trees pass the same checks.  Index
# and bitmap scans answer as a sequential scan does, on the primary, the
# standby and after the crash.  A unique index finds equal long keys
# through their tails; a tail past the longest is refused (54000).

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use GbtreeTestLib;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = PostgreSQL::Test::Cluster->new('lt_primary');
$primary->init(allows_streaming => 1);
$primary->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'gbtree'
wal_consistency_checking = 'generic, gbtree'
autovacuum = off
log_min_messages = warning
checkpoint_timeout = 1h
max_wal_size = 4GB
});
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION gbtree');
$primary->backup('base');

my $standby = PostgreSQL::Test::Cluster->new('lt_standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->append_conf('postgresql.conf', q{
hot_standby = on
max_standby_streaming_delay = -1
});
$standby->start;

my $seq = 'SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off;';

# a value past the words, indexed as any other
$primary->safe_psql('postgres', q{
	CREATE TABLE r (t text COLLATE "C");
	INSERT INTO r SELECT repeat('r', 40);
	CREATE INDEX r_g ON r USING gbtree (t);});
is($primary->safe_psql('postgres',
		q{SET enable_seqscan = off; SELECT count(*) FROM r WHERE t = repeat('r', 40)}),
	'1', 'a value past the words is indexed and found');
my ($rc, $out, $err);

$primary->safe_psql('postgres', q{
-- one text column: values of 1 to 140 bytes, many sharing long prefixes;
-- built (the build lays out tailed pages), then more
CREATE TABLE a (id int, t text COLLATE "C");
INSERT INTO a SELECT g, CASE WHEN g % 11 = 0 THEN NULL
	ELSE 'https://example.com/some/long/common/path/' || repeat(chr(97 + g % 5), g % 100) || g END
	FROM generate_series(1, 20000) g;
CREATE INDEX a_g ON a USING gbtree (t);
INSERT INTO a SELECT g, left(md5(g::text) || md5((g * 3)::text), 1 + g % 64)
	FROM generate_series(20001, 40000) g;

-- tails of every length up to near the longest: inner pages of few entries
CREATE TABLE b (id int, t text COLLATE "C");
CREATE INDEX b_g ON b USING gbtree (t);
INSERT INTO b SELECT g, repeat(chr(97 + g % 3), 20 + (g * 37) % 820) || g
	FROM generate_series(1, 3000) g;

-- two text columns, DESC and NULLS FIRST, an int between
CREATE TABLE c (a text COLLATE "C", n int, b text COLLATE "C");
CREATE INDEX c_g ON c USING gbtree (a DESC NULLS LAST, n, b NULLS FIRST);
INSERT INTO c SELECT CASE WHEN g % 17 = 0 THEN NULL ELSE repeat(chr(65 + g % 4), (g * 31) % 45) END,
	g % 5, CASE WHEN g % 13 = 0 THEN NULL ELSE repeat(md5(g::text), g % 4) END
	FROM generate_series(1, 20000) g;

-- a key and an INCLUDE column, both long
CREATE TABLE d (k int, t text COLLATE "C", inc text);
INSERT INTO d SELECT g % 50, repeat('y', g % 70), repeat('i', g % 90) FROM generate_series(1, 10000) g;
CREATE INDEX d_g ON d USING gbtree (k, t) INCLUDE (inc);

-- keys of at most 16 bytes: the build fits the index to two words
-- (src/README, "Text keys"); values past them come later, with tails
CREATE TABLE f (id int, t text COLLATE "C");
INSERT INTO f SELECT g, CASE WHEN g % 9 = 0 THEN NULL ELSE substr(md5(g::text), 1, 1 + g % 16) END
	FROM generate_series(1, 20000) g;
CREATE INDEX f_g ON f USING gbtree (t);
});
SKIP:
{
	skip 'no pageinspect to read the metapage with', 1
	  unless $primary->safe_psql('postgres',
		q{SELECT count(*) FROM pg_available_extensions WHERE name = 'pageinspect'});
	$primary->safe_psql('postgres', 'CREATE EXTENSION IF NOT EXISTS pageinspect');
	is($primary->safe_psql('postgres', q{SELECT get_byte(get_raw_page('f_g', 0), 56)}), '2',
		'a build of short keys fits two words');
}

$primary->safe_psql('postgres', q{
DELETE FROM a WHERE id % 3 = 0;
DELETE FROM b WHERE id % 2 = 0;
UPDATE c SET n = n + 1 WHERE n = 2;
VACUUM a; VACUUM b; VACUUM c;
INSERT INTO b SELECT g, repeat(chr(97 + g % 3), 20 + (g * 41) % 820) || g
	FROM generate_series(3001, 4000) g;
INSERT INTO d SELECT g % 50, repeat('y', 30 + g % 70), 'x' FROM generate_series(1, 10000) g;
REINDEX INDEX c_g;
INSERT INTO f SELECT g, md5(g::text) || g FROM generate_series(20001, 24000) g;
DELETE FROM f WHERE id % 5 = 0;
VACUUM f;
});

# scans through the tails answer as a sequential scan does: rows and order
my @scans = (
	[ 'a', q{t > 'https://example.com/some/long/common/path/c'}, 't, id' ],
	[ 'a', q{t = 'https://example.com/some/long/common/path/' || repeat('c', 32) || '32'}, 't, id' ],
	[ 'a', q{t IS NULL OR t < 'b'}, 't, id' ],
	[ 'b', q{t >= repeat('b', 200) AND t < repeat('b', 600)}, 't, id' ],
	[ 'b', q{true}, 't DESC, id' ],
	[ 'c', q{a = repeat('B', 40) AND n = 0}, 'a DESC, n, b, ctid' ],
	[ 'c', q{a < repeat('C', 35)}, 'a DESC, n, b, ctid' ],
	[ 'd', q{k = 7 AND t > repeat('y', 20)}, 'k, t, inc' ],
	[ 'f', q{t > 'c' AND t < 'd5'}, 't, id' ],
	[ 'f', q{t = md5('20010') || '20010' OR t IS NULL}, 't, id' ]);

sub same_as_seq
{
	my ($node, $label) = @_;
	my $found = 0;
	for my $s (@scans)
	{
		my ($t, $pred, $ord) = @$s;
		my $q = "SELECT count(*) || ':' || coalesce(md5(string_agg(${t}::text, '|' ORDER BY $ord)), '-') FROM $t WHERE $pred";
		my $idx = $node->safe_psql('postgres',
			"SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_sort = off; $q");
		my $bm = $node->safe_psql('postgres',
			"SET enable_seqscan = off; SET enable_indexscan = off; SET enable_indexonlyscan = off; $q");
		my $seq = $node->safe_psql('postgres', "$seq $q");
		is($idx, $seq, "$label: index scan of $t where $pred");
		is($bm, $seq, "$label: bitmap scan of $t where $pred");
		if ($seq =~ /^0:/) { diag("$label: no rows in $t where $pred") } else { $found++ }
	}
	is($found, scalar(@scans), "$label: every one of those scans finds rows");
	return;
}
same_as_seq($primary, 'primary');

# what is not built yet is refused
# a unique index of such values: equal keys found through their tails
$primary->safe_psql('postgres', q{
	CREATE TABLE u (t text COLLATE "C"); CREATE UNIQUE INDEX u_g ON u USING gbtree (t);
	INSERT INTO u SELECT repeat('u', 50) || g FROM generate_series(1, 500) g;});
($rc, $out, $err) = $primary->psql('postgres', q{INSERT INTO u SELECT repeat('u', 50) || '77'});
like($err, qr/duplicate key value violates unique constraint "u_g"/,
	'a unique index refuses a long value it holds');
$primary->safe_psql('postgres', q{INSERT INTO u SELECT repeat('u', 50) || '77x'});

# unique (tenant, URL) keys whose URLs share more than the words hold: each
# insert checks at once and goes in alone, by gbtree's WINSERT record with
# the tail once its leaf is tailed; deletes, VACUUM and refills make those
# inserts compact the leaves' tail areas, which replay must redo byte for
# byte
$primary->safe_psql('postgres', q{
	CREATE TABLE tu (tenant int, url text COLLATE "C", n int);
	CREATE UNIQUE INDEX tu_g ON tu USING gbtree (tenant, url) INCLUDE (n);
	INSERT INTO tu SELECT g % 7, 'https://shop.example.com/catalog/item/' || (g * 7919) % 100003, g
		FROM generate_series(1, 6000) g;
	DELETE FROM tu WHERE n % 3 <> 0;
	VACUUM tu;
	INSERT INTO tu SELECT g % 7, 'https://shop.example.com/catalog/item/' || (g * 7919) % 100003
		|| repeat('/x', g % 9), g
		FROM generate_series(6001, 12000) g;});
($rc, $out, $err) = $primary->psql('postgres',
	q{INSERT INTO tu SELECT 6006 % 7, 'https://shop.example.com/catalog/item/' || (6006 * 7919) % 100003 || repeat('/x', 6006 % 9), 0});
like($err, qr/duplicate key value violates unique constraint "tu_g"/,
	'a unique (tenant, URL) index refuses a key it took by WINSERT');
is($primary->safe_psql('postgres', q{SET enable_seqscan = off; SET enable_bitmapscan = off;
	SELECT count(*) FROM tu WHERE tenant = 3 AND url > 'https://shop.example.com/catalog/item/5'}),
	$primary->safe_psql('postgres', $seq . q{
	SELECT count(*) FROM tu WHERE tenant = 3 AND url > 'https://shop.example.com/catalog/item/5'}),
	'an index scan of the unique (tenant, URL) index answers as a sequential scan');
($rc, $out, $err) = $primary->psql('postgres', q{INSERT INTO b SELECT 0, repeat('z', 2000)});
like($err, qr/index row too long for gbtree index "b_g"/, 'a tail past the longest is refused');
is($primary->safe_psql('postgres', $seq . q{SELECT count(*) FROM b WHERE t = repeat('z', 2000)}),
	'0', 'and nothing of it was kept');

# a UTF8 database whose default collation is the C library's C.UTF-8:
# text keys without COLLATE take it, as byte order (glibc 2.35 and later
# compare by code point; collate.c checks it), and answer as btree's
$primary->safe_psql('postgres', q{CREATE DATABASE cutf8 TEMPLATE template0 ENCODING 'UTF8'
	LC_COLLATE 'C.UTF-8' LC_CTYPE 'C.UTF-8'});
$primary->safe_psql('cutf8', q{
	CREATE EXTENSION gbtree;
	CREATE TABLE w (id int, slug text, url text);
	CREATE INDEX w_g ON w USING gbtree (slug, url);
	CREATE TABLE wb (id int, slug text, url text);
	CREATE INDEX w_b ON wb USING btree (slug, url);
	INSERT INTO w SELECT g, CASE WHEN g % 7 = 0 THEN 'ü' || g % 5 ELSE 'tenant-' || g % 9 END,
		'https://例え.jp/パス/' || md5((g % 900)::text) || repeat('é', g % 4) FROM generate_series(1, 6000) g;
	INSERT INTO wb SELECT * FROM w;
	VACUUM ANALYZE w; VACUUM ANALYZE wb;});
for my $pred (q{slug = 'tenant-3' AND url = 'https://例え.jp/パス/' || md5('12') || 'ééé'},
	q{slug = ANY (ARRAY['ü1', 'tenant-2']) AND url > 'https://例え.jp/パス/8'},
	q{slug >= 'tenant-7' OR slug < 'ü'})
{
	my $ord = 'slug, url, id';
	my $g = $primary->safe_psql('cutf8', "SET enable_seqscan = off; SET enable_bitmapscan = off;
		SELECT count(*) || ':' || md5(string_agg(id::text, ',' ORDER BY $ord)) FROM w WHERE $pred");
	my $b = $primary->safe_psql('cutf8', "SET enable_seqscan = off; SET enable_bitmapscan = off;
		SELECT count(*) || ':' || md5(string_agg(id::text, ',' ORDER BY $ord)) FROM wb WHERE $pred");
	is($g, $b, "C.UTF-8 database: gbtree answers as btree where $pred");
	unlike($g, qr/^0:/, "C.UTF-8 database: rows where $pred");
}
is($primary->safe_psql('cutf8', q{SET enable_seqscan = off; SET enable_bitmapscan = off;
	SELECT string_agg(url, '|' ORDER BY slug, url) = (SELECT string_agg(url, '|' ORDER BY slug COLLATE "C", url COLLATE "C") FROM wb)
	FROM (SELECT slug, url FROM w ORDER BY slug, url) s}), 't',
	'C.UTF-8 database: the index order is the bytes\' order');
is($primary->safe_psql('cutf8', q{SELECT gbtree_check('w_g', true)}), '', 'C.UTF-8 database: gbtree_check');

my %rows = (a => 26667, c => 20000, d => 20000, f => 19200, tu => 8000);
for my $t (sort keys %rows)
{
	is($primary->safe_psql('postgres', "$seq SELECT count(*) FROM $t"), $rows{$t}, "table $t rows");
}
check_structure($primary, 'primary');

$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
my $log = slurp_file($standby->logfile);
unlike($log, qr/inconsistent page found/, 'standby: replay found no inconsistent page');
check_structure($standby, 'standby');
same_as_seq($standby, 'standby');

crash_all_processes($primary);
$primary->start;
$primary->poll_query_until('postgres', 'SELECT 1', '1');
$log = slurp_file($primary->logfile);
unlike($log, qr/inconsistent page found/, 'primary: crash recovery found no inconsistent page');
like($log, qr/redo done at/, 'primary: crash recovery replayed WAL');
check_structure($primary, 'after crash recovery');
same_as_seq($primary, 'after crash recovery');
# and writes go on after recovery
$primary->safe_psql('postgres', q{
INSERT INTO b SELECT g, repeat(chr(97 + g % 3), 100 + (g * 43) % 700) || g FROM generate_series(4001, 4500) g;});
check_structure($primary, 'writes after crash recovery');

node_log_ok($primary, 'long text');
node_log_ok($standby, 'long text');
$standby->stop;
$primary->stop;
done_testing();
