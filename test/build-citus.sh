#!/bin/bash
#
# test/build-citus.sh
#	  Build Citus from the release sources in ../shared/citus/ and install it
#	  into one PostgreSQL server, once per server.
#
# Citus is not packaged for Debian bookworm.  The project ships two release
# tarballs in ../shared/citus/ (see its README): 14.0.1, which builds on
# PostgreSQL 16 to 18, and 13.2.2, the last release for 15.  This script
# picks the release for the server's major (15: 13.2.2; 16 to 18: 14.0.1),
# checks the tarball's sha256 against the table below (copied from
# ../shared/citus/README.md), configures it for that server without libcurl
# (which only sends anonymous statistics), builds it with every core and
# installs it into the server's pkglibdir and sharedir: for test/build-pg.sh's
# builds that is under /var/cache/compspill/, for Debian's 15 the system
# directories (hence root, or sudo).  It takes about a minute on two cores.
# A stamp in the cache directory, naming the release and the server's
# pkglibdir, makes a later run do nothing while the installed citus.so is
# still there (test/build-pg.sh rebuilding the server removes it, and the
# next run builds Citus again).
#
# The one change made to a release's source, and only where needed: Citus
# 13.2.2 defines its own static have_createdb_privilege() for PostgreSQL 15
# (src/include/pg_version_compat.h), which 15's commands/dbcommands.h
# did not export when 13.2.2 came out.  PostgreSQL 15.20 (Debian bookworm's)
# now declares it there, so the static definition conflicts with the
# server's extern one and the build stops.  When the server's dbcommands.h
# declares the function, the script adds one line before Citus's
# definition, "#define have_createdb_privilege citus_have_createdb_privilege",
# which renames Citus's copy (and every call of it in Citus), so that Citus
# calls the same code it always did (superuser, or the role's
# rolcreatedb) and nothing else changes.  14.0.1 builds as it is.
#
# Usage: test/build-citus.sh [--pg-config PATH | MAJOR]
#	MAJOR (15, 18, ...) means /usr/lib/postgresql/MAJOR/bin/pg_config, the
#	servers test/test-lib.sh names; the default is the pg_config on the PATH.
# Prints the installed citus.so's path as its last line.
#
# Environment:
#	COMPSPILL_CITUS_SOURCES	directory holding the tarballs (../shared/citus, or
#							that of the main working tree for a git worktree)
#	COMPSPILL_PG_CACHE		cache directory for the stamps (/var/cache/compspill)
#	COMPSPILL_CITUS_VERSION	build this release instead of the major's default
#
set -euo pipefail

cd "$(dirname "$0")/.."

# sha256 of each release, as ../shared/citus/README.md gives it
declare -A SHA256=(
	[13.2.2]=6ffb1af003e08550f20e34a1544d77d82cf92ed896293d44676e2547d1d3372f
	[14.0.1]=191614f34d3bc50763f39db1242e1dd79aa9df59309a42a530bd76cdbd4f1fda
)

PG_CONFIG=${PG_CONFIG:-pg_config}
if [ "${1:-}" = --pg-config ]; then
	PG_CONFIG=$2
	shift 2
elif [[ ${1:-} =~ ^[0-9]+$ ]]; then
	PG_CONFIG=/usr/lib/postgresql/$1/bin/pg_config
	shift
fi
if ! "$PG_CONFIG" --version >/dev/null 2>&1; then
	echo "build-citus: no pg_config at $PG_CONFIG" >&2
	exit 1
fi
# Debian's /usr/bin/pg_config is a wrapper; use the server's own
PG_CONFIG=$("$PG_CONFIG" --bindir)/pg_config

MAJOR=$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
case $MAJOR in
	15) default=13.2.2 ;;
	16 | 17 | 18) default=14.0.1 ;;
	*)
		echo "build-citus: no Citus release here builds on PostgreSQL $MAJOR" >&2
		exit 1
		;;
esac
VERSION=${COMPSPILL_CITUS_VERSION:-$default}
SOURCES=${COMPSPILL_CITUS_SOURCES:-$(cd .. && pwd)/shared/citus}
if [ ! -d "$SOURCES" ] && [ -z "${COMPSPILL_CITUS_SOURCES:-}" ]; then
	# a git worktree elsewhere: ../shared beside the main working tree
	common=$(git rev-parse --path-format=absolute --git-common-dir 2>/dev/null || true)
	[ -n "$common" ] && SOURCES=$(dirname "$(dirname "$common")")/shared/citus
fi
CACHE=${COMPSPILL_PG_CACHE:-/var/cache/compspill}
TARBALL=$SOURCES/citus-$VERSION.tar.xz
PKGLIBDIR=$("$PG_CONFIG" --pkglibdir)
STAMP=$CACHE/citus-$VERSION$(echo "$PKGLIBDIR" | tr '/' '_').built
NPROC=$(nproc 2>/dev/null || echo 2)

SUDO=
[ "$(id -u)" -ne 0 ] && SUDO=sudo

if [ -f "$STAMP" ] && [ -f "$PKGLIBDIR/citus.so" ]; then
	echo "build-citus: Citus $VERSION already installed in $PKGLIBDIR"
	echo "$PKGLIBDIR/citus.so"
	exit 0
fi

expected=${SHA256[$VERSION]:-}
if [ -z "$expected" ]; then
	echo "build-citus: no known sha256 for Citus $VERSION" >&2
	exit 1
fi
if [ ! -f "$TARBALL" ]; then
	echo "build-citus: $TARBALL not found" >&2
	exit 1
fi
actual=$(sha256sum "$TARBALL" | awk '{print $1}')
if [ "$actual" != "$expected" ]; then
	echo "build-citus: $TARBALL has sha256 $actual, expected $expected" >&2
	exit 1
fi

work=$(mktemp -d -t compspill-citus-build.XXXXXX)
trap 'rm -rf "$work"' EXIT
tar -xJf "$TARBALL" -C "$work"
src=$work/citus-$VERSION
log=$work/build.log

# the PostgreSQL 15.20 fix described above
compat=$src/src/include/pg_version_compat.h
dbcommands=$("$PG_CONFIG" --includedir-server)/commands/dbcommands.h
if [ "$MAJOR" = 15 ] && grep -q 'have_createdb_privilege' "$dbcommands" &&
   grep -q '^have_createdb_privilege(void)' "$compat"; then
	echo "build-citus: $dbcommands declares have_createdb_privilege(); renaming Citus's own copy"
	perl -0pi -e 's/^(static inline bool\nhave_createdb_privilege\(void\))/#define have_createdb_privilege citus_have_createdb_privilege\n$1/m' "$compat"
	grep -q '^#define have_createdb_privilege citus_have_createdb_privilege$' "$compat"
fi

echo "build-citus: building Citus $VERSION for PostgreSQL $("$PG_CONFIG" --version | awk '{print $2}') ($PG_CONFIG, make -j$NPROC)"
(
	cd "$src"
	./configure --without-libcurl PG_CONFIG="$PG_CONFIG" >"$log" 2>&1
	make -j"$NPROC" -s with_llvm=no >>"$log" 2>&1
	$SUDO make -s with_llvm=no install >>"$log" 2>&1
) || {
	echo "build-citus: build failed; last lines of the log:" >&2
	tail -n 60 "$log" >&2
	exit 1
}
$SUDO mkdir -p "$CACHE"
$SUDO touch "$STAMP"
echo "build-citus: done"
echo "$PKGLIBDIR/citus.so"
