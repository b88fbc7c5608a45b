#!/bin/bash
#
# test/run-tests.sh
#	  Install what is needed, and on each PostgreSQL server tested build with
#	  warnings as errors, install, and run every test: unit tests, a short
#	  run of the codec fuzzer, pg_regress (sql/, expected/), the isolation
#	  suite (specs/, expected/iso_*.out) with compspill and natively, TAP
#	  (test/t/*.pl, the Citus cluster test among them) and the load test.
#
# Usage: test/run-tests.sh [MAJOR ...]
#
# With no argument it tests the servers CI tests: PostgreSQL 15 from
# Debian's packages and 18 built from the source release in ../shared/pg/
# by test/build-pg.sh with assertions enabled (once per machine, cached),
# and also checks that the
# source compiles with -Werror against PostgreSQL 17's server headers
# (test/check-headers.sh) and that the Debian package builds, installs and
# passes the regression tests (test/deb-test.sh).  Naming majors ("15",
# "18") tests those only; PG_CONFIG=path tests the server it belongs to.
#
# Meant for a fresh Debian bookworm machine, as root (apt-get and make install
# need it; a user who can sudo works too).  pg_regress runs against a
# throw-away cluster made by pg_virtualenv; the TAP tests make their own
# clusters with PostgreSQL::Test::Cluster, and since initdb refuses to run as
# root they run as the postgres user on a copy of the tree.  Before them,
# test/build-citus.sh builds Citus for the server (once per machine: 13.2.2
# for 15, 14.0.1 for 18, from ../shared/citus/), so that 012_citus.pl runs a
# coordinator and two workers; the line before the last names the servers
# and Citus versions it ran on, or why it was skipped.  The load test
# (test/load.py, 20 s) runs in another pg_virtualenv cluster with compspill
# preloaded.  Safe to run again.  The last line is "compspill: N passed, M
# failed" over every server, counting unit test suites, fuzzer runs,
# pg_regress tests, isolation specs (once per run), TAP test files, load
# tests, the header check and the package test; the exit status is non-zero if anything failed.
#
# Environment:
#	COMPSPILL_SKIP_DEPS=1	do not check or install Debian packages
#	COMPSPILL_SKIP_BUILD=1	use the installed library as it is
#	COMPSPILL_SKIP_DEB=1	skip the Debian package test
#	TAP_TESTS_ONLY=1 / REGRESS_ONLY=1	run one suite
#	PROVE_TESTS='test/t/001_*.pl'		run only these TAP files
#	PROVE_FLAGS=--verbose				extra prove flags
#	COMPSPILL_KEEP_TAP=1	keep the TAP copy and its logs even when all pass
#	COMPSPILL_SKIP_LOAD=1	skip the load test (test/load.py)
#	COMPSPILL_SKIP_CITUS=1	do not build Citus (012_citus.pl then skips unless
#							Citus is already installed for the server)
#	COMPSPILL_LOAD_SECONDS=N	run the load test for N seconds (default 20)
#
set -uo pipefail
exec </dev/null

cd "$(dirname "$0")/.."
TOP=$PWD

# the server the caller named with PG_CONFIG, before test-lib.sh sets it
given_pg_config=${PG_CONFIG:-}
. test/test-lib.sh

SUDO=
[ "$(id -u)" -ne 0 ] && SUDO=sudo

npassed=0
nfailed=0
citus_notes=()
start=$(date +%s)

step()
{
	echo
	echo "=== ${in_suite:+PostgreSQL $PGVERSION: }$* ==="
}

