
# test/t/CompSpillTAP.pm
#	  Helpers shared by compspill's TAP tests.
#
# A node made here has parallel query and JIT off, so a query has exactly one
# sort and one spill file; tables are filled with random words from a fixed
# seed, so every run sees the same data.  Background queries are stalled at a
# chosen point with a transaction-level advisory lock held by the test, so
# nothing depends on timing: the test waits until the backend is blocked on
# the lock, does its work, then releases the lock.

package CompSpillTAP;

use strict;
use warnings;

use Exporter 'import';
use File::Find;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

our @EXPORT = qw(
  compspill_node
  make_words_table
  make_groups_table
  plan_node
  sorted_md5
  explain_text
  temp_files
  wait_until
  start_query
  finish_query
  query_done
  wait_for_lock_waiter
  db_temp_stats
  open_session
  session_send
  session_wait
  session_query
  $GATE_LOCK
  $INCSORT_SETUP
);

# advisory lock key the tests use to stall a query
our $GATE_LOCK = 4242;

# settings under which ORDER BY a, ... over make_groups_table's table is an
# Incremental Sort over the index on a
our $INCSORT_SETUP =
  'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_sort = off;';

# words for the text columns: common English, as real comments have
my @WORDS = qw(
  the of and to in is that for it as was with be by on not he this are or
  his from at which but have an they you were her she there been one all we
  their has would when if so no will can more other its into only some could
  time these two may then do first any my now such like our over man me even
  most made after also did many before must through back years where much
  your way well down should because each just those people how too little
  state good very make world still own see men work long get here between
  both life being under never day same another know while last might us
  great old year off come since against go came right used take three
  carefully quickly final regular special express pending ironic bold even
  furious silent blithely slyly deposits requests accounts packages
  instructions foxes pinto beans theodolites dependencies platelets ideas
  asymptotes courts dolphins warhorses sheaves sauternes dugouts frets
  across above according after against along among around beside beyond
  during except inside outside toward under until upon within without
);

=pod

=item compspill_node($name, %opts)

Create and start a node.  %opts: preload => 'shared' or 'session' (put
compspill in shared_preload_libraries or session_preload_libraries), conf =>
extra postgresql.conf text.

=cut

