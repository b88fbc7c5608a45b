
# test/t/012_citus.pl
#	  compspill on every node of a Citus cluster: a coordinator and two
#	  workers on this machine, each with shared_preload_libraries = 'citus,
#	  compspill'.
#
# First the load order: Citus refuses to load after a library that set the
# planner hook, so 'compspill, citus' stops the server at startup with
# Citus's message and hint, and 'citus, compspill' starts.  Then distributed
# tables (hash-distributed on grp, four shards over the two workers; one
# co-located with them; a table of eight tenants for router queries) and a
# reference table, and queries whose sorts and stores spill at work_mem =
# 1MB on the workers (each shard's task), on the coordinator (above Custom
# Scan (Citus Adaptive), in a recursively planned subplan, in a local task
# on a reference table's placement), or both.  For each query:
#
#  - with compspill.enabled = off on every node (ALTER SYSTEM, reload) the
#	 plan, every task's included (citus.explain_all_tasks), has no CompSpill
#	 node, and the rows, in the query's total order, give native's md5;
#  - with compspill.enabled = on, the md5 is the same;
#  - EXPLAIN (ANALYZE, FORMAT JSON) with citus.explain_all_tasks shows the
#	 CompSpill nodes the query is about on the coordinator and in every
#	 task of each worker, and that they spilled (their "Spill Codec" with an
#	 external sort method or "Storage": "Disk", as sql/setup.sql's
#	 cs_node_mode reads them);
#  - compspill_stats on each node counts new spills where its EXPLAIN
#	 showed spilling nodes, and none where it showed none.
#
# Citus's Custom Scan (Citus Adaptive) has no custom_plans (its distributed
# plan is in custom_private, which compspill does not read), so compspill's
# walk into a CustomScan's custom_plans finds nothing under it; the plans
# Citus makes itself, for the subplans it plans recursively and for the
# tasks it runs locally, go through the planner hook and are rewritten there
# as whole statements.  A prepared statement run past the plan cache's
# switch to a generic plan (copyObject of the plan, Citus's node inside
# compspill's) checks that this survives the plan cache.
#
# Skipped, with the reason, when Citus is not installed for the server
# (test/build-citus.sh installs it; test/run-tests.sh runs it first).

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use CompSpillTAP;
use Digest::MD5 qw(md5_hex);
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $pkglibdir = `pg_config --pkglibdir`;
chomp $pkglibdir;
plan skip_all =>
  "Citus is not installed for this server ($pkglibdir/citus.so; test/build-citus.sh builds it)"
  unless -f "$pkglibdir/citus.so";

my $conf = qq{
max_parallel_workers_per_gather = 0
jit = off
autovacuum = off
work_mem = '1MB'
max_connections = 100
max_prepared_transactions = 20
citus.node_conninfo = 'sslmode=disable'
citus.max_cached_conns_per_worker = 0
citus.enable_statistics_collection = off
log_min_messages = warning
};

# Make a node with citus and compspill preloaded in the given order.
sub citus_node
{
	my ($name, $order) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);

	$node->init;
	$node->append_conf('postgresql.conf', $conf);
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = '$order'\n");
	# the coordinator's connections to itself (intermediate results): by
	# the unix socket directory too, not "localhost"
	$node->append_conf('postgresql.conf',
		"citus.local_hostname = '" . $node->host . "'\n");
	return $node;
}

# --- load order ---
my $coord = citus_node('coordinator', 'compspill, citus');
my $ok = $coord->start(fail_ok => 1);
ok(!$ok, "shared_preload_libraries = 'compspill, citus': the server does not start");
my $log = slurp_file($coord->logfile);
like($log, qr/FATAL:  Citus has to be loaded first/,
	'the log has Citus\'s FATAL "Citus has to be loaded first"');
like(
	$log,
	qr/HINT:  Place citus at the beginning of shared_preload_libraries\./,
	'with its hint to put citus first');

$coord->adjust_conf('postgresql.conf', 'shared_preload_libraries',
	"'citus, compspill'");
ok($coord->start(fail_ok => 1),
	"shared_preload_libraries = 'citus, compspill': the server starts");

my @workers = map {
	my $w = citus_node("worker$_", 'citus, compspill');
	$w->start;
	$w
} (1, 2);
my @nodes = ($coord, @workers);
my %name_of_port = map { $_->port => $_->name } @nodes;

