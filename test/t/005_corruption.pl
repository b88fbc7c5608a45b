
# test/t/005_corruption.pl
#	  A spill file damaged while the final merge is reading it makes the
#	  query fail with SQLSTATE XX001 (data_corrupted), never return rows, and
#	  leave nothing in pgsql_tmp.  With compspill.encryption, frames forged
#	  with a valid CRC and frames swapped with each other fail the same way,
#	  caught by their authentication tag.  Row frames
#	  (compspill.frame_kind = row) are damaged the same ways, and forged
#	  with a valid CRC where the row frame check must catch what the CRC
#	  cannot: a row's length word, t_hoff or attribute count.
#
# The sort is held at its first output row by an advisory lock the test
# holds: every run is written and the merge has read only the first blocks
# of each.  The test then overwrites bytes at many places in the file (or
# cuts it to half its size) and lets the query go on.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use CompSpillTAP;
use Fcntl qw(SEEK_SET);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = compspill_node('main', preload => 'shared');
make_words_table($node, 't', 300_000);

my $spill = "SET work_mem = '8MB'";
my $gate = "pg_advisory_xact_lock_shared($GATE_LOCK)::text = ''";
my $sorted = 'SELECT id, grp, price, ts, txt FROM t ORDER BY txt, id';
my $stall_out = "SELECT count(*) FROM ($sorted OFFSET 0) s WHERE $gate";

# The test is only meaningful if the final merge reads the runs that run
# formation wrote: check there is a single merge pass.
my $analyze = $node->safe_psql('postgres',
	"$spill; EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $sorted");
note $analyze;
like($analyze, qr/CompSpill Sort/, 'the query sorts with compspill');
like($analyze, qr/runs=([2-9]|\d\d+)\s+merge passes=1\b/,
	'the sort writes several runs and merges them in one pass');

my $expected = $node->safe_psql('postgres', 'SELECT count(*) FROM t');

# Overwrite 4 kB at 16 places spread over the middle 90% of the file.
sub scribble
{
	my ($path) = @_;
	my $size = -s $path;

	open(my $fh, '+<', $path) or die "could not open $path: $!";
	binmode $fh;
	for my $i (0 .. 15)
	{
		my $off = int($size * (0.05 + 0.9 * $i / 15));
		$off -= 4096 if $off + 4096 > $size;
		$off = 0 if $off < 0;
		sysseek($fh, $off, SEEK_SET) or die "seek: $!";
		syswrite($fh, pack('C*', map { ($_ * 37 + $i) & 0xff } 1 .. 4096))
		  or die "write: $!";
	}
	close($fh) or die "close: $!";
	return;
}

# Cut the file to half its size.
sub halve
{
	my ($path) = @_;

	truncate($path, int((-s $path) / 2)) or die "could not truncate $path: $!";
	return;
}

my $holder = $node->background_psql('postgres');

# Run the stalled sort with $setup, damage its file with $damage while it
# waits, release it, and check how it ends.
# Start $query with the settings $setup, wait until it blocks at the gate
# with its spill file written, damage the file, let it go on: it must fail
# with XX001 and leave pgsql_tmp empty.
sub damaged_run
{
	my ($name, $setup, $query, $damage) = @_;

	$holder->query_safe("SELECT pg_advisory_lock($GATE_LOCK)");
	my $q = start_query($node, @$setup, $query);
	my $pid = wait_for_lock_waiter($node);
	ok($pid, "$name: the query is blocked at the gate");

	my @files = temp_files($node);
	is(scalar(@files), 1, "$name: there is one spill file");
	note "damaging @files (" . join(',', map { -s $_ } @files) . ' bytes)';
	$damage->($_) foreach @files;

	$holder->query_safe("SELECT pg_advisory_unlock($GATE_LOCK)");
	my ($rc, $out, $err) = finish_query($q);

	isnt($rc, 0, "$name: the query fails");
	is($out, '', "$name: the query returns no rows");
	like(
		$err,
		qr/ERROR:  XX001: (corrupt block in compspill temporary file|could not read compspill temporary file)/,
		"$name: the error is XX001 data_corrupted");
	ok(wait_until('pgsql_tmp to be empty', sub { !temp_files($node) }),
		"$name: pgsql_tmp is empty afterwards");
	return $err;
}

