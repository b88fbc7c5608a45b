
# 013_parallel_explain.pl
#	  Per-worker figures under Gather Merge, with compspill in
#	  shared_preload_libraries: EXPLAIN ANALYZE of a CompSpill Sort or
#	  Incremental Sort run by parallel workers lists the same workers, in
#	  the same order and the same place, as native Sort and Incremental
#	  Sort do, in text, JSON, YAML and XML, each with compspill's spill
#	  figures; a worker's figures are those of the rows it sorted, and the
#	  leader's and the workers' together are what compspill_stats counted
#	  for the query; a Gather Merge that rescans shows its workers' last
#	  sorts, as native does; a table of per-worker figures too small for the
#	  query says that figures were lost; the leader removes its entries when
#	  the query ends, and when it fails.
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

my $conf = qq{
max_worker_processes = 16
max_parallel_workers = 8
};
my $node = compspill_node('main', preload => 'shared', conf => $conf);

# the rows of parallel.sql: each participant's share spills at 64kB
my $table = q{
CREATE TABLE par (id int, g int, v int, t text) WITH (parallel_workers = 2);
INSERT INTO par SELECT i, i % 50, (i * 7919) % 100003, 'q' || (i * 31 % 4999)
FROM generate_series(1, 100000) i;
CREATE INDEX par_g ON par (g);
ANALYZE par;
CREATE EXTENSION compspill;
};
$node->safe_psql('postgres', $table);

my $par =
	'SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; '
  . 'SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0; '
  . 'SET min_parallel_index_scan_size = 0; '
  . "SET work_mem = '64kB'; ";
my $native = 'SET compspill.enabled = off; ';
my $sortq = 'SELECT * FROM par ORDER BY v, id';
my $incset = $par . 'SET enable_seqscan = off; SET enable_bitmapscan = off; ';
my $incq = 'SELECT * FROM par ORDER BY g, v';
# the Gather Merge is rescanned once per outer row, relaunching its workers
my $rescanset = $par
  . 'SET enable_material = off; SET enable_hashjoin = off; '
  . 'SET enable_mergejoin = off; ';
my $rescanq =
	'SELECT s.i, c.n FROM (VALUES (1), (2), (3)) s(i), LATERAL '
  . '(SELECT count(*) + s.i * 0 AS n FROM '
  . '(SELECT v FROM par ORDER BY v, id OFFSET 0) q) c';

# EXPLAIN ANALYZE $query after $setup in $format, with $extra options
sub explain_out
{
	my ($n, $setup, $query, $format, $extra) = @_;
	$extra = $extra ? ", $extra" : '';
	return $n->safe_psql('postgres',
		    "$setup EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, "
		  . "BUFFERS OFF, FORMAT $format$extra) $query");
}

