#!/bin/bash
#
# test/sanitize.sh
#	  Check compspill's memory safety: build it with AddressSanitizer and
#	  UBSan and run the whole pg_regress suite in a throw-away server that
#	  loads it, once with the library LOADed by each test and once with it
#	  in shared_preload_libraries (the shared-memory statistics, activity
#	  and cap code only runs then), followed there by 30 s of test/load.py.
#
# The sanitized build never touches the system's installation.  It is made
# in a copy of the tree and installed with DESTDIR into a private root under
# a temporary directory, next to copies of the postgres and pg_ctl binaries:
# PostgreSQL finds its library and share directories relative to its own
# executable, so that server loads the sanitized compspill.so, control and
# SQL files, while every other library and share file is a symbolic link to
# the system's.  compspill is compiled (through COPT, which PGXS adds to
# CFLAGS and LDFLAGS; the Makefile's normal build is unchanged, and no JIT
# bitcode is made) with
#
#	-fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer
#	-fno-sanitize-recover=all -fno-wrapv
#
# -fno-wrapv undoes PostgreSQL's -fwrapv, under which GCC does not check
# signed overflow at all; float-cast-overflow (double to integer, as the
# codec chooser's estimates are) is not part of "undefined" in GCC.
#
# The server runs as the postgres user with the ASan and UBSan runtimes in
# LD_PRELOAD (an executable built without them must have them loaded first,
# ASan's before any other library), with
#
#	ASAN_OPTIONS	detect_leaks=0 (a backend frees by resetting memory
#					contexts and exiting), abort_on_error=1,
#					allocator_may_return_null=1 (palloc reports out of memory
#					itself), log_path=<cluster>/san/asan.<pass>, so that each
#					process writes its reports to its own file
#	UBSAN_OPTIONS	print_stacktrace=1, halt_on_error=1, abort_on_error=1;
#					UBSan's reports go to the server log
#
# and a small library of hooks (see below) preloaded between them.
#
# What ASan can see: the server is not instrumented, and palloc carves small
# chunks out of larger malloc'd blocks, so an overrun of a small palloc'd
# chunk that stays inside its block goes unseen; large chunks (the spill,
# codec and decoder buffers) are malloc'd one by one and are checked to the
# byte, as are the stack, globals, and what libzstd, liblz4 and OpenSSL
# allocate.  UBSan checks all of compspill's own code.
#
# At the end the sanitizer logs and the server logs are searched for
# reports ("ERROR: AddressSanitizer", "runtime error:", "SUMMARY:") and for
# backends that crashed.  The last line is "sanitize: N passed, M failed,
# R sanitizer reports"; the exit status is non-zero unless every test passed
# and there was no report.  About 10 minutes on 2 cores (4 a pass, 1 for the
# load test); the temporary directory is kept when anything failed.
#
# Run as root (the server runs as postgres) or as a user that can run initdb.
#
# Environment:
#	REGRESS='setup types'	run only these regression tests
#	SANITIZE_PASSES='load preload'	which passes to run (default both)
#	SANITIZE_LOAD_SECONDS=N		run test/load.py for N s in the preload pass
#								(default 30; 0 skips it)
#	COMPSPILL_KEEP_SANITIZE=1	keep the temporary directory even when clean
#
set -euo pipefail
exec </dev/null

cd "$(dirname "$0")/.."
TOP=$PWD

. test/test-lib.sh
BINDIR=$($PG_CONFIG --bindir)
PKGLIBDIR=$($PG_CONFIG --pkglibdir)
SHAREDIR=$($PG_CONFIG --sharedir)

SAN_FLAGS="-fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer -fno-sanitize-recover=all -fno-wrapv"
LIBASAN=$(gcc -print-file-name=libasan.so)
LIBUBSAN=$(gcc -print-file-name=libubsan.so)
PASSES=${SANITIZE_PASSES:-load preload}
LOAD_SECONDS=${SANITIZE_LOAD_SECONDS:-30}

