#
# 008_temp_space_cap.pl
#	  compspill.max_temp_space: the total size of compspill's temporary
#	  files in the cluster, compspill_temp_space(), follows the files as
#	  they grow and go; a spill that would pass the cap fails with 53400
#	  while the others finish (a recursive walk's too); an Incremental
#	  Sort counts its one file, which its groups reuse; the total returns
#	  to zero after errors, hundreds of cancelled queries and a terminated
#	  backend; a spill near the cap under codec = auto compresses and
#	  fits; and without shared_preload_libraries the function says so.
#
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use CompSpillTAP;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = compspill_node('main', preload => 'shared');
make_words_table($node, 't', 200_000);
$node->safe_psql('postgres', 'CREATE EXTENSION compspill');

my $spill = "SET work_mem = '4MB'; SET compspill.codec = none";
my $gate = "pg_advisory_xact_lock_shared($GATE_LOCK)::text = ''";
my $sorted = 'SELECT id, grp, price, ts, txt FROM t ORDER BY txt, id';
my $stall_out = "SELECT count(*) FROM ($sorted OFFSET 0) s WHERE $gate";

sub total
{
	return $node->safe_psql('postgres', 'SELECT compspill_temp_space()');
}

sub set_cap
{
	my ($cap) = @_;
	$node->safe_psql('postgres',
		"ALTER SYSTEM SET compspill.max_temp_space = '$cap'; SELECT pg_reload_conf()");
	return;
}

is(total(), 0, 'nothing is claimed at rest');

# the total follows a spill while it is open
my $holder = $node->background_psql('postgres');
$holder->query_safe("SELECT pg_advisory_lock($GATE_LOCK)");
my $q = start_query($node, $spill, $stall_out);
ok(wait_for_lock_waiter($node), 'a sort is paused at its first output row');
my @files = temp_files($node);
my $file_size = 0;
$file_size += -s $_ foreach @files;
my $held = total();
note "spill file(s) @files: $file_size bytes; claimed $held bytes";
ok($held >= $file_size && $held > 0,
	'the claimed total covers the open spill file');

