#
# 009_monitoring.pl
#	  compspill_stats, compspill_statements and compspill_activity: the
#	  cumulative figures equal EXPLAIN ANALYZE's for the queries that ran,
#	  under the query identifier EXPLAIN VERBOSE shows and that
#	  pg_stat_statements joins on; parallel workers are counted; an
#	  Incremental Sort whose groups spill is one spill; the table of
#	  statements keeps compspill.max_statements, evicting the statements
#	  that spilled least; the reset empties both; the live view shows a
#	  sort while it reads its input and while it returns rows, a
#	  Material's store, an Incremental Sort and a recursive union's store,
#	  as seen from a second session (a recursive union is one spill,
#	  logged under its name), and a backend whose spills fail hundreds of
#	  times inside BEGIN .. EXCEPTION keeps its slots and leaves nothing
#	  behind in it; a store flushed for a reader while it is written
#	  counts its partial pages once; without shared_preload_libraries
#	  every view says so instead of showing zeros.
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

my $node = compspill_node(
	'main',
	preload => 'shared',
	conf => qq{
shared_preload_libraries = 'compspill,pg_stat_statements'
compute_query_id = on
compspill.max_statements = 100
});
make_words_table($node, 't', 200_000);
$node->safe_psql('postgres',
	'CREATE EXTENSION compspill; CREATE EXTENSION pg_stat_statements');

my $spill = "SET work_mem = '1MB';";
my $sort = 'SELECT id, grp, price, ts, txt FROM t ORDER BY txt, id';
my $gate = "pg_advisory_xact_lock_shared($GATE_LOCK)::text = ''";
my $counters = 'spills, runs, merge_passes, rows_spilled, '
  . 'ceil(raw_bytes / 1024.0), ceil(written_bytes / 1024.0), '
  . 'ceil(peak_file_bytes / 1024.0)';

# Run EXPLAIN (ANALYZE, VERBOSE, FORMAT JSON) of $query after $setup; return
# the plan's top node and the query identifier.
sub explain_json
{
	my ($setup, $query) = @_;
	my $json = $node->safe_psql('postgres',
		"$setup EXPLAIN (ANALYZE, VERBOSE, TIMING OFF, FORMAT JSON) $query");
	my $doc = decode_json($json)->[0];

	return ($doc->{Plan}, $doc->{'Query Identifier'});
}

# The EXPLAIN figures of a spilled node, in the order of $counters.
sub explain_figures
{
	my ($n) = @_;
	return join('|',
		1, $n->{'Spill Runs'}, $n->{'Merge Passes'}, $n->{'Rows Spilled'},
		$n->{'Bytes Before Encoding'}, $n->{'Bytes Written'},
		$n->{'Temp File Peak'});
}

# --- without shared_preload_libraries, the views refuse ---
my $session = compspill_node('session', preload => 'session');
$session->safe_psql('postgres', 'CREATE EXTENSION compspill');
foreach my $obj ('compspill_stats', 'compspill_statements',
	'compspill_activity')
{
	my ($rc, $out, $err) = $session->psql('postgres', "SELECT * FROM $obj");
	like(
		$err,
		qr/ERROR:  (?:55000: )?compspill is not loaded from shared_preload_libraries\n(?:.*\n)?HINT:  Add compspill to shared_preload_libraries and restart the server\./,
		"$obj without shared_preload_libraries is an error with a hint");
}
my ($src, $sout, $serr) =
  $session->psql('postgres', 'SELECT compspill_stats_reset()');
like($serr, qr/compspill is not loaded from shared_preload_libraries/,
	'so is compspill_stats_reset()');
$session->stop;

# --- the counters are EXPLAIN's figures ---
$node->safe_psql('postgres', 'SELECT compspill_stats_reset()');
is($node->safe_psql('postgres',
		'SELECT (SELECT count(*) FROM compspill_stats) + '
		  . '(SELECT count(*) FROM compspill_statements)'),
	0, 'after a reset both views are empty');

my ($plan, $qid) = explain_json($spill, $sort);
is($plan->{'Custom Plan Provider'}, 'CompSpill Sort', 'the sort is compspill\'s');
ok($plan->{'Spill Runs'} > 1, 'and it spilled');
my $want = explain_figures($plan);
is($node->safe_psql('postgres',
		"SELECT $counters FROM compspill_stats WHERE datname = 'postgres'"),
	$want, 'compspill_stats has the figures of that EXPLAIN ANALYZE');
