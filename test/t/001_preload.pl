
# test/t/001_preload.pl
#	  compspill loaded through shared_preload_libraries,
#	  session_preload_libraries and LOAD: the plan's Sort becomes a
#	  CompSpill Sort, and a spilling sort returns what native sort returns.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use CompSpillTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $query = 'SELECT id, grp, price, ts, txt FROM t ORDER BY txt, id';
my $spill = "SET work_mem = '1MB';";

# --- shared_preload_libraries ---
my $node = compspill_node('main', preload => 'shared');
make_words_table($node, 't', 200_000);

like(
	explain_text($node, $spill, $query),
	qr/Custom Scan \(CompSpill Sort\)/,
	'shared_preload_libraries: the plan has a CompSpill Sort');

my $analyze = explain_text($node, $spill, $query, 1);
note $analyze;
like(
	$analyze,
	qr/Sort Method: external merge/,
	'shared_preload_libraries: the sort spills');
like($analyze, qr/codec=auto/, 'the default codec is auto');

my $native = sorted_md5($node, "$spill SET compspill.enabled = off;", $query);
like($native, qr/^[0-9a-f]{32}\|200000$/, 'native sort returns all rows');

unlike(
	explain_text($node, "$spill SET compspill.enabled = off;", $query),
	qr/CompSpill/,
	'compspill.enabled = off: the plan keeps the native Sort');

is(sorted_md5($node, $spill, $query),
	$native, 'shared_preload_libraries: compspill (auto) returns what native sort returns');

is(sorted_md5($node, "$spill SET compspill.codec = zstd;", $query),
	$native, 'shared_preload_libraries: compspill (zstd) returns what native sort returns');

# the version the library reports is the one compspill.control installs
$node->safe_psql('postgres', 'CREATE EXTENSION compspill');
my $extversion = $node->safe_psql('postgres',
	"SELECT extversion FROM pg_extension WHERE extname = 'compspill'");
like(
	$node->safe_psql('postgres', 'SELECT compspill_version()'),
	qr/^compspill \Q$extversion\E \(lz4 [0-9.]+, zstd [0-9.]+\)$/,
	"CREATE EXTENSION: compspill_version() answers, naming $extversion");

# --- not loaded, then LOAD ---
$node->adjust_conf('postgresql.conf', 'shared_preload_libraries', "''");
$node->restart;

unlike(
	explain_text($node, $spill, $query),
	qr/CompSpill/,
	'library not loaded: the plan keeps the native Sort');

like(
	explain_text($node, "LOAD 'compspill'; $spill", $query),
	qr/Custom Scan \(CompSpill Sort\)/,
	'LOAD: the plan has a CompSpill Sort');

is(sorted_md5($node, "LOAD 'compspill'; $spill", $query),
	$native, 'LOAD: compspill returns what native sort returns');

# --- session_preload_libraries ---
$node->append_conf('postgresql.conf',
	"session_preload_libraries = 'compspill'\n");
$node->restart;

like(
	explain_text($node, $spill, $query),
	qr/Custom Scan \(CompSpill Sort\)/,
	'session_preload_libraries: the plan has a CompSpill Sort');

is(sorted_md5($node, $spill, $query),
	$native, 'session_preload_libraries: compspill returns what native sort returns');

is(join(',', temp_files($node)), '', 'no temporary file is left behind');

$node->stop;
unlike(
	slurp_file($node->logfile),
	qr/was terminated by signal|TRAP:/,
	'no backend crashed');

done_testing();
