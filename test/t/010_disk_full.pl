#
# 010_disk_full.pl
#	  A spill that fills the disk: with temp_tablespaces on a tiny file
#	  system, a sort, a Material and a CTE that need more than it holds
#	  fail with a clean ERROR carrying the system's message and SQLSTATE
#	  53100 (disk_full), for codecs none and lz4, with buffered and direct
#	  I/O, and with encryption; after each, pgsql_tmp is empty, the space
#	  is back on the file system, compspill_temp_space() is zero, and the
#	  same session's next spill, which fits, returns what native PostgreSQL
#	  returns.
#
# The TAP tests run as an unprivileged user, which cannot mount a file
# system, so the file system comes from outside: run-tests.sh (as root)
# mounts one with test/tiny-fs.sh and passes its path in COMPSPILL_TINY_FS.
# Without it the test is skipped.  An ext4 image on a loop device accepts
# O_DIRECT, so direct I/O fills the disk for real; where the file system
# refuses O_DIRECT (tmpfs before Linux 6.6) compspill falls back to
# buffered I/O with a NOTICE, and the test accepts that.
#
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use CompSpillTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $tiny = $ENV{COMPSPILL_TINY_FS} // '';

# kB free on the file system holding $dir
sub free_kb
{
	my ($dir) = @_;
	my @lines = `df -Pk "$dir" 2>/dev/null`;

	return -1 unless @lines >= 2;
	return (split(/\s+/, $lines[-1]))[3];
}

plan skip_all =>
  'COMPSPILL_TINY_FS is not set: the test needs a small file system made '
  . 'by root (test/run-tests.sh does it with test/tiny-fs.sh)'
  if $tiny eq '';
plan skip_all => "COMPSPILL_TINY_FS ($tiny) is not a writable directory"
  unless -d $tiny && -w $tiny;
# the queries below spill about 25MB: the file system must be smaller
my $free_at_start = free_kb($tiny);
plan skip_all =>
  "COMPSPILL_TINY_FS ($tiny) has ${free_at_start}kB free, the test needs 4MB to 16MB"
  if $free_at_start < 4096 || $free_at_start > 16384;

my $node = compspill_node('main', preload => 'shared');
make_words_table($node, 't', 200_000);

# about 140 bytes a row, mostly hex digits, which lz4 hardly compresses:
# 200000 rows are about 25MB to spill with either codec
my $location = "$tiny/010_disk_full.$$";
mkdir $location or die "could not create $location: $!";
$node->safe_psql(
	'postgres', qq{
CREATE EXTENSION compspill;
CREATE TABLE w AS
  SELECT id, md5(id::text) || md5(txt || id) || md5(id || txt) AS h, txt
  FROM t;
ANALYZE w;
CREATE TABLESPACE tiny LOCATION '$location';
});

my $setup = "SET work_mem = '1MB'";

# a sort, a Material (under a NOT IN: every row of w goes into its store)
# and a CTE that need more than the file system holds
my %full = (
	sort => 'SELECT count(*) FROM (SELECT id, h, txt FROM w ORDER BY h OFFSET 0) s',
	material => 'SELECT count(*) FROM generate_series(1, 3) k '
	  . 'WHERE k::text NOT IN (SELECT h || txt FROM w)',
	cte => 'WITH x AS MATERIALIZED (SELECT id, h, txt FROM w) '
	  . 'SELECT count(*) FROM x');

# the same with room (about 3MB): their output in order, as an md5; the
# NOT IN, too large to hash, finds even k early in the store and reads all
# of it for odd k.  The CTE is ordered: w is large enough for synchronized
# scans, and a scan of it stopped by an error makes the next one start
# where it stopped.
my %room = (
	sort => 'SELECT md5(string_agg(s::text, E\'\\n\')), count(*) FROM '
	  . '(SELECT id, h, txt FROM w WHERE id <= 20000 ORDER BY h OFFSET 0) s',
	material => 'SELECT md5(string_agg(k::text, \',\')), count(*) '
	  . 'FROM generate_series(1, 60) k WHERE k::text NOT IN '
	  . '(SELECT CASE WHEN id % 2 = 0 THEN id::text ELSE h || txt END '
	  . 'FROM w WHERE id <= 40000)',
	cte => 'WITH x AS MATERIALIZED '
	  . '(SELECT id, h, txt FROM w WHERE id <= 20000 ORDER BY id) '
	  . 'SELECT md5(string_agg(x::text, E\'\\n\')), count(*) FROM x');

my @kinds = ('sort', 'material', 'cte');
my %node_name = (
	sort => 'CompSpill Sort',
	material => 'CompSpill Material',
	cte => 'CompSpill CTE Scan');
