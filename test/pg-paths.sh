#
# test/pg-paths.sh
#	  Sourced by the test scripts: the PostgreSQL installation they build
#	  against and run (Debian's packages of PostgreSQL 15), and the number
#	  of cores for make -j.
#
PGVERSION=15
PGBIN=/usr/lib/postgresql/$PGVERSION/bin
export PG_CONFIG=$PGBIN/pg_config
PGXS_DIR=/usr/lib/postgresql/$PGVERSION/lib/pgxs
NPROC=$(nproc 2>/dev/null || echo 2)
