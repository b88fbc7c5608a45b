#!/bin/bash
#
# test/extreme-full.sh
#	  The full-size cases of sql/extreme.sql that CI runs small: 50 million
#	  narrow rows, and a single 200 MB text value among small ones, each
#	  sorted at work_mem = 64kB by compspill and by native sort, results
#	  compared by an order-sensitive digest (the sum of each row's hash
#	  times its position) and count, with the time and temporary bytes of
#	  each.
#
# Runs against any server that has compspill installed (psql's usual PG*
# environment variables choose it), e.g. after `bash test/run-tests.sh`:
#
#	PGHOST=/tmp PGPORT=5432 PGUSER=postgres bash test/extreme-full.sh [NROWS]
#
# NROWS defaults to 50000000; that case takes a few minutes per side on 2
# cores, the 200 MB value about a minute in all.  The
# last line is "extreme-full: PASS" or "extreme-full: FAIL"; the exit status
# follows it.
#
set -euo pipefail

NROWS=${1:-50000000}
NARROW="SELECT (g::bigint * 7919) % 50000017 AS k FROM generate_series(1, $NROWS) g ORDER BY k"
HUGE="SELECT g, CASE WHEN g = 2 THEN repeat('abcdefghij', 20000000) ELSE 'x' || g END AS t FROM generate_series(1, 2000) g ORDER BY t DESC, g"

# Digest the query's rows in order, with compspill on or off, and print
# "digest|rows|seconds|temp bytes".
run_side()
{
	local query=$1 enabled=$2

	psql -X -q -At -v ON_ERROR_STOP=1 <<EOF
LOAD 'compspill';
SET work_mem = '64kB';
SET compspill.enabled = $enabled;
SET max_parallel_workers_per_gather = 0;
SELECT temp_bytes AS t0 FROM pg_stat_database WHERE datname = current_database() \gset
SELECT clock_timestamp() AS c0 \gset
SELECT sum(hashtextextended(s::text, 0)::numeric * rn) || '|' || count(*) AS d
FROM (SELECT s, row_number() OVER () AS rn FROM ($query) s) x \gset
SELECT extract(epoch FROM clock_timestamp() - :'c0'::timestamptz) AS secs \gset
SELECT pg_stat_force_next_flush();
SELECT pg_sleep(1.1);
SELECT pg_stat_clear_snapshot();
SELECT :'d' || '|' || round(:secs::numeric, 1) || '|'
       || (SELECT temp_bytes FROM pg_stat_database WHERE datname = current_database()) - :t0;
EOF
}

# Compare one query's sorted rows, compspill against native; return 1 if
# they differ or the plan has no CompSpill Sort.
compare()
{
	local name=$1 query=$2 plan native comp

	plan=$(psql -X -q -At -v ON_ERROR_STOP=1 -c "LOAD 'compspill'" \
		-c "SET work_mem = '64kB'" -c "EXPLAIN (COSTS OFF) $query" | head -1)
	echo "$name: plan with compspill: $plan"
	case "$plan" in
		*"CompSpill Sort"*) ;;
		*) echo "$name: the plan has no CompSpill Sort"; return 1 ;;
	esac
	native=$(run_side "$query" off | tail -1)
	echo "$name: native    digest|rows|seconds|temp bytes: $native"
	comp=$(run_side "$query" on | tail -1)
	echo "$name: compspill digest|rows|seconds|temp bytes: $comp"
	[ -n "${native%%|*}" ] && [ "${native%%|*}|" = "${comp%%|*}|" ] &&
		[ "$(echo "$native" | cut -d'|' -f2)" = "$(echo "$comp" | cut -d'|' -f2)" ]
}

rc=0
compare "200 MB value" "$HUGE" || rc=1
compare "$NROWS narrow rows" "$NARROW" || rc=1
if [ $rc -eq 0 ]; then
	echo "extreme-full: PASS"
else
	echo "extreme-full: FAIL"
fi
exit $rc