foreach my $node (@nodes)
{
	$node->safe_psql('postgres',
		'CREATE EXTENSION citus; CREATE EXTENSION compspill;');
}
like(
	$coord->safe_psql('postgres', 'SELECT citus_version()'),
	qr/^Citus \d+\.\d+/,
	'CREATE EXTENSION citus');
# run-tests.sh reports this line (it goes to stderr, shown without --verbose)
diag(
	'Citus cluster test: PostgreSQL '
	  . $coord->safe_psql('postgres', 'SHOW server_version')
	  . ', Citus '
	  . $coord->safe_psql('postgres',
		q{SELECT substring(citus_version() FROM '^Citus ([0-9.]+)')})
	  . ', '
	  . $coord->safe_psql('postgres', 'SELECT compspill_version()'));

# nodes by unix socket directory and port (TAP nodes listen on no TCP port)
my $host = $coord->host;
$coord->safe_psql('postgres',
	"SELECT citus_set_coordinator_host('$host', " . $coord->port . ')');
$coord->safe_psql('postgres', "SELECT citus_add_node('$host', " . $_->port . ')')
  foreach @workers;
is( $coord->safe_psql(
		'postgres',
		'SELECT count(*) FROM citus_get_active_worker_nodes()'),
	'2',
	'the coordinator has two active workers');