is($node->safe_psql('postgres',
		"SELECT $counters FROM compspill_statements WHERE queryid = $qid"),
	$want, 'compspill_statements has them under its query identifier');
is($node->safe_psql('postgres',
		"SELECT round(write_time_ms::numeric, 3) || '|' || round(read_time_ms::numeric, 3) "
		  . "FROM compspill_statements WHERE queryid = $qid"),
	sprintf('%.3f|%.3f', $plan->{'Write Time'}, $plan->{'Read Time'}),
	'and the time spent writing and reading');

# the same statement again, run for real: twice the figures but the peak
$node->safe_psql('postgres', "$spill SELECT count(*) FROM ($sort) s");
my ($qid2) = (explain_json($spill, "SELECT count(*) FROM ($sort) s"))[1];
$node->safe_psql('postgres', "$spill SELECT count(*) FROM ($sort) s");
is($node->safe_psql('postgres',
		"SELECT spills, rows_spilled FROM compspill_statements WHERE queryid = $qid2"),
	'3|600000', 'a statement run three times has three spills');
is($node->safe_psql('postgres',
		"SELECT spills, rows_spilled FROM compspill_stats WHERE datname = 'postgres'"),
	'4|800000', 'the database has all four');
like(
	$node->safe_psql(
		'postgres', q{
SELECT p.query FROM compspill_statements c
    JOIN pg_stat_statements p USING (userid, dbid, queryid)
WHERE c.spills = 3}),
	qr/^SELECT count\(\*\) FROM \(SELECT id, grp, price, ts, txt FROM t ORDER BY txt, id\) s$/m,
	'compspill_statements joins to pg_stat_statements on (userid, dbid, queryid)');

# a Material's store is counted too
$node->safe_psql('postgres',
	'CREATE TABLE o3 AS SELECT g AS id FROM generate_series(1, 3) g; ANALYZE o3');
my $nestloop = 'SET enable_hashjoin = off; SET enable_mergejoin = off;';
my $matq = 'SELECT count(*) FROM o3 LEFT JOIN t ON t.grp >= o3.id * 300 AND t.txt > \'\'';
my ($mplan, $mqid) = explain_json("$spill $nestloop", $matq);
my $mat = $mplan->{Plans}[0]{Plans}[1];
is($mat->{'Custom Plan Provider'}, 'CompSpill Material',
	'a nested loop has a CompSpill Material');
is($mat->{Storage}, 'Disk', 'whose store spills');
is($node->safe_psql('postgres',
		"SELECT $counters FROM compspill_statements WHERE queryid = $mqid"),
	explain_figures($mat), 'the Material\'s figures are counted as EXPLAIN shows them');

# a recursive union's store is counted too: one spill for all its
# iterations, beside the spill of the CTE Scan that reads the union
my $recq = "WITH RECURSIVE w(n, d, s) AS (SELECT g, 0, repeat('r', 100) "
  . "FROM generate_series(1, 20000) g UNION ALL SELECT n, d + 1, s FROM w WHERE d < 3) "
  . "SELECT count(*) FROM w";