# The per-worker entries of the sort node in EXPLAIN's output, in order:
# "N:first item" for each, where the first item is what native prints first
# for a worker (its sort method or its first group line; not the method
# itself, which depends on how many rows the worker got in that run).  In text, also
# where they are: each entry says how far it is indented and whether it
# comes after the sort node's line and before its child's.
sub workers_of
{
	my ($out, $format) = @_;
	my @w;

	if ($format eq 'text')
	{
		my @lines = split /\n/, $out;
		my ($node_at, $indent);
		for my $i (0 .. $#lines)
		{
			if ($lines[$i] =~ /^(\s*)->  (Sort|Incremental Sort|Custom Scan \(CompSpill (Incremental )?Sort\)) /)
			{
				$node_at = $i;
				$indent = length($1) + 4;
				next;
			}
			next unless defined $node_at;
			last if $lines[$i] =~ /^\s*->/;
			push @w,
			  sprintf('%d:%s at %d', $2, $3, length($1) - $indent)
			  if $lines[$i] =~
			  /^(\s*)Worker (\d+):  (Sort Method|Full-sort Groups):/;
		}
		return join(', ', @w);
	}
	if ($format eq 'json')
	{
		my $sort = sort_node(decode_json($out)->[0]{Plan});
		for my $wk (@{ $sort->{Workers} // [] })
		{
			push @w, "$wk->{'Worker Number'}:Sort Method"
			  if exists $wk->{'Sort Method'};
			push @w, "$wk->{'Worker Number'}:Full-sort Groups"
			  if exists $wk->{'Full-sort Groups'};
		}
		return join(', ', @w);
	}
	if ($format eq 'yaml')
	{
		while ($out =~
			/- Worker Number: (\d+)\n\s+(Sort Method: "([^"]+)"|Full-sort Groups:)/g)
		{
			push @w, defined $3 ? "$1:Sort Method" : "$1:Full-sort Groups";
		}
		return join(', ', @w);
	}
	while ($out =~
		m{<Worker-Number>(\d+)</Worker-Number>\s*(<Sort-Method>([^<]+)</Sort-Method>|<Incremental-Sort-Groups>)}g)
	{
		push @w, defined $3 ? "$1:Sort Method" : "$1:Full-sort Groups";
	}
	return join(', ', @w);
}

# The sort node (native or compspill's) of a JSON plan
sub sort_node
{
	my ($plan) = @_;
	my $type = $plan->{'Custom Plan Provider'} // $plan->{'Node Type'};

	return $plan if $type =~ /Sort$/;
	foreach my $sub (@{ $plan->{Plans} // [] })
	{
		my $found = sort_node($sub);
		return $found if $found;
	}
	return undef;
}

# Native and compspill list the same workers, in the same order and place,
# in every format; compspill's carry its spill figures.  Each native run
# is compared with the compspill run next to it; a worker that got no rows
# (or too few to spill) in one of them would make them differ, so a few
# attempts are allowed.
sub compare_workers
{
	my ($what, $setup, $query, $min) = @_;

	foreach my $format (qw(text json yaml xml))
	{
		my ($nat, $cs, $out, $n, $spills);
		for my $try (1 .. 5)
		{
			$nat = workers_of(explain_out($node, $setup . $native, $query, $format),
				$format);
			$out = explain_out($node, $setup, $query, $format);
			$cs = workers_of($out, $format);
			$n = () = $nat =~ /\d+:/g;

			# the spill figures of each worker (and the leader's, if it
			# sorted); a worker that started late and got only a few rows
			# sorts them in memory, so that is tried again too
			$spills = () =
				$format eq 'text' ? $out =~ /^\s+Spill: codec=/mg
			  : $format eq 'json' ? $out =~ /"Rows Spilled"/g
			  : $format eq 'yaml' ? $out =~ /Rows Spilled:/g
			  :                     $out =~ /<Rows-Spilled>/g;
			last if $nat eq $cs && $spills >= $n;
		}
		cmp_ok($n, '>=', $min, "$what, $format: native lists $n worker(s)");
		is($cs, $nat, "$what, $format: compspill lists native's workers ($nat)");
		cmp_ok($spills, '>=', $n,
			"$what, $format: each worker's spill figures");
		unlike($out, qr/Worker Figures/, "$what, $format: nothing missing");
	}
}

compare_workers('sort', $par, $sortq, 2);
compare_workers('sort, no leader participation',
	$par . 'SET parallel_leader_participation = off; ', $sortq, 2);
compare_workers('incremental sort', $incset, $incq, 2);
compare_workers('sort under a rescanned Gather Merge', $rescanset, $rescanq, 2);

# VERBOSE: the worker's rows line comes first, then its sort, as native
my $vnat = explain_out($node, $par . $native, $sortq, 'text', 'VERBOSE');
my $vcs = explain_out($node, $par, $sortq, 'text', 'VERBOSE');
my $vpat = qr/Worker (\d+):  actual rows=[\d.]+ loops=1\n\s+Sort Method: /;
my @vn = $vnat =~ /$vpat/g;
my @vc = $vcs =~ /$vpat/g;
is("@vc", "@vn", "VERBOSE text: each worker's rows, then its sort, as native");

# A participant's figures are those of the rows it sorted (each that
# spilled wrote all of its rows to runs); the leader's rows are the node's
# less its workers'.  The leader's and the workers' spills together are
# what compspill_stats counted for the query: one spill each, their runs,
# their rows.
$node->safe_psql('postgres', 'SELECT compspill_stats_reset()');
my $doc = decode_json(explain_out($node, $par, $sortq, 'json', 'VERBOSE'));
my $sort = sort_node($doc->[0]{Plan});
my $leader_rows =
  sprintf('%.0f', $sort->{'Actual Rows'} * $sort->{'Actual Loops'});
my ($spills, $runs, $rows, $nworkers) = (0, 0, 0, 0);
for my $wk (@{ $sort->{Workers} })
{
	$leader_rows -= $wk->{'Actual Rows'};
	next unless exists $wk->{'Sort Method'};
	$nworkers++;
	next unless exists $wk->{'Rows Spilled'};
	is($wk->{'Rows Spilled'}, $wk->{'Actual Rows'},
		"worker $wk->{'Worker Number'} spilled the rows it returned");
	$spills++;
	$runs += $wk->{'Spill Runs'};
	$rows += $wk->{'Rows Spilled'};
}
if (exists $sort->{'Rows Spilled'})
{
	# before 18, Actual Rows is the average per loop rounded to a row
	cmp_ok(abs($sort->{'Rows Spilled'} - $leader_rows),
		'<=', $sort->{'Actual Loops'},
		"the leader spilled the rows it returned ($leader_rows)");
	$spills++;
	$runs += $sort->{'Spill Runs'};
	$rows += $sort->{'Rows Spilled'};
}
cmp_ok($nworkers, '>=', 2, "$nworkers workers' figures");
cmp_ok($spills, '>=', 2, "$spills participants spilled");
is( $node->safe_psql(
		'postgres',
		'SELECT spills || \' \' || runs || \' \' || rows_spilled FROM compspill_stats() '
		  . 'WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())'
	),
	"$spills $runs $rows",
	"they are what compspill_stats counted for the query: $spills spills, $runs runs, $rows rows");

# A table too small for the query: figures are lost, and EXPLAIN says so.
# With room for exactly one query's entries (a watch and two workers), the
# entries of each query must be gone when the next starts, also after one
# that failed.
my $small = compspill_node('small', preload => 'shared',
	conf => $conf . "compspill.max_worker_figures = 2\n");
$small->safe_psql('postgres', $table);
my $out = explain_out($small, $par, $sortq, 'text');
like($out, qr/Worker Figures: some lost, compspill.max_worker_figures is too small/,
	'a table too small: EXPLAIN says figures were lost');
my $shown = () = $out =~ /Worker \d+:  Sort Method/g;
cmp_ok($shown, '<=', 1, "a table too small: $shown worker(s) shown");
$small->stop;
$small->append_conf('postgresql.conf', "compspill.max_worker_figures = 3\n");
$small->start;
for my $i (1 .. 3)
{
	$out = explain_out($small, $par, $sortq, 'text');
	my $w = () = $out =~ /Worker \d+:  Sort Method/g;
	ok($w == 2 && $out !~ /Worker Figures/,
		"run $i in a table with room for one query: both workers shown");
}
my ($ret, $stdout, $stderr) = $small->psql('postgres',
	    $par
	  . 'EXPLAIN (ANALYZE) SELECT 1 / (s.v - s.v) FROM '
	  . "(SELECT * FROM par ORDER BY v, id) s WHERE s.id > 99990");
like($stderr, qr/division by zero/, 'a query that fails under EXPLAIN ANALYZE');
$out = explain_out($small, $par, $sortq, 'text');
my $after = () = $out =~ /Worker \d+:  Sort Method/g;
ok($after == 2 && $out !~ /Worker Figures/,
	'after a failed query its entries are gone: both workers shown');

done_testing();