sub compspill_node
{
	my ($name, %opts) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);

	$node->init;
	$node->append_conf(
		'postgresql.conf', qq{
max_parallel_workers_per_gather = 0
jit = off
autovacuum = off
log_min_messages = warning
log_error_verbosity = verbose
});
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = 'compspill'\n")
	  if ($opts{preload} // '') eq 'shared';
	$node->append_conf('postgresql.conf',
		"session_preload_libraries = 'compspill'\n")
	  if ($opts{preload} // '') eq 'session';
	$node->append_conf('postgresql.conf', $opts{conf}) if $opts{conf};
	$node->start;
	return $node;
}

=pod

=item make_words_table($node, $table, $nrows)

Create $table (id int, grp int, price numeric, ts timestamptz, txt text)
with $nrows rows; txt holds 4 to 9 random words.  The same seed gives the
same rows every time.

=cut

sub make_words_table
{
	my ($node, $table, $nrows) = @_;
	my $words = join(',', @WORDS);
	my $n = scalar @WORDS;
	my $w = "w.a[1 + floor(random() * $n)::int]";
	my $extra = "CASE WHEN random() < 0.5 THEN ' ' || $w ELSE '' END";

	$node->safe_psql(
		'postgres', qq{
SELECT setseed(0.5);
CREATE TABLE $table AS
  SELECT g AS id,
         (random() * 1000)::int AS grp,
         round((random() * 100000)::numeric, 2) AS price,
         timestamptz '2020-01-01' + random() * interval '1000 days' AS ts,
         $w || ' ' || $w || ' ' || $w || ' ' || $w
           || $extra || $extra || $extra || $extra || $extra AS txt
  FROM generate_series(1, $nrows) g,
       (SELECT '{$words}'::text[] AS a) w;
ANALYZE $table;
});
	return;
}

=pod

=item make_groups_table($node, $table, $from, $group_rows)

Create $table (a int, id int, txt text) from the rows of make_words_table's
$from, with a = id / $group_rows (groups of $group_rows rows, stored in
their order) and an index on a: ORDER BY a, txt, id over it is an
Incremental Sort under $INCSORT_SETUP, sorting one large group at a time.

=cut

sub make_groups_table
{
	my ($node, $table, $from, $group_rows) = @_;

	$node->safe_psql(
		'postgres', qq{
CREATE TABLE $table AS
  SELECT id / $group_rows AS a, id, txt FROM $from ORDER BY id;
CREATE INDEX ON $table (a);
ANALYZE $table;
});
	return;
}

=pod

=item plan_node($plan, $provider)

Return the first node of a plan decoded from EXPLAIN's JSON (its "Plan"),
depth first, whose Custom Plan Provider is $provider; undef if none is.

=cut

sub plan_node
{
	my ($plan, $provider) = @_;

	return $plan if ($plan->{'Custom Plan Provider'} // '') eq $provider;
	foreach my $sub (@{ $plan->{Plans} // [] })
	{
		my $found = plan_node($sub, $provider);
		return $found if $found;
	}
	return undef;
}

=pod

=item sorted_md5($node, $setup, $query)

Run $query (an ORDER BY that must not be a top-N) with the settings in
$setup and return the md5 of its output, in order, and its row count.

=cut

sub sorted_md5
{
	my ($node, $setup, $query) = @_;

	return $node->safe_psql(
		'postgres', qq{
$setup
SELECT md5(string_agg(s::text, E'\\n')), count(*)
FROM ($query OFFSET 0) s;
});
}

=pod

=item explain_text($node, $setup, $query, $analyze)

Return EXPLAIN's text for $query after $setup.

=cut

sub explain_text
{
	my ($node, $setup, $query, $analyze) = @_;
	my $opts = $analyze ? 'ANALYZE, COSTS OFF, TIMING OFF' : 'COSTS OFF';

	return $node->safe_psql('postgres', "$setup\nEXPLAIN ($opts) $query;");
}

=pod

=item temp_files($node)

Return the regular files under the node's pgsql_tmp directories (the
default tablespace's and every other tablespace's); in scalar context, how
many there are.

=cut

sub temp_files
{
	my ($node) = @_;
	my $pgdata = $node->data_dir;
	my @dirs = ("$pgdata/base/pgsql_tmp");
	my @files;

	push @dirs, glob("$pgdata/pg_tblspc/*/PG_*/pgsql_tmp");
	@dirs = grep { -d $_ } @dirs;
	find(
		{
			wanted => sub { push @files, $File::Find::name if -f $_ },
			no_chdir => 1
		},
		@dirs) if @dirs;
	@files = sort @files;
	return wantarray ? @files : scalar(@files);
}

=pod

=item wait_until($what, $cb)

Call $cb every 50 ms until it returns true; give up (return false) after
$PostgreSQL::Test::Utils::timeout_default seconds.

=cut

sub wait_until
{
	my ($what, $cb) = @_;
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;

	while (time() < $deadline)
	{
		return 1 if $cb->();
		usleep(50_000);
	}
	diag("timed out waiting for $what");
	return 0;
}

=pod

=item start_query($node, @sql)

Start psql in the background, running each element of @sql as its own -c
command, with VERBOSITY verbose so that errors carry their SQLSTATE.  Return
a handle for finish_query.

=cut

sub start_query
{
	my ($node, @sql) = @_;
	my $q = { out => '', err => '' };
	my @cmd = (
		'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-v', 'VERBOSITY=verbose',
		'-d', $node->connstr('postgres'));

	push @cmd, '-c', $_ foreach @sql;
	note "starting in the background: @sql";
	$q->{timer} = IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default);
	$q->{h} = IPC::Run::start(\@cmd, '<', \undef, '>', \$q->{out}, '2>',
		\$q->{err}, $q->{timer});
	return $q;
}

=pod

=item finish_query($q)

Wait for a query started by start_query; return (exit code, stdout, stderr).

=cut

sub finish_query
{
	my ($q) = @_;

	eval { $q->{h}->finish; };
	if ($@)
	{
		diag("background psql: $@");
		$q->{h}->kill_kill;
		return (-1, $q->{out}, $q->{err});
	}
	note "background psql exited with $?: stdout: $q->{out} stderr: $q->{err}";
	return ($? >> 8, $q->{out}, $q->{err});
}

=pod

=item query_done($q)

Return true once a query started by start_query has ended.

=cut

sub query_done
{
	my ($q) = @_;

	eval { $q->{h}->pump_nb; };
	return !$q->{h}->pumpable;
}

=pod

=item wait_for_lock_waiter($node)

Wait until some backend is blocked on an advisory lock; return its pid.

=cut

sub wait_for_lock_waiter
{
	my ($node) = @_;
	my $pid;

	wait_until(
		'a backend waiting on the advisory lock',
		sub {
			$pid = $node->safe_psql(
				'postgres', q{
SELECT pid FROM pg_locks
WHERE locktype = 'advisory' AND NOT granted LIMIT 1});
			return $pid ne '';
		});
	return $pid;
}

=pod

=item db_temp_stats($node)

Return (temp_files, temp_bytes) of database postgres.

=cut

sub db_temp_stats
{
	my ($node) = @_;
	my $r = $node->safe_psql(
		'postgres', q{
SELECT temp_files || '|' || temp_bytes FROM pg_stat_database
WHERE datname = 'postgres'});

	return split(/\|/, $r);
}

=pod

=item open_session($node)

Start a long-lived psql session (BackgroundPsql) that goes on after an
error and reports errors with their SQLSTATE; the timeout applies to each
statement, not to the whole session.  Return the session and its backend's
pid.  Run statements in it with session_query, or session_send and
session_wait.

=cut

sub open_session
{
	my ($node) = @_;
	my $s = $node->background_psql(
		'postgres',
		on_error_stop => 0,
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);

	$s->set_query_timer_restart();
	my ($pid) = session_query($s, 'SELECT pg_backend_pid()');
	return ($s, $pid);
}

# counter of the markers that end each statement sent to a session
my $session_seq = 0;

=pod

=item session_send($s, $sql)

Send $sql (one statement or a script) to a session made by open_session
without waiting for it to end; session_wait waits for it.  Unlike
BackgroundPsql's query(), this neither logs each statement and its output
(a test sending hundreds of them would drown its log) nor keeps stderr from
one statement to the next.

=cut

sub session_send
{
	my ($s, $sql) = @_;
	my $marker = 'compspill session: done ' . ++$session_seq;

	$s->{stdout} = '';
	$s->{stderr} = '';
	$s->{compspill_marker} = $marker;
	$s->{timeout}->start();
	$s->{stdin} .= "$sql\n;\n\\echo '$marker'\n\\warn '$marker'\n";
	# hand it all to psql now: the caller may block elsewhere next
	while ($s->{stdin} ne '' && !$s->{timeout}->is_expired)
	{
		$s->{run}->pump_nb;
		usleep(1000) if $s->{stdin} ne '';
	}
	return;
}

=pod

=item session_wait($s)

Wait for what session_send sent to end; return its (stdout, stderr).

=cut

sub session_wait
{
	my ($s) = @_;
	my $marker = delete $s->{compspill_marker};
	my $end = qr/\n?\Q$marker\E\n/;

	$s->{run}->pump
	  until ($s->{stdout} =~ $end && $s->{stderr} =~ $end)
	  || $s->{timeout}->is_expired;
	die "psql timed out waiting for: $s->{stdout}\n$s->{stderr}"
	  if $s->{timeout}->is_expired;
	my ($out, $err) = ($s->{stdout}, $s->{stderr});
	$out =~ s/$end//;
	$err =~ s/$end//;
	$s->{stdout} = '';
	$s->{stderr} = '';
	return ($out, $err);
}

=pod

=item session_query($s, $sql)

Run $sql in a session made by open_session; return its (stdout, stderr).

=cut

sub session_query
{
	my ($s, $sql) = @_;

	session_send($s, $sql);
	return session_wait($s);
}

1;