# a sort blocked at its first output row
sub damaged_sort
{
	my ($name, $setup, $damage) = @_;
	return damaged_run($name, [ $spill, $setup ], $stall_out, $damage);
}

{
	$holder->query_safe("SELECT pg_advisory_lock($GATE_LOCK)");
	my $q = start_query($node, $spill, 'SELECT 1', $stall_out);
	ok(wait_for_lock_waiter($node), 'undamaged: the sort is blocked');
	$holder->query_safe("SELECT pg_advisory_unlock($GATE_LOCK)");
	my ($rc, $out, $err) = finish_query($q);
	like($out, qr/^1\n$expected\n?$/, 'undamaged: the query returns every row');
}

damaged_sort('lz4, overwritten', 'SET compspill.codec = lz4', \&scribble);
damaged_sort('zstd, overwritten', 'SET compspill.codec = zstd', \&scribble);
damaged_sort('none, overwritten', 'SET compspill.codec = none', \&scribble);
damaged_sort('lz4 with direct I/O, overwritten',
	'SET compspill.enable_dio = on', \&scribble);
damaged_sort('lz4, truncated', 'SET compspill.codec = lz4', \&halve);

# Row frames (compspill.frame_kind = row), compressed or not, damaged the
# same ways: caught by the frame's CRC, or by the row frame's own check of
# its row lengths and headers, never read as rows.
my $rows = 'SET compspill.frame_kind = row';
my $rows_plan = $node->safe_psql('postgres',
	"$spill; $rows; EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $sorted");
like(
	$rows_plan,
	qr/runs=([2-9]|\d\d+)\s+merge passes=1\b.*Spill Frame Kinds: row=[1-9]\d*  column=0\b/s,
	'frame_kind = row: several runs of row frames only, merged in one pass');
damaged_sort('row frames, lz4, overwritten',
	"$rows; SET compspill.codec = lz4", \&scribble);
damaged_sort('row frames, none, overwritten',
	"$rows; SET compspill.codec = none", \&scribble);
damaged_sort('row frames, zstd, truncated',
	"$rows; SET compspill.codec = zstd", \&halve);
damaged_sort('row frames, none, truncated',
	"$rows; SET compspill.codec = none", \&halve);

# CRC-32C (Castagnoli), as the frames carry it
my @crc_table = map {
	my $c = $_;
	$c = ($c & 1) ? (($c >> 1) ^ 0x82F63B78) : ($c >> 1) for 1 .. 8;
	$c;
} 0 .. 255;

sub crc32c
{
	my ($data) = @_;
	my $crc = 0xFFFFFFFF;

	$crc = ($crc >> 8) ^ $crc_table[ ($crc ^ $_) & 0xFF ]
	  foreach unpack('C*', $data);
	return $crc ^ 0xFFFFFFFF;
}

# The frames at the start of a spill file: its first run, back to back from
# offset 0.  Each is [offset, header, payload].
sub first_run_frames
{
	my ($data) = @_;
	my @frames;
	my $off = 0;

	while ($off + 24 <= length($data))
	{
		my $hdr = substr($data, $off, 24);
		my ($magic, $stored_len) = (unpack('V C4 V V V V', $hdr))[ 0, 7 ];
		last if $magic != 0x4B425343 || $off + 24 + $stored_len > length($data);
		push @frames, [ $off, $hdr, substr($data, $off + 24, $stored_len) ];
		$off += 24 + $stored_len;
	}
	return @frames;
}

sub read_file
{
	my ($path) = @_;
	open(my $fh, '<', $path) or die "could not open $path: $!";
	binmode $fh;
	local $/;
	my $data = <$fh>;
	close($fh);
	return $data;
}

sub write_at
{
	my ($path, $off, $bytes) = @_;
	open(my $fh, '+<', $path) or die "could not open $path: $!";
	binmode $fh;
	sysseek($fh, $off, SEEK_SET) or die "seek: $!";
	syswrite($fh, $bytes) or die "write: $!";
	close($fh) or die "close: $!";
	return;
}

