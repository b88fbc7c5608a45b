#!/bin/bash
#
# test/bench/cipher-share.sh
#	  What encryption costs, measured as the share of a backend's CPU samples
#	  spent in libcrypto (AES-256-GCM) while it runs a spilling sort with
#	  compspill.encryption = aes-256-gcm, for each codec.  Wall-time ratios
#	  of a few percent drown in the noise of a shared machine; a sampling
#	  profile of the one backend does not.  A share s means the sort takes
#	  1 / (1 - s) times as long as without encryption (with encryption off
#	  the share is 0: compspill calls libcrypto for nothing else).
#
# Runs against bench.py's kept cluster (test/bench/bench.py --keep ...):
#
#	bash test/bench/cipher-share.sh [PGHOST] [PGPORT] [DATABASE] [WORK_MEM]
#
# defaults /var/tmp/compspill-bench, 55432, bench_s0_3, 4MB; the role is
# PGUSER's, else postgres.  Needs root
# (perf attaches to the backend) and perf (Debian's linux-perf).
#
set -euo pipefail

HOST=${1:-/var/tmp/compspill-bench}
PORT=${2:-55432}
DB=${3:-bench_s0_3}
WM=${4:-4MB}
TMP=$(mktemp -d -t compspill-cipher.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

for keys in "l_comment" "l_shipdate, l_orderkey"; do
	for codec in none lz4 zstd auto; do
		rm -f "$TMP/out"
		mkfifo "$TMP/in"
		psql -h "$HOST" -p "$PORT" -U "${PGUSER:-postgres}" -d "$DB" -X -q -At <"$TMP/in" >"$TMP/out" 2>&1 &
		psql_pid=$!
		exec 3>"$TMP/in"
		echo "SET work_mem = '$WM'; SET compspill.codec = $codec;
			  SET compspill.encryption = 'aes-256-gcm'; SELECT pg_backend_pid();" >&3
		until [ -s "$TMP/out" ] && grep -q . "$TMP/out"; do sleep 0.1; done
		backend=$(head -1 "$TMP/out")
		if ! [[ $backend =~ ^[0-9]+$ ]]; then
			echo "cipher-share: $backend" >&2
			exit 1
		fi

		perf record -q -e cpu-clock -F 999 -p "$backend" -o "$TMP/perf.data" 2>/dev/null &
		perf_pid=$!
		sleep 0.5
		echo "EXPLAIN (ANALYZE, TIMING OFF) SELECT * FROM lineitem ORDER BY $keys;
			  SELECT 'done';" >&3
		until grep -q '^done' "$TMP/out"; do sleep 0.2; done
		kill -INT "$perf_pid"
		wait "$perf_pid" 2>/dev/null || true
		exec 3>&-
		wait "$psql_pid"
		rm -f "$TMP/in"

		share=$(perf report -i "$TMP/perf.data" --sort dso --stdio 2>/dev/null |
				awk '/libcrypto/ { print $1 }')
		echo "ORDER BY $keys, codec $codec, work_mem $WM: libcrypto ${share:-0%} of the backend's CPU samples"
	done
done
