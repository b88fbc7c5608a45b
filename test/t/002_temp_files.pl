
# test/t/002_temp_files.pl
#	  A compspill spill is an ordinary PostgreSQL temporary file: one per
#	  sort, logged by log_temp_files, counted in pg_stat_database, put in
#	  temp_tablespaces, and smaller than native sort's file.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use CompSpillTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = compspill_node(
	'main',
	preload => 'shared',
	conf => "log_temp_files = 0\n");
make_words_table($node, 't', 200_000);

my $query = 'SELECT id, grp, price, ts, txt FROM t ORDER BY txt, id';
my $spill = "SET work_mem = '4MB'; SET compspill.codec = lz4;";

# Run the sort with $setup; return its md5 and the temporary files it
# logged, as [path, size] pairs.
sub run_logged
{
	my ($setup) = @_;
	my $offset = -s $node->logfile;
	my $md5 = sorted_md5($node, $setup, $query);
	my @files;

	# log_temp_files lines are written when a file is deleted, which is
	# before the query returns; allow for a slow log all the same
	wait_until(
		'the STATEMENT line after the temporary file lines',
		sub {
			my $log = substr(slurp_file($node->logfile), $offset);
			return 0 unless $log =~ /STATEMENT:/;
			@files = ();
			while ($log =~
				/temporary file: path "([^"]+)", size (\d+)/g)
			{
				push @files, [ $1, $2 ];
			}
			return 1;
		});
	return ($md5, @files);
}

my ($files0, $bytes0) = db_temp_stats($node);

# native sort
my ($native_md5, @native) = run_logged("$spill SET compspill.enabled = off;");
ok(@native >= 1, 'native sort logged its temporary file');
my $native_size = 0;
$native_size += $_->[1] foreach @native;

# compspill
my ($md5, @comp) = run_logged($spill);
is($md5, $native_md5, 'compspill returns what native sort returns');
is(scalar(@comp), 1, 'compspill logged exactly one temporary file');
my $comp_size = @comp ? $comp[0][1] : 0;
like($comp[0][0] // '', qr{^base/pgsql_tmp/pgsql_tmp\d+\.\d+$},
	'the file is in base/pgsql_tmp with the usual name');
ok($comp_size > 0, "compspill's file has data ($comp_size bytes)");
note sprintf('native %d bytes, compspill (lz4) %d bytes: %.2fx smaller',
	$native_size, $comp_size, $comp_size ? $native_size / $comp_size : 0);
ok($comp_size < $native_size,
	"compspill's file ($comp_size) is smaller than native's ($native_size)");

# pg_stat_database counts both; stats reach shared memory when the
# backends exit, so poll
my ($files1, $bytes1);
ok( wait_until(
		'pg_stat_database to count the temporary files',
		sub {
			($files1, $bytes1) = db_temp_stats($node);
			return $files1 >= $files0 + @native + 1
			  && $bytes1 >= $bytes0 + $native_size + $comp_size;
		}),
	'pg_stat_database.temp_files and temp_bytes count the spills');
note "temp_files $files0 -> $files1, temp_bytes $bytes0 -> $bytes1";

# the zstd codec writes an ordinary file too
my ($zmd5, @zstd) = run_logged("$spill SET compspill.codec = zstd;");
is($zmd5, $native_md5, 'compspill (zstd) returns what native sort returns');
is(scalar(@zstd), 1, 'compspill (zstd) logged exactly one temporary file');

# temp_tablespaces
my $tsdir = PostgreSQL::Test::Utils::tempdir_short();
$node->safe_psql('postgres', "CREATE TABLESPACE spill_ts LOCATION '$tsdir'");
my ($tmd5, @ts) = run_logged("$spill SET temp_tablespaces = spill_ts;");
is($tmd5, $native_md5, 'temp_tablespaces: compspill returns the same rows');
is(scalar(@ts), 1, 'temp_tablespaces: one temporary file');
like($ts[0][0] // '', qr{^pg_tblspc/\d+/PG_\d+_\d+/pgsql_tmp/pgsql_tmp},
	'temp_tablespaces: the file is in the temporary tablespace');

is(join(',', temp_files($node)), '', 'no temporary file is left behind');

done_testing();
