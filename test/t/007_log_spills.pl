#
# 007_log_spills.pl
#	  compspill.log_spills: one LOG line per spilled node, named for it,
#	  with its figures and the statement, above the threshold only; and
#	  what it logs agrees with EXPLAIN ANALYZE of the same run.
#
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use CompSpillTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = compspill_node('main', preload => 'shared');
make_words_table($node, 't', 100_000);

my $sort = 'SELECT id, grp, price, ts, txt FROM t ORDER BY txt, id';
my $spill = "SET work_mem = '1MB';";

# Run $sql and return what the server logged meanwhile.
sub logged
{
	my ($sql) = @_;
	my $offset = -s $node->logfile;

	$node->safe_psql('postgres', $sql);
	$node->safe_psql('postgres', 'SELECT 1');	# the log line is flushed
	return substr(slurp_file($node->logfile), $offset);
}

my $line =
  qr/LOG:  (?:00000: )?compspill sort spill: (\d+) rows, (\d+) runs, (\d+) merge passes, (\d+) kB before encoding, (\d+) kB written \(ratio [\d.]+\), file peak (\d+) kB, memory peak (\d+) kB/;

# off by default
unlike(logged("$spill SELECT count(*) FROM ($sort OFFSET 0) s"),
	qr/compspill .* spill:/, 'nothing is logged by default');

# 0: every spill, with its detail and the statement
my $log = logged(
	"$spill SET compspill.log_spills = 0; SELECT count(*) FROM ($sort OFFSET 0) s");
like($log, $line, 'log_spills = 0 logs the sort');
like(
	$log,
	qr/compspill sort spill:[^\n]*\n[^\n]*DETAIL:  Codec auto: frames none=\d+, lz4=\d+, zstd=\d+, stored raw=\d+; direct I\/O off; encryption off; write [\d.]+ ms, read [\d.]+ ms\.\n(?:[^\n]*LOCATION:[^\n]*\n)?[^\n]*STATEMENT:  [^\n]*SELECT count\(\*\) FROM \(SELECT id/,
	'the line has the frames in its detail and the statement under it');
my ($rows) = $log =~ $line;
is($rows, 100000, 'the line counts every row spilled');

# the figures are EXPLAIN ANALYZE's for the same run
my $offset = -s $node->logfile;
my $plan = $node->safe_psql('postgres',
	"$spill SET compspill.log_spills = 0; SET compspill.codec = lz4; "
	  . "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $sort");
$node->safe_psql('postgres', 'SELECT 1');
$log = substr(slurp_file($node->logfile), $offset);
my @fig = $log =~ $line;
my ($disk) = $plan =~ /Sort Method: external merge  Memory: \d+kB  Disk: (\d+)kB/;
my ($runs, $passes) =
  $plan =~ /Spill: codec=lz4  direct I\/O=off  encryption=off  runs=(\d+)  merge passes=(\d+)/;
ok(@fig && defined $disk, 'the log line and the EXPLAIN of one run are both there');
is($fig[4], $disk, 'kB written in the log line = Disk in EXPLAIN');
is("$fig[1]/$fig[2]", "$runs/$passes", 'runs and merge passes agree with EXPLAIN');

# a threshold: logged at the size written, not above it
my $count_sort = "SELECT count(*) FROM ($sort OFFSET 0) s";
my $kb = (logged("$spill SET compspill.codec = lz4; SET compspill.log_spills = 0; $count_sort") =~ $line)[4];
like(
	logged("$spill SET compspill.codec = lz4; SET compspill.log_spills = '${kb}kB'; "
		  . "SELECT count(*) FROM ($sort OFFSET 0) s"),
	$line, "log_spills = ${kb}kB logs a spill that wrote ${kb} kB");
unlike(
	logged("$spill SET compspill.codec = lz4; SET compspill.log_spills = '"
		  . ($kb + 1)
		  . "kB'; SELECT count(*) FROM ($sort OFFSET 0) s"),
	qr/compspill .* spill:/, 'one kB more logs nothing');
unlike(
	logged("$spill SET compspill.log_spills = -1; SELECT count(*) FROM ($sort OFFSET 0) s"),
	qr/compspill .* spill:/, 'log_spills = -1 logs nothing');

# a sort that fits in memory is not a spill
unlike(
	logged("SET work_mem = '64MB'; SET compspill.log_spills = 0; "
		  . "SELECT count(*) FROM ($sort OFFSET 0) s"),
	qr/compspill .* spill:/, 'an in-memory sort logs nothing');

# a Material's store that spilled, and a CTE's
$node->safe_psql('postgres',
	'CREATE TABLE o3 AS SELECT g AS id FROM generate_series(1, 3) g; ANALYZE o3');
like(
	logged("$spill SET enable_hashjoin = off; SET enable_mergejoin = off; "
		  . "SET compspill.log_spills = 0; "
		  . "SELECT count(*) FROM o3 LEFT JOIN t ON t.grp >= o3.id * 300 AND t.txt > ''"),
	qr/LOG:  (?:00000: )?compspill material spill: 100000 rows, 1 runs, 0 merge passes/,
	'a spilled Material logs its line');
like(
	logged("$spill SET compspill.log_spills = 0; "
		  . "WITH c AS MATERIALIZED (SELECT * FROM t) "
		  . "SELECT count(*) FROM c a JOIN c b ON a.id = b.id"),
	qr/LOG:  (?:00000: )?compspill CTE spill: 100000 rows, 1 runs, 0 merge passes/,
	'a spilled CTE store logs its line');

# an Incremental Sort whose groups spill: one line for the node, named
# for it, with the rows of every group that spilled; its result native's
make_groups_table($node, 'inc', 't', 20000);
my $incq = 'SELECT a, txt, id FROM inc ORDER BY a, txt, id';
my $incset = "$spill $INCSORT_SETUP";
$offset = -s $node->logfile;
my $inc_md5 = sorted_md5($node,
	"$incset SET compspill.log_spills = 0; SET compspill.enabled = on;", $incq);
$node->safe_psql('postgres', 'SELECT 1');
$log = substr(slurp_file($node->logfile), $offset);
is($inc_md5,
	sorted_md5($node, "$incset SET compspill.enabled = off;", $incq),
	'the incremental sort returns what native returns');
my @inc_lines = $log =~
  /LOG:  (?:00000: )?compspill incremental sort spill: (\d+) rows, (\d+) runs/g;
is(scalar(@inc_lines), 2, 'one line is logged for the incremental sort');
ok(@inc_lines && $inc_lines[0] > 90000 && $inc_lines[1] >= 5,
	'with the rows and runs of its groups ('
	  . join(' rows, ', @inc_lines) . ' runs)');
unlike($log, qr/compspill sort spill:/,
	'it is not logged as a sort');
my $inc_plan = $node->safe_psql('postgres',
	"$incset EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $incq");
like($inc_plan,
	qr/Custom Scan \(CompSpill Incremental Sort\)[^\n]*\n(?:[^\n]*\n)*?\s+Spill: codec=/,
	'the plan has the CompSpill Incremental Sort, and it spilled');

# only a superuser may change it
$node->safe_psql('postgres', 'CREATE ROLE plain LOGIN');
my ($rc, $out, $err) = $node->psql('postgres', 'SET compspill.log_spills = 0',
	extra_params => [ '-U', 'plain' ]);
like($err, qr/permission denied to set parameter "compspill.log_spills"/,
	'an ordinary user cannot change it');

$node->stop;
done_testing();