# a second session that needs more than the cap leaves fails, the first
# finishes
set_cap(int($held * 1.5 / 1024) . 'kB');
my ($rc, $out, $err) =
  $node->psql('postgres', "$spill; SET client_min_messages = error; $sorted",
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like(
	$err,
	qr/ERROR:  53400: compspill temporary files would exceed compspill\.max_temp_space \(\d+kB\)\nDETAIL:  compspill temporary files in the cluster hold \d+kB/,
	'a second spill past the cap fails with 53400, naming the setting and the total');
$holder->query_safe("SELECT pg_advisory_unlock($GATE_LOCK)");
($rc, $out, $err) = finish_query($q);
is($rc, 0, 'the first spill, within the cap, finishes');
ok(wait_until('the total to return to zero', sub { total() == 0 }),
	'everything claimed is given back');
ok(wait_until('pgsql_tmp to be empty', sub { !temp_files($node) }),
	'pgsql_tmp is empty');

# alone, a spill larger than the cap fails at once; with room it runs
set_cap('1MB');
($rc, $out, $err) = $node->psql('postgres', "$spill; $sorted",
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:  53400: compspill temporary files would exceed compspill\.max_temp_space \(1024kB\)/,
	'a spill larger than the cap fails');
is(total(), 0, 'the failed spill gave its claim back');
set_cap('-1');
is( $node->safe_psql('postgres',
		"$spill; SELECT count(*) FROM ($sorted OFFSET 0) s"),
	'200000', 'without the cap the same sort runs');

# an Incremental Sort: its one file counts against the cap.  Each group
# gives its extents back, so the file holds about one group however much
# the groups write in all: a cap of twice its peak is enough, though all
# the groups write more; a cap below its peak is not
make_groups_table($node, 'inc', 't', 20000);
my $incq = 'SELECT a, txt, id FROM inc ORDER BY a, txt, id';
my $incset = "SET work_mem = '1MB'; SET compspill.codec = none; $INCSORT_SETUP";
my $inc_native = sorted_md5($node, "$incset SET compspill.enabled = off;", $incq);
my $inc = plan_node(
	decode_json(
		$node->safe_psql(
			'postgres',
			"$incset EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) $incq"))->[0]{Plan},
	'CompSpill Incremental Sort');
my $inc_peak = $inc ? $inc->{'Temp File Peak'} // 0 : 0;
my $inc_written = $inc ? $inc->{'Bytes Written'} // 0 : 0;
ok($inc_peak > 0 && $inc_written > 2 * $inc_peak,
	"the incremental sort spilled, writing ${inc_written}kB in a file of ${inc_peak}kB at most");
set_cap((2 * $inc_peak) . 'kB');
is(sorted_md5($node, $incset, $incq), $inc_native,
	'within a cap of twice its file\'s peak it runs, returning what native returns');
set_cap(int($inc_peak / 2) . 'kB');
($rc, $out, $err) = $node->psql('postgres', "$incset $incq",
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:  53400: compspill temporary files would exceed compspill\.max_temp_space/,
	'with a cap of half its peak it fails');
is(total(), 0, 'and gives its claim back');
set_cap('-1');

# a recursive walk past the cap fails the same way (its union's store and
# the CTE Scan's claim space as they grow), and gives its claim back
my $walk = "WITH RECURSIVE w(n, d, s) AS (SELECT g, 0, repeat(md5(g::text), 6) "
  . "FROM generate_series(1, 20000) g UNION ALL SELECT n, d + 1, s FROM w WHERE d < 3) "
  . "SELECT count(*) FROM w";
set_cap('1MB');
($rc, $out, $err) = $node->psql('postgres', "$spill; $walk",
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:  53400: compspill temporary files would exceed compspill\.max_temp_space \(1024kB\)/,
	'a recursive walk larger than the cap fails');
is(total(), 0, 'the failed walk gave its claim back');
set_cap('-1');
is($node->safe_psql('postgres', "$spill; $walk"), '80000',
	'without the cap the same walk runs');
# paused in its third iteration, the claim covers the files of the union
# and of the CTE Scan
$holder->query_safe("SELECT pg_advisory_lock($GATE_LOCK)");
$q = start_query($node, $spill,
	"WITH RECURSIVE w(n, d, s) AS (SELECT g, 0, repeat(md5(g::text), 6) "
	  . "FROM generate_series(1, 20000) g UNION ALL SELECT n, d + 1, s FROM w "
	  . "WHERE d < 3 AND (d < 2 OR n <> 5000 OR $gate)) SELECT count(*) FROM w");
ok(wait_for_lock_waiter($node), 'a recursive walk is paused');
$file_size = 0;
$file_size += -s $_ foreach temp_files($node);
$held = total();
ok($held >= $file_size && $held > 0,
	"the claimed total ($held) covers the walk's spill files ($file_size)");
$holder->query_safe("SELECT pg_advisory_unlock($GATE_LOCK)");
($rc) = finish_query($q);
is($rc, 0, 'the walk finishes');
ok(wait_until('the total to return to zero', sub { total() == 0 }),
	'and gives everything back');

# no drift: hundreds of spills cancelled by statement_timeout at random
# points, and as many failing on the cap
my $script = '';
for my $i (1 .. 300)
{
	my $ms = 20 + ($i * 37) % 200;
	$script .= "SET statement_timeout = '${ms}ms'; SELECT count(*) FROM ($sorted OFFSET 0) s;\n";
}
($rc, $out, $err) =
  $node->psql('postgres', "$spill;\n$script", on_error_stop => 0);
my $cancelled = () = $err =~ /canceling statement due to statement timeout/g;
note "$cancelled of 300 spills cancelled";
ok($cancelled >= 100, 'most of the 300 spills were cancelled');
is(total(), 0, 'after the cancelled spills the total is zero');
set_cap('512kB');
$script = '';
$script .= "SELECT count(*) FROM ($sorted OFFSET 0) s;\n" for 1 .. 100;
($rc, $out, $err) =
  $node->psql('postgres', "$spill;\n$script", on_error_stop => 0);
my $capped = () = $err =~ /would exceed compspill\.max_temp_space/g;
is($capped, 100, '100 spills stopped by the cap');
is(total(), 0, 'after them the total is zero');
set_cap('-1');

# a backend terminated in the middle of a spill
$holder->query_safe("SELECT pg_advisory_lock($GATE_LOCK)");
$q = start_query($node, $spill, $stall_out);
my $pid = wait_for_lock_waiter($node);
ok(total() > 0, 'a paused spill holds space');
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
finish_query($q);
$holder->query_safe("SELECT pg_advisory_unlock($GATE_LOCK)");
ok(wait_until('the total to return to zero', sub { total() == 0 }),
	'a terminated backend gives its space back');
$holder->quit;

# only a superuser may set it
$node->safe_psql('postgres', 'CREATE ROLE plain LOGIN');
($rc, $out, $err) = $node->psql('postgres',
	'SET compspill.max_temp_space = -1',
	extra_params => [ '-U', 'plain' ]);
like($err, qr/permission denied to set parameter "compspill.max_temp_space"/,
	'an ordinary user cannot change it');

# a spill near the cap: stored raw it fails; codec = auto, the default,
# sees the cap at the size the plan expects, compresses from its first run
# and finishes with native's rows, and EXPLAIN says why
{
	my $raw = "SET work_mem = '4MB'; SET compspill.codec = none;";
	my $native_md5 =
	  sorted_md5($node, "SET work_mem = '4MB'; SET compspill.enabled = off;",
		$sorted);
	my $ex = $node->safe_psql('postgres',
		"$raw EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $sorted");
	my ($peak) = $ex =~ /Spill File: peak=(\d+)kB/;
	$ex = $node->safe_psql('postgres',
		"SET work_mem = '4MB'; SET compspill.codec = zstd; "
		  . "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $sorted");
	my ($zstd_peak) = $ex =~ /Spill File: peak=(\d+)kB/;
	ok(defined $peak && defined $zstd_peak,
		'the file peaks stored raw and with zstd are known');
	note "file peak: stored raw ${peak}kB, zstd ${zstd_peak}kB";
	# room for zstd's file and half as much again, not for the raw one
	my $cap = int($zstd_peak * 1.5) + 256;
	$cap = int($peak * 0.9) if $cap > $peak * 0.9;
	set_cap("${cap}kB");
	($rc, $out, $err) = $node->psql('postgres', "$raw $sorted");
	like(
		$err,
		qr/compspill temporary files would exceed compspill\.max_temp_space/,
		'near the cap: stored raw, the spill fails');
	is(sorted_md5($node, "SET work_mem = '4MB';", $sorted),
		$native_md5,
		'near the cap: codec = auto finishes, with native\'s rows');
	$ex = $node->safe_psql('postgres',
		"SET work_mem = '4MB'; EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $sorted");
	like(
		$ex,
		qr/Spill: codec=auto \(room: compspill\.max_temp_space\)/,
		'near the cap: EXPLAIN says auto compressed for lack of room');
	set_cap('-1');
	ok(wait_until('the total to return to zero', sub { total() == 0 }),
		'near the cap: everything claimed is given back');
}

# without shared_preload_libraries the total is not known
$node->stop;
my $solo = compspill_node('solo', preload => 'none');
$solo->safe_psql('postgres', 'CREATE EXTENSION compspill');
($rc, $out, $err) = $solo->psql('postgres',
	"LOAD 'compspill'; SELECT compspill_temp_space()");
like($err, qr/ERROR:  compspill is not loaded from shared_preload_libraries\nHINT:  Add compspill to shared_preload_libraries/,
	'without preloading, compspill_temp_space() says why it cannot answer');
$solo->stop;

done_testing();
