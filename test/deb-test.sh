#!/bin/bash
#
# test/deb-test.sh
#	  Build the Debian package postgresql-15-compspill from debian/ with
#	  dpkg-buildpackage, install it, check that its files are where PostgreSQL
#	  15's pg_config says, and run regression tests against the installed
#	  package; then remove the package again.
#
# Meant for Debian bookworm, as root (a user who can sudo works too).  Installs
# the build tools it needs first (dpkg-dev, debhelper, postgresql-server-dev-all
# and the package's Build-Depends) when they are missing.  The package is built
# in a copy of the tree (without .git, results/, tmp_check/ and build output),
# so the tree itself is not touched.  The regression tests run from that copy
# with "make installcheck", which builds nothing: what they load is the
# package's compspill.so and SQL scripts.  They run in a throw-away cluster
# made by pg_virtualenv.
#
# At the end the package is purged (dpkg --purge postgresql-15-compspill), so
# that a later "make install" from source (test/run-tests.sh) installs onto a
# clean spot; compspill files that were there before the package and belonged
# to no package (an earlier "make install") are put back as they were.  The
# last line is "deb-test: PASS" or "deb-test: FAIL"; the exit status is
# non-zero on failure.
#
# Environment:
#	COMPSPILL_DEB_REGRESS='setup types ...'	the pg_regress tests to run (setup
#								first; default: setup types explain verbose
#								settings codecs encryption upgrade)
#	COMPSPILL_DEB_DIR=DIR		copy the built .deb files to DIR
#	COMPSPILL_KEEP_DEB=1		keep the build directory even when all pass
#	COMPSPILL_SKIP_DEPS=1		do not check or install Debian packages
#
set -euo pipefail
exec </dev/null

cd "$(dirname "$0")/.."
TOP=$PWD

# shellcheck source=test/test-lib.sh
. test/test-lib.sh

PACKAGE=postgresql-$PGVERSION-compspill
REGRESS_TESTS=${COMPSPILL_DEB_REGRESS:-setup types explain verbose settings codecs encryption upgrade}

SUDO=
[ "$(id -u)" -ne 0 ] && SUDO=sudo

start=$(date +%s)
result=FAIL
workdir=
installed=
saved=

step()
{
	echo
	echo "=== $* ==="
}

fail()
{
	echo "deb-test: $*" >&2
	exit 1
}