my ($rplan, $rqid) = explain_json($spill, $recq);
my ($ru, $rcte);
my @todo = ($rplan);
while (my $n = shift @todo)
{
	my $provider = $n->{'Custom Plan Provider'} // '';
	$ru = $n if $provider eq 'CompSpill Recursive Union';
	$rcte = $n if $provider eq 'CompSpill CTE Scan';
	push @todo, @{ $n->{Plans} // [] };
}
ok($ru && $ru->{Storage} eq 'Disk', 'a recursive union\'s store spills');
ok($rcte && $rcte->{Storage} eq 'Disk', 'and so does the CTE Scan over it');
is($node->safe_psql('postgres',
		"SELECT spills, rows_spilled FROM compspill_statements WHERE queryid = $rqid"),
	'2|' . ($ru->{'Rows Spilled'} + $rcte->{'Rows Spilled'}),
	'the recursive union is one spill of the statement, with its rows as EXPLAIN shows them');
my $log_at = -s $node->logfile;
$node->safe_psql('postgres', "SET compspill.log_spills = 0; $spill $recq");
like(slurp_file($node->logfile, $log_at),
	qr/LOG:  (?:00000: )?compspill recursive union spill: \d+ rows, 1 runs/,
	'compspill.log_spills logs the recursive union under its own name');

# parallel workers count their own spills
my $par = 'SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; '
  . 'SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;';
$node->safe_psql('postgres', 'SELECT compspill_stats_reset()');
my ($pplan) = explain_json("$spill $par", $sort);
my $launched = $pplan->{'Workers Launched'};
ok($launched >= 1, "a parallel sort launched $launched worker(s)");
is($node->safe_psql('postgres',
		"SELECT spills || '|' || rows_spilled FROM compspill_stats WHERE datname = 'postgres'"),
	(1 + $launched) . '|200000',
	'the leader\'s and every worker\'s spill are counted, every row once');

# an Incremental Sort whose pre-sorted sort spills group after group is
# one spill, with the runs of all its groups, compared with native's
# result; in parallel each worker counts its own
make_groups_table($node, 'inc', 't', 20000);
my $incq = 'SELECT a, txt, id FROM inc ORDER BY a, txt, id';
my $incset = "$spill $INCSORT_SETUP";
is( sorted_md5($node, "$incset SET compspill.enabled = on;", $incq),
	sorted_md5($node, "$incset SET compspill.enabled = off;", $incq),
	'an incremental sort returns what native returns');
$node->safe_psql('postgres', 'SELECT compspill_stats_reset()');
my ($iplan, $iqid) = explain_json($incset, $incq);
my $inc = plan_node($iplan, 'CompSpill Incremental Sort');
ok($inc && !$inc->{'Tuplesort Fallback'} && ($inc->{'Spill Runs'} // 0) >= 10,
	'the incremental sort is compspill\'s, with runs of its 10 groups ('
	  . ($inc ? $inc->{'Spill Runs'} // 'none' : 'no node') . ')');
is($node->safe_psql('postgres',
		"SELECT $counters FROM compspill_statements WHERE queryid = $iqid"),
	explain_figures($inc // {}),
	'compspill_statements counts it as one spill with EXPLAIN\'s figures');
is($node->safe_psql('postgres',
		"SELECT $counters FROM compspill_stats WHERE datname = 'postgres'"),
	explain_figures($inc // {}), 'so does compspill_stats');
$node->safe_psql('postgres', 'SELECT compspill_stats_reset()');
my ($ipplan) = explain_json(
	"$incset $par SET min_parallel_index_scan_size = 0; "
	  . 'SET parallel_leader_participation = off;', $incq);
my $ilaunched = $ipplan->{'Workers Launched'} // 0;
my $ipnode = plan_node($ipplan, 'CompSpill Incremental Sort');
ok($ilaunched >= 1 && $ipnode,
	"a parallel incremental sort launched $ilaunched worker(s)");
is($node->safe_psql('postgres',
		"SELECT spills, rows_spilled > 0 FROM compspill_stats WHERE datname = 'postgres'"),
	"$ilaunched|t", 'each worker\'s incremental sort counts its spill');

# a user sees the query identifiers of its own statements only
$node->safe_psql('postgres',
	'CREATE ROLE alice LOGIN; CREATE ROLE bob LOGIN; GRANT SELECT ON t TO alice');
$node->safe_psql('postgres', "$spill SELECT count(*) FROM ($sort) s",
	extra_params => [ '-U', 'alice' ]);
is($node->safe_psql('postgres',
		q{SELECT count(queryid) || '|' || count(*) FROM compspill_statements
		  WHERE userid = 'alice'::regrole},
		extra_params => [ '-U', 'alice' ]),
	'1|1', 'alice sees her statement with its query identifier');
is($node->safe_psql('postgres',
		q{SELECT count(queryid) || '|' || count(*) FROM compspill_statements
		  WHERE userid = 'alice'::regrole},
		extra_params => [ '-U', 'bob' ]),
	'0|1', 'bob sees its figures without the identifier');
my ($rc, $out, $err) = $node->psql('postgres', 'SELECT compspill_stats_reset()',
	extra_params => [ '-U', 'bob' ]);
like($err, qr/permission denied for function compspill_stats_reset/,
	'an ordinary user cannot reset the statistics');

# --- compspill.max_statements: the statements that spilled least go ---
$node->safe_psql('postgres', 'SELECT compspill_stats_reset()');
my $keep = "SELECT count(*) FROM (SELECT txt FROM t ORDER BY txt) s";
$node->safe_psql('postgres', "$spill $keep; $keep");
my $many = "SET work_mem = '64kB';";
for my $i (1 .. 110)
{
	# a different target list each time makes a different query identifier
	my $cols = join(', ', ('id') x $i);
	$many .= " SELECT count(*) FROM (SELECT $cols FROM t WHERE id <= 5000 ORDER BY txt) s;";
}
$node->safe_psql('postgres', $many);
my $n = $node->safe_psql('postgres', 'SELECT count(*) FROM compspill_statements');
ok($n <= 100 && $n >= 81, "the table holds at most 100 statements ($n)");
ok($n <= 91, "a full table evicts at least ten statements at once ($n)");
is($node->safe_psql('postgres',
		"SELECT max_val FROM pg_settings WHERE name = 'compspill.max_statements'"),
	'1000000', 'compspill.max_statements is at most a million');
is($node->safe_psql('postgres',
		'SELECT count(*) FROM compspill_statements WHERE spills = 2'),
	1, 'the statement that spilled twice was not evicted');
is($node->safe_psql('postgres',
		"SELECT spills FROM compspill_stats WHERE datname = 'postgres'"),
	112, 'the database counts every spill');

# the reset empties both and moves stats_reset
my $before = $node->safe_psql('postgres',
	"SELECT stats_reset FROM compspill_stats WHERE datname = 'postgres'");
$node->safe_psql('postgres', 'SELECT compspill_stats_reset()');
my ($files0, $bytes0) = db_temp_stats($node);
$node->safe_psql('postgres', "$spill SELECT count(*) FROM ($sort) s");
is($node->safe_psql('postgres',
		"SELECT spills, stats_reset > '$before' FROM compspill_stats"),
	'1|t', 'a reset starts the counts again and is dated');

# pg_stat_database counts the spill's file at its peak size
my ($files1, $bytes1);
wait_until(
	'the spill in pg_stat_database',
	sub {
		($files1, $bytes1) = db_temp_stats($node);
		return $files1 > $files0;
	});
is(($files1 - $files0) . '|' . ($bytes1 - $bytes0),
	'1|' . $node->safe_psql('postgres', 'SELECT peak_file_bytes FROM compspill_stats'),
	'pg_stat_database has one temp file of peak_file_bytes');
is($node->safe_psql('postgres', 'SELECT count(*) FROM compspill_statements'),
	1, 'compspill_statements too');

# --- compspill_activity, read from a second session ---
is($node->safe_psql('postgres', 'SELECT count(*) FROM compspill_activity'),
	0, 'nothing is in progress at rest');

my $holder = $node->background_psql('postgres');
$holder->query_safe("SELECT pg_advisory_lock($GATE_LOCK)");

# stalled while reading its input, after some runs
my $q = start_query($node, "SET work_mem = '1MB'; SET compspill.codec = lz4",
	"SELECT count(*) FROM (SELECT id, txt FROM t WHERE id <> 150000 OR $gate ORDER BY txt) s");
my $pid = wait_for_lock_waiter($node);
my $row = $node->safe_psql('postgres',
	"SELECT node, phase, codec, runs > 1, rows > 100000, bytes_written > 0, "
	  . "file_size > 0, datid = (SELECT oid FROM pg_database WHERE datname = 'postgres'), "
	  . "queryid = (SELECT query_id FROM pg_stat_activity WHERE pid = $pid) "
	  . "FROM compspill_activity WHERE pid = $pid");
is($row, 'sort|reading input|lz4|t|t|t|t|t|t',
	'a sort paused in its input shows its runs, rows, bytes and statement');
$holder->query_safe("SELECT pg_advisory_unlock($GATE_LOCK)");
my ($qrc) = finish_query($q);
is($qrc, 0, 'the sort finishes');
is($node->safe_psql('postgres', 'SELECT count(*) FROM compspill_activity'),
	0, 'and leaves the view');

# stalled at its first row out
$holder->query_safe("SELECT pg_advisory_lock($GATE_LOCK)");
$q = start_query($node, $spill,
	"SELECT count(*) FROM ($sort OFFSET 0) s WHERE $gate");
$pid = wait_for_lock_waiter($node);
is($node->safe_psql('postgres',
		"SELECT phase, rows, runs > 1 FROM compspill_activity WHERE pid = $pid"),
	'returning rows|200000|t', 'a sort stalled at its output is returning rows');
$holder->query_safe("SELECT pg_advisory_unlock($GATE_LOCK)");
($qrc) = finish_query($q);
is($qrc, 0, 'it finishes');

# a Material's store, stalled at the second outer row, once it holds
# every inner row
$holder->query_safe("SELECT pg_advisory_lock($GATE_LOCK)");
$q = start_query($node, "$spill $nestloop",
	"SELECT count(*) FROM o3 LEFT JOIN t ON t.grp >= o3.id * 300 AND t.txt > '' "
	  . "AND (o3.id = 1 OR $gate)");
$pid = wait_for_lock_waiter($node);
is($node->safe_psql('postgres',
		"SELECT node, phase, rows BETWEEN 190000 AND 200000 "
		  . "FROM compspill_activity WHERE pid = $pid"),
	'material|storing rows|t',
	'a Material\'s store shows as storing rows, counted to its last block');
$holder->query_safe("SELECT pg_advisory_unlock($GATE_LOCK)");
($qrc) = finish_query($q);
is($qrc, 0, 'the join finishes');

# an incremental sort stalled at its first row out: its first group spilled
$holder->query_safe("SELECT pg_advisory_lock($GATE_LOCK)");
$q = start_query($node, $incset,
	"SELECT count(*) FROM ($incq OFFSET 0) s WHERE $gate");
$pid = wait_for_lock_waiter($node);
is($node->safe_psql('postgres',
		"SELECT node, phase, rows > 0, runs >= 1 FROM compspill_activity WHERE pid = $pid"),
	'incremental sort|returning rows|t|t',
	'an incremental sort shows as such, returning the rows of a group that spilled');
$holder->query_safe("SELECT pg_advisory_unlock($GATE_LOCK)");
($qrc) = finish_query($q);
is($qrc, 0, 'it finishes');

# a recursive union's store, stalled in its second iteration once it
# has spilled
$holder->query_safe("SELECT pg_advisory_lock($GATE_LOCK)");
$q = start_query($node, $spill,
	"WITH RECURSIVE w(n, d, s) AS (SELECT g, 0, repeat('r', 100) "
	  . "FROM generate_series(1, 20000) g UNION ALL SELECT n, d + 1, s FROM w "
	  . "WHERE d < 2 AND (d = 0 OR n <> 5000 OR $gate)) SELECT count(*) FROM w");
$pid = wait_for_lock_waiter($node);
is($node->safe_psql('postgres',
		"SELECT phase, rows > 20000, file_size > 0 FROM compspill_activity "
		  . "WHERE pid = $pid AND node = 'recursive union'"),
	'storing rows|t|t',
	'a recursive union\'s store shows as storing rows, past its first iteration');
$holder->query_safe("SELECT pg_advisory_unlock($GATE_LOCK)");
($qrc) = finish_query($q);
is($qrc, 0, 'the recursive query finishes');

# cancelled while shown: its slot is freed
$holder->query_safe("SELECT pg_advisory_lock($GATE_LOCK)");
$q = start_query($node, $spill,
	"SELECT count(*) FROM ($sort OFFSET 0) s WHERE $gate");
$pid = wait_for_lock_waiter($node);
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
($qrc) = finish_query($q);
isnt($qrc, 0, 'a cancelled sort fails');
is($node->safe_psql('postgres', 'SELECT count(*) FROM compspill_activity'),
	0, 'and leaves the view');
$holder->query_safe("SELECT pg_advisory_unlock($GATE_LOCK)");
$holder->quit;

# 300 spilling sorts aborted by an error at their first rows out, each
# caught by BEGIN .. EXCEPTION in one PL/pgSQL loop: the subtransaction's
# abort resets each spill's memory context, which frees its slot, so the
# backend never runs out of its few slots and leaves nothing in the view.
# Half raise their own exception, half fail with a division by zero.
$node->safe_psql('postgres', q{
CREATE FUNCTION cs_boom(id int) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
	IF id % 10 = 0 THEN
		RAISE EXCEPTION 'boom at %', id;
	END IF;
	RETURN id;
END $$});
my $looper = $node->background_psql('postgres');
my $caught = $looper->query_safe(q{
SET work_mem = '64kB';
CREATE TEMP TABLE caught (n int);
DO $$
DECLARE
	n int := 0;
BEGIN
	FOR i IN 1 .. 300 LOOP
		BEGIN
			IF i % 2 = 0 THEN
				PERFORM cs_boom(id) FROM (SELECT id, txt FROM t WHERE id <= 10000 ORDER BY txt) s;
			ELSE
				PERFORM 1 / (id % 10) FROM (SELECT id, txt FROM t WHERE id <= 10000 ORDER BY txt) s;
			END IF;
		EXCEPTION WHEN raise_exception OR division_by_zero THEN
			n := n + 1;
		END;
	END LOOP;
	INSERT INTO caught VALUES (n);
END $$;
SELECT n FROM caught;
});
is($caught, 300, 'a PL/pgSQL loop catches the errors of 300 spilling sorts');
is($node->safe_psql('postgres', 'SELECT count(*) FROM compspill_activity'),
	0, 'after the loop, none of them is left in compspill_activity');
is($looper->query_safe(q{
SELECT max(shown) FROM (
	SELECT CASE WHEN id = 1 THEN
		(SELECT count(*) FROM compspill_activity WHERE pid = pg_backend_pid())
	END AS shown
	FROM (SELECT id, txt FROM t WHERE id <= 10000 ORDER BY txt) s) x;
}), 1, 'and the same backend still shows its next spill');
$looper->quit;

# pg_stat_statements sees compspill's spill I/O as it sees native's: temp
# blocks written and read in BLCKSZ units, as BufFile counts them, and
# with track_io_timing the time; the same statement natively for scale
my $blkq = 'SELECT count(*) FROM (SELECT id, txt FROM t ORDER BY txt DESC, id) s';
$node->safe_psql('postgres',
	'SELECT pg_stat_statements_reset(); SELECT compspill_stats_reset()');
$node->safe_psql('postgres',
	"$spill SET compspill.codec = lz4; SET track_io_timing = on; $blkq");
my $blk = $node->safe_psql('postgres', qq{
SELECT p.temp_blks_written || '|' || ceil(c.written_bytes / current_setting('block_size')::numeric)
       || '|' || (p.temp_blks_read > 0) || '|' || (p.temp_blk_write_time > 0)
       || '|' || (p.temp_blk_read_time > 0)
FROM pg_stat_statements p JOIN compspill_statements c USING (userid, dbid, queryid)
WHERE p.query = '$blkq'});
my ($blk_written, $own_blocks, @blk_rest) = split /\|/, $blk;
ok($blk_written > 0, "pg_stat_statements counts a compspill spill's temp blocks ($blk_written)");
is($blk_written, $own_blocks,
	'temp_blks_written is compspill\'s own bytes written, in blocks');
is(join('|', @blk_rest), 'true|true|true',
	'temp blocks read, and the temp write and read times with track_io_timing');
$node->safe_psql('postgres',
	"$spill SET compspill.enabled = off; SET track_io_timing = on; $blkq");
my $native_blk = $node->safe_psql('postgres',
	"SELECT temp_blks_written FROM pg_stat_statements WHERE query = '$blkq'");
ok($native_blk - $blk_written > $blk_written,
	'natively the same statement writes more temp blocks ('
	  . ($native_blk - $blk_written) . ')');

# A scrollable cursor's Material is read backward while it is still being
# written: the partial last page is flushed for the reader and written
# again, completed, later.  It is counted once: the store is one stream
# that no pass rewrites, so what it wrote is the file's peak exactly.
$node->safe_psql('postgres', 'SELECT compspill_stats_reset()');
$node->safe_psql('postgres', qq{
$spill SET compspill.codec = lz4;
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT a.id, a.txt, b.txt FROM t a JOIN t b USING (id) WHERE a.id <= 30000;
MOVE FORWARD 5000 IN c; MOVE BACKWARD 3000 IN c; MOVE FORWARD 10000 IN c;
MOVE BACKWARD 9000 IN c; MOVE FORWARD ALL IN c;
COMMIT;});
# (compspill_stats, not compspill_statements: a cursor's query may have no
# query identifier of its own)
my ($cur_spills, $cur_written, $cur_peak) = split /\|/,
  $node->safe_psql('postgres',
	"SELECT spills, written_bytes, peak_file_bytes FROM compspill_stats WHERE datname = 'postgres'");
is($cur_spills, 1, "the scrollable cursor's Material is the one spill");
ok(($cur_written // 0) > 0,
	"a scrollable cursor's Material spilled (" . ($cur_written // 0) . " bytes written)");
is($cur_written, $cur_peak,
	'a partial page written again is counted once: written = the file\'s peak');

$node->stop;
done_testing();
