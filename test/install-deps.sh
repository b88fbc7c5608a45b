#!/bin/bash
#
# test/install-deps.sh
#	  Install the Debian packages compspill needs to build, test and demo,
#	  build its Debian package, build PostgreSQL 18 and Citus for the tests.
#
# Used by test/run-tests.sh and test/demo.sh; safe to run again.  When every
# package is already installed it does nothing (set COMPSPILL_APT_UPDATE=1 to
# run apt-get update and install anyway).  Run as root, or as a user who can
# sudo.
#
set -euo pipefail

PACKAGES=(
	postgresql-15				# server, initdb, pg_ctl
	postgresql-client-15		# psql; also ships the TAP modules (PostgreSQL::Test::*)
	postgresql-common			# pg_virtualenv, pg_createcluster
	postgresql-server-dev-15	# pg_config, PGXS, server headers
	libzstd-dev
	liblz4-dev
	libssl-dev					# OpenSSL's libcrypto: compspill.encryption
	libipc-run-perl				# IPC::Run, for PostgreSQL::Test::Cluster
	perl						# prove, Test::More
	python3						# test/load.py
	make
	gcc
	libc6-dev					# only a Recommends of gcc
	# test/deb-test.sh: the Debian package
	dpkg-dev
	debhelper
	postgresql-server-dev-all	# pg_buildext, the pgxs_loop dh addon
	# test/build-pg.sh: PostgreSQL 18 from source
	bison
	flex
	pkg-config
	libicu-dev
	libreadline-dev
	zlib1g-dev
	libxml2-dev
	# test/build-citus.sh: Debian's 15 server headers include gssapi/gssapi.h
	libkrb5-dev
)

missing=()
for pkg in "${PACKAGES[@]}"; do
	if ! dpkg-query -W -f='${Status}\n' "$pkg" 2>/dev/null | grep -q '^install ok installed$'; then
		missing+=("$pkg")
	fi
done

if [ ${#missing[@]} -eq 0 ] && [ -z "${COMPSPILL_APT_UPDATE:-}" ]; then
	echo "install-deps: all ${#PACKAGES[@]} packages already installed"
	exit 0
fi

SUDO=
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null; then
		SUDO=sudo
	else
		echo "install-deps: missing packages: ${missing[*]}" >&2
		echo "install-deps: run as root, or install them by hand" >&2
		exit 1
	fi
fi

echo "install-deps: installing: ${missing[*]:-${PACKAGES[*]}}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# --no-install-recommends keeps the install small; everything needed is listed
$SUDO apt-get install -y -qq --no-install-recommends "${PACKAGES[@]}" >/dev/null
echo "install-deps: done"