# Remove the package and put back what it replaced; runs at every exit, so
# the closing line comes after it.
on_exit()
{
	local rc=$?

	if [ -n "$installed" ]; then
		step "remove $PACKAGE"
		if ! $SUDO dpkg --purge "$PACKAGE"; then
			echo "deb-test: could not remove $PACKAGE" >&2
			rc=1
		fi
		if [ -n "$saved" ] && [ -n "$(ls -A "$saved")" ]; then
			echo "deb-test: putting back the compspill files that were installed before"
			while read -r f; do
				f=${f#.}
				$SUDO mkdir -p "$(dirname "$f")" &&
					$SUDO cp -a "$saved$f" "$f" || rc=1
			done < <(cd "$saved" && find . -type f)
		fi
	fi
	if [ -n "$workdir" ]; then
		if [ "$rc" -eq 0 ] && [ "$result" = PASS ] && [ -z "${COMPSPILL_KEEP_DEB:-}" ]; then
			rm -rf "$workdir"
		else
			echo "deb-test: build directory kept in $workdir"
		fi
	fi
	echo
	echo "deb-test: finished in $(($(date +%s) - start)) s"
	if [ "$rc" -eq 0 ] && [ "$result" = PASS ]; then
		echo "deb-test: PASS"
		exit 0
	fi
	echo "deb-test: FAIL"
	[ "$rc" -eq 0 ] && rc=1
	exit "$rc"
}
trap on_exit EXIT

# 1. what building and testing the package needs
if [ -z "${COMPSPILL_SKIP_DEPS:-}" ]; then
	step "build dependencies"
	# test/install-deps.sh lists them with the rest of what the project needs
	bash test/install-deps.sh
fi

# 2. build the package in a copy of the tree
step "dpkg-buildpackage -us -uc -b"
workdir=$(mktemp -d -t compspill-deb.XXXXXX)
chmod 755 "$workdir"
src=$workdir/compspill
mkdir "$src"
tar --exclude=./.git --exclude=./results --exclude=./tmp_check \
	--exclude=./regression.diffs --exclude=./regression.out --exclude=./log \
	--exclude='./build-*' --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
	-C "$TOP" -cf - . | tar -xf - -C "$src"
# a tree someone else copied may carry no debian/ at all
[ -f "$src/debian/rules" ] || fail "no debian/rules in $TOP"

build_log=$workdir/build.log
if ! (cd "$src" && dpkg-buildpackage -us -uc -b) >"$build_log" 2>&1; then
	tail -n 60 "$build_log"
	fail "dpkg-buildpackage failed (log: $build_log)"
fi
tail -n 4 "$build_log"

arch=$(dpkg --print-architecture)
debs=("$workdir"/"${PACKAGE}"_*_"$arch".deb)
[ -f "${debs[0]}" ] || fail "dpkg-buildpackage made no ${PACKAGE}_*_$arch.deb"
[ ${#debs[@]} -eq 1 ] || fail "more than one $PACKAGE .deb: ${debs[*]}"
deb=${debs[0]}
echo "deb-test: built $(basename "$deb")"
dpkg-deb -f "$deb" Package Version Depends

if [ -n "${COMPSPILL_DEB_DIR:-}" ]; then
	mkdir -p "$COMPSPILL_DEB_DIR"
	cp "$workdir"/*.deb "$COMPSPILL_DEB_DIR"/
	echo "deb-test: copied the .deb files to $COMPSPILL_DEB_DIR"
fi

# 3. install it, keeping what it will overwrite that belongs to no package
step "install $(basename "$deb")"
saved=$workdir/saved
mkdir "$saved"
while read -r f; do
	f=${f#.}
	if [ -f "$f" ] && ! dpkg -S "$f" >/dev/null 2>&1; then
		mkdir -p "$saved$(dirname "$f")"
		cp -a "$f" "$saved$f"
	fi
done < <(dpkg-deb --fsys-tarfile "$deb" | tar -tf - | grep -v '/$')
if [ -n "$(ls -A "$saved")" ]; then
	echo "deb-test: saved $(find "$saved" -type f | wc -l) compspill files installed before (by make install)"
fi

installed=1
$SUDO dpkg -i "$deb"

# 4. the files are where PostgreSQL 15 looks for them
step "check the installed files"
pkglibdir=$($PG_CONFIG --pkglibdir)
extdir=$($PG_CONFIG --sharedir)/extension
files=$(dpkg -L "$PACKAGE")
expect=("$pkglibdir/compspill.so" "$extdir/compspill.control")
for f in "$TOP"/sql/compspill--*.sql; do
	expect+=("$extdir/$(basename "$f")")
done
bad=0
for f in "${expect[@]}"; do
	if printf '%s\n' "$files" | grep -qxF "$f" && [ -f "$f" ]; then
		echo "ok   $f"
	else
		echo "MISSING $f"
		bad=1
	fi
done
[ "$bad" -eq 0 ] || fail "$PACKAGE lacks files that make install installs"
# every file on disk is the package's (md5sums)
if ! $SUDO dpkg --verify "$PACKAGE"; then
	fail "dpkg --verify $PACKAGE: installed files differ from the package's"
fi

# 5. regression tests against the installed package, from the built copy:
# make installcheck builds nothing, and the copy holds no compspill.so
step "pg_regress against the package ($REGRESS_TESTS)"
[ ! -e "$src/compspill.so" ] || fail "the build copy still holds compspill.so"
regress_log=$workdir/regress.log
set +e
(
	cd "$src" &&
	pg_virtualenv -t -v "$PGVERSION" \
		make installcheck TAP_TESTS= ISOLATION= PG_CONFIG="$PG_CONFIG" \
		REGRESS="$REGRESS_TESTS"
) 2>&1 | tee "$regress_log"
regress_rc=${PIPESTATUS[0]}
set -e
regress_ok=0
regress_bad=0
regress_counts "$regress_log" "$regress_rc"
echo "deb-test: regression tests: $regress_ok ok, $regress_bad failed"
if [ "$regress_rc" -ne 0 ] || [ "$regress_ok" -eq 0 ]; then
	if [ -f "$src/regression.diffs" ]; then
		echo "----- regression.diffs (last 2000 lines) -----"
		tail -n 2000 "$src/regression.diffs"
		echo "----- end of regression.diffs -----"
	fi
	fail "regression tests against $PACKAGE failed (exit $regress_rc)"
fi
# nothing replaced the package's files while the tests ran
$SUDO dpkg --verify "$PACKAGE" || fail "dpkg --verify $PACKAGE failed after the tests"

result=PASS
