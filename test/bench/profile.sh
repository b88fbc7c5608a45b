#!/bin/bash
#
# test/bench/profile.sh
#	  Where a spilling sort's CPU time goes: runs one query once per
#	  configuration on bench.py's kept cluster of PostgreSQL VER, with
#	  `perf record -g` attached to the backend for the query only, and prints
#	  the top self-time symbols and the split by shared object.  perf.data,
#	  a folded stack file (flame graph input) and the summary (.txt) of each
#	  configuration go to test/bench/out/<date>-profile-s<scale>/.
#
#	test/bench/profile.sh VER CONFIGS [QUERY [WORK_MEM]] [bench.py options...]
#
#	  VER       15 (/usr/lib/postgresql/15, /var/tmp/compspill-bench-15, port
#	            5491) or 18 (/var/cache/compspill/postgresql-18.6,
#	            /var/tmp/compspill-bench-18, port 5492)
#	  CONFIGS   comma list of bench.py configurations: lz4,auto,native,...
#	  QUERY     a bench.py query (default q1); WORK_MEM default 4MB
#	  options   e.g. --ref main (the default is --ref HEAD: the committed
#	            state of this work tree, built into the cluster's private
#	            install), --no-install (whatever the cluster has installed),
#	            --scales 0.1 (default 1), --profile-top 40
#
# Example, the "before" profiles of the README (issue 18):
#	test/bench/profile.sh 15 lz4,auto q1 4MB --ref main
#	test/bench/profile.sh 18 lz4,auto q1 4MB --ref main
#
# Needs root (perf attaches to the backend; bench.py runs the cluster as
# postgres) and perf (Debian's linux-perf).  Debian's postgres binary has no
# symbols for its static functions: they show as addresses.
#
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
VER=${1:?usage: profile.sh VER CONFIGS [QUERY [WORK_MEM]] [options]}
CONFIGS=${2:?usage: profile.sh VER CONFIGS [QUERY [WORK_MEM]] [options]}
shift 2
QUERY=q1
WM=4MB
if [ $# -gt 0 ] && [[ $1 != -* ]]; then QUERY=$1; shift; fi
if [ $# -gt 0 ] && [[ $1 != -* ]]; then WM=$1; shift; fi

case $VER in
15) PGC=/usr/lib/postgresql/15/bin/pg_config; PORT=5491;;
18) PGC=/var/cache/compspill/postgresql-18.6/bin/pg_config; PORT=5492;;
*) echo "profile.sh: VER is 15 or 18" >&2; exit 2;;
esac
WORKDIR=/var/tmp/compspill-bench-$VER

extra=()
case " $* " in
*" --ref "* | *" --no-install "*) ;;
*) extra+=(--ref HEAD);;
esac
case " $* " in
*" --scales "* | *" --scale "*) ;;
*) extra+=(--scales 1);;
esac

exec nice -n 10 python3 "$HERE/bench.py" --profile --keep --queries "$QUERY" --work-mem "$WM" \
	--configs "$CONFIGS" --pg-config "$PGC" --workdir "$WORKDIR" --port "$PORT" \
	"${extra[@]}" "$@"