# Change one byte of the payload of a frame in the middle of the first run
# (beyond what the merge has read) and give the frame a valid CRC again.
sub forge
{
	my ($path) = @_;
	my @frames = first_run_frames(read_file($path));
	die "too few frames in $path" if @frames < 8;
	my ($off, $hdr, $payload) = @{ $frames[ int(@frames / 2) ] };

	substr($payload, 5, 1) = chr(ord(substr($payload, 5, 1)) ^ 0x5A);
	my $zeroed = substr($hdr, 0, 20) . "\0\0\0\0";
	write_at($path, $off,
		substr($hdr, 0, 20) . pack('V', crc32c($zeroed . $payload)) . $payload);
	note "forged the frame at offset $off of $path";
	return;
}

# Swap two neighbouring frames of the same size in the middle of the first
# run: both intact, each in the other's place.
sub swap
{
	my ($path) = @_;
	my @frames = first_run_frames(read_file($path));

	for my $i (int(@frames / 2) .. $#frames - 1)
	{
		my ($a, $b) = @frames[ $i, $i + 1 ];
		next if length($a->[2]) != length($b->[2]);
		write_at($path, $a->[0], $b->[1] . $b->[2]);
		write_at($path, $b->[0], $a->[1] . $a->[2]);
		note "swapped the frames at offsets $a->[0] and $b->[0] of $path";
		return;
	}
	die "no two neighbouring frames of one size in $path";
}

# Row frames stored uncompressed, with a row's length word or header
# changed and the CRC made valid again: the row frame check must refuse
# the frame (the CRC cannot), before any row of it is handed out.  The
# payload of such a frame is the rows themselves: a 4-byte length, then
# t_infomask2, t_infomask and t_hoff of the first row's tuple.
sub forge_row_at
{
	my ($at, $xor) = @_;
	return sub {
		my ($path) = @_;
		my @frames = first_run_frames(read_file($path));
		die "too few frames in $path" if @frames < 8;
		my ($off, $hdr, $payload) = @{ $frames[ int(@frames / 2) ] };
		my ($codec, $flags) = (unpack('V C C', $hdr))[ 1, 2 ];
		die "frame at $off of $path is not an uncompressed row frame"
		  if $codec != 0 || !($flags & 0x02);

		substr($payload, $at, 1) = chr(ord(substr($payload, $at, 1)) ^ $xor);
		my $zeroed = substr($hdr, 0, 20) . "\0\0\0\0";
		write_at($path, $off,
			    substr($hdr, 0, 20)
			  . pack('V', crc32c($zeroed . $payload))
			  . $payload);
		note "forged byte $at of the row frame at offset $off of $path";
		return;
	};
}

# Change the last byte of the first row of an uncompressed row frame in
# the middle of the first run, an attribute byte, leaving the CRC as it
# is: only the CRC can tell, since the row frame check does not read the
# attributes.
sub change_row_attribute
{
	my ($path) = @_;
	my @frames = first_run_frames(read_file($path));
	die "too few frames in $path" if @frames < 8;
	my ($off, $hdr, $payload) = @{ $frames[ int(@frames / 2) ] };
	my ($codec, $flags) = (unpack('V C C', $hdr))[ 1, 2 ];
	die "frame at $off of $path is not an uncompressed row frame"
	  if $codec != 0 || !($flags & 0x02);
	my $at = 4 + unpack('V', $payload) - 1;

	write_at($path, $off + 24 + $at,
		chr(ord(substr($payload, $at, 1)) ^ 0x20));
	note "changed byte $at of the row frame at offset $off of $path";
	return;
}

like(
	damaged_sort(
		'row frames, none, an attribute byte changed',
		"$rows; SET compspill.codec = none",
		\&change_row_attribute),
	qr/DETAIL:  Block checksum mismatch/,
	'row frames, attribute byte changed: the CRC catches it');

my $rowcheck = qr/DETAIL:  Row (frame|\d+ of the row frame) /;
like(
	damaged_sort(
		'row frames, none, a row length forged with a valid CRC',
		"$rows; SET compspill.codec = none",
		forge_row_at(0, 0x01)),
	$rowcheck,
	'row frames, forged length: the row frame check catches it');
like(
	damaged_sort(
		'row frames, none, a t_hoff forged with a valid CRC',
		"$rows; SET compspill.codec = none",
		forge_row_at(8, 0x07)),
	$rowcheck,
	'row frames, forged t_hoff: the row frame check catches it');
like(
	damaged_sort(
		'row frames, none, an attribute count forged with a valid CRC',
		"$rows; SET compspill.codec = none",
		forge_row_at(5, 0x04)),
	$rowcheck,
	'row frames, forged attribute count: the row frame check catches it');

my $enc = "SET compspill.encryption = 'aes-256-gcm'";
my $authfail = qr/DETAIL:  Frame \d+ of the run failed authentication/;
like(damaged_sort('encrypted lz4, forged with a valid CRC',
		"$enc; SET compspill.codec = lz4", \&forge),
	$authfail, 'encrypted lz4, forged: the tag catches what the CRC does not');
# the tag authenticates an encrypted frame, which carries no CRC: the
# header's crc field is zero in every frame
my @crcs;
sub crcs_then_forge
{
	my ($path) = @_;
	@crcs = map { (unpack('V C4 V V V V', $_->[1]))[8] }
	  first_run_frames(read_file($path));
	forge($path);
	return;
}
like(damaged_sort('encrypted none, forged with a valid CRC',
		"$enc; SET compspill.codec = none", \&crcs_then_forge),
	$authfail, 'encrypted none, forged: the tag catches it');
ok(@crcs >= 8 && !grep({ $_ != 0 } @crcs),
	'encrypted frames carry no CRC: the crc field of every frame is zero');
$node->safe_psql('postgres',
	'CREATE TABLE fixed AS SELECT g AS id, hashint4(g)::bigint * 1000 AS h '
	  . 'FROM generate_series(1, 300000) g');
# forge, on a spill of row frames
sub forge_row_frame
{
	my ($path) = @_;
	my @frames = first_run_frames(read_file($path));
	my $flags = @frames ? (unpack('V C C', $frames[ int(@frames / 2) ][1]))[2] : 0;
	die "the frames of $path are not row frames" unless $flags & 0x02;
	forge($path);
	return;
}
like(damaged_sort('encrypted row frames, none, forged with a valid CRC',
		"$enc; $rows; SET compspill.codec = none", \&forge_row_frame),
	$authfail, 'encrypted row frames, forged: the tag catches it');
like(
	damaged_run(
		'encrypted none, two frames swapped',
		[ $spill, "$enc; SET compspill.codec = none" ],
		"SELECT count(*) FROM (SELECT h, id FROM fixed ORDER BY h OFFSET 0) s WHERE $gate",
		\&swap),
	$authfail,
	'encrypted none, swapped: each frame fails where it does not belong');

# The same for a Material's compressed store, read back on a nested loop's
# second pass: the first outer row fills the store, the second waits at the
# gate (in the outer scan's projection) while the store's file, written out
# but for its last write buffer, is damaged; then it reads the store.
$node->safe_psql('postgres',
	'CREATE TABLE o3 AS SELECT g AS id FROM generate_series(1, 3) g; ANALYZE o3');
my $nl = 'SET enable_hashjoin = off; SET enable_mergejoin = off';
my $mat_query =
  "SELECT count(*), sum(length(t.txt)) FROM (SELECT id, CASE WHEN id = 1 THEN true ELSE $gate END AS go "
  . "FROM o3 OFFSET 0) o LEFT JOIN t ON t.grp >= o.id - 1000 AND o.go";

my $mat_plan = $node->safe_psql('postgres',
	"$spill; $nl; EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $mat_query");
note $mat_plan;
like($mat_plan, qr/CompSpill Material.*\n.*Storage: Disk/,
	'the nested loop keeps its inner rows in a spilled CompSpill Material');

# a nested loop blocked before its second pass over the store
sub damaged_store
{
	my ($name, $setup, $damage) = @_;
	damaged_run($name, [ "$spill; $nl", $setup ], $mat_query, $damage);
	return;
}

damaged_store('material store, lz4, overwritten', 'SET compspill.codec = lz4',
	\&scribble);
damaged_store('material store, none, truncated', 'SET compspill.codec = none',
	\&halve);

$holder->quit;

# the server is fine and sorts correctly afterwards
is( sorted_md5($node, "$spill;", $sorted),
	sorted_md5($node, "$spill; SET compspill.enabled = off;", $sorted),
	'afterwards compspill returns what native sort returns');

$node->stop;
unlike(
	slurp_file($node->logfile),
	qr/was terminated by signal|TRAP:/,
	'no backend crashed');

done_testing();
