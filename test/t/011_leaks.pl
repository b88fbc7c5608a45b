#
# 011_leaks.pl
#	  Nothing leaks over time: in one long-lived session, 200 spilling sorts
#	  cancelled part way, 200 whose output raises an error in the middle of
#	  the final merge, and 200 scrollable cursors over a spilled sort that
#	  are read both ways and rolled back leave the backend with as many
#	  file descriptors as it had after one of each (none of them on a
#	  deleted file), its memory (resident set, and what its memory contexts
#	  hold) within a small margin of that baseline, pgsql_tmp empty,
#	  compspill_temp_space() at zero and compspill_activity empty.  The
#	  figures are printed.
#
# The cancels are deterministic: the sort is stalled on an advisory lock the
# test holds (below the sort at an input row, so it is cancelled while it
# writes runs; or above it at the first output row, so it is cancelled with
# its merge open), and a second session cancels it with pg_cancel_backend
# once it is seen waiting there.  The repetitions cycle through the codecs,
# buffered and direct I/O, and encryption on and off.
#
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use CompSpillTAP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

plan skip_all => 'needs Linux /proc/<pid>/fd and /proc/<pid>/status'
  unless -d '/proc/self/fd' && -r '/proc/self/status';

my $REPS = 200;

# Margins over the baseline, in kB.  A leak of a few kB per repetition adds
# up to more than these over 200 repetitions; anything smaller is noise:
# malloc keeping freed memory instead of giving it back to the kernel, and
# shared buffers the backend touches for the first time (they count in its
# resident set).
my $RSS_MARGIN = 2048;
my $CONTEXT_MARGIN = 256;

my $node = compspill_node('main', preload => 'shared');
make_words_table($node, 't', 20_000);
$node->safe_psql('postgres', 'CREATE EXTENSION compspill');

my $sorted = 'SELECT id, grp, price, ts, txt FROM t ORDER BY txt, id';
my $gate = "pg_advisory_xact_lock_shared($GATE_LOCK)::text = ''";

# the row the merge returns half way: the error is raised there
my $mid = $node->safe_psql(
	'postgres', q{
SELECT id FROM (SELECT id, row_number() OVER (ORDER BY txt, id) AS rn FROM t) s
WHERE rn = 10000});

my %query = (
	# stalled at input row 10000, after runs are written
	cancel_in => 'SELECT count(*) FROM (SELECT id, grp, price, ts, txt FROM t '
	  . "WHERE (id <> 10000 OR $gate) ORDER BY txt, id OFFSET 0) s",
	# stalled at the first output row, the final merge open
	cancel_out => "SELECT count(*) FROM ($sorted OFFSET 0) s WHERE $gate",
	# division by zero at output row 10000
	error => "SELECT count(*) FROM ($sorted OFFSET 0) s "
	  . "WHERE 1 / (CASE WHEN id = $mid THEN 0 ELSE 1 END) = 1",
	cursor => "BEGIN; DECLARE c SCROLL CURSOR FOR $sorted; "
	  . 'FETCH 20 FROM c; MOVE FORWARD 15000 IN c; FETCH BACKWARD 20 FROM c; '
	  . 'MOVE ABSOLUTE 5000 IN c; FETCH PRIOR FROM c; ROLLBACK');

# settings of repetition $i: every 32 repetitions go through each codec,
# with buffered and direct I/O, with and without encryption, for both
# cancel points
sub rep_settings
{
	my ($i) = @_;
	my $codec = ('none', 'lz4', 'zstd', 'auto')[ int($i / 2) % 4 ];
	my $dio = int($i / 8) % 2 ? 'on' : 'off';
	my $enc = int($i / 16) % 2 ? 'aes-256-gcm' : 'off';

	return "SET compspill.codec = $codec; SET compspill.enable_dio = $dio; "
	  . "SET compspill.encryption = '$enc'";
}

# the plans: compspill's sort, and it spills
my $setup = "SET work_mem = '256kB'";
my $plain = "SELECT count(*) FROM ($sorted OFFSET 0) s";
my $plan = explain_text($node, "$setup;", $plain, 1);
like($plan, qr/CompSpill Sort.*\n.*\n.*external merge.*Disk: \d+kB/,
	'the sort is a CompSpill Sort and spills');
