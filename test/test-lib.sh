#
# test/test-lib.sh
#	  Sourced by the test scripts: the PostgreSQL installation they build
#	  against and run, the number of cores for make -j, and the counting of
#	  a pg_regress run's results.
#
# A server is named by its major version and lives where postgresql-common
# looks for it, /usr/lib/postgresql/MAJOR: Debian's package for 15, a link
# to test/build-pg.sh's build for the others.  The default is 15, or
# COMPSPILL_PGVERSION.
#

# Point PGVERSION, PGBIN, PG_CONFIG and PGXS_DIR at the server of a major
use_server()
{
	PGVERSION=$1
	PGBIN=/usr/lib/postgresql/$PGVERSION/bin
	export PG_CONFIG=$PGBIN/pg_config
	PGXS_DIR=/usr/lib/postgresql/$PGVERSION/lib/pgxs
	[ -d "$PGXS_DIR" ] || PGXS_DIR=$("$PG_CONFIG" --pkglibdir 2>/dev/null)/pgxs
}

use_server "${COMPSPILL_PGVERSION:-15}"
NPROC=$(nproc 2>/dev/null || echo 2)

# Count the tests pg_regress passed and failed in log, which it wrote
# exiting with rc, into regress_ok and regress_bad; a failure that names no
# test (pg_regress or the server itself failed) counts as one.
regress_counts()
{
	local log=$1 rc=$2

	# 15 prints "test name ... ok", 16 and later TAP-like "ok 1 - name"
	regress_ok=$(grep -Ec '^((test| ) *[^ ]+ +\.\.\. ok|ok +[0-9]+ +[-+] )' "$log" || true)
	regress_bad=$(grep -Ec '^((test| ) *[^ ]+ +\.\.\. FAILED|not ok +[0-9]+ +[-+] )' "$log" || true)
	if [ "$rc" -ne 0 ] && [ "$regress_bad" -eq 0 ]; then
		regress_bad=1
	fi
}
