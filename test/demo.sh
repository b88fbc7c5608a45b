#!/bin/bash
#
# test/demo.sh
#	  Show compspill at work: install what is needed, build and install the
#	  extension, start a throw-away cluster, generate a table of order
#	  lines with comments made of words, and run one spilling ORDER BY with
#	  work_mem = 4MB natively and through compspill with each codec.
#
# Prints, for each run, the execution time (EXPLAIN ANALYZE), the bytes of
# temporary files it wrote (pg_stat_database.temp_bytes) and whether it
# returned exactly the rows native sort returned (md5 of the ordered output),
# then the EXPLAIN ANALYZE of the compspill run with the default codec.  The
# cluster (pg_virtualenv) and everything it made are removed at the end.
# Takes a minute or two.  Run as root on a fresh Debian bookworm machine (or
# as a user who can sudo).
#
# Environment:
#	DEMO_ROWS=1000000	rows to generate
#	DEMO_WORK_MEM=4MB	work_mem of the sorts
#	COMPSPILL_SKIP_DEPS=1, COMPSPILL_SKIP_BUILD=1	as in test/run-tests.sh
#
set -euo pipefail
exec </dev/null

cd "$(dirname "$0")/.."

PGVERSION=15
PGBIN=/usr/lib/postgresql/$PGVERSION/bin
export PG_CONFIG=$PGBIN/pg_config
export DEMO_ROWS=${DEMO_ROWS:-1000000}
export DEMO_WORK_MEM=${DEMO_WORK_MEM:-4MB}