note $plan;
like(
	explain_text($node, "$setup;", $query{cancel_in}, 0),
	qr/CompSpill Sort(?:.*\n)+.*Filter: \(\(id <> 10000\) OR/,
	'cancel_in: the gate is below the sort');
like(
	explain_text($node, "$setup;",
		"SELECT count(*) FROM ($sorted OFFSET 0) s "
		  . "WHERE 1 / (CASE WHEN id = -1 THEN 0 ELSE 1 END) = 1", 1),
	qr/Filter: \(\(1 \/ CASE(?:.*\n)+.*CompSpill Sort.*\n.*\n.*external merge/,
	'error: the division is above the spilling CompSpill Sort');

my ($s, $pid) = open_session($node);
my ($h) = open_session($node);
note "the backend under test has pid $pid";
session_query($s, $setup);

# descriptors of the backend: how many, and those on deleted files
sub fds
{
	my (@all, @deleted);

	opendir(my $dh, "/proc/$pid/fd") or die "cannot read /proc/$pid/fd: $!";
	foreach my $fd (readdir $dh)
	{
		next unless $fd =~ /^\d+$/;
		my $target = readlink("/proc/$pid/fd/$fd") // next;
		push @all, $fd;
		push @deleted, "$fd -> $target" if $target =~ /\(deleted\)$|pgsql_tmp/;
	}
	closedir $dh;
	return (scalar(@all), @deleted);
}

# the backend's resident set and its anonymous part, in kB
sub rss
{
	my %v;

	open(my $fh, '<', "/proc/$pid/status") or die "cannot read status: $!";
	while (<$fh>)
	{
		$v{$1} = $2 if /^(VmRSS|RssAnon):\s+(\d+) kB/;
	}
	close $fh;
	return ($v{VmRSS}, $v{RssAnon});
}

# what the backend's memory contexts hold, in kB, asked in its own session
sub contexts_kb
{
	my ($out) = session_query($s,
		'SELECT sum(total_bytes) / 1024 FROM pg_backend_memory_contexts');
	return $out;
}

# Take the figures of the backend; it is idle between statements.
sub figures
{
	my ($label) = @_;
	my %f;

	$f{contexts} = contexts_kb();
	my ($nfds, @deleted) = fds();
	$f{fds} = $nfds;
	$f{deleted} = \@deleted;
	($f{rss}, $f{anon}) = rss();
	$f{files} = scalar(temp_files($node));
	($f{space}, $f{activity}) = split(
		/\|/,
		$node->safe_psql(
			'postgres',
			'SELECT compspill_temp_space(), '
			  . '(SELECT count(*) FROM compspill_activity)'));
	note sprintf(
		'%-16s fds %3d  VmRSS %6d kB  RssAnon %6d kB  contexts %5d kB  '
		  . 'temp files %d  compspill_temp_space %d  compspill_activity %d',
		$label, $f{fds}, $f{rss}, $f{anon}, $f{contexts}, $f{files},
		$f{space}, $f{activity});
	return \%f;
}

# --- one repetition of each kind ---

# Cancel: $h holds the lock; it waits until the backend is blocked on it,
# then cancels it.
my $cancels = 0;
my $cancel_it = qq{
DO \$\$
BEGIN
  FOR i IN 1 .. 30000 LOOP
    IF EXISTS (SELECT 1 FROM pg_locks WHERE pid = $pid
               AND locktype = 'advisory' AND NOT granted) THEN
      PERFORM pg_cancel_backend($pid);
      RETURN;
    END IF;
    PERFORM pg_sleep(0.001);
  END LOOP;
  RAISE EXCEPTION 'backend $pid never waited on the gate';
END
\$\$};

sub cancel_rep
{
	my ($i, $look) = @_;
	my $q = $i % 2 ? $query{cancel_in} : $query{cancel_out};
	my $where = $i % 2 ? 'while writing runs' : 'with its merge open';
	my ($out, $err);

	session_query($s, rep_settings($i));
	session_send($s, $q);
	if ($look)
	{
		# the warm-up looks at the stalled sort before cancelling it
		is(wait_for_lock_waiter($node), $pid,
			"warm-up, cancel $where: the backend waits on the gate");
		ok(scalar(temp_files($node)) >= 1,
			"warm-up, cancel $where: the sort has spilled");
		session_query($h, "SELECT pg_cancel_backend($pid)");
	}
	else
	{
		($out, $err) = session_query($h, $cancel_it);
		diag "the canceller failed: $err" if $err ne '';
	}
	($out, $err) = session_wait($s);
	if ($err =~ /ERROR:  57014: canceling statement due to user request/)
	{
		$cancels++;
	}
	else
	{
		diag "repetition $i was not cancelled: $out $err";
	}
	return;
}

# Errors and cursors: many repetitions go in one script.
sub script_reps
{
	my ($kind, $from, $to) = @_;
	my $script = '';

	$script .= rep_settings($_) . ";\n$query{$kind};\n" for $from .. $to;
	return session_query($s, $script);
}

# one plain spill with each setting: the libraries they use are loaded
# before the baseline is taken
my ($out, $err) = session_query($s,
	join('', map { rep_settings($_) . "; $plain;\n" } 0 .. 31));
is($err, '', 'warm-up: a spill with each codec, buffered and direct, '
	  . 'with and without encryption');

session_query($h, "SELECT pg_advisory_lock($GATE_LOCK)");
cancel_rep(1, 1);
cancel_rep(2, 1);
is($cancels, 2, 'warm-up: both sorts are cancelled');

($out, $err) = script_reps('error', 1, 1);
like($err, qr/ERROR:  22012: division by zero/,
	'warm-up: the error is raised half way through the output');

($out, $err) = script_reps('cursor', 1, 1);
is($err, '', 'warm-up: the cursor is read both ways and rolled back');
my ($native) = session_query($s,
	"SET compspill.enabled = off; $query{cursor}; RESET compspill.enabled");
is($out, $native, 'warm-up: the cursor returns what native sort returns');
($out) = session_query(
	$s, "BEGIN; DECLARE c SCROLL CURSOR FOR $sorted; FETCH 1 FROM c; "
	  . "SELECT bool_or(name = 'CompSpill store') "
	  . 'FROM pg_backend_memory_contexts; ROLLBACK');
like($out, qr/\nt$/,
	'warm-up: the cursor reads a spilled CompSpill Sort by position');

my $base = figures('baseline');
is(scalar(@{ $base->{deleted} }), 0,
	'baseline: no descriptor on a deleted or temporary file')
  or diag explain $base->{deleted};

# --- 200 of each ---

my %after;
$cancels = 0;
cancel_rep($_) for 1 .. $REPS;
is($cancels, $REPS, "$REPS sorts cancelled");
$after{cancel} = figures("after $REPS cancels");

($out, $err) = script_reps('error', 1, $REPS);
my $errors = () = $err =~ /ERROR:  22012: division by zero/g;
is($errors, $REPS, "$REPS errors raised in the middle of the merge");
$after{error} = figures("after $REPS errors");

($out, $err) = script_reps('cursor', 1, $REPS);
is($err, '', "$REPS cursors read both ways and rolled back");
$after{cursor} = figures("after $REPS cursors");

foreach my $kind ('cancel', 'error', 'cursor')
{
	my $f = $after{$kind};

	is($f->{fds}, $base->{fds},
		"after the ${kind}s: as many descriptors as at the baseline ($base->{fds})");
	is(scalar(@{ $f->{deleted} }), 0,
		"after the ${kind}s: no descriptor on a deleted or temporary file")
	  or diag join("\n", @{ $f->{deleted} }[ 0 .. 4 ]);
	cmp_ok($f->{rss}, '<=', $base->{rss} + $RSS_MARGIN,
		"after the ${kind}s: VmRSS within ${RSS_MARGIN}kB of the baseline");
	cmp_ok($f->{anon}, '<=', $base->{anon} + $RSS_MARGIN,
		"after the ${kind}s: RssAnon within ${RSS_MARGIN}kB of the baseline");
	cmp_ok($f->{contexts}, '<=', $base->{contexts} + $CONTEXT_MARGIN,
		"after the ${kind}s: memory contexts within ${CONTEXT_MARGIN}kB of the baseline");
	is($f->{files}, 0, "after the ${kind}s: pgsql_tmp is empty");
	is($f->{space}, 0, "after the ${kind}s: compspill_temp_space() is zero");
	is($f->{activity}, 0, "after the ${kind}s: compspill_activity is empty");
}

diag sprintf(
	"backend %d, %d repetitions of each:\n"
	  . "                  fds   VmRSS kB  RssAnon kB  contexts kB\n"
	  . "  baseline      %5d   %8d  %10d  %11d\n"
	  . "  after cancels %5d   %8d  %10d  %11d\n"
	  . "  after errors  %5d   %8d  %10d  %11d\n"
	  . "  after cursors %5d   %8d  %10d  %11d",
	$pid, $REPS,
	map { ($_->{fds}, $_->{rss}, $_->{anon}, $_->{contexts}) }
	  ($base, $after{cancel}, $after{error}, $after{cursor}));

$s->quit;
$h->quit;
$node->stop;
done_testing();