finish()
{
	local rc=$1

	echo
	echo "run-tests: finished in $(($(date +%s) - start)) s"
	if [ ${#citus_notes[@]} -gt 0 ]; then
		echo "citus cluster test (012_citus.pl): $(IFS=';'; echo "${citus_notes[*]}" | sed 's/;/; /g')"
	fi
	echo "compspill: $npassed passed, $nfailed failed"
	exit "$rc"
}

# Print a file with a header, or say it is missing.
show_file()
{
	local f=$1 max=${2:-1000}

	if [ -f "$f" ]; then
		echo "----- $f (last $max lines) -----"
		tail -n "$max" "$f"
		echo "----- end of $f -----"
	fi
}

# the servers to test, and whether this is the whole CI run
full=
if [ $# -gt 0 ]; then
	servers=("$@")
elif [ -n "$given_pg_config" ]; then
	servers=("$("$given_pg_config" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')")
else
	servers=(15 18)
	full=1
fi

# 1. Debian packages
if [ -z "${COMPSPILL_SKIP_DEPS:-}" ]; then
	step "install dependencies"
	if ! bash test/install-deps.sh; then
		echo "run-tests: could not install dependencies"
		nfailed=$((nfailed + 1))
		finish 1
	fi
fi

# servers that Debian bookworm does not package are built from source, with
# assertions enabled (--enable-cassert): the suite runs on that build, and
# /usr/lib/postgresql/MAJOR is linked to it; the benchmark builds its own
# production server (test/build-pg.sh without --cassert)
for v in "${servers[@]}"; do
	if [ "$v" != 15 ]; then
		step "build PostgreSQL $v from source with assertions (test/build-pg.sh --cassert, once per machine)"
		if ! bash test/build-pg.sh --cassert "$v"; then
			echo "run-tests: could not build PostgreSQL $v"
			nfailed=$((nfailed + 1))
			finish 1
		fi
	fi
done

# Run the whole suite against one server: build with -Werror against its
# headers and install, then the unit tests, pg_regress, TAP and the load test.
run_suite()
{
	use_server "$1"
	in_suite=1

	# 2. Build with -Werror, then install
	if [ -z "${COMPSPILL_SKIP_BUILD:-}" ]; then
		step "build (warnings are errors)"
		make clean >/dev/null 2>&1 || true
		if ! make -j"$NPROC" COMPSPILL_WERROR=1 PG_CONFIG="$PG_CONFIG"; then
			echo "run-tests: build failed"
			nfailed=$((nfailed + 1))
			return
		fi

		step "install"
		if ! $SUDO make install PG_CONFIG="$PG_CONFIG" >/dev/null; then
			echo "run-tests: make install failed"
			nfailed=$((nfailed + 1))
			return
		fi
		echo "installed $($PG_CONFIG --pkglibdir)/compspill.so"
	fi

	# 3. unit tests of the codec chooser, the compressor, the sorter's
	# array growth, the devices' table and the frames' checksum, no server
	# needed
	if [ -z "${TAP_TESTS_ONLY:-}" ]; then
		step "unit tests (test/unit)"
		unit_log=$(mktemp -t compspill-unit.XXXXXX)
		make -C test/unit clean >/dev/null
		make -C test/unit run PG_CONFIG="$PG_CONFIG" 2>&1 | tee "$unit_log"
		unit_rc=${PIPESTATUS[0]}
		unit_ok=$(grep -Ec '^[a-z]+ unit: [0-9]+ passed, 0 failed' "$unit_log" || true)
		if [ "$unit_rc" -ne 0 ] || [ "$unit_ok" -eq 0 ]; then
			echo "run-tests: unit tests failed (exit $unit_rc)"
			nfailed=$((nfailed + 1))
		else
			npassed=$((npassed + unit_ok))
		fi
		rm -f "$unit_log"
	fi

	# 3b. the block codec, row frame and encrypted frame fuzzer (test/fuzz),
	# built with AddressSanitizer and UBSan against this server's headers:
	# a short run of every mode, which fails if an encoding never came up
	if [ -z "${TAP_TESTS_ONLY:-}" ]; then
		step "fuzzer (test/fuzz, ASan and UBSan)"
		fuzz_log=$(mktemp -t compspill-fuzz.XXXXXX)
		make -C test/fuzz clean >/dev/null
		make -C test/fuzz run PG_CONFIG="$PG_CONFIG" ITERATIONS=1000 \
			MUTATIONS=100 2>&1 | tee "$fuzz_log"
		fuzz_rc=${PIPESTATUS[0]}
		if [ "$fuzz_rc" -eq 0 ] &&
		   grep -Eq '^blockcodec fuzz: [0-9]+ passed, 0 failed' "$fuzz_log"; then
			npassed=$((npassed + 1))
		else
			echo "run-tests: fuzzer failed (exit $fuzz_rc)"
			nfailed=$((nfailed + 1))
		fi
		make -C test/fuzz clean >/dev/null
		rm -f "$fuzz_log"
	fi

	# 4. pg_regress in a throw-away cluster
	if [ -z "${TAP_TESTS_ONLY:-}" ]; then
		step "pg_regress (make installcheck in pg_virtualenv)"
		rm -rf results regression.diffs regression.out
		regress_log=$(mktemp -t compspill-regress.XXXXXX)
		# TAP_TESTS= keeps make installcheck from running prove here, as root;
		# ISOLATION= keeps it from running the isolation suite (step 4b)
		pg_virtualenv -t -v "$PGVERSION" \
			make installcheck TAP_TESTS= ISOLATION= PG_CONFIG="$PG_CONFIG" 2>&1 | tee "$regress_log"
		regress_rc=${PIPESTATUS[0]}

		regress_counts "$regress_log" "$regress_rc"
		npassed=$((npassed + regress_ok))
		nfailed=$((nfailed + regress_bad))
		if [ "$regress_rc" -ne 0 ]; then
			echo "run-tests: pg_regress failed (exit $regress_rc)"
			show_file regression.diffs 3000
		fi
		rm -f "$regress_log"
	fi

	# 4b. the isolation suite (specs/*.spec) in a throw-away cluster, once
	# with compspill and once with compspill.enabled = off for every session
	# (PGOPTIONS reaches isolationtester's connections through libpq), both
	# against the same expected files, which hold native's output
	if [ -z "${TAP_TESTS_ONLY:-}" ]; then
		for iso_mode in compspill native; do
			step "isolation suite, $iso_mode (make isolationcheck in pg_virtualenv)"
			rm -rf output_iso
			iso_log=$(mktemp -t compspill-iso.XXXXXX)
			if [ "$iso_mode" = native ]; then
				iso_env=(env "PGOPTIONS=${PGOPTIONS:+$PGOPTIONS }-c compspill.enabled=off")
			else
				iso_env=(env)
			fi
			"${iso_env[@]}" pg_virtualenv -t -v "$PGVERSION" \
				make isolationcheck PG_CONFIG="$PG_CONFIG" 2>&1 | tee "$iso_log"
			iso_rc=${PIPESTATUS[0]}

			regress_counts "$iso_log" "$iso_rc"
			npassed=$((npassed + regress_ok))
			nfailed=$((nfailed + regress_bad))
			if [ "$iso_rc" -ne 0 ]; then
				echo "run-tests: isolation suite ($iso_mode) failed (exit $iso_rc)"
				show_file output_iso/regression.diffs 3000
			fi
			rm -f "$iso_log"
		done
	fi

	# 5. TAP tests, as an unprivileged user on a copy of the tree; first
	# Citus for this server, for the cluster test (012_citus.pl)
	if [ -z "${REGRESS_ONLY:-}" ] && [ -z "${COMPSPILL_SKIP_CITUS:-}" ]; then
		step "build Citus for this server (test/build-citus.sh, once per machine)"
		if ! bash test/build-citus.sh --pg-config "$PG_CONFIG"; then
			echo "run-tests: could not build Citus; 012_citus.pl will skip"
			nfailed=$((nfailed + 1))
		fi
	fi
	if [ -z "${REGRESS_ONLY:-}" ]; then
		step "TAP tests (prove)"
		tapdir=$(mktemp -d -t compspill-tap.XXXXXX)
		tar --exclude=./.git --exclude=./tmp_check --exclude=./results \
			-cf - . | tar -xf - -C "$tapdir"
		runas=()
		if [ "$(id -u)" -eq 0 ]; then
			chown -R postgres:postgres "$tapdir"
			runas=(runuser -u postgres --)
		fi

		# a small file system to fill, for 010_disk_full.pl: the TAP tests
		# cannot mount one themselves; without it that test is skipped
		tinyfs="$tapdir/tiny-fs"
		if ! $SUDO bash test/tiny-fs.sh setup "$tinyfs" 16 "$(stat -c %U "$tapdir")"; then
			tinyfs=
		fi

		prove_log=$(mktemp -t compspill-prove.XXXXXX)
		chmod 644 "$prove_log"
		# the same environment and -I flags as PGXS's prove_installcheck
		(
			cd "$tapdir" &&
			"${runas[@]}" env \
				PATH="$PGBIN:$PATH" \
				TESTDIR="$tapdir" \
				PG_REGRESS="$PGXS_DIR/src/test/regress/pg_regress" \
				COMPSPILL_TINY_FS="$tinyfs" \
				prove -I "$PGXS_DIR/src/test/perl/" -I . -I test/t \
				${PROVE_FLAGS:-} ${PROVE_TESTS:-test/t/*.pl}
		) 2>&1 | tee "$prove_log"
		prove_rc=${PIPESTATUS[0]}
		[ -n "$tinyfs" ] && $SUDO bash test/tiny-fs.sh teardown "$tinyfs"

		nfiles=$(sed -n 's/^Files=\([0-9]*\),.*/\1/p' "$prove_log" | tail -1)
		nfiles=${nfiles:-0}
		failed_files=$(grep -Eo '^test/t/[^ ]+\.pl +\(Wstat' "$prove_log" |
					   awk '{print $1}' | sort -u)
		nbad=$(printf '%s' "$failed_files" | grep -c . || true)
		if [ "$prove_rc" -ne 0 ] && [ "$nbad" -eq 0 ]; then
			nbad=1					# prove failed without naming a file
		fi
		npassed=$((npassed + nfiles - nbad))
		[ "$npassed" -lt 0 ] && npassed=0
		nfailed=$((nfailed + nbad))

		# what the Citus cluster test said it ran on, or why it skipped
		citus_ran=$(sed -n 's/.*# Citus cluster test: //p' "$prove_log" | tail -1)
		citus_skip=$(sed -n 's/^test\/t\/012_citus\.pl .*skipped: //p' "$prove_log" | tail -1)
		if [ -n "$citus_ran" ]; then
			case $failed_files in
				*012_citus.pl*) citus_ran="$citus_ran: FAILED" ;;
			esac
			citus_notes+=("$citus_ran")
		elif [ -n "$citus_skip" ]; then
			citus_notes+=("PostgreSQL $PGVERSION: skipped ($citus_skip)")
		fi

		if [ "$prove_rc" -ne 0 ]; then
			echo "run-tests: TAP tests failed (exit $prove_rc); logs follow"
			# 15's harness logs to tmp_check/log, 18's to log
			logdir=$tapdir/tmp_check/log
			[ -d "$logdir" ] || logdir=$tapdir/log
			for f in $failed_files; do
				name=$(basename "$f" .pl)
				show_file "$logdir/regress_log_$name" 400
				for log in "$logdir/${name}"_*.log; do
					show_file "$log" 200
				done
			done
			if [ -z "$failed_files" ]; then
				for log in "$logdir"/*; do
					show_file "$log" 200
				done
			fi
			echo "run-tests: TAP files kept in $tapdir"
		elif [ -n "${COMPSPILL_KEEP_TAP:-}" ]; then
			echo "run-tests: TAP files kept in $tapdir"
		else
			rm -rf "$tapdir"
		fi
		rm -f "$prove_log"
	fi

	# 6. load test: 16 sessions of spilling queries for 20 s, each result
	# checked against native, in a throw-away cluster with compspill preloaded
	if [ -z "${REGRESS_ONLY:-}" ] && [ -z "${TAP_TESTS_ONLY:-}" ] &&
	   [ -z "${COMPSPILL_SKIP_LOAD:-}" ]; then
		step "load test (test/load.py, ${COMPSPILL_LOAD_SECONDS:-20} s)"
		load_log=$(mktemp -t compspill-load.XXXXXX)
		pg_virtualenv -t -v "$PGVERSION" \
			-o shared_preload_libraries=compspill -o max_connections=60 \
			python3 test/load.py --duration "${COMPSPILL_LOAD_SECONDS:-20}" \
			2>&1 | tee "$load_log"
		load_rc=${PIPESTATUS[0]}
		if [ "$load_rc" -eq 0 ] && grep -q '^load: .*: PASS$' "$load_log"; then
			npassed=$((npassed + 1))
		else
			echo "run-tests: load test failed (exit $load_rc)"
			nfailed=$((nfailed + 1))
		fi
		rm -f "$load_log"
	fi
}

for v in "${servers[@]}"; do
	run_suite "$v"
done
in_suite=

# 7. the source against the headers of majors no server is built for
if [ -n "$full" ]; then
	step "compile against PostgreSQL 17's server headers (test/check-headers.sh)"
	if bash test/check-headers.sh 17; then
		npassed=$((npassed + 1))
	else
		echo "run-tests: the build against PostgreSQL 17's headers failed"
		nfailed=$((nfailed + 1))
	fi
fi

# the layers: no include circle, no include of a layer above
if [ -n "$full" ]; then
	step "include graph of src/ (test/include-graph.py --check)"
	if python3 test/include-graph.py --check; then
		npassed=$((npassed + 1))
	else
		echo "run-tests: src/ has an include circle or an upward include"
		nfailed=$((nfailed + 1))
	fi
fi

# 8. the Debian package: built, installed, regression-tested, removed
if [ -n "$full" ] && [ -z "${COMPSPILL_SKIP_DEB:-}" ]; then
	step "Debian package (test/deb-test.sh)"
	use_server 15
	if bash test/deb-test.sh; then
		npassed=$((npassed + 1))
	else
		echo "run-tests: the Debian package test failed"
		nfailed=$((nfailed + 1))
	fi
fi

if [ "$nfailed" -ne 0 ]; then
	finish 1
fi
if [ "$npassed" -eq 0 ]; then
	echo "run-tests: no test ran"
	finish 1
fi
finish 0
