
# test/t/003_temp_file_limit.pl
#	  temp_file_limit applies to compspill's spill file and counts its
#	  compressed bytes; a sort stopped by it leaves nothing in pgsql_tmp.

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
make_words_table($node, 't', 300_000);

my $query = 'SELECT id, grp, price, ts, txt FROM t ORDER BY txt, id';
my $spill = "SET work_mem = '4MB';";

# Size in bytes of the temporary files logged by the sort run with $setup,
# and its md5.
sub spill_size
{
	my ($setup) = @_;
	my $offset = -s $node->logfile;
	my $md5 = sorted_md5($node, $setup, $query);
	my $log = substr(slurp_file($node->logfile), $offset);
	my $size = 0;

	$size += $1 while $log =~ /temporary file: path "[^"]+", size (\d+)/g;
	return ($md5, $size);
}

my ($native_md5, $native_size) =
  spill_size("$spill SET compspill.enabled = off;");
my ($comp_md5, $comp_size) = spill_size("$spill SET compspill.codec = zstd;");
is($comp_md5, $native_md5, 'compspill returns what native sort returns');
ok($native_size > 0 && $comp_size > 0, 'both sorts spill');
note "native spills $native_size bytes, compspill (zstd) $comp_size bytes";

# A limit far below what the sort needs: the sort fails with the server's
# own error, and its file is gone.
my ($ret, $out, $err) = $node->psql(
	'postgres',
	"$spill SET temp_file_limit = '1MB'; $query;",
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
isnt($ret, 0, 'temp_file_limit = 1MB: the sort fails');
like(
	$err,
	qr/ERROR:  53400: temporary file size exceeds "?temp_file_limit"? \(1024kB\)/,
	'temp_file_limit = 1MB: "temporary file size exceeds temp_file_limit"');
ok(wait_until('pgsql_tmp to be empty', sub { !temp_files($node) }),
	'temp_file_limit: pgsql_tmp is empty after the error');

# The same with zstd and direct I/O asked for.
($ret, $out, $err) = $node->psql(
	'postgres',
	"$spill SET compspill.codec = zstd; SET compspill.enable_dio = on;"
	  . " SET temp_file_limit = '1MB'; $query;",
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like(
	$err,
	qr/ERROR:  53400: temporary file size exceeds "?temp_file_limit"?/,
	'temp_file_limit with zstd and direct I/O: the sort fails');
ok(wait_until('pgsql_tmp to be empty', sub { !temp_files($node) }),
	'temp_file_limit with zstd: pgsql_tmp is empty after the error');

# A limit between compspill's size (zstd) and native's: the limit counts the
# compressed bytes, so native sort fails and compspill does not.
my $limit_kb = int($comp_size * 1.25 / 1024) + 64;
SKIP:
{
	skip "compspill's file ($comp_size) is not 1.25x smaller than native's", 3
	  unless $limit_kb * 1024 < $native_size;

	($ret, $out, $err) = $node->psql('postgres',
		"$spill SET compspill.enabled = off; SET temp_file_limit = ${limit_kb};"
		  . " $query;");
	like(
		$err,
		qr/temporary file size exceeds "?temp_file_limit"?/,
		"temp_file_limit = ${limit_kb}kB: native sort fails");
	is( sorted_md5(
			$node,
			"$spill SET compspill.codec = zstd; SET temp_file_limit = ${limit_kb};",
			$query),
		$native_md5,
		"temp_file_limit = ${limit_kb}kB: compspill sorts, and returns what native sort returns"
	);
	ok(wait_until('pgsql_tmp to be empty', sub { !temp_files($node) }),
		'pgsql_tmp is empty');
}

done_testing();