start=$(date +%s)
npassed=0
nfailed=0
nreports=0

WORK=$(mktemp -d -t compspill-sanitize.XXXXXX)
chmod 755 "$WORK"
ROOT=$WORK/root					# DESTDIR of the sanitized installation
BUILD=$WORK/build				# copy of the tree it is built in
CLUSTER=$WORK/cluster			# data directory, socket, logs
SANLOG=$CLUSTER/san				# one sanitizer log file per process
PGCTL=$ROOT$BINDIR/pg_ctl
export PGHOST=$CLUSTER PGPORT=5432 PGUSER=postgres PGDATABASE=postgres

runas=()
if [ "$(id -u)" -eq 0 ]; then
	runas=(runuser -u postgres --)
fi

step()
{
	echo
	echo "=== $* ==="
}

# Stop the server if it runs; used between passes and by the exit trap.
stop_server()
{
	if [ -f "$CLUSTER/data/postmaster.pid" ]; then
		"${runas[@]}" "$PGCTL" -D "$CLUSTER/data" -m fast -w stop >/dev/null 2>&1 ||
			"${runas[@]}" "$PGCTL" -D "$CLUSTER/data" -m immediate -w stop >/dev/null 2>&1 ||
			true
	fi
}

cleanup()
{
	local rc=$?

	stop_server
	if [ "$rc" -eq 0 ] && [ -z "${COMPSPILL_KEEP_SANITIZE:-}" ]; then
		rm -rf "$WORK"
	elif [ -z "$finished" ]; then
		echo "sanitize: files kept in $WORK"
	fi
	exit "$rc"
}
finished=
trap cleanup EXIT

# Print the summary, last, and exit.
finish()
{
	local rc=0

	if [ "$nfailed" -ne 0 ] || [ "$nreports" -ne 0 ] || [ "$npassed" -eq 0 ]; then
		rc=1
	fi
	echo
	echo "sanitize: finished in $(($(date +%s) - start)) s"
	if [ "$rc" -ne 0 ] || [ -n "${COMPSPILL_KEEP_SANITIZE:-}" ]; then
		echo "sanitize: files kept in $WORK"
	fi
	echo "sanitize: $npassed passed, $nfailed failed, $nreports sanitizer reports"
	finished=1
	exit "$rc"
}

for lib in "$LIBASAN" "$LIBUBSAN"; do
	if [ ! -f "$lib" ]; then
		echo "sanitize: gcc has no $(basename "$lib") (install libasan8 and libubsan1)"
		exit 1
	fi
done

# 1. build in a copy of the tree, install into the private root
step "build with $SAN_FLAGS"
mkdir -p "$BUILD"
tar -C "$TOP" --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
	-cf - Makefile compspill.control src sql expected | tar -xf - -C "$BUILD"
make -C "$BUILD" -s -j"$NPROC" with_llvm=no COPT="$SAN_FLAGS" PG_CONFIG="$PG_CONFIG"
if ! readelf -d "$BUILD/compspill.so" | grep -q 'NEEDED.*libasan'; then
	echo "sanitize: $BUILD/compspill.so is not linked with libasan"
	exit 1
fi

