
# Copyright: gbtree project.
#
# Damaged index pages must give a clean ERROR (XX001 data_corrupted or
# XX002 index_corrupted) from queries and from gbtree_check(), never a
# crash and never a wrong answer without an error; the server stays up and
# REINDEX repairs the index.
#
# Each case stops the server, damages a copy of the pristine index file,
# starts the server and runs a battery of queries through the index plus
# gbtree_check(idx, true).  A query may succeed only if its answer equals
# the sequential scan's.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('corrupt');
$node->init;
$node->append_conf('postgresql.conf', "autovacuum = off\n");
$node->start;

$node->safe_psql('postgres', q{
	CREATE EXTENSION gbtree;
	CREATE TABLE c (id int, k int8);
	INSERT INTO c SELECT g, CASE WHEN g % 50 = 0 THEN NULL ELSE (g * 7919) % 60000 END
	  FROM generate_series(1, 60000) g;
	CREATE INDEX c_k ON c USING gbtree (k);
	VACUUM ANALYZE c;
	CHECKPOINT;
});
is($node->safe_psql('postgres', "SELECT gbtree_check('c_k', true)"), '', 'pristine index passes gbtree_check');

my $relpath = $node->safe_psql('postgres', "SELECT pg_relation_filepath('c_k')");
my $file = $node->data_dir . '/' . $relpath;
my $nblocks = $node->safe_psql('postgres', "SELECT pg_relation_size('c_k') / 8192");
$node->stop;

open(my $fh, '<:raw', $file) or die "open $file: $!";
my $pristine = do { local $/; <$fh> };
close $fh;

# oracle answers from a sequential scan
my @queries = (
	'SELECT count(*), sum(k) FROM c WHERE k >= 0',
	'SELECT count(*), sum(k) FROM c WHERE k BETWEEN 10000 AND 30000',
	'SELECT count(*) FROM c WHERE k IS NULL',
	'SELECT count(*), sum(k) FROM c WHERE k = ANY(ARRAY[1, 7919, 15838, 59999, 4242])',
	'SELECT string_agg(k::text, \',\') FROM (SELECT k FROM c ORDER BY k DESC LIMIT 50) s',
	'SELECT string_agg(k::text, \',\') FROM (SELECT k FROM c WHERE k > 20000 ORDER BY k LIMIT 50) s',
);
$node->start;
my %oracle;
for my $q (@queries)
{
	$oracle{$q} = $node->safe_psql('postgres',
		"SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off; $q");
}
$node->stop;

# byte offsets inside a page (src/gbtree_node.h)
my $BODY = 64;
my $OPAQUE = 8192 - 48;

sub damage
{
	my ($name, $mutate) = @_;
	my $img = $pristine;
	$mutate->(\$img);
	open(my $out, '>:raw', $file) or die "open $file: $!";
	print $out $img;
	close $out;

	$node->start;
	my ($ret, $stdout, $stderr) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT gbtree_check('c_k', true)");
	my $check_err = ($ret != 0 && $stderr =~ /XX00[12]/);
	my $check_ok = ($ret == 0);

	my $wrong = 0;
	my $errors = 0;
	for my $q (@queries)
	{
		for my $mode ('SET enable_seqscan = off; SET enable_bitmapscan = off;',
					  'SET enable_seqscan = off; SET enable_indexscan = off; SET enable_indexonlyscan = off;')
		{
			my ($r, $o, $e) = $node->psql('postgres', "\\set VERBOSITY verbose\n$mode $q");
			if ($r != 0)
			{
				$errors++;
				unless ($e =~ /XX00[12]|58P01|index .* contains|could not read block/)
				{
					diag("$name: unexpected error for $q: $e");
					$wrong++;
				}
			}
			elsif ($o ne $oracle{$q})
			{
				diag("$name: WRONG ANSWER without error for [$mode $q]:\n got $o\n want $oracle{$q}");
				$wrong++;
			}
		}
	}
	# inserts flushed into the damaged index by the read after them: a
	# batch over the whole key range, and one row into the first leaf; a
	# clean error or success, never a crash; rolled back, so the table
	# stays as the next case expects
	for my $rows ('SELECT 100000 + g, (g * 7) % 60000 FROM generate_series(1, 3000) g',
				  'VALUES (200000, 1)')
	{
		my ($ri, $oi, $ei) = $node->psql('postgres', qq{\\set VERBOSITY verbose
BEGIN;
INSERT INTO c $rows;
SET enable_seqscan = off;
SELECT count(*) FROM c WHERE k >= 0;
ROLLBACK;});
		if ($ei =~ /ERROR/)
		{
			$errors++;
			unless ($ei =~ /XX00[12]|58P01|could not read block/)
			{
				diag("$name: unexpected error from an insert: $ei");
				$wrong++;
			}
		}
	}
	ok($node->safe_psql('postgres', 'SELECT 1') eq '1', "$name: server still up");
	is($wrong, 0, "$name: no wrong answers and no unexpected errors ($errors queries raised corruption errors)");
	ok($check_err || $check_ok, "$name: gbtree_check answers cleanly");
	$node->stop;
	return $check_err;
}

