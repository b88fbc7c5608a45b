
# test/t/004_cancel.pl
#	  A compspill sort stopped part way (statement_timeout while runs are
#	  being written, a cancel or a terminate during the final merge, an
#	  immediate shutdown) leaves no file in pgsql_tmp.
#
# The sort is held at a known point by an advisory lock the test holds: a
# qual below the sort blocks on it at one input row, or a qual above the sort
# blocks on it at the first output row.  The test waits until the backend is
# blocked there, checks that the spill file exists, then acts.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use CompSpillTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = compspill_node('main', preload => 'shared');
make_words_table($node, 't', 300_000);

my $spill = "SET work_mem = '4MB'";
my $gate = "pg_advisory_xact_lock_shared($GATE_LOCK)::text = ''";

# blocks at input row 200000, after several runs are written
my $stall_in =
  "SELECT id, txt FROM t WHERE (id <> 200000 OR $gate) ORDER BY txt, id";

# blocks at the first output row, with every run written
my $stall_out =
  "SELECT count(*) FROM (SELECT id, grp, txt FROM t ORDER BY txt, id OFFSET 0) s"
  . " WHERE $gate";

like(
	$node->safe_psql('postgres', "$spill; EXPLAIN (COSTS OFF) $stall_out"),
	qr/CompSpill Sort/,
	'the stalled query sorts with compspill');

my $holder = $node->background_psql('postgres');
$holder->query_safe("SELECT pg_advisory_lock($GATE_LOCK)");

# --- statement_timeout while the sort is writing runs ---
{
	my $q = start_query($node, $spill, "SET statement_timeout = '5s'",
		$stall_in);

	# The sort reaches the blocking row well within the timeout; should a
	# slow machine take longer, the timeout still cancels the sort part way,
	# only the check that it had spilled is skipped.
	my $blocked = 0;
	wait_until(
		'the sort to block in its input, or to end',
		sub {
			$blocked = $node->safe_psql(
				'postgres', q{
SELECT count(*) FROM pg_locks
WHERE locktype = 'advisory' AND NOT granted});
			return $blocked || query_done($q);
		});
  SKIP:
	{
		skip 'the timeout came before the sort reached the blocking row', 1
		  unless $blocked;
		ok(scalar(temp_files($node)) >= 1,
			'statement_timeout: the sort has spilled before the timeout');
	}
	my ($rc, $out, $err) = finish_query($q);
	like(
		$err,
		qr/ERROR:  57014: canceling statement due to statement timeout/,
		'statement_timeout: the sort is cancelled');
	ok(wait_until('pgsql_tmp to be empty', sub { !temp_files($node) }),
		'statement_timeout: pgsql_tmp is empty');
}

# --- pg_cancel_backend during the final merge ---
{
	my $q = start_query($node, $spill, $stall_out);
	my $pid = wait_for_lock_waiter($node);
	ok($pid, 'cancel: the sort is blocked at its first output row');
	ok(scalar(temp_files($node)) >= 1, 'cancel: the spill file exists');
	$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
	my ($rc, $out, $err) = finish_query($q);
	like(
		$err,
		qr/ERROR:  57014: canceling statement due to user request/,
		'cancel: the sort is cancelled');
	ok(wait_until('pgsql_tmp to be empty', sub { !temp_files($node) }),
		'cancel: pgsql_tmp is empty');
}

# --- pg_terminate_backend during the final merge ---
{
	my $q = start_query($node, $spill, "SET compspill.codec = zstd",
		$stall_out);
	my $pid = wait_for_lock_waiter($node);
	ok($pid, 'terminate: the sort is blocked at its first output row');
	ok(scalar(temp_files($node)) >= 1, 'terminate: the spill file exists');
	$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
	my ($rc, $out, $err) = finish_query($q);
	like(
		$err,
		qr/terminating connection due to administrator command/,
		'terminate: the backend is terminated');
	ok(wait_until('pgsql_tmp to be empty', sub { !temp_files($node) }),
		'terminate: pgsql_tmp is empty');
}

# --- immediate shutdown during the final merge: restart cleans up ---
{
	my $q = start_query($node, $spill, $stall_out);
	my $pid = wait_for_lock_waiter($node);
	ok($pid, 'immediate stop: the sort is blocked at its first output row');
	$node->stop('immediate');
	finish_query($q);
	$holder->{run}->kill_kill;
	ok(scalar(temp_files($node)) >= 1,
		'immediate stop: the spill file outlives the server');
	$node->start;
	is(join(',', temp_files($node)), '',
		'immediate stop: the restart removes the spill file');
}

# the server still sorts correctly
my $q = 'SELECT id, grp, price, ts, txt FROM t ORDER BY txt, id';
is( sorted_md5($node, "$spill;", $q),
	sorted_md5($node, "$spill; SET compspill.enabled = off;", $q),
	'after all that, compspill still returns what native sort returns');

done_testing();
