#
# 014_tuple_memory.pl
#	  A spilling sort keeps its tuples' memory from one run to the next: it
#	  does not give it back to malloc when a run is written and take it
#	  again for the next one, which costs a fault on every page of every
#	  run (and, where malloc returns the memory to the kernel, a brk or
#	  munmap and a flush of the other CPUs' TLBs per block).
#
# Whether malloc returns freed blocks to the kernel depends on where they
# lie in its heap, so the server runs with glibc's mmap threshold at 16kB:
# every block of the tuple context (a 64th of work_mem, 16kB at 1MB) is
# then mmap'd, and freeing it unmaps it.  A sort that freed its tuple
# blocks after each run would then fault in each page of each run anew,
# about 250 pages per run at 1MB; one that keeps them faults them in once.
# The backend's minor faults are read from /proc/self/stat around the sort,
# in the same session, and counted per run.  The sort's rows are compared
# with native's.
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

plan skip_all => 'needs Linux /proc/self/stat'
  unless -r '/proc/self/stat';

# a quarter of the pages of 1MB: a sort that faults its tuples in anew for
# every run faults about all of them
my $MAX_FAULTS_PER_RUN = 64;

$ENV{GLIBC_TUNABLES} = 'glibc.malloc.mmap_threshold=16384';
my $node = compspill_node('main', preload => 'shared');

$node->safe_psql(
	'postgres', q{
CREATE TABLE tm AS
  SELECT i AS id, md5(i::text) AS t, repeat(md5((i % 97)::text), 6) AS pad
  FROM generate_series(1, 150000) i;
ANALYZE tm;
CREATE FUNCTION minflt() RETURNS bigint LANGUAGE sql AS $$
  SELECT split_part(split_part(pg_read_file('/proc/self/stat'), ') ', 2),
                    ' ', 8)::bigint $$;
});

my $query = 'SELECT * FROM tm ORDER BY t';
my ($native) =
  sorted_md5($node, "SET work_mem = '1MB'; SET compspill.enabled = off;",
	$query);

foreach my $codec ('lz4', 'none', 'zstd')
{
	my $setup = "SET work_mem = '1MB'; SET compspill.codec = $codec;";
	my $out = $node->safe_psql(
		'postgres', qq{
$setup
SELECT minflt() AS before \\gset
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, FORMAT JSON) $query;
SELECT minflt() - :before;
});
	my @lines = split /\n/, $out;
	my $faults = pop @lines;
	my $plan = decode_json(join("\n", @lines))->[0]{Plan};
	my $sort = plan_node($plan, 'CompSpill Sort');
	my $runs = $sort ? $sort->{'Spill Runs'} // 0 : 0;

	ok($runs >= 30, "$codec: the sort spilled in many runs ($runs)");
	my $per_run = $runs > 0 ? $faults / $runs : $faults;
	note sprintf('%s: %d minor faults over %d runs, %.1f a run',
		$codec, $faults, $runs, $per_run);
	cmp_ok($per_run, '<', $MAX_FAULTS_PER_RUN,
		"$codec: the tuples' pages are faulted in once, not once a run");

	my ($got) = sorted_md5($node, $setup, $query);
	is($got, $native, "$codec: the rows are native's");
}

$node->stop;
done_testing();