# leaf block with entries: block 3 is the first page written by the build
my $leaf = 3;

ok(damage('flipped key byte in a leaf', sub {
	my $img = shift;
	substr($$img, $leaf * 8192 + $BODY + 8 * 100 + 7, 1) = "\xff";
}), 'flipped key byte: gbtree_check reports corruption');

# the slot map says every slot is used, the page's count says otherwise:
# an insert must not shift entries into a gap that is not there
ok(damage('slot map disagrees with the used count', sub {
	my $img = shift;
	substr($$img, $leaf * 8192 + $BODY + 480 * 16 + 32 * 8, 64) = "\xff" x 64;
}), 'slot map vs used count: gbtree_check reports corruption');

ok(damage('zeroed leaf page', sub {
	my $img = shift;
	substr($$img, ($leaf + 2) * 8192, 8192) = "\0" x 8192;
}), 'zeroed page: gbtree_check reports corruption');

ok(damage('wrong right-link', sub {
	my $img = shift;
	substr($$img, $leaf * 8192 + $OPAQUE + 16, 4) = pack('V', $leaf + 2);
}), 'wrong right-link: gbtree_check reports corruption');

ok(damage('bad downlink in the root', sub {
	my $img = shift;
	# root (block 1) is an inner page: child array after keys and tids
	# (gaps repeat their neighbour's downlink and are never followed, so
	# damage a run of slots to hit used ones)
	my $child0 = 1 * 8192 + $BODY + 384 * 16;
	substr($$img, $child0 + 4 * 150, 4 * 100) = pack('V', 4) x 100;
}), 'bad downlink: gbtree_check reports corruption');

ok(damage('garbage special space', sub {
	my $img = shift;
	substr($$img, ($leaf + 1) * 8192 + $OPAQUE, 48) = "\x5a" x 48;
}), 'garbage special space: gbtree_check reports corruption');

# the special space's keywords field (GbtPageOpaqueData, 60 bytes in):
# a page that claims multi-word keys in an index of one-word keys must be
# refused, not read with another page layout
ok(damage('page claims multi-word keys', sub {
	my $img = shift;
	substr($$img, $leaf * 8192 + $OPAQUE + 44, 2) = pack('v', 2);
}), 'multi-word claim: gbtree_check reports corruption');

ok(damage('metapage magic', sub {
	my $img = shift;
	substr($$img, 24, 4) = "\0\0\0\0";
}), 'metapage: gbtree_check reports corruption');

# truncated file: the last half of the blocks are gone
{
	my $img = substr($pristine, 0, int($nblocks / 2) * 8192);
	open(my $out, '>:raw', $file) or die;
	print $out $img;
	close $out;
	$node->start;
	my ($ret, $stdout, $stderr) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT gbtree_check('c_k', true)");
	ok($ret != 0 && $stderr =~ /XX00[12]|could not read block/, 'truncated file: gbtree_check errors')
	  or diag($stderr);
	($ret, $stdout, $stderr) = $node->psql('postgres',
		'SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT count(*) FROM c WHERE k >= 0');
	ok($ret != 0 || $stdout eq (split /\|/, $oracle{$queries[0]})[0], 'truncated file: query errors or is right')
	  or diag("got $stdout / $stderr");
	ok($node->safe_psql('postgres', 'SELECT 1') eq '1', 'truncated file: server still up');
	$node->stop;
}

# REINDEX repairs
{
	open(my $out, '>:raw', $file) or die;
	print $out substr($pristine, 0, 3 * 8192) . ("\0" x 8192) . substr($pristine, 4 * 8192);
	close $out;
	$node->start;
	$node->safe_psql('postgres', 'REINDEX INDEX c_k');
	is($node->safe_psql('postgres', "SELECT gbtree_check('c_k', true)"), '', 'REINDEX repairs the index');
	is($node->safe_psql('postgres',
		"SET enable_seqscan = off; SET enable_bitmapscan = off; $queries[0]"),
		$oracle{$queries[0]}, 'answers right after REINDEX');
	$node->stop;
}

done_testing();