# --- data ---
make_words_table($coord, 'src', 240_000);
$coord->safe_psql(
	'postgres', q{
CREATE TABLE t (LIKE src);
SELECT create_distributed_table('t', 'grp', shard_count := 4);
INSERT INTO t SELECT * FROM src;

CREATE TABLE t2 (grp int, id int, note text);
SELECT create_distributed_table('t2', 'grp', colocate_with := 't');
INSERT INTO t2 SELECT grp, id, left(txt, 20) || ' ' || id FROM src WHERE id % 2 = 0;

CREATE TABLE t_ins (LIKE src);
SELECT create_distributed_table('t_ins', 'grp', colocate_with := 't');

CREATE TABLE events (tenant int, id int, ts timestamptz, txt text);
SELECT create_distributed_table('events', 'tenant', shard_count := 4);
INSERT INTO events SELECT 1 + id % 4, id, ts, txt || ' ' || txt FROM src WHERE id <= 160000;

CREATE TABLE ref (id int, parent int, txt text);
SELECT create_reference_table('ref');
INSERT INTO ref SELECT id, id / 4, txt FROM src WHERE id <= 120000;

ANALYZE t; ANALYZE t2; ANALYZE events; ANALYZE ref;
});
my %placements;
foreach my $row (
	split /\n/,
	$coord->safe_psql(
		'postgres', q{
SELECT logicalrelid::text || ' ' || nodeport || ' ' || count(*)
FROM pg_dist_shard JOIN pg_dist_shard_placement USING (shardid)
GROUP BY logicalrelid, nodeport ORDER BY 1}))
{
	my ($rel, $port, $n) = split / /, $row;
	$placements{$rel}{ $name_of_port{$port} // $port } = $n;
}
note explain($placements{t});
is_deeply(
	$placements{t},
	{ worker1 => 2, worker2 => 2 },
	't: two shards on each worker');
ok(defined $placements{ref}{coordinator},
	'ref: the coordinator holds a placement of the reference table');

# --- the cluster-wide switch ---

# Set compspill.enabled on every node and wait until each node's new
# sessions (those the coordinator opens to the workers included) see it.
sub set_compspill
{
	my ($value) = @_;

	foreach my $node (@nodes)
	{
		$node->safe_psql('postgres',
			"ALTER SYSTEM SET compspill.enabled = $value; SELECT pg_reload_conf();"
		);
	}
	foreach my $node (@nodes)
	{
		wait_until(
			$node->name . " to reload compspill.enabled = $value",
			sub {
				$node->safe_psql('postgres', 'SHOW compspill.enabled') eq
				  $value;
			}) or die "compspill.enabled did not reload";
	}
	return;
}

# Spills compspill_stats counts on each node, by node name.
sub spill_counts
{
	my %n;

	foreach my $node (@nodes)
	{
		$n{ $node->name } = $node->safe_psql('postgres',
			"SELECT coalesce(sum(spills), 0) FROM compspill_stats WHERE datname = 'postgres'"
		);
	}
	return \%n;
}

# How one node of a JSON plan ran, as sql/setup.sql's cs_node_mode says:
# 'spill', 'memory' or undef (not a sort or store, or did not run).
sub node_mode
{
	my ($n) = @_;

	return 'fallback'
	  if exists $n->{'Tuplesort Fallback'} || exists $n->{'Tuplestore Fallback'};
	my $sm = $n->{'Sort Method'} // '';
	my $st = $n->{'Storage'} // '';
	return 'spill'
	  if ($sm =~ /^external/ || $st eq 'Disk' || exists $n->{'Full-sort Groups'})
	  && exists $n->{'Spill Codec'};
	return 'memory' if $sm ne '' || $st eq 'Memory';
	return undef;
}

# Every plan node of an EXPLAIN (FORMAT JSON) of a Citus query, as [where,
# task, node]: where is 'coordinator' for the nodes the coordinator runs
# (its plan and the distributed subplans it plans itself), else the name of
# the node a task ran on (a local task on the coordinator's placement is
# 'coordinator' too); task numbers the tasks in the order shown.
sub plan_nodes
{
	my ($json) = @_;
	my @found;
	my $ntask = 0;
	my $walk;

	$walk = sub {
		my ($x, $where, $task) = @_;

		if (ref $x eq 'ARRAY')
		{
			$walk->($_, $where, $task) foreach @$x;
		}
		elsif (ref $x eq 'HASH')
		{
			if (exists $x->{'Remote Plan'} && defined $x->{Node})
			{
				my ($port) = $x->{Node} =~ /port=(\d+)/;
				my $w = $name_of_port{ $port // '' } // "port $port";
				$walk->($x->{'Remote Plan'}, $w, ++$ntask);
				return;
			}
			push @found, [ $where, $task, $x ] if exists $x->{'Node Type'};
			foreach my $k (sort keys %$x)
			{
				$walk->($x->{$k}, $where, $task) if ref $x->{$k};
			}
		}
	};
	$walk->($json, 'coordinator', 0);
	return @found;
}

# The md5 of a query's output, in its order, and its row count.
sub result_md5
{
	my ($setup, $query) = @_;
	my $out = $coord->safe_psql('postgres', "$setup\n$query");
	my $n = () = $out =~ /\n/g;

	$n++ if $out ne '';
	return (md5_hex($out), $n);
}

# EXPLAIN (ANALYZE, FORMAT JSON) of a query with every task shown, decoded.
sub explain_json
{
	my ($setup, $query) = @_;
	my $out = $coord->safe_psql(
		'postgres', qq{
$setup
SET citus.explain_all_tasks = on;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, FORMAT JSON) $query});

	return decode_json($out);
}

# Check one query.  %c: name, query (a total order, so that native's rows
# and compspill's are byte for byte the same), setup (SQL run first in the
# same session; Citus sends the SET LOCALs of a transaction to the
# workers' when citus.propagate_set_commands = 'local'), reset (SQL run
# before each execution, for INSERT ... SELECT), result (the query whose
# rows are compared, if not the query itself), expect: [[where, provider],
# ...] the CompSpill nodes that must have spilled, where 'coordinator' (in
# the coordinator's own plan or one of its tasks) or 'tasks' (in every task
# of the Citus Adaptive scans, on whichever node ran it; and each node of
# tasks_on, by default both workers, ran at least one).
sub check_query
{
	my (%c) = @_;
	my $name = $c{name};
	my $setup = $c{setup} // '';
	my $reset = $c{reset} // '';
	my $result = $c{result} // $c{query};
	my $txn = $setup =~ /SET LOCAL/;
	my ($begin, $commit) = $txn ? ('BEGIN;', 'COMMIT;') : ('', '');
	my $run = sub {
		$coord->safe_psql('postgres', "$begin $setup $c{query}; $commit")
		  if $c{result};
		return result_md5("$begin $setup", "$result; $commit") if !$c{result};
		return result_md5('', "$result;");
	};

	# native
	set_compspill('off');
	$coord->safe_psql('postgres', $reset) if $reset;
	my $native_plan = explain_json("$begin $setup", "$c{query}; $commit");
	my @cs = grep { ($_->[2]{'Custom Plan Provider'} // '') =~ /^CompSpill/ }
	  plan_nodes($native_plan);
	is(scalar(@cs), 0,
		"$name: compspill.enabled = off on every node: no CompSpill node in any plan"
	);
	$coord->safe_psql('postgres', $reset) if $reset;
	my ($native, $nrows) = $run->();
	cmp_ok($nrows, '>', 0, "$name: native returns $nrows rows");

	# compspill
	set_compspill('on');
	$coord->safe_psql('postgres', $reset) if $reset;
	my ($mine, $myrows) = $run->();
	is("$mine $myrows", "$native $nrows",
		"$name: compspill's rows equal native's (md5 over $nrows rows)");

	$coord->safe_psql('postgres', $reset) if $reset;
	my $before = spill_counts();
	my $plan = explain_json("$begin $setup", "$c{query}; $commit");
	my $after = spill_counts();
	my @nodes_run = plan_nodes($plan);
	my %spilled_on;    # node name => spilled CompSpill nodes in its plans
	foreach my $n (@nodes_run)
	{
		my ($where, $task, $pn) = @$n;
		my $prov = $pn->{'Custom Plan Provider'} // '';
		next unless $prov =~ /^CompSpill/;
		$spilled_on{$where}++ if (node_mode($pn) // '') eq 'spill';
	}
	foreach my $e (@{ $c{expect} })
	{
		my ($where, $provider) = @$e;
		my @of = grep { ($_->[2]{'Custom Plan Provider'} // '') eq $provider }
		  @nodes_run;
		if ($where eq 'coordinator')
		{
			my @here = grep { $_->[0] eq 'coordinator' } @of;
			my @modes = map { node_mode($_->[2]) // 'none' } @here;
			ok( (grep { $_ eq 'spill' } @modes),
				"$name: the coordinator's $provider spilled ("
				  . (join('/', @modes) || 'no such node') . ')');
		}
		else
		{
			my %tasks;    # "where task" => spilled?
			foreach my $n (@of)
			{
				next if $n->[0] eq 'coordinator' && $n->[1] == 0;
				my $key = "$n->[0] $n->[1]";
				$tasks{$key} ||= 0;
				$tasks{$key} = 1 if (node_mode($n->[2]) // '') eq 'spill';
			}
			my @all_tasks = do {
				my %seen;
				grep { !$seen{$_}++ } map { "$_->[0] $_->[1]" }
				  grep { $_->[1] > 0 } @nodes_run;
			};
			my @spilled = grep { $tasks{$_} } @all_tasks;
			my %by_worker;
			$by_worker{ (split / /, $_)[0] }++ foreach @spilled;
			my $want = $c{tasks_on} // [ map { $_->name } @workers ];
			my $names = join(', ', map { "$_: " . ($by_worker{$_} // 0) } sort keys %by_worker);
			ok( @all_tasks > 0
				  && @spilled == @all_tasks
				  && !(grep { !$by_worker{$_} } @$want),
				"$name: a $provider spilled in every task ("
				  . scalar(@spilled) . ' of '
				  . scalar(@all_tasks)
				  . " tasks; on $names)");
		}
	}

	# compspill_stats agrees with the EXPLAIN ANALYZE on where something
	# spilled
	foreach my $node (@nodes)
	{
		my $nm = $node->name;
		my $delta = $after->{$nm} - $before->{$nm};
		if ($spilled_on{$nm})
		{
			cmp_ok($delta, '>', 0,
				"$name: compspill_stats on $nm counts $delta new spills");
		}
		else
		{
			is($delta, 0,
				"$name: compspill_stats on $nm counts no spill, as its plans show none"
			);
		}
	}
	note "$name: EXPLAIN ANALYZE (compspill):\n"
	  . JSON::PP->new->canonical->pretty->encode($plan)
	  if $ENV{COMPSPILL_CITUS_VERBOSE};
	return;
}

my $local = "SET LOCAL citus.propagate_set_commands = 'local';";

check_query(
	name => 'distributed ORDER BY',
	query => 'SELECT id, grp, price, ts, txt FROM t ORDER BY txt, id',
	expect => [ [ 'coordinator', 'CompSpill Sort' ] ]);

check_query(
	name => 'window partitioned by the distribution column',
	query => q{SELECT grp, id, txt,
  row_number() OVER w AS rn, sum(price) OVER w AS running
FROM t WINDOW w AS (PARTITION BY grp ORDER BY txt, id)
ORDER BY grp, rn},
	expect => [
		[ 'tasks', 'CompSpill Sort' ],
		[ 'coordinator', 'CompSpill Sort' ]
	]);

check_query(
	name => 'window not partitioned by the distribution column',
	query => q{SELECT id, txt, rank() OVER (PARTITION BY id % 97 ORDER BY txt, id) AS r
FROM t ORDER BY id},
	expect => [ [ 'coordinator', 'CompSpill Sort' ] ]);

check_query(
	name => 'merge join of co-located tables',
	setup => "$local SET LOCAL enable_hashjoin = off; SET LOCAL enable_nestloop = off;",
	query => q{SELECT t.grp, t.id, t.txt, t2.note
FROM t JOIN t2 ON t2.grp = t.grp AND t2.id = t.id ORDER BY t.id},
	expect => [
		[ 'tasks', 'CompSpill Sort' ],
		[ 'coordinator', 'CompSpill Sort' ]
	]);

check_query(
	name => 'DISTINCT by sorting',
	setup => "$local SET LOCAL enable_hashagg = off;",
	query => 'SELECT DISTINCT grp, txt FROM t ORDER BY txt, grp',
	expect => [
		[ 'tasks', 'CompSpill Sort' ],
		[ 'coordinator', 'CompSpill Sort' ]
	]);

check_query(
	name => 'GROUP BY by sorting',
	setup => "$local SET LOCAL enable_hashagg = off;",
	query =>
	  'SELECT txt, count(*), sum(price) FROM t GROUP BY txt ORDER BY txt',
	expect => [
		[ 'tasks', 'CompSpill Sort' ],
		[ 'coordinator', 'CompSpill Sort' ]
	]);

check_query(
	name => 'materialized CTE in a router query',
	query => q{WITH c AS MATERIALIZED (SELECT id, ts, txt FROM events WHERE tenant = 3)
SELECT a.id, a.txt, b.ts FROM c a JOIN c b ON b.id = a.id + 4 WHERE a.id % 3 = 0
ORDER BY a.id},
	tasks_on => [],
	expect => [ [ 'tasks', 'CompSpill CTE Scan' ] ]);

# Citus plans this CTE by itself, into an intermediate result that it
# keeps in its own files (not a CTE Scan): what compspill has there is the
# coordinator's sorts
check_query(
	name => 'materialized CTE of a distributed table',
	query => q{WITH c AS MATERIALIZED (SELECT grp, id, txt FROM t)
SELECT a.id, a.txt, b.grp FROM c a JOIN c b ON b.id = a.id + 1 ORDER BY a.id},
	expect => [ [ 'coordinator', 'CompSpill Sort' ] ]);

# a reference table's query runs as a task on the coordinator's placement
check_query(
	name => 'materialized CTE on the coordinator',
	query => q{WITH c AS MATERIALIZED (SELECT id, parent, txt FROM ref)
SELECT a.id, a.txt, b.id AS child FROM c a JOIN c b ON b.parent = a.id
ORDER BY a.id, child},
	tasks_on => ['coordinator'],
	expect => [ [ 'coordinator', 'CompSpill CTE Scan' ] ]);

check_query(
	name => 'recursive CTE on the coordinator',
	query => q{WITH RECURSIVE r(id, depth, path) AS (
  SELECT id, 1, txt FROM ref WHERE parent = 0
  UNION ALL
  SELECT c.id, r.depth + 1, left(r.path, 40) || ' / ' || c.txt
  FROM ref c JOIN r ON c.parent = r.id)
SELECT id, depth, path FROM r ORDER BY id},
	tasks_on => ['coordinator'],
	expect => [
		[ 'tasks', 'CompSpill Recursive Union' ],
		[ 'tasks', 'CompSpill CTE Scan' ]
	]);

check_query(
	name => 'INSERT ... SELECT with ORDER BY',
	reset => 'TRUNCATE t_ins',
	query => 'INSERT INTO t_ins SELECT * FROM t ORDER BY txt, id',
	result => 'SELECT * FROM t_ins ORDER BY id',
	expect => [ [ 'tasks', 'CompSpill Sort' ] ]);

check_query(
	name => 'router query',
	query => 'SELECT id, ts, txt FROM events WHERE tenant = 2 ORDER BY txt, id',
	tasks_on => [],
	expect => [ [ 'tasks', 'CompSpill Sort' ] ]);

# --- the plan cache: a prepared statement's plan, run again ---
set_compspill('on');
my $pq = 'SELECT id, grp, txt FROM t WHERE grp < 500 ORDER BY txt, id';
my ($want) = result_md5('SET compspill.enabled = off;', "$pq;");
like(
	$coord->safe_psql(
		'postgres', "PREPARE q AS $pq;\nEXPLAIN (COSTS OFF) EXECUTE q;"),
	qr/Custom Scan \(CompSpill Sort\).*Custom Scan \(Citus Adaptive\)/s,
	'prepared statement: a CompSpill Sort over Custom Scan (Citus Adaptive)');
my ($got) = result_md5("PREPARE q AS $pq;\n" . ("EXECUTE q \\g /dev/null\n" x 6),
	'EXECUTE q;');
is($got, $want,
	"prepared statement, its cached plan run seven times: the rows equal native's");

done_testing();
