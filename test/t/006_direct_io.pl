
# Copyright (c) 2026, compspill developers
#
# compspill.enable_dio: the spill file's descriptor really carries O_DIRECT
# while the sort reads it back, and does not when the setting is off.  The
# sort is stopped at its first output row (an advisory lock in the query
# above it) and its descriptor's flags are read from /proc/<pid>/fdinfo.
# On a file system that refuses O_DIRECT the sort must say so with a NOTICE
# and go on buffered; the test checks whichever happened, and the rows.
# Then a shim preloaded into the server (refuse_dio.c) refuses every
# direct write with EINVAL, as some file systems do: the write is done
# again buffered, and EXPLAIN says direct I/O=fallback.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use CompSpillTAP;
use Cwd ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# O_DIRECT as the kernel reports it in fdinfo (octal), x86 and arm64 differ
my $O_DIRECT = ($^O eq 'linux' && `uname -m` =~ /^(aarch64|arm)/) ? 0200000 : 040000;

plan skip_all => 'needs Linux /proc/<pid>/fdinfo' unless -d '/proc/self/fdinfo';

my $node = compspill_node('main', preload => 'shared');
make_words_table($node, 't', 200_000);

my $spill = "SET work_mem = '4MB'";
my $gate = "pg_advisory_xact_lock_shared($GATE_LOCK)::text = ''";
my $sorted = 'SELECT id, grp, price, ts, txt FROM t ORDER BY txt, id';
my $stall_out = "SELECT count(*) FROM ($sorted OFFSET 0) s WHERE $gate";
my $expected = $node->safe_psql('postgres', 'SELECT count(*) FROM t');
my $holder = $node->background_psql('postgres');

# The fdinfo flags of the backend's descriptor on its spill file, or undef
sub spill_fd_flags
{
	my ($pid, $file) = @_;
	# the test harness may reach the data directory through a symbolic link
	my $want = Cwd::abs_path($file) // $file;

	opendir(my $dh, "/proc/$pid/fd") or return undef;
	foreach my $fd (readdir $dh)
	{
		next unless $fd =~ /^\d+$/;
		my $target = readlink("/proc/$pid/fd/$fd") // '';
		next unless $target eq $want;
		open(my $fh, '<', "/proc/$pid/fdinfo/$fd") or next;
		while (my $line = <$fh>)
		{
			return oct($1) if $line =~ /^flags:\s+([0-7]+)/;
		}
	}
	return undef;
}

foreach my $dio ('on', 'off')
{
	$holder->query_safe("SELECT pg_advisory_lock($GATE_LOCK)");
	my $q = start_query($node, $spill, "SET compspill.enable_dio = $dio",
		$stall_out);
	my $pid = wait_for_lock_waiter($node);
	ok($pid, "enable_dio = $dio: the sort is stopped at its first output row");

	my @files = temp_files($node);
	is(scalar(@files), 1, "enable_dio = $dio: the sort has one spill file");
	my $flags = spill_fd_flags($pid, $files[0] // '');
	ok(defined $flags, "enable_dio = $dio: the backend has the file open");
	$flags //= 0;
	note sprintf('fdinfo flags %o', $flags);

	$holder->query_safe("SELECT pg_advisory_unlock($GATE_LOCK)");
	my ($rc, $out, $err) = finish_query($q);
	is($rc, 0, "enable_dio = $dio: the query succeeds");
	like($out, qr/^$expected$/m, "enable_dio = $dio: every row comes out");

	if ($dio eq 'off')
	{
		is($flags & $O_DIRECT, 0, 'enable_dio = off: no O_DIRECT');
	}
	elsif ($err =~ /direct I\/O is not available/)
	{
		is($flags & $O_DIRECT, 0,
			'enable_dio = on, refused by the file system: buffered, with a NOTICE');
	}
	else
	{
		is($flags & $O_DIRECT, $O_DIRECT,
			'enable_dio = on: the spill file is read with O_DIRECT');
	}
}

# EXPLAIN names what happened: direct I/O=on, or, where the file system
# refused O_DIRECT (the NOTICE), fallback; off only when not asked for
my ($erc, $explain, $eerr) = $node->psql('postgres',
	"$spill; SET compspill.enable_dio = on; "
	  . "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $sorted");
is($erc, 0, 'EXPLAIN ANALYZE of the sort with enable_dio = on succeeds');
if ($eerr =~ /direct I\/O is not available/)
{
	like($explain, qr/direct I\/O=fallback/,
		'refused by the file system: EXPLAIN shows direct I/O=fallback');
}
else
{
	like($explain, qr/direct I\/O=on/, 'EXPLAIN shows direct I/O=on');
}
($erc, $explain) = $node->psql('postgres',
	"$spill; SET compspill.enable_dio = off; "
	  . "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $sorted");
like($explain, qr/direct I\/O=off/, 'with enable_dio = off: direct I/O=off');

$holder->quit;

# A file system that takes O_DIRECT on the descriptor but refuses direct
# writes with EINVAL (test/t/refuse_dio.c, preloaded into the server): the
# aligned write is done again, once, buffered, with the NOTICE, the rows
# come out, and EXPLAIN says direct I/O=fallback.
my $shim = PostgreSQL::Test::Utils::tempdir() . '/refuse_dio.so';
my $cc = $ENV{CC} // 'cc';
SKIP:
{
	skip 'no C compiler for the refuse_dio.c shim', 5
	  if system($cc, '-shared', '-fPIC', '-o', $shim,
		"$FindBin::RealBin/refuse_dio.c", '-ldl') != 0;

	$node->stop;
	{
		local $ENV{LD_PRELOAD} = $shim;
		$node->start;
	}
	my ($frc, $fout, $ferr) = $node->psql('postgres',
		"$spill; SET compspill.enable_dio = on; SELECT count(*) FROM ($sorted OFFSET 0) s");
	is($frc, 0, 'direct writes refused with EINVAL: the sort succeeds');
	like($fout, qr/^$expected$/m, 'direct writes refused: every row comes out');
	my @notices = ($ferr =~ /direct I\/O is not available/g);
	is(scalar(@notices), 1,
		'direct writes refused: one NOTICE, then buffered for good');
	like($ferr, qr/The file system refused O_DIRECT: Invalid argument/,
		'the NOTICE names the refusal');
	($frc, $fout) = $node->psql('postgres',
		"$spill; SET compspill.enable_dio = on; SET client_min_messages = warning; "
		  . "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $sorted");
	like($fout, qr/direct I\/O=fallback/,
		'direct writes refused: EXPLAIN shows direct I/O=fallback');
	$node->stop;
	$node->start;
}

$node->stop;
done_testing();