step "install into $ROOT"
# the server and pg_ctl are copied, not linked: PostgreSQL resolves symbolic
# links to its executable before it derives its other directories
mkdir -p "$ROOT$BINDIR" "$ROOT$PKGLIBDIR" "$ROOT$SHAREDIR/extension"
cp "$BINDIR/postgres" "$BINDIR/pg_ctl" "$ROOT$BINDIR/"
for f in "$PKGLIBDIR"/*.so; do
	case $(basename "$f") in
		compspill*) ;;
		*) ln -s "$f" "$ROOT$PKGLIBDIR/" ;;
	esac
done
for f in "$SHAREDIR"/*; do
	[ "$(basename "$f")" = extension ] || ln -s "$f" "$ROOT$SHAREDIR/"
done
for f in "$SHAREDIR"/extension/*; do
	case $(basename "$f") in
		compspill*) ;;
		*) ln -s "$f" "$ROOT$SHAREDIR/extension/" ;;
	esac
done
make -C "$BUILD" -s with_llvm=no PG_CONFIG="$PG_CONFIG" DESTDIR="$ROOT" install

# Two things the runtimes need to work in an executable not built with them,
# in a small library preloaded between them:
#
# - GCC 12's ASan runtime is initialised by the first call it intercepts.
#   For postgres that is a malloc() inside glibc's bindtextdomain() or
#   newlocale(), called by the constructors of libgpg-error and libp11-kit
#   (which libldap pulls in) while glibc holds one of its locale locks;
#   ASan's initialisation then looks up swift_demangle, fails, and calls
#   dlerror(), whose message translation takes and releases that same lock,
#   and the process hangs at the lock's next use (even "postgres -V" does).
#   A swift_demangle that returns NULL ("not a Swift name") makes that
#   lookup succeed and changes nothing else.
# - The UBSan runtime starts at its first report, in a backend, and reads
#   UBSAN_OPTIONS from /proc/self/environ, which the backend has overwritten
#   with its process title: the options would be lost (no stack trace, exit
#   instead of abort).  __ubsan_default_options hands it the variable from
#   the environment the backend still has.
cat >"$WORK/sanitizer_hooks.c" <<'END'
#include <stddef.h>
#include <stdlib.h>

char	   *swift_demangle(const char *name, size_t len, char *out,
						   size_t *outlen, unsigned int flags);
const char *__ubsan_default_options(void);

char *
swift_demangle(const char *name, size_t len, char *out, size_t *outlen,
			   unsigned int flags)
{
	return NULL;
}

const char *
__ubsan_default_options(void)
{
	const char *options = getenv("UBSAN_OPTIONS");

	return options ? options : "";
}
END
gcc -shared -fPIC -O2 -o "$WORK/sanitizer_hooks.so" "$WORK/sanitizer_hooks.c"
# libasan first, as it requires; the hooks before libubsan, so that they
# take the place of libubsan's own weak definition
SAN_PRELOAD="$LIBASAN $WORK/sanitizer_hooks.so $LIBUBSAN"

# 2. a throw-away cluster
step "initdb"
mkdir -p "$SANLOG"
[ ${#runas[@]} -gt 0 ] && chown -R postgres:postgres "$CLUSTER"
"${runas[@]}" "$BINDIR/initdb" -D "$CLUSTER/data" -U postgres -A trust \
	--no-sync --encoding=UTF8 --locale=C.UTF-8 >"$CLUSTER/initdb.log" 2>&1 || {
	cat "$CLUSTER/initdb.log"
	exit 1
}
cat >>"$CLUSTER/data/postgresql.conf" <<EOF

# test/sanitize.sh
listen_addresses = ''
unix_socket_directories = '$CLUSTER'
port = $PGPORT
fsync = off
jit = off
log_line_prefix = '%m [%p] '
EOF

# Start the server for one pass with the sanitizer runtimes preloaded.
start_server()
{
	local pass=$1 opts=""

	[ "$pass" = preload ] && opts="-c shared_preload_libraries=compspill"
	"${runas[@]}" env \
		LD_PRELOAD="$SAN_PRELOAD" \
		ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:allocator_may_return_null=1:log_path=$SANLOG/asan.$pass" \
		UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:abort_on_error=1" \
		"$PGCTL" -D "$CLUSTER/data" -l "$CLUSTER/server-$pass.log" -w -t 120 \
		-o "$opts" start >/dev/null
}

# Check that a backend really runs the sanitized library.
check_loaded()
{
	local maps

	maps=$(psql -X -At -c "LOAD 'compspill'" \
		   -c "SELECT pg_read_file('/proc/self/maps')")
	if ! grep -q libasan <<<"$maps" ||
	   ! grep -qF "$ROOT$PKGLIBDIR/compspill.so" <<<"$maps"; then
		echo "sanitize: the backend did not load $ROOT$PKGLIBDIR/compspill.so under ASan"
		return 1
	fi
	echo "backend maps libasan and $ROOT$PKGLIBDIR/compspill.so"
}

# 3. the regression suite, once per pass.  settings lists the parameters
# that LOAD defines; preloaded, compspill also defines the ones sized at
# server start (compspill.max_statements), so that pass leaves it out.
tests=${REGRESS:-$(sed -n 's/^REGRESS = //p' "$BUILD/Makefile")}
for pass in $PASSES; do
	step "pg_regress, compspill ${pass}ed"
	pass_tests=$tests
	if [ "$pass" = preload ]; then
		pass_tests=$(tr ' ' '\n' <<<"$tests" | grep -vx settings | tr '\n' ' ')
	fi
	if ! start_server "$pass"; then
		tail -n 50 "$CLUSTER/server-$pass.log"
		nfailed=$((nfailed + 1))
		finish
	fi
	if ! check_loaded; then
		nfailed=$((nfailed + 1))
		finish
	fi
	log=$CLUSTER/regress-$pass.log
	rc=0
	(
		cd "$BUILD" &&
		rm -rf results regression.diffs regression.out &&
		make installcheck TAP_TESTS= ISOLATION= with_llvm=no PG_CONFIG="$PG_CONFIG" \
			REGRESS="$pass_tests"
	) >"$log" 2>&1 || rc=$?
	cat "$log"
	regress_counts "$log" "$rc"
	npassed=$((npassed + regress_ok))
	nfailed=$((nfailed + regress_bad))
	if [ -f "$BUILD/regression.diffs" ]; then
		mv "$BUILD/regression.diffs" "$CLUSTER/regression-$pass.diffs"
		[ "$rc" -ne 0 ] && head -n 200 "$CLUSTER/regression-$pass.diffs"
	fi

	# preloaded, the load test too: concurrent sessions, cancelled spills,
	# direct I/O and encryption, every result checked against native
	if [ "$pass" = preload ] && [ "$LOAD_SECONDS" != 0 ]; then
		step "load test (test/load.py, $LOAD_SECONDS s), compspill preloaded"
		log=$CLUSTER/load.log
		rc=0
		python3 "$TOP/test/load.py" --duration "$LOAD_SECONDS" \
			--pgdata "$CLUSTER/data" >"$log" 2>&1 || rc=$?
		cat "$log"
		if [ "$rc" -eq 0 ] && grep -q '^load: .*: PASS$' "$log"; then
			npassed=$((npassed + 1))
		else
			echo "sanitize: load test failed (exit $rc)"
			nfailed=$((nfailed + 1))
		fi
	fi
	stop_server
done

# 4. sanitizer reports and crashes
step "sanitizer reports"
report='ERROR: AddressSanitizer|runtime error:|SUMMARY: '
crash='terminated by (signal|exception)|server process \(PID [0-9]+\) exited with exit code'
ncrashes=$(cat "$CLUSTER"/server-*.log | grep -Ec "$crash" || true)
for f in "$SANLOG"/* "$CLUSTER"/server-*.log; do
	[ -f "$f" ] || continue
	grep -Eq "$report" "$f" || continue
	# a report is an ERROR or runtime error line, then its SUMMARY line
	r=$(grep -Ec 'SUMMARY: ' "$f" || true)
	nreports=$((nreports + (r > 0 ? r : 1)))
	echo "----- $f -----"
	case $f in
		"$SANLOG"/*) head -n 80 "$f" ;;
		*) grep -E -A 30 'ERROR: AddressSanitizer|runtime error:' "$f" | head -n 200 ;;
	esac
done
if [ "$ncrashes" -ne 0 ]; then
	echo "sanitize: $ncrashes backends crashed:"
	grep -Eh "$crash" "$CLUSTER"/server-*.log
	nfailed=$((nfailed + ncrashes))
fi
[ "$nreports" -eq 0 ] && [ "$ncrashes" -eq 0 ] && echo "no sanitizer report, no crash"

finish
