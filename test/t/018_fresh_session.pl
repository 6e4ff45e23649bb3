
# Copyright: gbtree project.
#
# Statements in a session that has not loaded gbtree yet, on a server
# that does not preload it: gbtree's hooks are installed only when its
# library loads, which is when the session first opens a gbtree index, so
# whatever a hook must catch may come first.  Each psql call here is a new
# session.
#   - INSERT ... ON CONFLICT DO NOTHING (no conflict target: the planner
#     opens no index) on a table with a unique gbtree index: before
#     PostgreSQL 18, 0A000 with gbtree's reason, never the core's internal
#     error; from 18 on it works.
#   - ALTER TABLE ... REPLICA IDENTITY USING INDEX of a gbtree index:
#     refused with 0A000 on 17 only (its logical replication cannot apply
#     through it), taken elsewhere.
#   - a foreign key whose referenced columns' first unique index is
#     gbtree's: before 18 refused (0A000 once gbtree is loaded in the
#     session; the core's own error in a session that has not loaded it),
#     taken on 18.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('fresh');
$node->init;
$node->append_conf('postgresql.conf', "autovacuum = off\n");
$node->start;
my $major = int($node->safe_psql('postgres', 'SHOW server_version_num') / 10000);

$node->safe_psql('postgres', q{
CREATE EXTENSION gbtree;
CREATE TABLE oc (k int8 NOT NULL, v int4);
CREATE UNIQUE INDEX oc_k ON oc USING gbtree (k);
INSERT INTO oc VALUES (1, 0);
CREATE TABLE fp (id int8 NOT NULL);
INSERT INTO fp SELECT g FROM generate_series(1, 100) g;
CREATE UNIQUE INDEX fp_id_g ON fp USING gbtree (id);
ALTER TABLE fp ADD PRIMARY KEY (id);
});

# a new session: its first statement, with verbose errors (SQLSTATE shown)
sub fresh
{
	my ($sql) = @_;
	my ($rc, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\n$sql");
	return ($rc, $err);
}

my ($rc, $err) = fresh('INSERT INTO oc VALUES (1, 1), (2, 1) ON CONFLICT DO NOTHING');
if ($major < 18)
{
	like($err, qr/ERROR:  0A000: INSERT \.\.\. ON CONFLICT is not supported/,
		'ON CONFLICT DO NOTHING as a session\'s first statement: 0A000 with gbtree\'s reason');
	unlike($err, qr/XX000|unexpected non-btree/, '... not the core\'s internal error');
	is($node->safe_psql('postgres', 'SELECT count(*) FROM oc'), '1', '... and nothing inserted');
}
else
{
	is($rc, 0, 'ON CONFLICT DO NOTHING as a session\'s first statement') or diag($err);
	is($node->safe_psql('postgres', 'SELECT count(*), sum(k) FROM oc'), '2|3', '... inserted the new key only');
}

($rc, $err) = fresh('ALTER TABLE oc REPLICA IDENTITY USING INDEX oc_k');
if ($major == 17)
{
	like($err, qr/ERROR:  0A000: gbtree index "oc_k" cannot be a replica identity on PostgreSQL 17/,
		'PostgreSQL 17: a gbtree replica identity is refused as a session\'s first statement');
	is($node->safe_psql('postgres', "SELECT relreplident FROM pg_class WHERE relname = 'oc'"), 'd',
		'... and the table keeps its replica identity');
}
else
{
	is($rc, 0, 'a gbtree index becomes the replica identity') or diag($err);
	ok($node->safe_psql('postgres', "SELECT indisreplident FROM pg_index WHERE indexrelid = 'oc_k'::regclass") eq 't',
		'... as pg_index says');
}

# the gbtree index came before the btree primary key: the core takes it
($rc, $err) = fresh('CREATE TABLE fc (pid int8 REFERENCES fp (id))');
if ($major < 18)
{
	isnt($rc, 0, 'a foreign key through a gbtree index, as a session\'s first statement: refused');
	($rc, $err) = fresh("SELECT count(*) FROM fp WHERE id = 5;\nCREATE TABLE fc (pid int8 REFERENCES fp (id))");
	like($err, qr/ERROR:  0A000: a foreign key needs a btree unique index on the referenced columns/,
		'... with 0A000 once the session has loaded gbtree');
	($rc, $err) = fresh('CREATE TABLE fc (pid int8 REFERENCES fp)');
	is($rc, 0, 'a foreign key through the primary key') or diag($err);
}
else
{
	is($rc, 0, 'a foreign key through a gbtree index') or diag($err);
}
($rc, $err) = fresh('INSERT INTO fc VALUES (5), (NULL)');
is($rc, 0, 'the foreign key takes a present key') or diag($err);
($rc, $err) = fresh('INSERT INTO fc VALUES (500)');
like($err, qr/ERROR:  23503:/, 'the foreign key refuses a missing key');

$node->stop;
done_testing();
