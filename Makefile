EXTENSION = compspill
EXTVERSION = 0.5.0

MODULE_big = compspill
OBJS = \
	src/compspill.o \
	src/base/settings.o \
	src/base/spillstats.o \
	src/base/crc32c.o \
	src/nodes/planner.o \
	src/nodes/sortnode.o \
	src/nodes/incsortnode.o \
	src/nodes/materialnode.o \
	src/nodes/ctenode.o \
	src/nodes/recursivenode.o \
	src/nodes/nodestore.o \
	src/nodes/rowscan.o \
	src/nodes/explain.o \
	src/nodes/customscan.o \
	src/nodes/sortkeys.o \
	src/sort/sorter.o \
	src/sort/merge.o \
	src/sort/store.o \
	src/sort/tupleform.o \
	src/spill/spiller.o \
	src/spill/runwriter.o \
	src/spill/frame.o \
	src/spill/runreader.o \
	src/spill/codecchoice.o \
	src/spill/spillsizing.o \
	src/spill/spillfile.o \
	src/codec/blockcodec.o \
	src/codec/enc/enc_common.o \
	src/codec/enc/enc_plain.o \
	src/codec/enc/enc_packed.o \
	src/codec/enc/enc_front.o \
	src/codec/enc/enc_dict.o \
	src/codec/enc/enc_int.o \
	src/codec/enc/enc_numeric.o \
	src/codec/rowframe.o \
	src/codec/compress.o \
	src/codec/cipher.o \
	src/codec/autocodec.o \
	src/shared/stats.o \
	src/shared/devices.o \
	src/shared/activity.o \
	src/shared/workers.o
PGFILEDESC = "compspill - compressed, column-aware sort spills"

DATA = sql/$(EXTENSION)--$(EXTVERSION).sql \
	sql/$(EXTENSION)--0.1.0.sql \
	sql/$(EXTENSION)--0.2.0.sql \
	sql/$(EXTENSION)--0.3.0.sql \
	sql/$(EXTENSION)--0.1.0--0.2.0.sql \
	sql/$(EXTENSION)--0.2.0--0.3.0.sql \
	sql/$(EXTENSION)--0.4.0.sql \
	sql/$(EXTENSION)--0.3.0--0.4.0.sql \
	sql/$(EXTENSION)--0.4.0--0.5.0.sql

REGRESS = setup types collate_icu toast tuples plans rescan incsort material cte recursive dml cursors prepared parallel explain verbose settings codecs encryption multipass onepass extreme tempfiles room reads memory boundary upgrade
REGRESS_OPTS = --load-extension=$(EXTENSION)
# the isolation suite (specs/*.spec, expected/iso_*.out): run once as it is
# and once with PGOPTIONS='-c compspill.enabled=off', against the same
# expected files, which hold native PostgreSQL's output; iso_setup first
ISOLATION = iso_setup iso_cte iso_recursive iso_material iso_mergejoin \
	iso_lockrows iso_merge iso_serial
ISOLATION_OPTS = --load-extension=$(EXTENSION)
TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl

PG_CONFIG ?= pg_config

# -Wextra applies to our code; the server's headers are read as system
# headers, since they are not written to be -Wextra clean.
PG_CPPFLAGS += -isystem $(shell $(PG_CONFIG) --includedir-server)
# every include of our own headers is relative to src/: "base/settings.h",
# "spill/run.h"
PG_CPPFLAGS += -I$(srcdir)/src
PG_CFLAGS += -Wall -Wextra
# the library says its version in compspill_version() and, on 18, its magic block
PG_CPPFLAGS += -DCOMPSPILL_VERSION=\"$(EXTVERSION)\"
ifdef COMPSPILL_WERROR
PG_CFLAGS += -Werror
endif
SHLIB_LINK += -llz4 -lzstd -lcrypto

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# the isolation suite alone (make installcheck runs it after pg_regress)
.PHONY: isolationcheck
isolationcheck:
	$(pg_isolation_regress_installcheck) $(ISOLATION_OPTS) $(ISOLATION)
