#!/bin/bash
#
# test/check-headers.sh
#	  Compile every source file against the server headers of a PostgreSQL
#	  major that no server here is built for, with warnings as errors.
#
# Only PostgreSQL 17's headers can be had here: ../shared/pg/ holds
# Debian's postgresql-server-dev-17 package, which cannot be installed on
# bookworm; it is unpacked (once per machine) into the cache directory
# test/build-pg.sh uses, and every .c file under src/ (found with find,
# at any depth), the tests' stubs and the unit tests are compiled with gcc -fsyntax-only and the warning
# flags PGXS builds with.  Linking and running need a server, so this
# checks that the source compiles cleanly against that major's API, no
# more.
#
# Usage: test/check-headers.sh [MAJOR]	(default 17)
# Prints "check-headers: N files, M failed" last; exits non-zero on failure.
#
set -euo pipefail

cd "$(dirname "$0")/.."

MAJOR=${1:-17}
SOURCES=${COMPSPILL_PG_SOURCES:-$(cd .. && pwd)/shared/pg}
CACHE=${COMPSPILL_PG_CACHE:-/var/cache/compspill}
DEST=$CACHE/server-dev-$MAJOR

deb=$(ls "$SOURCES"/postgresql-server-dev-"${MAJOR}"_*.deb 2>/dev/null | head -1 || true)
if [ ! -d "$DEST/usr/include/postgresql/$MAJOR/server" ]; then
	if [ -z "$deb" ]; then
		echo "check-headers: no postgresql-server-dev-$MAJOR package in $SOURCES" >&2
		exit 1
	fi
	SUDO=
	[ "$(id -u)" -ne 0 ] && SUDO=sudo
	$SUDO mkdir -p "$DEST"
	$SUDO dpkg-deb -x "$deb" "$DEST"
fi
inc=$DEST/usr/include/postgresql/$MAJOR/server
grep -q "PG_MAJORVERSION \"$MAJOR\"" "$inc/pg_config.h"

# the extension with the warning flags PGXS compiles with, plus compspill's
# own (see Makefile); the unit tests with theirs (test/unit/Makefile)
common=(-fsyntax-only -Wall -Wextra -Werror -isystem "$inc" -Isrc -Itest/common)
ext_flags=("${common[@]}" -Wmissing-prototypes -Wpointer-arith
		   -Wdeclaration-after-statement -Werror=vla -Wendif-labels
		   -Wmissing-format-attribute -Wimplicit-fallthrough=3
		   -Wcast-function-type -Wshadow=compatible-local -Wformat-security
		   -Wno-format-truncation -Wno-stringop-truncation
		   -DCOMPSPILL_VERSION='"check"')

n=0
bad=0
# every .c under src/, however deep (src/codec/enc/ among them)
mapfile -t ext_sources < <(find src -name '*.c' | sort)
for f in "${ext_sources[@]}" test/common/pgstubs.c test/unit/*.c; do
	n=$((n + 1))
	case $f in
		src/*) flags=("${ext_flags[@]}") ;;
		*) flags=("${common[@]}") ;;
	esac
	if ! gcc "${flags[@]}" "$f"; then
		echo "check-headers: $f does not compile against PostgreSQL $MAJOR"
		bad=$((bad + 1))
	fi
done
echo "check-headers: PostgreSQL $MAJOR ($inc): $n files, $bad failed"
[ "$bad" -eq 0 ]
