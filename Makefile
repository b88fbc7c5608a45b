EXTENSION = compspill
EXTVERSION = 0.4.0

MODULE_big = compspill
OBJS = \
	src/compspill.o \
	src/planner.o \
	src/sortnode.o \
	src/materialnode.o \
	src/ctenode.o \
	src/explain.o \
	src/sorter.o \
	src/store.o \
	src/run.o \
	src/merge.o \
	src/blockcodec.o \
	src/compress.o \
	src/cipher.o \
	src/autocodec.o \
	src/spillfile.o \
	src/stats.o \
	src/activity.o
PGFILEDESC = "compspill - compressed, column-aware sort spills"

DATA = sql/$(EXTENSION)--$(EXTVERSION).sql \
	sql/$(EXTENSION)--0.1.0.sql \
	sql/$(EXTENSION)--0.2.0.sql \
	sql/$(EXTENSION)--0.3.0.sql \
	sql/$(EXTENSION)--0.1.0--0.2.0.sql \
	sql/$(EXTENSION)--0.2.0--0.3.0.sql \
	sql/$(EXTENSION)--0.3.0--0.4.0.sql

REGRESS = setup types collate_icu toast tuples plans rescan material cte dml cursors prepared parallel explain verbose settings codecs encryption multipass extreme tempfiles memory upgrade
REGRESS_OPTS = --load-extension=$(EXTENSION)
TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl

PG_CONFIG ?= pg_config

# -Wextra applies to our code; the server's headers are read as system
# headers, since they are not written to be -Wextra clean.
PG_CPPFLAGS += -isystem $(shell $(PG_CONFIG) --includedir-server)
PG_CFLAGS += -Wall -Wextra
# the library says its version in compspill_version() and, on 18, its magic block
PG_CPPFLAGS += -DCOMPSPILL_VERSION=\"$(EXTVERSION)\"
ifdef COMPSPILL_WERROR
PG_CFLAGS += -Werror
endif
SHLIB_LINK += -llz4 -lzstd -lcrypto

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)