# Runs inside pg_virtualenv: PGHOST, PGPORT, PGUSER and PGPASSWORD point at
# the throw-away cluster.
inside()
{
	local psql row
	work=$(mktemp -d -t compspill-demo.XXXXXX)
	trap 'rm -rf "$work"' EXIT
	psql=(psql -X -q -v ON_ERROR_STOP=1)

	"${psql[@]}" -At -c 'CREATE EXTENSION compspill' \
		-c 'SELECT version()' -c 'SELECT compspill_version()'

	echo
	echo "Generating $DEMO_ROWS order lines (comments made of English words) ..."
	local t0=$SECONDS
	"${psql[@]}" <<EOF
SELECT setseed(0.42) \g /dev/null
CREATE UNLOGGED TABLE lineitem AS
WITH w AS (
  SELECT string_to_array('the of and to in is that for it as was with be by on not he this are or his from at which but have an they you were her she there been one all we their has would when if so no will can more other its into only some could time these two may then do first any my now such like our over even most made after also did many before must through back years where much your way well down should because each just those people how too little state good very make world still own see men work long get here between both life being under never day same another know while last might great old year off come since against go came right used take three carefully quickly final regular special express pending ironic bold furious silent blithely slyly deposits requests accounts packages instructions foxes pinto beans theodolites dependencies platelets ideas asymptotes courts dolphins warhorses sheaves sauternes dugouts frets across above according along among around beside beyond during except inside outside toward until upon within without', ' ') AS a
)
SELECT g / 4 + 1 AS l_orderkey,
       (random() * 200000)::int + 1 AS l_partkey,
       (g % 7) + 1 AS l_linenumber,
       (random() * 49)::int + 1 AS l_quantity,
       round((random() * 100000)::numeric, 2) AS l_extendedprice,
       date '1992-01-01' + (random() * 2500)::int AS l_shipdate,
       (ARRAY['AIR','MAIL','SHIP','TRUCK','RAIL','FOB','REG AIR'])[1 + g % 7] AS l_shipmode,
       a[1 + floor(random() * cardinality(a))::int] || ' ' ||
       a[1 + floor(random() * cardinality(a))::int] || ' ' ||
       a[1 + floor(random() * cardinality(a))::int] ||
       CASE WHEN random() < 0.7 THEN ' ' || a[1 + floor(random() * cardinality(a))::int] ELSE '' END ||
       CASE WHEN random() < 0.5 THEN ' ' || a[1 + floor(random() * cardinality(a))::int] ELSE '' END ||
       CASE WHEN random() < 0.3 THEN ' ' || a[1 + floor(random() * cardinality(a))::int] ELSE '' END
         AS l_comment
FROM generate_series(0, $DEMO_ROWS - 1) g, w;
VACUUM ANALYZE lineitem;
EOF
	echo "  done in $((SECONDS - t0)) s; table size: $("${psql[@]}" -At -c \
		"SELECT pg_size_pretty(pg_table_size('lineitem'))")"

	local query="SELECT * FROM lineitem ORDER BY l_comment, l_orderkey, l_linenumber"
	echo
	echo "Query: $query"
	echo "work_mem = $DEMO_WORK_MEM; parallel workers and JIT off, so each figure is one sort's"

	local cfg enabled codec
	for cfg in native auto none lz4 zstd; do
		if [ "$cfg" = native ]; then
			enabled=off
			codec=lz4
		else
			enabled=on
			codec=$cfg
		fi
		echo "  running: $cfg"
		"${psql[@]}" -At <<EOF >"$work/$cfg.out"
SET work_mem = '$DEMO_WORK_MEM';
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SET compspill.enabled = $enabled;
SET compspill.codec = $codec;
SELECT pg_stat_force_next_flush();
SELECT temp_bytes AS tb0 FROM pg_stat_database WHERE datname = current_database() \gset
\o $work/$cfg.explain
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $query;
\o
SELECT pg_stat_force_next_flush();
SELECT temp_bytes AS tb1 FROM pg_stat_database WHERE datname = current_database() \gset
SELECT md5(string_agg(s::text, E'\n')) AS md5, count(*) AS n FROM ($query OFFSET 0) s \gset
\echo RESULT :tb0 :tb1 :n :md5
EOF
	done

	echo
	printf '%-16s %10s %14s %10s   %s\n' "sort" "time" "temp bytes" "vs native" "same rows as native"
	local native_bytes="" native_md5="" tb0 tb1 n md5 ms bytes ratio same
	for cfg in native auto none lz4 zstd; do
		row=$(grep '^RESULT ' "$work/$cfg.out")
		read -r _ tb0 tb1 n md5 <<<"$row"
		bytes=$((tb1 - tb0))
		ms=$(sed -n 's/.*Execution Time: \([0-9.]*\) ms.*/\1/p' "$work/$cfg.explain")
		if [ "$cfg" = native ]; then
			native_bytes=$bytes
			native_md5=$md5
			same="(reference, $n rows)"
		elif [ "$md5" = "$native_md5" ]; then
			same="yes"
		else
			same="NO: md5 $md5 differs from $native_md5"
		fi
		ratio=$(awk -v a="$bytes" -v b="$native_bytes" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }')
		printf '%-16s %8.2f s %11.1f MB %10s   %s\n' \
			"$([ "$cfg" = native ] && echo "native" || echo "compspill $cfg")" \
			"$(awk -v m="$ms" 'BEGIN { print m / 1000 }')" \
			"$(awk -v b="$bytes" 'BEGIN { print b / 1048576 }')" \
			"$ratio" "$same"
	done

	echo
	echo "EXPLAIN ANALYZE, native:"
	sed 's/^/  /' "$work/native.explain"
	echo
	echo "EXPLAIN ANALYZE, compspill (auto, the default):"
	sed 's/^/  /' "$work/auto.explain"

	for cfg in auto none lz4 zstd; do
		row=$(grep '^RESULT ' "$work/$cfg.out")
		read -r _ tb0 tb1 n md5 <<<"$row"
		if [ "$md5" != "$native_md5" ]; then
			echo "demo: compspill ($cfg) returned different rows" >&2
			return 1
		fi
	done
	return 0
}

if [ "${1:-}" = "--inside" ]; then
	inside
	exit $?
fi

SUDO=
[ "$(id -u)" -ne 0 ] && SUDO=sudo

if [ -z "${COMPSPILL_SKIP_DEPS:-}" ]; then
	bash test/install-deps.sh
fi
if [ -z "${COMPSPILL_SKIP_BUILD:-}" ]; then
	echo "Building and installing compspill ..."
	# objects built for another server must not be linked for this one
	make -s clean PG_CONFIG="$PG_CONFIG" >/dev/null 2>&1 || true
	make -s -j"$(nproc 2>/dev/null || echo 2)" PG_CONFIG="$PG_CONFIG"
	$SUDO make -s install PG_CONFIG="$PG_CONFIG" >/dev/null
fi

echo "Starting a throw-away PostgreSQL $PGVERSION cluster (pg_virtualenv) ..."
# -t: keep the cluster in a temporary directory even as root; it is
# dropped when the demo ends, however it ends
pg_virtualenv -t -v "$PGVERSION" -o "shared_preload_libraries=compspill" \
	bash "$0" --inside