my %spilled = (
	sort => qr/external merge/,
	material => qr/Storage: Disk/,
	cte => qr/Storage: Disk/);
my %native;
foreach my $kind (@kinds)
{
	like(
		explain_text($node, "$setup;", $full{$kind}, 0),
		qr/\Q$node_name{$kind}\E/,
		"$kind: the query that fills the disk runs through $node_name{$kind}");
	my $plan = explain_text($node, "$setup;", $room{$kind}, 1);
	ok($plan =~ /\Q$node_name{$kind}\E/ && $plan =~ $spilled{$kind},
		"$kind: the query with room spills through $node_name{$kind}")
	  or diag $plan;
	$native{$kind} = $node->safe_psql('postgres',
		"$setup; SET compspill.enabled = off; $room{$kind}");
}

my ($s, $pid) = open_session($node);
session_query($s, "$setup; SET temp_tablespaces = tiny");

# A first spill makes the tablespace's pgsql_tmp; the space free after it
# is what every failed spill must give back.  It also tells whether the
# file system takes O_DIRECT.
my ($out, $err) = session_query($s,
	"SET compspill.enable_dio = on; "
	  . "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $room{sort}");
my $dio_works = $out =~ /direct I\/O=on/;
note $dio_works
  ? 'the tiny file system takes O_DIRECT'
  : "the tiny file system refuses O_DIRECT: $err";
my @tmpdirs = glob("$location/PG_*/pgsql_tmp");
is(scalar(@tmpdirs), 1, 'the spill went to the tiny tablespace');
my $free = free_kb($tiny);
note "free on $tiny: ${free}kB";

# Wait up to 5 s for $kb kB to be free on the tiny file system: the file
# is deleted at abort, its blocks are free as soon as no descriptor holds it
sub space_back
{
	my ($kb) = @_;
	my $now;

	foreach (1 .. 50)
	{
		$now = free_kb($tiny);
		return 1 if $now >= $kb;
		usleep(100_000);
	}
	diag "${now}kB free, ${kb}kB expected";
	return 0;
}

sub total
{
	return $node->safe_psql('postgres', 'SELECT compspill_temp_space()');
}

# native sort fails the same way: the yardstick for the SQLSTATE
($out, $err) = session_query($s,
	"SET compspill.enabled = off; $full{sort}; RESET compspill.enabled");
like(
	$err,
	qr/ERROR:  53100: could not write to file "[^"]+": No space left on device/,
	'native sort: ERROR 53100, No space left on device');

# codecs none and lz4 (which hardly compresses the hex digits), buffered
# and direct, and with encryption
my @settings = (
	[ 'none', 'off', 'off' ],
	[ 'none', 'on', 'off' ],
	[ 'lz4', 'off', 'off' ],
	[ 'lz4', 'on', 'off' ],
	[ 'lz4', 'on', 'aes-256-gcm' ]);
foreach my $set (@settings)
{
	my ($codec, $dio, $enc) = @$set;

	foreach my $kind (@kinds)
	{
		my $what = "$kind, codec $codec, enable_dio $dio"
		  . ($enc eq 'off' ? '' : ", encryption $enc");

		session_query($s,
			"SET compspill.codec = $codec; SET compspill.enable_dio = $dio; "
			  . "SET compspill.encryption = '$enc'");
		($out, $err) = session_query($s, $full{$kind});
		like(
			$err,
			qr/ERROR:  53100: could not write to temporary file "pg_tblspc\/\d+\/PG_[^"\/]+\/pgsql_tmp\/pgsql_tmp[^"]+": No space left on device\n/,
			"$what: ERROR 53100 with the system's message");
		is($out, '', "$what: no row comes out");
		unlike($err, qr/direct I\/O is not available/,
			"$what: direct I/O was not refused")
		  if $dio eq 'on' && $dio_works;

		is(join(',', temp_files($node)), '', "$what: pgsql_tmp is empty");
		is(total(), 0, "$what: compspill_temp_space() is zero");
		ok(space_back($free),
			"$what: the file system has its ${free}kB free again");

		($out, $err) = session_query($s, $room{$kind});
		is($out, $native{$kind},
			"$what: the same session's next spill returns native's result");
		unlike($err, qr/ERROR/, "$what: and without an error");
	}
}

# the same session still spills with direct I/O when it has room
($out, $err) = session_query($s,
	"SET compspill.enable_dio = on; "
	  . "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $room{sort}");
like($out, qr/direct I\/O=on/,
	'after all that, the session still spills with direct I/O')
  if $dio_works;
$s->quit;

is(total(), 0, 'at the end nothing is claimed');
$node->safe_psql('postgres', 'DROP TABLESPACE tiny');
$node->stop;
rmdir $location;

done_testing();
