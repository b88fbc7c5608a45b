#!/bin/bash
#
# test/build-pg.sh
#	  Build a PostgreSQL server from a source release for the tests, once
#	  per machine.
#
# Debian bookworm packages PostgreSQL 15 only.  For the other majors the
# project ships the source release in ../shared/pg/ (see its README); this
# script checks the tarball's sha256, installs the build dependencies
# through apt, configures with what the suite needs (TAP modules, OpenSSL,
# ICU, libxml for EXPLAIN (FORMAT XML), lz4, zstd), builds the server,
# contrib/pg_stat_statements and contrib/auto_explain with every core, and
# installs into a cache directory keyed by the version:
#
#	/var/cache/compspill/postgresql-<version>
#
# A later run on the same machine finds the stamp file there and does
# nothing, so only a fresh machine pays for the build (about six minutes on
# two cores).  The installation is also linked as /usr/lib/postgresql/<major>,
# where postgresql-common's pg_virtualenv looks for a major's binaries.
#
# With --cassert the server is configured with --enable-cassert (assertions,
# freed-memory clobbering, slot and node-type checks) and -O2, into
# postgresql-<version>-cassert beside the production build.  The test suite
# runs on the assert-enabled build; the benchmark keeps the production one.
# An assert-enabled build is always linked as /usr/lib/postgresql/<major>;
# a production build only where that link does not exist yet, so that
# building the benchmark's server never swaps the server under a test run.
#
# Usage: test/build-pg.sh [--cassert] [VERSION]	(a release such as 18.6, or a major: 18)
# Prints the installation's pg_config path as its last line.
#
# Environment:
#	COMPSPILL_PG_SOURCES	directory holding the tarballs (../shared/pg)
#	COMPSPILL_PG_CACHE		cache directory (/var/cache/compspill)
#	COMPSPILL_SKIP_DEPS=1	do not install build dependencies
#
set -euo pipefail

cd "$(dirname "$0")/.."

# sha256 of each release the project builds, as ../shared/pg/README.md gives it
declare -A SHA256=(
	[18.6]=555610c24d53e4316da5b7d3fc25c279d96856d5e0e23ee308c328c5fa881d9f
)

CASSERT=
if [ "${1:-}" = --cassert ]; then
	CASSERT=1
	shift
fi
VERSION=${1:-18}
if [[ $VERSION != *.* ]]; then
	# a major: the release of it that the table above knows
	for v in "${!SHA256[@]}"; do
		[ "${v%%.*}" = "$VERSION" ] && VERSION=$v
	done
fi
MAJOR=${VERSION%%.*}
SOURCES=${COMPSPILL_PG_SOURCES:-$(cd .. && pwd)/shared/pg}
CACHE=${COMPSPILL_PG_CACHE:-/var/cache/compspill}
PREFIX=$CACHE/postgresql-$VERSION${CASSERT:+-cassert}
STAMP=$PREFIX/.compspill-built
TARBALL=$SOURCES/postgresql-${MAJOR}_$VERSION.orig.tar.bz2
NPROC=$(nproc 2>/dev/null || echo 2)

SUDO=
[ "$(id -u)" -ne 0 ] && SUDO=sudo

# Make the installation reachable where postgresql-common looks for it.
link_major()
{
	local link=/usr/lib/postgresql/$MAJOR

	if [ -z "$CASSERT" ] && [ -L "$link" ] && [ -e "$link" ] &&
	   [ "$(readlink -f "$link")" != "$(readlink -f "$PREFIX")" ]; then
		echo "build-pg: $link stays linked to $(readlink -f "$link")" >&2
	elif [ -L "$link" ] || [ ! -e "$link" ]; then
		$SUDO mkdir -p /usr/lib/postgresql
		$SUDO ln -sfn "$PREFIX" "$link"
	elif [ "$(readlink -f "$link")" != "$(readlink -f "$PREFIX")" ]; then
		echo "build-pg: $link is a real installation; pg_virtualenv -v $MAJOR will use it" >&2
	fi
}

if [ -f "$STAMP" ]; then
	echo "build-pg: PostgreSQL $VERSION already built in $PREFIX"
	link_major
	echo "$PREFIX/bin/pg_config"
	exit 0
fi

expected=${SHA256[$VERSION]:-}
if [ -z "$expected" ]; then
	echo "build-pg: no known sha256 for PostgreSQL $VERSION" >&2
	exit 1
fi
if [ ! -f "$TARBALL" ]; then
	echo "build-pg: $TARBALL not found" >&2
	exit 1
fi
actual=$(sha256sum "$TARBALL" | awk '{print $1}')
if [ "$actual" != "$expected" ]; then
	echo "build-pg: $TARBALL has sha256 $actual, expected $expected" >&2
	exit 1
fi

if [ -z "${COMPSPILL_SKIP_DEPS:-}" ]; then
	# test/install-deps.sh lists the build dependencies with the rest
	bash test/install-deps.sh
fi

work=$(mktemp -d -t compspill-pg-build.XXXXXX)
trap 'rm -rf "$work"' EXIT

echo "build-pg: building PostgreSQL $VERSION${CASSERT:+ (assertions enabled)} into $PREFIX (make -j$NPROC)"
config_extra=()
[ -n "$CASSERT" ] && config_extra=(--enable-cassert)
tar -xjf "$TARBALL" -C "$work"
src=$work/postgresql-$VERSION
log=$work/build.log
(
	cd "$src"
	./configure --prefix="$PREFIX" --enable-debug --enable-tap-tests \
		--with-openssl --with-icu --with-libxml --with-lz4 --with-zstd \
		"${config_extra[@]}" CFLAGS=-O2 >"$log" 2>&1
	make -j"$NPROC" -s >>"$log" 2>&1
	make -j"$NPROC" -s -C contrib/pg_stat_statements >>"$log" 2>&1
	make -j"$NPROC" -s -C contrib/auto_explain >>"$log" 2>&1
	make -j"$NPROC" -s -C src/test/isolation >>"$log" 2>&1
	$SUDO rm -rf "$PREFIX"
	$SUDO make -s install >>"$log" 2>&1
	$SUDO make -s -C contrib/pg_stat_statements install >>"$log" 2>&1
	$SUDO make -s -C contrib/auto_explain install >>"$log" 2>&1
	# pg_isolation_regress and isolationtester, for the isolation specs
	$SUDO make -s -C src/test/isolation install >>"$log" 2>&1
) || {
	echo "build-pg: build failed; last lines of the log:" >&2
	tail -n 60 "$log" >&2
	exit 1
}
$SUDO touch "$STAMP"
link_major
echo "build-pg: done"
echo "$PREFIX/bin/pg_config"
