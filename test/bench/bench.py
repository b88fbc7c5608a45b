#!/usr/bin/env python3
"""compspill benchmark: native PostgreSQL Sort against CompSpill Sort.

Usage (as root, from anywhere; Python 3 standard library + psql, and
matplotlib for the chart if it is installed):

    test/bench/bench.py [--scales 1] [--reps 3] [--work-mem 4MB,64MB]
                        [--configs native,none,lz4,zstd1,zstd3]
                        [--queries q1,q2,q3,mj,mj_mark,s_code,s_url,s_path,s_blob]
                        [--keep] [--no-check] [--slow-disk MBPS[,MBPS...]]
                        [--chart PATH.png] [--no-compspill] ...

    # against PostgreSQL 18 (built by test/build-pg.sh), data kept per server:
    test/bench/bench.py --pg-config /var/cache/compspill/postgresql-18.6/bin/pg_config \\
        --keep --workdir /var/tmp/compspill-bench-18 --port 5492 --ref HEAD ...
    # quick end-to-end check (about 6 minutes):
    test/bench/bench.py --scales 0.1 --reps 1 --work-mem 4MB,64MB
    # the README's page-cache table (~2-2.5 h; see README.md):
    test/bench/bench.py --scales 1 --reps 3 --work-mem 4MB,64MB \\
        --configs native,auto,lz4,zstd1,none --check-mode hash --keep --ref HEAD
    # temp files on loop devices throttled to 50, then 250 MB/s (root, ~50 min):
    test/bench/bench.py --scales 0.3 --reps 3 --work-mem 4MB --slow-disk 50,250 \\
        --configs native,auto,lz4,zstd1,lz4-dio,zstd1-dio --check-mode hash --keep
    # the docs' tables (doc/performance.md, README.md) and doc/perf-summary.png
    # from the recorded runs that docs.json names (see README.md):
    test/bench/bench.py --report
    # growth with the data size (~4 h):
    test/bench/bench.py --scales 0.1,1,3 --reps 1 --work-mem 4MB,64MB \\
        --configs native,auto,lz4,zstd1,none --check-mode hash --check-work-mem first --keep

What it does:
  1. `make -C <repo> install PG_CONFIG=<--pg-config> DESTDIR=<private dir>`
     (skip with --no-install; --ref COMMIT builds a `git archive` of that
     commit instead of the work tree; the cluster loads the private install
     through dynamic_library_path, the server's own compspill.so is left
     alone), then initdb + pg_ctl start, with the binaries of --pg-config's
     server (15, 18, ...), of a throwaway cluster (user postgres, unix socket
     only, in a temp dir, shared_preload_libraries=compspill); stopped and
     removed at exit.
     With --keep the cluster lives in --workdir (default
     /var/tmp/compspill-bench) and is reused, with its data, on later runs.
  2. For each scale of --scales, in a database of its own (bench_s<scale>),
     generates in SQL the tables the queries need: a TPC-H-like lineitem
     (lineitem.py; scale 1 = 6,001,215 rows; l_comment from TPC-H's text
     grammar), an orders-like table derived from it, and a table of mixed
     strings (strings_table.py; scale 1 = 1,000,000 rows). VACUUM ANALYZE.
  3. For each slow-disk speed (or just the page cache), for each repetition,
     for each query, for each work_mem, runs every configuration once, in an
     order rotated by one each time (interleaved). Each run is a fresh
     session: SET work_mem, the configuration's and the query's settings and
     trace_sort, then EXPLAIN (ANALYZE, TIMING OFF, BUFFERS, FORMAT JSON)
     <query>, so the whole result is produced server side and nothing is
     shipped to the client. Measured per run: wall time (psql \\timing,
     client side), the backend's /proc/self/io before and after (wchar =
     bytes passed to write(): "bytes written"; write_bytes = bytes dirtied
     towards the block layer), its peak RSS (VmHWM of /proc/self/status at
     the end of the session), pg_stat_database.temp_bytes delta (read after
     the backend has exited, so its stats are flushed), from EXPLAIN the
     spill volume (native sorts: Temp Written Blocks x 8 kB, all merge
     passes; compspill: its nodes' Bytes Written) and compspill's runs and
     merge passes, and from trace_sort's LOG messages the runs and merge
     passes of every native tuplesort in the plan.
  4. Once per (scale, query, work_mem, configuration), untimed: md5 of the
     result with a total order, compared with native's (--check-work-mem
     first: at the first work_mem only; with the first slow-disk speed).
  5. Prints medians per (query, work_mem, configuration) and ratios to
     native as markdown tables, written to test/bench/out/<run>/results.md
     with the raw runs (runs.json), one EXPLAIN per configuration and a
     chart (chart.png, also --chart PATH).

Configurations: native (compspill.enabled=off); any value of compspill.codec
(none, lz4, zstd, auto, ...) as is, or followed by a compression level
(zstd1, zstd3: compspill.compression_level); any of them with "-dio"
appended (compspill.enable_dio=on), "-enc" (aes-256-gcm), "-row" or
"-column" (compspill.frame_kind). Extra settings for every session:
--set name=value (repeatable).

Slow disk (--slow-disk MBPS[,MBPS...], root): per speed, a sparse file on a
loop device (losetup --direct-io=on, so the loop device does not cache
twice), ext4, mounted in the work dir; a tablespace there as
temp_tablespaces; a cgroup v1 blkio throttle of MBPS for reads and for
writes on that device, set on the root blkio cgroup, which holds the
postgres processes and the kernel's flusher threads that do buffered
writeback (v1 limits are not hierarchical, so a child cgroup for postgres
would give it a budget besides writeback's: --blkio-child does that anyway,
into cgroup compspill_bench); the device's dirty page cache is capped (bdi
max_bytes + strict_limit, --dirty-mb) so buffered writers wait for the disk;
caches are dropped before each run, and with --evict-every S clean page
cache is dropped every S seconds during a run so that buffered re-reads of
temp files also come from the disk. All of it is undone after the speed's
runs, and at exit.
"""

import argparse
import datetime
import hashlib
import json
import os
import pwd
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import extra_tables  # noqa: E402
import lineitem  # noqa: E402
import strings_table  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
# --report without a file: the docs' tables and chart (docreport.py)
DOCS_REPORT = "docs"
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))

MJ_COLUMNS = ("o_orderkey, o_orderdate, o_orderpriority, o_comment, l_linenumber, "
              "l_partkey, l_quantity, l_extendedprice, l_comment")


def _strings_query(col):
    return dict(
        title="full-row sort of strings by %s" % col,
        sql="SELECT * FROM strings ORDER BY %s" % col,
        check="SELECT * FROM strings ORDER BY %s, id" % col,
        tables=("strings",))

QUERIES = {
    "q1": dict(
        title="full-row sort of lineitem by l_comment",
        sql="SELECT * FROM lineitem ORDER BY l_comment",
        check="SELECT * FROM lineitem ORDER BY l_comment, l_orderkey, l_linenumber",
        tables=("lineitem",)),
    "q2": dict(
        title="full-row sort of lineitem by l_shipdate, l_orderkey",
        sql="SELECT * FROM lineitem ORDER BY l_shipdate, l_orderkey",
        check="SELECT * FROM lineitem ORDER BY l_shipdate, l_orderkey, l_linenumber",
        tables=("lineitem",)),
    "q3": dict(
        title="window row_number/rank over PARTITION BY l_orderkey "
              "ORDER BY l_extendedprice DESC",
        sql="SELECT l_orderkey, l_partkey, l_quantity, l_extendedprice, "
            "row_number() OVER w, rank() OVER w FROM lineitem "
            "WINDOW w AS (PARTITION BY l_orderkey ORDER BY l_extendedprice DESC)",
        # the tie-break makes row_number() and the output order deterministic
        check="SELECT l_orderkey, l_partkey, l_quantity, l_extendedprice, "
              "row_number() OVER w, rank() OVER w FROM lineitem "
              "WINDOW w AS (PARTITION BY l_orderkey "
              "ORDER BY l_extendedprice DESC, l_linenumber)",
        tables=("lineitem",)),
    # Both inputs of the merge join are explicit sorts. When the planner
    # expects the inner sort to spill it puts a Materialize above it, which
    # does the mark/restore, and the sort under it is read forward once.
    "mj": dict(
        title="merge join of orders and lineitem on the order key, both inputs sorted",
        sql="SELECT %s FROM orders JOIN lineitem ON l_orderkey = o_orderkey" % MJ_COLUMNS,
        check="SELECT %s FROM orders JOIN lineitem ON l_orderkey = o_orderkey "
              "ORDER BY o_orderkey, l_linenumber" % MJ_COLUMNS,
        settings={"enable_hashjoin": "off", "enable_nestloop": "off"},
        tables=("lineitem", "orders")),
    # The same without Materialize: the merge join marks and restores
    # positions in the inner sort itself, which compspill leaves to its
    # tuplesort fallback for now (random access, final merge materialized).
    "mj_mark": dict(
        title="merge join as mj, inner sort with mark/restore (no Materialize)",
        sql="SELECT %s FROM orders JOIN lineitem ON l_orderkey = o_orderkey" % MJ_COLUMNS,
        check="SELECT %s FROM orders JOIN lineitem ON l_orderkey = o_orderkey "
              "ORDER BY o_orderkey, l_linenumber" % MJ_COLUMNS,
        settings={"enable_hashjoin": "off", "enable_nestloop": "off",
                  "enable_material": "off"},
        tables=("lineitem", "orders")),
    # A scroll cursor over a sort (random access: the sorted output is kept
    # and read by position), walked as a reporting tool pages through it:
    # to the end, then back through the last tenth, then to a few absolute
    # positions.  bench_scroll() (created with the data) does the walk and
    # returns a digest of the rows it saw, which is also the check.
    "cur": dict(
        title="scroll cursor over a full-row sort of lineitem, read to the end "
              "and back through the last tenth",
        sql="SELECT bench_scroll('SELECT * FROM lineitem "
            "ORDER BY l_shipdate, l_orderkey, l_linenumber', 10)",
        check="SELECT bench_scroll('SELECT * FROM lineitem "
              "ORDER BY l_shipdate, l_orderkey, l_linenumber', 10)",
        tables=("lineitem",), functions=True),
    # A nested loop rescanning a Material: the inner side (the orders of
    # 1992, about a seventh of them) is kept once and read again for each of
    # the outer rows (one order in 100000).
    "mat": dict(
        title="nested loop over a Material of a seventh of orders, rescanned for each of 60 outer rows",
        sql="SELECT count(*), sum(o_totalprice) FROM (SELECT l_orderkey FROM lineitem "
            "WHERE l_orderkey % 100000 = 1 AND l_linenumber = 1) x "
            "LEFT JOIN (SELECT * FROM orders WHERE o_orderdate < date '1993-01-01') o "
            "ON o.o_orderkey > x.l_orderkey AND o.o_comment > ''",
        check="SELECT count(*), sum(o_totalprice) FROM (SELECT l_orderkey FROM lineitem "
              "WHERE l_orderkey % 100000 = 1 AND l_linenumber = 1) x "
              "LEFT JOIN (SELECT * FROM orders WHERE o_orderdate < date '1993-01-01') o "
              "ON o.o_orderkey > x.l_orderkey AND o.o_comment > ''",
        settings={"enable_hashjoin": "off", "enable_mergejoin": "off",
                  "enable_indexscan": "off", "enable_bitmapscan": "off"},
        tables=("lineitem", "orders")),
    "s_code": _strings_query("code"),
    "s_url": _strings_query("url"),
    "s_path": _strings_query("path"),
    "s_blob": _strings_query("blob"),
    # Issue 18's "sorts that fit in memory": a full-row sort of orders with
    # work_mem far above what it needs (no spill, quicksort in memory).
    "mem": dict(
        title="full-row sort of orders by o_orderdate, o_orderkey that fits in memory",
        sql="SELECT * FROM orders ORDER BY o_orderdate, o_orderkey",
        check="SELECT * FROM orders ORDER BY o_orderdate, o_orderkey",
        work_mem=("1GB",), tables=("lineitem", "orders")),
    # Issue 18's "64kB, 50M bigints": one bigint column (native 15+ sorts it
    # as a datum sort), work_mem 64kB. The count is --bigints (default 50M);
    # sql, check and table are filled in by set_bigints().
    "bigint": dict(
        title="sort of one bigint column at work_mem 64kB",
        sql=None, check=None, work_mem=("64kB",), tables=()),
    # Issue 19: ORDER BY a, b over an index on a, groups of 100,000 rows of
    # equal a (about 10 MB each in memory): an Incremental Sort whose groups
    # spill at 4MB. With groups this large the planner costs a full sort
    # lower (it takes the Incremental Sort by itself under a LIMIT, or with
    # small groups), so enable_sort is off; the native plan must have an
    # Incremental Sort (checked).
    "isort": dict(
        title="incremental sort over an index on a, ORDER BY a, b, groups of %d rows"
              % extra_tables.ISORT_GROUP,
        sql="SELECT * FROM isort ORDER BY a, b",
        check="SELECT * FROM isort ORDER BY a, b, id",
        settings={"enable_sort": "off"},
        work_mem=("4MB",), expect="Incremental Sort", tables=("isort",)),
    # Issue 19: a recursive walk (UNION ALL) over a generated graph, each
    # step one index probe per path; the last steps' working tables
    # (160k-640k rows at scale 1) spill at 4MB. Hash and merge joins are off
    # so that the join does not spill files of its own.
    "rwalk": dict(
        title="recursive walk (WITH RECURSIVE ... UNION ALL) of %d steps over a graph "
              "of two out-edges per node" % extra_tables.WALK_DEPTH,
        sql=extra_tables.walk_sql(),
        check=extra_tables.walk_sql(" ORDER BY start, depth, node, cost, via"),
        settings={"enable_hashjoin": "off", "enable_mergejoin": "off"},
        work_mem=("4MB",), expect="Recursive Union", tables=("graph",)),
}

# the queries of issue 18's targets ("final": q1, q2, mj, s_url, s_blob at
# 4MB and 64MB; mem, bigint) and issue 19's (isort, rwalk)
FINAL_QUERIES = ("q1", "q2", "mj", "s_url", "s_blob", "mem", "bigint", "isort", "rwalk")


# --queries without it: the queries of 0.4's tables and charts
DEFAULT_QUERIES = ("q1", "q2", "q3", "mj", "mj_mark", "cur", "mat",
                   "s_code", "s_url", "s_path", "s_blob")

# --preset NAME: defaults for a whole suite on one server (see README.md for
# the measured times). final: issue 18's page-cache targets (q1, q2, mj,
# s_url, s_blob at 4MB and 64MB), the sort that fits in memory, the narrow
# bigint sort at 64kB and issue 19's two queries, every configuration
# checked against native at its first work_mem. slow: the 50 and 250 MB/s
# rows (q1, q2 at 4MB).
PRESETS = {
    "final": dict(scales="1", reps=3, work_mem="4MB,64MB", queries=",".join(FINAL_QUERIES),
                  configs="native,auto,lz4,zstd1", check_mode="xor", check_work_mem="first",
                  bigints="10M", keep=True),
    "slow": dict(scales="0.3", reps=3, work_mem="4MB", queries="q1,q2", slow_disk="50,250",
                 configs="native,auto,lz4,zstd1", check_mode="xor", check_work_mem="first",
                 keep=True),
    "smoke": dict(scales="0.1", reps=1, work_mem="4MB", queries=",".join(FINAL_QUERIES),
                  configs="native,auto,lz4,zstd1", check_mode="xor", bigints="1M",
                  keep=True),
}


def set_bigints(n):
    """Point the bigint query at the table of n rows."""
    t = extra_tables.bigints_table(n)
    QUERIES["bigint"].update(
        title="sort of %s bigints (one column) at work_mem 64kB" % "{:,}".format(n),
        sql="SELECT x FROM %s ORDER BY x" % t, check="SELECT x FROM %s ORDER BY x" % t,
        tables=(t,))


def query_wms(args, q):
    """The work_mem values a query runs at: its own (mem, bigint, isort,
    rwalk), else --work-mem."""
    return list(QUERIES.get(q, {}).get("work_mem") or args.work_mem)

# bench_scroll(query, tenth): open a scroll cursor over query, move to its
# end, fetch the last 1/tenth of the rows backward, then ten absolute
# positions; return the row count and a digest of every row fetched.
BENCH_FUNCTIONS = r"""
CREATE OR REPLACE FUNCTION bench_scroll(q text, part int) RETURNS text
LANGUAGE plpgsql AS $f$
DECLARE
    c refcursor;
    r record;
    n bigint;
    h bigint := 0;
    k bigint := 0;
BEGIN
    OPEN c SCROLL FOR EXECUTE q;
    MOVE FORWARD ALL FROM c;
    GET DIAGNOSTICS n = ROW_COUNT;
    FOR i IN 1 .. n / part LOOP
        FETCH PRIOR FROM c INTO r;
        EXIT WHEN NOT FOUND;
        h := (h * 31 + hashtext(r::text)) % 4294967291;
        k := k + 1;
    END LOOP;
    FOR i IN 1 .. 10 LOOP
        FETCH ABSOLUTE (n * i / 11)::int FROM c INTO r;
        h := (h * 31 + hashtext(r::text)) % 4294967291;
        k := k + 1;
    END LOOP;
    CLOSE c;
    RETURN n || ' rows, ' || k || ' fetched, digest ' || h;
END
$f$;
"""

NATIVE = "native"
KNOWN_CODECS = ("none", "lz4", "zstd", "auto")
IO_KEYS = ("rchar", "wchar", "read_bytes", "write_bytes", "cancelled_write_bytes")
BLKIO = "/sys/fs/cgroup/blkio"
CGROUP = os.path.join(BLKIO, "compspill_bench")

_cleanups = []          # run in reverse order at exit


def log(msg):
    print("[%s] %s" % (datetime.datetime.now().strftime("%H:%M:%S"), msg),
          file=sys.stderr, flush=True)


def run(cmd, check=True, **kw):
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.STDOUT)
    kw.setdefault("text", True)
    # own session: a Ctrl-C or a kill of our process group must not take
    # down pg_ctl, umount or losetup half way through the cleanup
    kw.setdefault("start_new_session", True)
    p = subprocess.run(cmd, **kw)
    if check and p.returncode != 0:
        raise RuntimeError("command failed (%d): %s\n%s" % (
            p.returncode, " ".join(cmd), p.stdout or ""))
    return p


def write_file(path, text):
    with open(path, "w") as f:
        f.write(text)


def read_file(path):
    with open(path) as f:
        return f.read()


def parse_config(name, codecs=None):
    """A configuration name -> (codec, level, dio, enc, kind), None for native.

    Names: native; a compspill.codec value (none, lz4, zstd, auto, ...), or
    one followed by a compression level (zstd1, zstd3); optionally "-dio"
    (direct I/O), "-enc" (compspill.encryption = aes-256-gcm), "-row" or
    "-column" (compspill.frame_kind; kind is None without them).
    With `codecs` (the server's list of compspill.codec values) the codec
    must be one of them; without it only the form is checked, and a
    trailing number is read as a level unless the whole name is a codec."""
    if name == NATIVE:
        return None
    base, dio, enc, kind = name, False, False, None
    while True:
        if base.endswith("-dio"):
            dio = True
        elif base.endswith("-enc"):
            enc = True
        elif base.endswith("-row"):
            kind = "row"
        elif base.endswith("-column"):
            kind = "column"
        else:
            break
        base = base[:base.rindex("-")]
    if not re.fullmatch(r"[a-z][a-z0-9_]*", base):
        raise SystemExit("bad configuration name %r" % name)
    if codecs is None:
        # before the server is up: the codecs of today, and anything else
        # as a codec name of its own (checked against the server later)
        codecs = KNOWN_CODECS
        m = re.fullmatch(r"(.*?)(\d+)", base)
        if base not in codecs and not (m and m.group(1) in codecs):
            return base, None, dio, enc, kind
    if base in codecs:
        return base, None, dio, enc, kind
    for i in range(len(base) - 1, 0, -1):
        if base[i:].isdigit() and base[:i] in codecs:
            return base[:i], base[i:], dio, enc, kind
    raise SystemExit("configuration %r: compspill.codec has no value %r (the installed "
                     "compspill knows %s)" % (name, base, ", ".join(codecs)))


def config_settings(name, have_compspill, codecs=None):
    """The session settings of a configuration."""
    c = parse_config(name, codecs)
    if c is None:
        return {"compspill.enabled": "off"} if have_compspill else {}
    codec, level, dio, enc, kind = c
    s = {"compspill.enabled": "on", "compspill.codec": codec,
         "compspill.enable_dio": "on" if dio else "off"}
    if enc:
        s["compspill.encryption"] = "aes-256-gcm"
    if kind is not None:
        s["compspill.frame_kind"] = kind
    if level is not None:
        s["compspill.compression_level"] = level
    return s


def fmt_scale(scale):
    return "%g" % scale


def db_name(scale):
    return "bench_s" + fmt_scale(scale).replace(".", "_")


def disk_name(mbps):
    return "page cache" if not mbps else "%g MB/s disk" % mbps


# ---------------------------------------------------------------- cluster


class Cluster:
    def __init__(self, args):
        self.args = args
        self.bindir = run([args.pg_config, "--bindir"]).stdout.strip()
        self.root = os.geteuid() == 0
        self.owner = "postgres" if self.root else pwd.getpwuid(os.geteuid()).pw_name
        if args.keep:
            self.workdir = os.path.abspath(args.workdir)
            os.makedirs(self.workdir, exist_ok=True)
        else:
            self.workdir = tempfile.mkdtemp(prefix="csbench-", dir=args.tmpdir)
        if self.root:
            pw = pwd.getpwnam("postgres")
            os.chown(self.workdir, pw.pw_uid, pw.pw_gid)
        os.chmod(self.workdir, 0o755)
        self.datadir = os.path.join(self.workdir, "data")
        self.logfile = os.path.join(self.workdir, "postgres.log")
        self.port = args.port or free_port()
        self.running = False

    def as_owner(self, cmd):
        return (["runuser", "-u", "postgres", "--"] + cmd) if self.root else cmd

    def bin(self, name):
        return os.path.join(self.bindir, name)

    def init(self):
        if os.path.exists(os.path.join(self.datadir, "PG_VERSION")):
            log("reusing cluster in %s" % self.datadir)
            return
        log("initdb %s" % self.datadir)
        # 18's initdb turns data checksums on by default; 15's cluster has
        # none, so versions are compared on the same kind of cluster
        extra = ["--no-data-checksums"] if pg_major(self.args.pg_config) >= 18 else []
        run(self.as_owner([self.bin("initdb"), "-D", self.datadir, "-U", "postgres",
                           "-A", "trust", "-E", "UTF8", "--locale=" + self.args.locale,
                           "--no-sync"] + extra))
        with open(os.path.join(self.datadir, "postgresql.conf"), "a") as f:
            f.write("\ninclude_if_exists = 'bench.conf'\n")

    def start(self, preload):
        conf = {
            "port": str(self.port),
            "listen_addresses": "''",
            "unix_socket_directories": "'%s'" % self.workdir,
            "shared_buffers": "'%s'" % self.args.shared_buffers,
            "max_parallel_workers_per_gather": "0",
            "jit": "off",
            "autovacuum": "off",
            "wal_level": "minimal",
            "max_wal_senders": "0",
            "fsync": "off",
            "synchronous_commit": "off",
            "full_page_writes": "off",
            "max_wal_size": "'4GB'",
            "log_temp_files": "0",
            "log_min_messages": "warning",
        }
        if preload:
            conf["shared_preload_libraries"] = "'compspill'"
            if getattr(self.args, "lib_dir", None):
                # the private install of install(), before the server's own
                conf["dynamic_library_path"] = "'%s:$libdir'" % self.args.lib_dir
        conf_path = os.path.join(self.datadir, "bench.conf")
        write_file(conf_path, "".join("%s = %s\n" % kv for kv in conf.items()))
        if self.root:
            shutil.chown(conf_path, "postgres", "postgres")
        log("starting postgres on port %d (socket in %s)" % (self.port, self.workdir))
        p = run(self.as_owner([self.bin("pg_ctl"), "-D", self.datadir, "-l", self.logfile,
                               "-w", "-t", "300", "start"]), check=False)
        if p.returncode != 0:
            tail = run(["tail", "-20", self.logfile], check=False).stdout
            raise RuntimeError("pg_ctl start failed:\n%s\n%s" % (p.stdout, tail))
        self.running = True

    def log_tail(self, n=15):
        """The server log's last lines (what a crash left there)."""
        try:
            with open(self.logfile, errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""

    def postmaster_pid(self):
        return int(read_file(os.path.join(self.datadir, "postmaster.pid")).split()[0])

    def stop(self):
        if not self.running:
            return
        log("stopping postgres")
        p = run(self.as_owner([self.bin("pg_ctl"), "-D", self.datadir, "-m", "fast",
                               "-w", "-t", "120", "stop"]), check=False)
        if p.returncode != 0:
            run(self.as_owner([self.bin("pg_ctl"), "-D", self.datadir, "-m",
                               "immediate", "-w", "stop"]), check=False)
        self.running = False

    def remove(self):
        if not self.args.keep and os.path.isdir(self.workdir):
            shutil.rmtree(self.workdir, ignore_errors=True)

    def psql_cmd(self, db="postgres"):
        return [self.bin("psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                "-h", self.workdir, "-p", str(self.port), "-U", "postgres", "-d", db]

    def psql(self, sql, db="postgres", check=True, timeout=None):
        p = subprocess.run(self.psql_cmd(db), input=sql, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=timeout,
                           start_new_session=True)
        if check and p.returncode != 0:
            raise RuntimeError("psql failed: %s\n--- sql:\n%s" % (p.stderr.strip(), sql[:2000]))
        return p

    def wait_ready(self, timeout=300):
        t0 = time.time()
        while time.time() - t0 < timeout:
            p = run([self.bin("pg_isready"), "-h", self.workdir, "-p", str(self.port)],
                    check=False)
            if p.returncode == 0:
                return True
            time.sleep(1)
        return False


def free_port():
    for port in range(55432, 56432):
        if os.path.exists("/tmp/.s.PGSQL.%d" % port):
            continue
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", port))
            return port
        except OSError:
            continue
        finally:
            s.close()
    raise RuntimeError("no free port")


# --------------------------------------------------------------- slow disk


class SlowDisk:
    """A loop device throttled with cgroup v1 blkio, used as temp tablespace."""

    def __init__(self, args, workdir, mbps):
        self.args = args
        self.mbps = mbps
        self.bps = int(self.mbps * 1000 * 1000)
        self.img = os.path.join(args.slow_image_dir, "csbench-disk-%d-%g.img" % (os.getpid(), mbps))
        self.mnt = os.path.join(workdir, "slowdisk-%g" % mbps)
        self.dev = None
        self.devno = None
        self.mounted = False
        self.cgroup = False
        self.root_limits = False
        self.bdi_saved = {}
        self.evicting = None

    def setup(self):
        if os.geteuid() != 0:
            raise SystemExit("--slow-disk needs root")
        if not os.path.isdir(BLKIO):
            raise SystemExit("cgroup v1 blkio is not mounted at %s" % BLKIO)
        log("slow disk: %s (%d GB sparse), %g MB/s" % (self.img, self.args.slow_size_gb, self.mbps))
        with open(self.img, "wb") as f:
            f.truncate(self.args.slow_size_gb * 1024 ** 3)
        self.dev = run(["losetup", "--find", "--show", "--direct-io=on", self.img]).stdout.strip()
        st = os.stat(self.dev)
        self.devno = "%d:%d" % (os.major(st.st_rdev), os.minor(st.st_rdev))
        run(["mkfs.ext4", "-q", "-F", "-m", "0", "-E",
             "lazy_itable_init=0,lazy_journal_init=0", self.dev])
        os.makedirs(self.mnt, exist_ok=True)
        run(["mount", "-o", "noatime", self.dev, self.mnt])
        self.mounted = True
        ts = os.path.join(self.mnt, "ts")
        os.makedirs(ts, exist_ok=True)
        shutil.chown(ts, "postgres", "postgres")
        os.chmod(ts, 0o700)
        # Limit dirty page cache for this device only, so buffered writers
        # (native sort) are held to the disk's speed instead of writing into
        # 24 GB of RAM and deleting the file before it is ever written back.
        bdi = "/sys/class/bdi/%s" % self.devno
        for knob, val in (("strict_limit", "1"), ("max_ratio", None),
                          ("max_bytes", str(self.args.dirty_mb * 1024 * 1024))):
            path = os.path.join(bdi, knob)
            if os.path.exists(path):
                self.bdi_saved.setdefault(path, read_file(path).strip())
                if val is not None:
                    write_file(path, val)
            else:
                log("slow disk: %s not available, dirty pages not capped" % path)
        # Throttle. Every I/O to the device goes through the root blkio
        # cgroup's limit: buffered writeback is issued by the kernel's
        # flusher threads, which cgroup v1 leaves in the root cgroup, and the
        # postgres processes are there too. v1 throttling is not
        # hierarchical (measured here: a child cgroup and the root each get
        # their own MBPS), so moving postgres into a child cgroup would give
        # native sort two budgets, one for writeback and one for its reads.
        for f in ("blkio.throttle.write_bps_device", "blkio.throttle.read_bps_device"):
            write_file(os.path.join(BLKIO, f), "%s %d\n" % (self.devno, self.bps))
        self.root_limits = True
        if self.args.blkio_child:
            os.makedirs(CGROUP, exist_ok=True)
            self.cgroup = True
            for f in ("blkio.throttle.write_bps_device", "blkio.throttle.read_bps_device"):
                write_file(os.path.join(CGROUP, f), "%s %d\n" % (self.devno, self.bps))
        log("slow disk: %s (%s) mounted at %s, throttled to %d B/s"
            % (self.dev, self.devno, self.mnt, self.bps))
        return ts

    def attach(self, postmaster_pid):
        if not self.cgroup:
            return
        pids = [postmaster_pid] + children(postmaster_pid)
        for pid in pids:
            try:
                write_file(os.path.join(CGROUP, "cgroup.procs"), "%d\n" % pid)
            except OSError as e:
                log("slow disk: could not move pid %d: %s" % (pid, e))
        log("slow disk: moved %d postgres processes into %s" % (len(pids), CGROUP))

    def disk_stat(self):
        """Bytes read from and written to the loop device so far (its
        /sys/block stat, 512-byte sectors): the real disk traffic."""
        f = read_file("/sys/block/%s/stat" % os.path.basename(self.dev)).split()
        return int(f[2]) * 512, int(f[6]) * 512

    def drop_caches(self):
        os.sync()
        write_file("/proc/sys/vm/drop_caches", "3\n")

    def start_evicting(self):
        if not self.args.evict_every:
            return
        stop = threading.Event()

        def loop():
            while not stop.wait(self.args.evict_every):
                try:
                    write_file("/proc/sys/vm/drop_caches", "1\n")
                except OSError:
                    pass
        t = threading.Thread(target=loop, daemon=True)
        t.start()
        self.evicting = (stop, t)

    def stop_evicting(self):
        if self.evicting:
            self.evicting[0].set()
            self.evicting[1].join()
            self.evicting = None

    def detach(self):
        """Move every process out of the cgroup (before the cluster stops)."""
        self.stop_evicting()
        if self.cgroup and os.path.isdir(CGROUP):
            for _ in range(3):
                pids = read_file(os.path.join(CGROUP, "cgroup.procs")).split()
                if not pids:
                    break
                for pid in pids:
                    try:
                        write_file(os.path.join(BLKIO, "cgroup.procs"), pid + "\n")
                    except OSError:
                        pass

    def teardown(self):
        self.detach()
        if self.root_limits:
            for f in ("blkio.throttle.write_bps_device", "blkio.throttle.read_bps_device"):
                try:
                    write_file(os.path.join(BLKIO, f), "%s 0\n" % self.devno)
                except OSError as e:
                    log("slow disk: resetting %s: %s" % (f, e))
            self.root_limits = False
        if self.cgroup and os.path.isdir(CGROUP):
            for _ in range(10):
                try:
                    os.rmdir(CGROUP)
                    break
                except OSError:
                    self.detach()
                    time.sleep(0.5)
            self.cgroup = False
        for path, val in self.bdi_saved.items():
            if path.endswith("max_bytes"):
                continue                # max_ratio restores it
            try:
                write_file(path, val)
            except OSError:
                pass
        self.bdi_saved = {}
        if self.mounted:
            for _ in range(10):
                if run(["umount", self.mnt], check=False).returncode == 0:
                    break
                time.sleep(1)
            else:
                run(["umount", "-l", self.mnt], check=False)
            self.mounted = False
            try:
                os.rmdir(self.mnt)
            except OSError:
                pass
        if self.dev:
            run(["losetup", "-d", self.dev], check=False)
            self.dev = None
        if os.path.exists(self.img):
            os.unlink(self.img)
        log("slow disk: torn down")


def children(pid):
    out = run(["ps", "-o", "pid=", "--ppid", str(pid)], check=False).stdout
    return [int(x) for x in out.split()]


# ------------------------------------------------------------ measurement


def parse_io(text):
    d = {}
    for line in text.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            if k.strip() in IO_KEYS:
                d[k.strip()] = int(v)
    return d


def parse_status(text):
    """The kB figures of /proc/<pid>/status we keep, in bytes."""
    d = {}
    for line in text.splitlines():
        m = re.match(r"(VmHWM|VmRSS|RssAnon|RssFile|RssShmem):\s+(\d+) kB", line)
        if m:
            d[m.group(1)] = int(m.group(2)) * 1024
    return d


def parse_cpu(text):
    """CPU seconds (user + system) a process has used so far, from its
    /proc/<pid>/stat: fields 14 and 15, in clock ticks, counted after the
    ")" that closes the command name (which may hold spaces). None if the
    text does not parse."""
    rest = text.rsplit(")", 1)[-1].split()
    try:
        return (int(rest[11]) + int(rest[12])) / os.sysconf("SC_CLK_TCK")
    except (IndexError, ValueError):
        return None


def parse_trace(text):
    """Runs and merge passes of the native tuplesorts of a run, from
    trace_sort's LOG messages (PostgreSQL 15-18 tuplesort.c: one "finished
    writing run" per initial run, one "starting merge pass" per merge pass,
    the final on-the-fly merge included)."""
    runs = len(re.findall(r"finished writing run \d+ to tape", text))
    passes = len(re.findall(r"starting merge pass of \d+ input runs", text))
    return runs, passes


def walk(plan):
    yield plan
    for sub in plan.get("Plans", []):
        yield from walk(sub)


def node_props(node):
    """A CompSpill node's own properties, nested groups flattened."""
    out, stack = {}, [node]
    while stack:
        d = stack.pop()
        for k, v in d.items():
            if k == "Plans":
                continue
            if isinstance(v, dict):
                stack.append(v)
            else:
                out[k] = v
    return out


def incsort_methods(node):
    """The sort methods of an Incremental Sort's groups ("quicksort",
    "external merge", ...), from its Full-sort and Pre-sorted Groups;
    "" when the node has none."""
    methods = []
    for group in ("Full-sort Groups", "Pre-sorted Groups"):
        g = node.get(group)
        if isinstance(g, dict):
            for m in g.get("Sort Methods Used") or []:
                if m not in methods:
                    methods.append(m)
    return ",".join(methods)


def frame_counts(node):
    """Frame counts a CompSpill node's EXPLAIN reports, by kind: every
    numeric property whose name (or the name of a group it is in) says
    "frame" and is not a size, a byte count or a time; "Frames LZ4" -> LZ4,
    "Row Frames" -> Row, {"Frames": {"Row": 3}} -> Row. Absent is fine:
    an empty dict."""
    out = {}
    stack = [("", node)]
    while stack:
        path, d = stack.pop()
        for k, v in d.items():
            if k == "Plans":
                continue
            name = (path + " " + k).strip()
            if isinstance(v, dict):
                stack.append((name, v))
                continue
            if num(v) is None or not re.search(r"frame", name, re.I) or \
                    re.search(r"size|byte|time|\bkb\b|ratio", name, re.I):
                continue
            kind = re.sub(r"\s+", " ", re.sub(r"frames?", "", name, flags=re.I)).strip()
            out[kind or "all"] = out.get(kind or "all", 0) + v
    return out


def frames_note(frames):
    """Frames by kind, short: "frames LZ4 367, Row 12"; "" without any."""
    if not frames:
        return ""
    return "  frames " + ", ".join("%s %g" % (k, v) for k, v in sorted(frames.items()) if v)


def num(v):
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None

CS_FIELDS = (("cs_written", r"^bytes[ _]?written$"),
             ("cs_in", r"^bytes[ _]?before"),
             ("cs_runs", r"^(spill )?runs$"),
             ("cs_passes", r"^merge[ _]?passes$"),
             ("cs_ratio", r"^compression[ _]?ratio$"),
             # EXPLAIN's Spill CPU: where the spill's CPU went, ms
             ("cs_encode_ms", r"^spill[ _]?encode[ _]?time$"),
             ("cs_compress_ms", r"^spill[ _]?compress[ _]?time$"),
             ("cs_decompress_ms", r"^spill[ _]?decompress[ _]?time$"),
             ("cs_decode_ms", r"^spill[ _]?decode[ _]?time$"))


def summarize_explain(doc):
    """The figures of one EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON).

    Temp Written Blocks is cumulative up the tree, so the top node's is what
    every native tuplesort of the plan wrote (compspill's tuplesort fallback
    included). compspill's own spill files are in its nodes' Bytes Written
    (kB: EXPLAIN's JSON drops the unit, src/nodes/explain.c has it); since
    3dc5457 compspill also counts them as temp blocks, so they are in Temp
    Written Blocks already. A node's Bytes Written is added only where its
    own temp blocks (its Temp Written Blocks less its children's) do not
    hold them, as with a compspill built before that."""
    top = doc[0]
    plan = top["Plan"]
    res = {"exec_ms": top.get("Execution Time"), "rows": plan.get("Actual Rows"),
           "temp_written_bytes": (plan.get("Temp Written Blocks", 0) or 0) * 8192,
           "temp_read_bytes": (plan.get("Temp Read Blocks", 0) or 0) * 8192,
           "sorts": [], "cs_nodes": []}
    res["node_types"] = []
    frames = {}
    for n in walk(plan):
        nt = n.get("Node Type")
        res["node_types"].append(str(n.get("Custom Plan Provider") or nt))
        if nt == "Sort":
            res["sorts"].append("Sort(%s)" % n.get("Sort Method", "?"))
        elif nt == "Incremental Sort":
            res["sorts"].append("IncrementalSort(%s)" % incsort_methods(n))
        elif nt in ("Materialize", "Recursive Union", "WorkTable Scan", "CTE Scan"):
            res["sorts"].append(nt.replace(" ", "").replace("Materialize", "Material"))
        elif nt == "Custom Scan" and \
                "CompSpill" in str(n.get("Custom Plan Provider", "")):
            props = node_props(n)
            fb = " fallback" if any(props[k] is True for k in props
                                    if re.search(r"fallback$", k, re.I)
                                    and "direct" not in k.lower()) else ""
            provider = str(n.get("Custom Plan Provider"))
            # "CompSpill(...)" for the Sort, Material and CTE Scan of 0.4;
            # the provider's own word for new ones (Incremental Sort, ...)
            kind = provider[len("CompSpill"):].strip()
            label = "CompSpill" if kind in ("Sort", "Material", "CTE Scan") else \
                "CompSpill %s" % kind
            what = props.get("Sort Method") or incsort_methods(n) or \
                "storage " + str(props.get("Storage", "-"))
            res["sorts"].append("%s(%s%s)" % (label, what, fb))
            for k, v in frame_counts(n).items():
                frames[k] = frames.get(k, 0) + v
            node = {}
            for key, field in CS_FIELDS:
                for k, v in props.items():
                    if re.search(field, k, re.I) and num(v) is not None:
                        node[key] = v
            if node:
                own = (n.get("Temp Written Blocks", 0) or 0) - sum(
                    (c.get("Temp Written Blocks", 0) or 0) for c in n.get("Plans", []))
                node["own_temp_written"] = own * 8192
                res["cs_nodes"].append(node)
    nodes = res["cs_nodes"]

    def total(key, mult=1):
        vals = [n[key] for n in nodes if key in n]
        return sum(vals) * mult if vals else None
    res["cs_written_bytes"] = total("cs_written", 1024)
    res["cs_in_bytes"] = total("cs_in", 1024)
    res["cs_runs"] = total("cs_runs")
    res["cs_passes"] = total("cs_passes")
    # over several nodes: all bytes before encoding over all bytes of runs
    runs_bytes = [n["cs_in"] / n["cs_ratio"] for n in nodes
                  if n.get("cs_ratio") and n.get("cs_in") is not None]
    res["cs_ratio"] = (total("cs_in") / sum(runs_bytes)) if runs_bytes and sum(runs_bytes) \
        else None
    for k in ("cs_encode_ms", "cs_compress_ms", "cs_decompress_ms", "cs_decode_ms"):
        res[k] = total(k)
    res["frames"] = frames or None
    res["spill_bytes"] = res["temp_written_bytes"] + sum(
        max(0, n["cs_written"] * 1024 - n["own_temp_written"])
        for n in nodes if "cs_written" in n)
    return res


class Bench:
    """Runs and checks; one environment (scale, database, disk) at a time."""

    def __init__(self, args, cluster, have_compspill):
        self.args = args
        self.c = cluster
        self.have_compspill = have_compspill
        self.codecs = None
        self.runs = []
        self.checks = {}
        self.explains = {}
        self.set_env(None, None, 0, None, None)

    def set_env(self, scale, db, mbps, slow, tablespace):
        self.scale, self.db, self.mbps = scale, db, mbps
        self.slow, self.temp_tablespace = slow, tablespace

    def session_sql(self, q, cfg, work_mem, trace=False):
        s = {"work_mem": work_mem, "max_parallel_workers_per_gather": "0",
             "statement_timeout": self.args.statement_timeout}
        if self.temp_tablespace:
            s["temp_tablespaces"] = self.temp_tablespace
        s.update(config_settings(cfg, self.have_compspill, self.codecs))
        s.update(QUERIES[q].get("settings", {}))
        if trace:
            s["trace_sort"] = "on"
            s["client_min_messages"] = "log"
        for kv in self.args.set:
            k, v = kv.split("=", 1)
            s[k.strip()] = v.strip()
        return "".join("SET %s = '%s';\n" % (k, v.replace("'", "''")) for k, v in s.items())

    def temp_stats(self):
        out = self.c.psql("SELECT pg_stat_clear_snapshot(); SELECT temp_bytes, temp_files "
                          "FROM pg_stat_database WHERE datname = current_database();",
                          db=self.db).stdout.split()
        nums = [x for x in out if "|" in x][-1].split("|")
        return int(nums[0]), int(nums[1])

    def wait_gone(self, pid, timeout=30):
        t0 = time.time()
        while os.path.exists("/proc/%d" % pid) and time.time() - t0 < timeout:
            time.sleep(0.02)

    def one_run(self, q, wm, cfg, rep, pos):
        trace = not self.args.no_trace_sort
        sql = (self.session_sql(q, cfg, wm, trace) +
               "\\echo @@PID\nSELECT pg_backend_pid();\n"
               "\\echo @@STATUS0\nSELECT pg_read_file('/proc/self/status');\n"
               "\\echo @@IO0\nSELECT pg_read_file('/proc/self/io');\n"
               "\\echo @@STAT0\nSELECT pg_read_file('/proc/self/stat');\n"
               "\\echo @@EXPLAIN\n\\timing on\n"
               "EXPLAIN (ANALYZE, TIMING OFF, BUFFERS, FORMAT JSON) %s;\n"
               "\\timing off\n"
               "\\echo @@STAT1\nSELECT pg_read_file('/proc/self/stat');\n"
               "\\echo @@IO1\nSELECT pg_read_file('/proc/self/io');\n"
               "\\echo @@STATUS1\nSELECT pg_read_file('/proc/self/status');\n"
               "\\echo @@END\n" % QUERIES[q]["sql"])
        rec = {"scale": self.scale, "disk": self.mbps, "query": q, "work_mem": wm,
               "config": cfg, "rep": rep, "pos": pos, "ok": False}
        if self.slow:
            self.slow.drop_caches()
        tb0, tf0 = self.temp_stats()
        if self.slow:
            d0 = self.slow.disk_stat()
            self.slow.start_evicting()
        t0 = time.monotonic()
        try:
            p = self.c.psql(sql, db=self.db, check=False, timeout=self.args.run_timeout)
        except subprocess.TimeoutExpired:
            p = None
        finally:
            if self.slow:
                self.slow.stop_evicting()
        rec["client_s"] = time.monotonic() - t0
        if self.slow:
            d1 = self.slow.disk_stat()
            rec["disk_read"], rec["disk_written"] = d1[0] - d0[0], d1[1] - d0[1]
        if p is None or p.returncode != 0:
            if p is None:
                rec["error"] = "timeout"
            else:
                errs = [x for x in p.stderr.splitlines() if not x.startswith("LOG:")]
                rec["error"] = "\n".join(errs).strip() or "psql exit %d" % p.returncode
            rec["server_log"] = self.c.log_tail()
            log("  FAILED %s %s %s: %s\n%s" % (q, wm, cfg, rec["error"][:500],
                                               rec["server_log"]))
            if not self.c.wait_ready():
                raise RuntimeError("server did not come back")
            return rec
        sections, cur = {}, None
        for line in p.stdout.splitlines():
            if line.startswith("@@"):
                cur = line[2:]
                sections[cur] = []
            elif cur:
                sections[cur].append(line)
        pid = int(sections["PID"][0])
        io0 = parse_io("\n".join(sections["IO0"]))
        io1 = parse_io("\n".join(sections["IO1"]))
        st0 = parse_status("\n".join(sections["STATUS0"]))
        st1 = parse_status("\n".join(sections["STATUS1"]))
        cpu0 = parse_cpu("\n".join(sections["STAT0"]))
        cpu1 = parse_cpu("\n".join(sections["STAT1"]))
        ex_lines = sections["EXPLAIN"]
        m = [re.match(r"Time: ([\d.]+) ms", x) for x in ex_lines]
        times = [float(x.group(1)) for x in m if x]
        doc = json.loads("\n".join(x for x in ex_lines if not x.startswith("Time: ")))
        self.wait_gone(pid)
        tb1, tf1 = self.temp_stats()
        ex = summarize_explain(doc)
        expect = QUERIES[q].get("expect")
        if expect and not any(expect in t for t in ex["node_types"]):
            # e.g. no Incremental Sort in the plan: the query does not
            # measure what it is for (an error for native's, a note else)
            rec["plan_missing"] = expect
        ts_runs, ts_passes = parse_trace(p.stderr) if trace else (None, None)
        rec.update(ok=True, wall_s=times[0] / 1000.0, io={k: io1[k] - io0[k] for k in IO_KEYS},
                   temp_bytes=tb1 - tb0, temp_files=tf1 - tf0,
                   rss_peak=st1.get("VmHWM"), rss_start=st0.get("VmHWM"), status_end=st1,
                   cpu_s=(cpu1 - cpu0) if cpu0 is not None and cpu1 is not None else None,
                   ts_runs=ts_runs, ts_passes=ts_passes, **ex)
        key = (self.scale, self.mbps, q, wm, cfg)
        if key not in self.explains:
            self.explains[key] = doc
        return rec

    def run_all(self):
        a = self.args
        cfgs, qs = a.configs, a.queries
        total = a.reps * sum(len(query_wms(a, q)) for q in qs) * len(cfgs)
        n = 0
        t_start = time.monotonic()
        for rep in range(a.reps):
            for qi, q in enumerate(qs):
                wms = query_wms(a, q)
                for wi, wm in enumerate(wms):
                    k = (rep + qi * len(wms) + wi) % len(cfgs)
                    order = cfgs[k:] + cfgs[:k]
                    for pos, cfg in enumerate(order):
                        n += 1
                        rec = self.one_run(q, wm, cfg, rep, pos)
                        self.runs.append(rec)
                        if rec["ok"]:
                            spent = time.monotonic() - t_start
                            log("s%s %s run %d/%d rep %d %-7s %-5s %-10s %7.2f s  cpu %s  wchar %8.1f MiB"
                                "  temp %8.1f MiB  rss %6.1f MiB  passes cs %s ts %s%s  %s"
                                "%s  [%.0f s, ~%.0f s to go]" % (
                                    fmt_scale(self.scale), disk_name(self.mbps), n, total,
                                    rep + 1, q, wm, cfg, rec["wall_s"],
                                    "-" if rec.get("cpu_s") is None else "%.2f s" % rec["cpu_s"],
                                    rec["io"]["wchar"] / 2**20,
                                    rec["temp_bytes"] / 2**20, (rec["rss_peak"] or 0) / 2**20,
                                    fmt_num(rec.get("cs_passes")), fmt_num(rec.get("ts_passes")),
                                    disk_rw(rec), ",".join(rec["sorts"]),
                                    frames_note(rec.get("frames")),
                                    spent, spent / n * (total - n)))
                            if rec.get("plan_missing"):
                                log("  PLAN: the %s plan of %s has no %s node (plan: %s)" % (
                                    cfg, q, rec["plan_missing"], ", ".join(rec["node_types"])))

    def check_sql(self, q, cfg, wm):
        """The untimed check of a query's result: its row count and a digest
        of its rows in a total order (QUERIES[q]["check"]).

        md5: the md5 of every row's text, string_agg'ed in order, md5'ed;
        hash: the same with hash_record_extended per row (cheaper); xor: no
        string at all (a result of tens of millions of rows does not fit in
        a 1 GB text): the bit_xor of hashint8extended(row hash, position),
        which is as order-sensitive and as cheap as hash. The bigint query
        is always checked with xor."""
        mode = "xor" if q == "bigint" else self.args.check_mode
        if mode == "xor":
            body = ("SELECT count(*) || ' xor ' || coalesce(to_hex(bit_xor("
                    "hashint8extended(h, n))), '-') FROM (SELECT hash_record_extended(t, 0) h, "
                    "row_number() OVER () n FROM (%s) t) s;\n" % QUERIES[q]["check"])
        else:
            row = "md5(t::text)" if mode == "md5" else "hash_record_extended(t, 0)::text"
            body = ("SELECT count(*) || ' ' || coalesce(md5(string_agg(%s, ',')), '-') "
                    "FROM (%s) t;\n" % (row, QUERIES[q]["check"]))
        return self.session_sql(q, cfg, wm) + body

    def run_checks(self):
        a = self.args
        for q in a.queries:
            wms = query_wms(a, q)
            for wm in (wms if a.check_work_mem == "all" else wms[:1]):
                for cfg in a.configs:
                    sql = self.check_sql(q, cfg, wm)
                    key = (self.scale, q, wm, cfg)
                    t0 = time.monotonic()
                    p = self.c.psql(sql, db=self.db, check=False, timeout=a.run_timeout)
                    dt = time.monotonic() - t0
                    if p.returncode != 0:
                        self.checks[key] = "error: " + p.stderr.strip()[:300]
                        log("check s%s %s %s %s FAILED: %s\n%s" % (
                            fmt_scale(self.scale), q, wm, cfg, p.stderr.strip()[:500],
                            self.c.log_tail()))
                        if not self.c.wait_ready():
                            raise RuntimeError("server did not come back")
                    else:
                        self.checks[key] = p.stdout.strip().splitlines()[-1]
                        log("check s%s %-6s %-5s %-10s %s (%.1f s)" % (
                            fmt_scale(self.scale), q, wm, cfg, self.checks[key], dt))


def disk_rw(rec):
    if "disk_read" not in rec:
        return ""
    return "  disk r/w %.0f/%.0f MiB" % (rec["disk_read"] / 2**20, rec["disk_written"] / 2**20)


# ---------------------------------------------------------------- report


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt_mib(b):
    return "-" if b is None else "%.1f" % (b / 2**20)


def fmt_ratio(a, b):
    if a is None or b is None or b == 0:
        return "-"
    return "%.2fx" % (a / b)


# Below this, native did not spill: what the backend wrote is protocol and
# log messages, and a ratio to it means nothing.
MIN_BYTES = 2**20


def fmt_bytes_ratio(a, b):
    return "-" if b is None or b < MIN_BYTES else fmt_ratio(a, b)


def fmt_num(v):
    return "-" if v is None else "%g" % v


def fmt_diff_mib(a, b):
    if a is None or b is None:
        return "-"
    return "%+.1f" % ((a - b) / 2**20)


def fmt_runs(runs, passes):
    return "-" if not runs and not passes else "%g / %g" % (runs or 0, passes or 0)


def envs_of(args):
    """(scale, disk MB/s or 0) in the order they were run."""
    return [(s, d) for s in args.scales for d in (args.slow_disk or [0])]


def summarize(runs):
    groups = {}
    for r in runs:
        key = (r["scale"], r["disk"], r["query"], r["work_mem"], r["config"])
        groups.setdefault(key, []).append(r)
    out = {}
    for key, rr in groups.items():
        rs = [r for r in rr if r["ok"]]
        out[key] = {
            "wall": med([r["wall_s"] for r in rs]),
            "wmin": min([r["wall_s"] for r in rs], default=None),
            "wmax": max([r["wall_s"] for r in rs], default=None),
            "cpu": med([r.get("cpu_s") for r in rs]),
            "wchar": med([r["io"]["wchar"] for r in rs]),
            "write_bytes": med([r["io"]["write_bytes"] for r in rs]),
            "temp": med([r["temp_bytes"] for r in rs]),
            "spill": med([r.get("spill_bytes") for r in rs]),
            "rss": med([r.get("rss_peak") for r in rs]),
            "cs_runs": med([r.get("cs_runs") for r in rs]),
            "cs_passes": med([r.get("cs_passes") for r in rs]),
            "ts_runs": med([r.get("ts_runs") for r in rs]),
            "ts_passes": med([r.get("ts_passes") for r in rs]),
            "ratio": med([r.get("cs_ratio") for r in rs]),
            # the codec's own CPU (compress + decompress) and the whole
            # Spill CPU (encode + decode too), seconds
            "codec_s": med([codec_seconds(r, ("cs_compress_ms", "cs_decompress_ms"))
                            for r in rs]),
            "spillcpu_s": med([codec_seconds(r, ("cs_encode_ms", "cs_compress_ms",
                                                 "cs_decompress_ms", "cs_decode_ms"))
                               for r in rs]),
            "disk_r": med([r.get("disk_read") for r in rs]),
            "disk_w": med([r.get("disk_written") for r in rs]),
            "sorts": ",".join(sorted(set(",".join(r["sorts"]) for r in rs))) or "-",
            "frames": med_frames([r.get("frames") for r in rs]),
            "plan_missing": sorted(set(r["plan_missing"] for r in rs if r.get("plan_missing"))),
            "n": len(rs), "fail": len(rr) - len(rs),
        }
    return out


def codec_seconds(r, keys):
    """The sum of a run's Spill CPU figures keys, in seconds; None without
    them (native, or a compspill that does not report them)."""
    vals = [r.get(k) for k in keys]
    if any(v is None for v in vals):
        return None
    return sum(vals) / 1000.0


def fmt_beyond(s, b):
    """CPU beyond the codec's own: the run's backend CPU less native's less
    its compress + decompress time, as a share of native's CPU."""
    if s.get("cpu") is None or not b.get("cpu") or s.get("codec_s") is None:
        return "-"
    return "%+.0f%%" % (100.0 * (s["cpu"] - b["cpu"] - s["codec_s"]) / b["cpu"])


def med_frames(fs):
    """Median frame count per kind over runs (a run without a kind: 0)."""
    fs = [f for f in fs if f]
    kinds = sorted(set(k for f in fs for k in f))
    return {k: statistics.median([f.get(k, 0) for f in fs]) for k in kinds} or None


def fmt_frames(frames):
    if not frames:
        return "-"
    return ", ".join("%s %g" % (k, v) for k, v in frames.items() if v) or "0"


def has_frame_kinds(summ):
    """Whether some node reported frames by kind (row, column), as the row
    frames of 0.5 do, rather than by codec only."""
    return any(re.search(r"row|col", k, re.I)
               for s in summ.values() for k in (s.get("frames") or {}))


def verdict(checks, s, key):
    scale, _, q, wm, cfg = key
    chk = checks.get((scale, q, wm, cfg))
    nat = checks.get((scale, q, wm, NATIVE))
    if chk is None:
        v = "not checked"
    elif chk.startswith("error"):
        v = "ERROR"
    elif cfg == NATIVE:
        v = "reference"
    elif nat is None or nat.startswith("error"):
        v = "no reference"
    else:
        v = "identical" if chk == nat else "DIFFERENT"
    if s and s["fail"]:
        v += " (%d run(s) failed)" % s["fail"]
    if s and s.get("plan_missing") and cfg == NATIVE:
        v += "; PLAN HAS NO %s" % ", ".join(s["plan_missing"]).upper()
    return v


def passes_cell(s):
    """Runs / merge passes: compspill's nodes, and native tuplesort's (what
    trace_sort logged); both when a plan has both."""
    cs = fmt_runs(s["cs_runs"], s["cs_passes"]) if s["cs_runs"] is not None else "-"
    ts = fmt_runs(s["ts_runs"], s["ts_passes"])
    if cs != "-" and ts != "-":
        return "%s + ts %s" % (cs, ts)
    return cs if cs != "-" else ts


def report(runs, checks, args, meta):
    summ = summarize(runs)
    out = []
    scales = ", ".join(fmt_scale(s) for s in args.scales)
    version = meta.get("server_version")
    out.append("compspill benchmark%s: scale %s, work_mem %s, %d interleaved repetition(s), "
               "medians; %s." % (" on PostgreSQL %s" % version if version else "",
                                 scales, ", ".join(args.work_mem), args.reps,
                                 ", ".join(disk_name(d) for d in (args.slow_disk or [0]))))
    out.append("")
    out.append("Command: `%s`" % meta.get("command", "?"))
    out.append("")
    for s in args.scales:
        tabs = meta.get("data", {}).get(fmt_scale(s))
        if tabs:
            out.append("Data at scale %s: %s." % (fmt_scale(s), ", ".join(
                "%s %s rows (%s)" % (t, "{:,}".format(v["rows"]), v.get("size", "?"))
                for t, v in tabs.items())))
    out.append("")
    for env in envs_of(args):
        out.append("### %sscale %s, %s" % ("PostgreSQL %s, " % version if version else "",
                                            fmt_scale(env[0]), disk_name(env[1])))
        out.append("")
        kinds = has_frame_kinds(summ)
        out.append("| query | work_mem | config | wall s | wall vs native | written MiB "
                   "| written vs native | temp_bytes MiB | temp vs native | peak RSS MiB "
                   "| RSS vs native MiB | runs / passes |%s result |" % (
                       " frames |" if kinds else ""))
        out.append("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|%s---|" % (
            "---|" if kinds else ""))
        for q in args.queries:
            for wm in query_wms(args, q):
                b = summ.get(env + (q, wm, NATIVE)) or {}
                for cfg in args.configs:
                    key = env + (q, wm, cfg)
                    s = summ.get(key)
                    if s is None:
                        continue
                    cells = [q, wm, cfg, "-" if s["wall"] is None else "%.2f" % s["wall"],
                             fmt_ratio(s["wall"], b.get("wall")),
                             fmt_mib(s["wchar"]), fmt_bytes_ratio(s["wchar"], b.get("wchar")),
                             fmt_mib(s["temp"]), fmt_bytes_ratio(s["temp"], b.get("temp")),
                             fmt_mib(s["rss"]),
                             "-" if cfg == NATIVE else fmt_diff_mib(s["rss"], b.get("rss")),
                             passes_cell(s)]
                    if kinds:
                        cells.append(fmt_frames(s["frames"]))
                    cells.append(verdict(checks, s, key))
                    out.append("| " + " | ".join(cells) + " |")
        out.append("")
    if len(args.scales) > 1:
        for disk in (args.slow_disk or [0]):
            out += scale_table(summ, args, disk)
    out.append("Details:")
    out.append("")
    for env in envs_of(args):
        out += details_table(summ, checks, args, env)
    out.append("Queries: " + "; ".join(
        "%s = `%s`%s%s" % (q, QUERIES[q]["sql"], (" (with %s)" % ", ".join(
            "%s = %s" % kv for kv in QUERIES[q]["settings"].items()))
            if QUERIES[q].get("settings") else "",
            " (work_mem %s)" % ", ".join(QUERIES[q]["work_mem"])
            if QUERIES[q].get("work_mem") else "") for q in args.queries) + ".")
    out.append("")
    out.append(
        "Columns: wall = client-side time of `EXPLAIN (ANALYZE, TIMING OFF, BUFFERS, FORMAT "
        "JSON)` of the query (rows produced server side, none shipped); written = `wchar` of the "
        "backend's /proc/<pid>/io (bytes passed to write(): temp files of every sort in the "
        "plan, all merge passes, plus a few kB of protocol%s); write_bytes = bytes the backend "
        "dirtied towards the block layer (page-cache writes of a temp file deleted before "
        "writeback are counted here and again in cancelled_write_bytes); temp_bytes = "
        "pg_stat_database delta (all temp files, sizes at deletion); peak RSS = VmHWM of the "
        "backend at the end of its session (the session's high-water mark of resident memory: "
        "private memory plus the shared buffers and files it touched), RSS vs native = the "
        "difference of the medians; spill per EXPLAIN = native sorts' Temp Written Blocks x "
        "8 kB (every merge pass, compspill's tuplesort fallback included, and compspill's own "
        "spill, which it counts as temp blocks; a compspill that does not: + its nodes' Bytes "
        "Written); runs / passes = sorted runs / merge passes (the final merge included): "
        "compspill's from its EXPLAIN, native tuplesort's (\"ts\" when a plan has both) counted "
        "from trace_sort's LOG messages (PostgreSQL 15-18: \"finished writing run\", \"starting "
        "merge pass\"); comp. ratio = compspill's bytes before encoding / bytes of its runs; "
        "disk read / written (slow disk only) = the loop device's own counters over the run; "
        "result = md5 of the output in a total order (per row: %s), once per scale, query, "
        "work_mem%s and configuration, untimed." % (
            "" if getattr(args, "no_trace_sort", False)
            else ", including trace_sort's messages, about 0.3 kB per sorted run",
            "md5 of its text" if args.check_mode == "md5" else "hash_record_extended",
            "" if getattr(args, "check_work_mem", "all") == "all"
            else " (only the first, %s)" % args.work_mem[0]))
    return "\n".join(out) + "\n"


def scale_table(summ, args, disk):
    sc = args.scales
    out = ["### growth with scale, %s" % disk_name(disk), ""]
    head = ["query", "work_mem", "config"] + \
        ["wall s @%s" % fmt_scale(s) for s in sc] + \
        ["written MiB @%s" % fmt_scale(s) for s in sc] + \
        ["wall vs native @%s" % fmt_scale(s) for s in sc]
    out.append("| " + " | ".join(head) + " |")
    out.append("|---|---|---|" + "---:|" * (3 * len(sc)))
    for q in args.queries:
        for wm in query_wms(args, q):
            for cfg in args.configs:
                ss = [summ.get((s, disk, q, wm, cfg)) or {} for s in sc]
                bb = [summ.get((s, disk, q, wm, NATIVE)) or {} for s in sc]
                if not any(ss):
                    continue
                cells = [q, wm, cfg]
                cells += ["-" if x.get("wall") is None else "%.2f" % x["wall"] for x in ss]
                cells += [fmt_mib(x.get("wchar")) for x in ss]
                cells += [fmt_ratio(x.get("wall"), b.get("wall")) for x, b in zip(ss, bb)]
                out.append("| " + " | ".join(cells) + " |")
    out.append("")
    return out


def details_table(summ, checks, args, env):
    slow = bool(env[1])
    out = ["scale %s, %s:" % (fmt_scale(env[0]), disk_name(env[1])), ""]
    head = ["query", "work_mem", "config", "wall s (min-max)", "wall vs native",
            "backend CPU s", "CPU vs native", "bytes written MiB", "written vs native", "write_bytes MiB", "temp_bytes MiB",
            "temp vs native", "spill per EXPLAIN MiB"] + \
        (["disk read / written MiB"] if slow else []) + \
        ["peak RSS MiB", "runs / passes compspill", "runs / passes tuplesort",
         "comp. ratio", "Spill CPU s (codec's)", "beyond codec",
         "frames", "sort nodes", "result"]
    out.append("| " + " | ".join(head) + " |")
    out.append("|---|---|---|" + "---:|" * (len(head) - 6) + "---|---|---|")
    for q in args.queries:
        for wm in query_wms(args, q):
            b = summ.get(env + (q, wm, NATIVE)) or {}
            for cfg in args.configs:
                key = env + (q, wm, cfg)
                s = summ.get(key)
                if s is None:
                    continue
                cells = [q, wm, cfg,
                         "-" if s["wall"] is None else "%.2f (%.2f-%.2f)" % (
                             s["wall"], s["wmin"], s["wmax"]),
                         fmt_ratio(s["wall"], b.get("wall")),
                         "-" if s["cpu"] is None else "%.2f" % s["cpu"],
                         fmt_ratio(s["cpu"], b.get("cpu")),
                         fmt_mib(s["wchar"]), fmt_bytes_ratio(s["wchar"], b.get("wchar")),
                         fmt_mib(s["write_bytes"]), fmt_mib(s["temp"]),
                         fmt_bytes_ratio(s["temp"], b.get("temp")), fmt_mib(s["spill"])]
                if slow:
                    cells.append("%s / %s" % (fmt_mib(s["disk_r"]), fmt_mib(s["disk_w"])))
                cells += [fmt_mib(s["rss"]),
                          fmt_runs(s["cs_runs"], s["cs_passes"]),
                          fmt_runs(s["ts_runs"], s["ts_passes"]),
                          "-" if not s["ratio"] else "%.2f" % s["ratio"],
                          "-" if s["spillcpu_s"] is None else "%.2f (%.2f)" % (
                              s["spillcpu_s"], s["codec_s"]),
                          fmt_beyond(s, b),
                          fmt_frames(s["frames"]), s["sorts"], verdict(checks, s, key)]
                out.append("| " + " | ".join(cells) + " |")
    out.append("")
    return out


# ----------------------------------------------------------------- chart


def draw_chart(runs, args, path):
    """Draw the chart with matplotlib; returns an error text or None.

    Per disk setting at the largest scale: wall time vs native and bytes
    written vs native, one bar per compspill configuration, grouped by query
    and work_mem. With several scales also: sum over the queries of the
    wall time and of the bytes written against the scale, every
    configuration and native, log-log."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib import ticker
    except ImportError as e:
        return "matplotlib is not available (%s)" % e
    summ = summarize(runs)
    top = max(args.scales)
    disks = args.slow_disk or [0]
    cfgs = [c for c in args.configs if c != NATIVE]
    groups = [(q, wm) for q in args.queries for wm in query_wms(args, q)]
    series = len(args.scales) > 1
    # wall time per disk setting; bytes written once (they do not depend on
    # the disk)
    panels = ([("wall", "wall time", d) for d in disks] +
              [("wchar", "bytes written", disks[0])]) if cfgs else []
    nbar = len(panels)
    nrows = nbar + (1 if series else 0)
    if nrows == 0:
        return "nothing to draw"
    width = max(11.0, min(18.0, 2.0 + 0.22 * len(groups) * (len(cfgs) + 1)))
    fig = plt.figure(figsize=(width, 3.8 * nrows), dpi=110)
    gs = fig.add_gridspec(nrows, 2)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    color = {c: colors[i % len(colors)] for i, c in enumerate(cfgs)}
    color[NATIVE] = "black"
    row = 0
    for metric, label, disk in panels:
        ax = fig.add_subplot(gs[row, :])
        row += 1
        w = 0.8 / len(cfgs)
        for i, cfg in enumerate(cfgs):
            xs, ys = [], []
            for g, (q, wm) in enumerate(groups):
                s = summ.get((top, disk, q, wm, cfg)) or {}
                b = summ.get((top, disk, q, wm, NATIVE)) or {}
                floor = MIN_BYTES if metric == "wchar" else 0
                if s.get(metric) is not None and (b.get(metric) or 0) > floor:
                    xs.append(g - 0.4 + w * (i + 0.5))
                    ys.append(s[metric] / b[metric])
            ax.bar(xs, ys, w * 0.92, label=cfg, color=color[cfg])
        ax.axhline(1.0, color="black", linewidth=1, linestyle="--", label="native = 1")
        if metric == "wchar":
            for g, (q, wm) in enumerate(groups):
                b = summ.get((top, disk, q, wm, NATIVE)) or {}
                if (b.get("wchar") or 0) <= MIN_BYTES:
                    ax.text(g, 0.05, "native:\nno spill", ha="center", fontsize=8,
                            color="gray")
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels(["%s\n%s" % g for g in groups], fontsize=10)
        ax.set_xlim(-0.6, len(groups) - 0.4)
        ax.set_ylabel("%s / native's" % label)
        ax.set_title("%s vs native: scale %s, %s (lower is better)" % (
            label.capitalize(), fmt_scale(top), disk_name(disk)), loc="left")
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
        ax.legend(fontsize=8, ncol=len(cfgs) + 1, loc="lower right",
                  bbox_to_anchor=(1.0, 1.0), frameon=False)
    if series:
        disk = disks[0]
        for col, (metric, label, unit) in enumerate((("wall", "wall time", 1.0),
                                                     ("wchar", "bytes written", 2.0**20))):
            ax = fig.add_subplot(gs[row, col])
            for cfg in args.configs:
                for wi, wm in enumerate(args.work_mem):
                    xs, ys = [], []
                    for s in args.scales:
                        # the queries of --work-mem (not mem, bigint, ...)
                        vals = [(summ.get((s, disk, q, wm, cfg)) or {}).get(metric)
                                for q in args.queries if not QUERIES.get(q, {}).get("work_mem")]
                        # bytes: leave out what did not spill (protocol only)
                        if vals and all(v is not None for v in vals) and \
                                (metric != "wchar" or sum(vals) >= MIN_BYTES):
                            xs.append(s)
                            ys.append(sum(vals) / unit)
                    if xs:
                        ax.plot(xs, ys, marker="o", color=color[cfg],
                                linestyle=("-", "--", ":", "-.")[wi % 4],
                                linewidth=2.2 if cfg == NATIVE else 1.4,
                                label="%s, %s" % (cfg, wm))
            ax.set_xscale("log")
            ax.set_yscale("log")
            plain = ticker.FuncFormatter(lambda v, _: "%g" % v)
            ax.xaxis.set_major_locator(ticker.FixedLocator(args.scales))
            ax.xaxis.set_major_formatter(plain)
            ax.xaxis.set_minor_formatter(ticker.NullFormatter())
            ax.yaxis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            ax.yaxis.set_major_formatter(plain)
            ax.yaxis.set_minor_formatter(ticker.NullFormatter())
            ax.set_xlabel("scale")
            ax.set_ylabel("%s, sum over queries (%s)" % (label, "s" if unit == 1.0 else "MiB"))
            ax.set_title("Growth with scale: %s, %s" % (label, disk_name(disk)))
            ax.grid(alpha=0.3, which="both")
            ax.legend(fontsize=7, ncol=2)
    fig.suptitle("compspill vs native sort (%d rep(s), medians)" % args.reps, fontsize=13)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path)
    plt.close(fig)
    return None


def write_chart(runs_json, path):
    """The chart from a runs.json; in this interpreter when it has
    matplotlib, else with the system's python3 (Debian's python3-matplotlib)
    running bench.py --report RUNS_JSON --chart PATH."""
    with open(runs_json) as f:
        d = json.load(f)
    err = draw_chart(d["runs"], load_args(d), path)
    if err and err.startswith("matplotlib") and os.path.exists("/usr/bin/python3") \
            and os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3"):
        p = run(["/usr/bin/python3", os.path.abspath(__file__), "--report", runs_json,
                 "--chart", path, "--quiet"], check=False)
        err = None if p.returncode == 0 else "%s; /usr/bin/python3: %s" % (
            err, p.stdout.strip().splitlines()[-1:] or "failed")
    if err:
        log("no chart: %s%s" % (err, " (apt-get install -y python3-matplotlib)"
                                if err.startswith("matplotlib") else ""))
        return False
    log("chart: %s" % path)
    return True


# ------------------------------------------------------------------ main


def comma_list(text, conv=str):
    return [conv(x.strip()) for x in text.split(",") if x.strip()]


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="See the module docstring / README.md for details.")
    ap.add_argument("--report", metavar="RUNS_JSON", nargs="?", const=DOCS_REPORT,
                    help="with a file: only print the tables of an earlier run "
                         "(out/<run>/runs.json), and with --chart draw its chart; alone: "
                         "write the docs' tables (doc/performance.md, README.md) and chart "
                         "(doc/perf-summary.png) from the runs test/bench/docs.json names")
    ap.add_argument("--quiet", action="store_true", help="with --report: don't print tables")
    ap.add_argument("--scales", help="comma list of scales, run one after the other "
                                     "(lineitem scale 1 = 6,001,215 rows); default 1")
    ap.add_argument("--scale", type=float, help="one scale (same as --scales SCALE)")
    ap.add_argument("--reps", type=int, default=3, help="interleaved repetitions (default 3)")
    ap.add_argument("--work-mem", default="4MB", help="comma list, e.g. 4MB,64MB")
    ap.add_argument("--configs", default="native,none,lz4,zstd1,zstd3",
                    help="comma list: native, or a compspill.codec value (none, lz4, zstd, "
                         "auto, ...) optionally followed by a level (zstd3), each optionally "
                         "with -dio")
    ap.add_argument("--queries", default=",".join(DEFAULT_QUERIES),
                    help="comma list of %s (default: all but %s)" % (
                        ", ".join(QUERIES), ", ".join(q for q in QUERIES
                                                      if q not in DEFAULT_QUERIES)))
    ap.add_argument("--bigints", default="50M", metavar="N",
                    help="rows of the bigint query's table (50M, 5M, 200k, 1000000; "
                         "default 50M); each count is a table of its own, generated once "
                         "with --keep")
    ap.add_argument("--preset", choices=sorted(PRESETS),
                    help="defaults for a whole suite (options given as well override "
                         "them): %s" % "; ".join("%s = %s" % (k, preset_text(k))
                                                  for k in sorted(PRESETS)))
    ap.add_argument("--setup-only", action="store_true",
                    help="install, start the cluster, generate the data the queries need, "
                         "stop: no runs (with --keep: to prepare a kept cluster)")
    ap.add_argument("--profile", action="store_true",
                    help="instead of the timed runs: one run per query, work_mem and "
                         "configuration of --configs (native only if named) under "
                         "`perf record -g` attached to the backend; writes perf.data, a "
                         "folded stack file and the top self-time symbols to "
                         "out/<run>/ (root, perf)")
    ap.add_argument("--profile-top", type=int, default=25,
                    help="--profile: how many symbols the summary lists (default 25)")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="extra setting for every benchmark session (repeatable)")
    ap.add_argument("--no-compspill", action="store_true",
                    help="don't load compspill; only the native configuration")
    ap.add_argument("--no-install", action="store_true", help="don't run make install")
    ap.add_argument("--repo", default=REPO, help="compspill source tree for make install")
    ap.add_argument("--ref", help="build this git commit of --repo (git archive into a temp "
                                  "dir) instead of the work tree")
    ap.add_argument("--no-check", action="store_true", help="skip the result checks")
    ap.add_argument("--check-mode", choices=("md5", "hash", "xor"), default="md5",
                    help="result check: md5 of each row's text (default) or "
                         "hash_record_extended of each row (about 2x faster), either way "
                         "the md5 of all of them in output order; or xor: the bit_xor of "
                         "a hash of each row's hash and position (no 1 GB string; the "
                         "bigint query always uses it)")
    ap.add_argument("--check-work-mem", choices=("all", "first"), default="all",
                    help="check the results at every work_mem (default) or only at the "
                         "first of --work-mem")
    ap.add_argument("--no-trace-sort", action="store_true",
                    help="don't count native tuplesort's runs and passes with trace_sort")
    ap.add_argument("--chart", metavar="PATH.png",
                    help="also write the chart here (it is always written to the run's "
                         "out dir as chart.png)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the cluster and data in --workdir and reuse them")
    ap.add_argument("--workdir", default="/var/tmp/compspill-bench")
    ap.add_argument("--tmpdir", default="/tmp", help="parent of the throwaway work dir")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--pg-config", default="pg_config")
    ap.add_argument("--shared-buffers", default="128MB")
    ap.add_argument("--locale", default="C", help="initdb locale (default C)")
    ap.add_argument("--pool-mb", type=int, default=64,
                    help="size of the comment text pool (dbgen: 300)")
    ap.add_argument("--statement-timeout", default="0")
    ap.add_argument("--run-timeout", type=float, default=3600)
    ap.add_argument("--out", default=os.path.join(HERE, "out"))
    ap.add_argument("--slow-disk", default="", metavar="MBPS[,MBPS...]",
                    help="temp files on a loop device throttled to MBPS MB/s (root); a "
                         "comma list runs everything at each speed")
    ap.add_argument("--slow-size-gb", type=int, default=16)
    ap.add_argument("--slow-image-dir", default="/var/tmp")
    ap.add_argument("--dirty-mb", type=int, default=32,
                    help="slow disk: cap on the loop device's dirty page cache")
    ap.add_argument("--blkio-child", action="store_true",
                    help="slow disk: also move postgres into blkio cgroup compspill_bench "
                         "with the same limit (v1 limits are not hierarchical: this "
                         "gives postgres a budget of its own besides writeback's)")
    ap.add_argument("--evict-every", type=float, default=0, metavar="SEC",
                    help="slow disk: drop clean page cache every SEC seconds during a run")
    a = ap.parse_args(argv)
    if a.preset:
        # the preset's values as defaults, then the command line again
        ap.set_defaults(**PRESETS[a.preset])
        a = ap.parse_args(argv)
        if a.scale and a.scales == PRESETS[a.preset].get("scales"):
            a.scales = None             # --scale given: it wins over the preset's
    if a.report:
        return a
    a.bigints = parse_count(a.bigints)
    set_bigints(a.bigints)
    if a.scales and a.scale:
        ap.error("--scale and --scales are the same option")
    a.scales = comma_list(a.scales, float) if a.scales else [a.scale or 1.0]
    if not a.scales or min(a.scales) <= 0:
        ap.error("--scales: positive numbers")
    a.scale = None
    a.work_mem = comma_list(a.work_mem)
    a.slow_disk = comma_list(a.slow_disk, float)
    if any(x <= 0 for x in a.slow_disk):
        ap.error("--slow-disk: speeds in MB/s, > 0")
    a.configs = comma_list(a.configs)
    a.queries = comma_list(a.queries)
    for q in a.queries:
        if q not in QUERIES:
            ap.error("unknown query %s (%s)" % (q, ", ".join(QUERIES)))
    if a.no_compspill:
        a.configs = [NATIVE]
    a.profile_configs = list(a.configs)
    if NATIVE in a.configs:
        a.configs.remove(NATIVE)
    a.configs.insert(0, NATIVE)
    for c in a.configs:
        parse_config(c)
    a.pg_config = resolve_pg_config(a.pg_config)
    return a


def parse_count(text):
    """50M, 5m, 200k, 1000000 -> an int > 0."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*", str(text))
    if not m:
        raise SystemExit("--bigints: a count such as 50M, 200k or 1000000, not %r" % text)
    n = int(float(m.group(1)) * {"": 1, "k": 1000, "m": 1000000}[m.group(2).lower()])
    if n <= 0:
        raise SystemExit("--bigints: a count > 0")
    return n


def preset_text(name):
    return " ".join("--%s %s" % (k.replace("_", "-"), v) if v is not True
                    else "--" + k.replace("_", "-") for k, v in PRESETS[name].items())


def resolve_pg_config(path):
    """--pg-config as the server's own pg_config (<bindir>/pg_config), so
    that make, initdb, pg_ctl and psql all use one server: a bare
    "pg_config" on Debian is a wrapper that runs the newest installed one."""
    try:
        bindir = run([path, "--bindir"]).stdout.strip()
    except (OSError, RuntimeError) as e:
        raise SystemExit("--pg-config %s: %s" % (path, e))
    own = os.path.join(bindir, "pg_config")
    return own if os.access(own, os.X_OK) else path


def pg_major(pg_config):
    """The major version of the server of pg_config (15, 18, ...)."""
    v = run([pg_config, "--version"]).stdout.strip()     # "PostgreSQL 18.6"
    m = re.search(r"(\d+)", v)
    return int(m.group(1)) if m else 0


def load_args(d):
    """The arguments of a runs.json, older formats (one scale, one work_mem,
    one slow-disk speed) included."""
    import types
    a = types.SimpleNamespace(**d["args"])
    if not getattr(a, "scales", None):
        a.scales = [a.scale]
    if isinstance(a.work_mem, str):
        a.work_mem = [a.work_mem]
    if not isinstance(a.slow_disk, list):
        a.slow_disk = [a.slow_disk] if a.slow_disk else []
    a.check_mode = getattr(a, "check_mode", "md5")
    if getattr(a, "bigints", None):
        set_bigints(a.bigints)
    for r in d["runs"]:
        r.setdefault("scale", a.scales[0])
        r.setdefault("work_mem", a.work_mem[0])
        r.setdefault("disk", a.slow_disk[0] if a.slow_disk else 0)
        r.setdefault("sorts", [])
    return a


def load_checks(d, args):
    checks = {}
    for k, v in d["checks"].items():
        parts = k.split("/")
        if len(parts) == 2:         # older format: query/config
            parts = [fmt_scale(args.scales[0]), parts[0], args.work_mem[0], parts[1]]
        checks[(float(parts[0]), parts[1], parts[2], parts[3])] = v
    return checks


def table_meta(c, db, table):
    """The comment of a table (how it was generated), None without one."""
    out = c.psql("SELECT coalesce(obj_description(to_regclass('%s'), 'pg_class'), '')"
                 % table, db=db).stdout.strip()
    return out or None


def ensure_data(cluster, args, scale):
    """Create the database of `scale` and the tables the queries need,
    unless they are there (their comment says how they were generated)."""
    c = cluster
    db = db_name(scale)
    if c.psql("SELECT 1 FROM pg_database WHERE datname = '%s'" % db).stdout.strip() != "1":
        c.psql("CREATE DATABASE %s" % db)
    need = set()
    for q in args.queries:
        need.update(QUERIES[q]["tables"])
    if "orders" in need:
        need.add("lineitem")
    specs = {
        "lineitem": ({"scale": scale, "rows": lineitem.expected_rows(scale),
                      "pool_mb": args.pool_mb, "gen": lineitem.GEN_VERSION},
                     lambda: lineitem.generate_sql(scale, args.pool_mb)),
        "orders": ({"scale": scale, "gen": lineitem.ORDERS_GEN_VERSION,
                    "lineitem_gen": lineitem.GEN_VERSION, "pool_mb": args.pool_mb},
                   lambda: lineitem.orders_sql(scale)),
        "strings": ({"scale": scale, "rows": strings_table.expected_rows(scale),
                     "gen": strings_table.GEN_VERSION},
                    lambda: strings_table.generate_sql(scale)),
        "isort": ({"scale": scale, "rows": extra_tables.isort_rows(scale),
                   "group": extra_tables.ISORT_GROUP, "gen": extra_tables.GEN_VERSION},
                  lambda: extra_tables.isort_sql(scale)),
        "graph": ({"scale": scale, "rows": 2 * extra_tables.graph_nodes(scale),
                   "gen": extra_tables.GEN_VERSION},
                  lambda: extra_tables.graph_sql(scale)),
    }
    for table in need:
        if table.startswith("bigints_"):
            n = int(table[len("bigints_"):])
            specs[table] = ({"rows": n, "gen": extra_tables.GEN_VERSION},
                            lambda n=n: extra_tables.bigints_sql(n))
    data = {}
    regenerated = set()
    for table in ["lineitem", "orders", "strings", "isort", "graph"] + \
            sorted(t for t in need if t.startswith("bigints_")):
        if table not in need:
            continue
        want, gen = specs[table]
        have = table_meta(c, db, table)
        fresh = table == "orders" and "lineitem" in regenerated
        try:
            same = have is not None and json.loads(have) == want and not fresh
        except ValueError:
            same = False
        if same:
            log("scale %s: reusing %s" % (fmt_scale(scale), table))
        else:
            log("scale %s: generating %s" % (fmt_scale(scale), table))
            t0 = time.time()
            c.psql("SET work_mem = '256MB';\nSET maintenance_work_mem = '1GB';\nBEGIN;\n" +
                   gen() + "COMMENT ON TABLE %s IS '%s';\nCOMMIT;\n" % (table, json.dumps(want)),
                   db=db)
            t1 = time.time()
            c.psql("VACUUM (FREEZE, ANALYZE) %s; CHECKPOINT;" % table, db=db)
            log("scale %s: generated %s in %.0f s, vacuum %.0f s" % (
                fmt_scale(scale), table, t1 - t0, time.time() - t1))
            regenerated.add(table)
        n = int(c.psql("SELECT count(*) FROM %s" % table, db=db).stdout.strip())
        size = c.psql("SELECT pg_size_pretty(pg_table_size('%s'))" % table,
                      db=db).stdout.strip()
        if "rows" in want and n != want["rows"]:
            raise RuntimeError("%s: expected %d rows, got %d" % (table, want["rows"], n))
        data[table] = {"rows": n, "size": size}
        log("scale %s: %s has %d rows (%s)" % (fmt_scale(scale), table, n, size))
    if any(QUERIES[q].get("functions") for q in args.queries):
        c.psql(BENCH_FUNCTIONS, db=db)
    return db, data


def rerender(args):
    """--report RUNS_JSON [--chart PATH]: print the tables of a run again,
    draw its chart."""
    with open(args.report) as f:
        d = json.load(f)
    a = load_args(d)
    if not args.quiet:
        print(report(d["runs"], load_checks(d, a), a, d["meta"]))
    if args.chart and not write_chart(args.report, args.chart):
        return 1
    return 0


def server_codecs(cluster):
    out = cluster.psql("SELECT array_to_string(enumvals, ',') FROM pg_settings "
                       "WHERE name = 'compspill.codec'").stdout.strip()
    return comma_list(out)


def main():
    args = parse_args()
    if args.report == DOCS_REPORT:
        import docreport
        return docreport.main([], quiet=args.quiet)
    if args.report:
        return rerender(args)
    have_compspill = not args.no_compspill
    started = datetime.datetime.now()
    cmdline = " ".join(["test/bench/bench.py"] + sys.argv[1:])

    def on_signal(signum, frame):
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)      # let the cleanup finish
        raise SystemExit("interrupted by signal %d" % signum)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    if args.slow_disk and os.geteuid() != 0:
        raise SystemExit("--slow-disk needs root")

    cluster = slow = bench = None
    meta = {"command": cmdline, "data": {}}
    reported = False
    try:
        cmdline += install(args, have_compspill)
        meta["command"] = cmdline
        cluster = Cluster(args)
        cluster.init()
        cluster.start(preload=have_compspill)
        cluster.wait_ready()
        meta["server_version"] = cluster.psql("SHOW server_version").stdout.strip()
        meta["pg_config"] = args.pg_config
        log("server: PostgreSQL %s (%s)" % (meta["server_version"], args.pg_config))
        bench = Bench(args, cluster, have_compspill)
        if have_compspill:
            v = cluster.psql("SELECT current_setting('compspill.enabled', true)").stdout.strip()
            bench.codecs = server_codecs(cluster)
            log("compspill loaded, compspill.enabled = %r, codecs %s" % (
                v, ", ".join(bench.codecs)))
            for cfg in args.configs:
                parse_config(cfg, bench.codecs)
        for scale in args.scales:
            db, data = ensure_data(cluster, args, scale)
            meta["data"][fmt_scale(scale)] = data
            if args.setup_only:
                continue
            if args.profile:
                bench.set_env(scale, db, 0, None, None)
                for t in data:
                    cluster.psql("SELECT count(*) FROM %s" % t, db=db)
                profile_all(bench, args, meta, started)
                continue
            for i, mbps in enumerate(args.slow_disk or [0]):
                ts = None
                if mbps:
                    slow = SlowDisk(args, cluster.workdir, mbps)
                    path = slow.setup()
                    cluster.psql("DROP TABLESPACE IF EXISTS bench_slow")
                    cluster.psql("CREATE TABLESPACE bench_slow LOCATION '%s'" % path)
                    ts = "bench_slow"
                    slow.attach(cluster.postmaster_pid())
                bench.set_env(scale, db, mbps, slow, ts)
                # warm the tables into the page cache (and shared buffers)
                for t in data:
                    cluster.psql("SELECT count(*) FROM %s" % t, db=db)
                bench.run_all()
                if not args.no_check and i == 0:
                    bench.run_checks()
                if slow:
                    drop_slow(cluster, slow)
                    slow = None
        if args.setup_only or args.profile:
            log("setup only: data ready" if args.setup_only else "profiles done")
            return 0
        write_results(bench, args, meta, started)
        reported = True
        bad = [k for k, v in bench.checks.items() if v.startswith("error")] + \
              [r for r in bench.runs if not r["ok"]]
        bad += [k for k, v in bench.checks.items()
                if bench.checks.get(k[:3] + (NATIVE,)) not in (None, v)]
        # a native plan without the node its query is for (isort: no
        # Incremental Sort) measures something else
        bad += [r for r in bench.runs if r.get("plan_missing") and r["config"] == NATIVE]
        return 1 if bad else 0
    finally:
        if bench and bench.runs and not reported:
            try:
                log("writing the partial results")
                write_results(bench, args, meta, started, partial=True)
            except Exception as e:          # noqa: BLE001 - best effort
                log("could not write partial results: %s" % e)
        if slow:
            slow.detach()
            if cluster and cluster.running:
                cluster.psql("DROP TABLESPACE IF EXISTS bench_slow", check=False)
        if cluster:
            cluster.stop()
        if slow:
            slow.teardown()
        if cluster:
            cluster.remove()
        for fn in reversed(_cleanups):
            fn()


# ---------------------------------------------------------------- profile


def profile_all(bench, args, meta, started):
    """--profile: each (query, work_mem, configuration) once under perf."""
    major = (meta.get("server_version") or "").split(".")[0]
    outdir = os.path.join(args.out, started.strftime("%Y%m%d-%H%M%S") + "-profile-s" +
                          fmt_scale(bench.scale) + ("-pg" + major if major.isdigit() else ""))
    os.makedirs(outdir, exist_ok=True)
    for q in args.queries:
        for wm in query_wms(args, q):
            for cfg in args.profile_configs:
                text = profile_one(bench, args, meta, q, wm, cfg, outdir)
                print(text, flush=True)
    log("profiles in %s" % outdir)


def profile_one(bench, args, meta, q, wm, cfg, outdir):
    """Run q once in a session of its own with `perf record -g` attached to
    its backend for the query only; write <name>.perf.data, <name>.folded
    (one line per distinct stack, root first, with its sample count, as
    flame graph tools read it) and <name>.txt (the EXPLAIN and the top
    self-time symbols, per shared object too); return the text."""
    c = bench.c
    name = "%s-%s-%s" % (q, wm, cfg)
    data = os.path.join(outdir, name + ".perf.data")
    p = subprocess.Popen(c.psql_cmd(bench.db), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, bufsize=1,
                         start_new_session=True)

    def until(marker):
        lines = []
        for line in p.stdout:
            line = line.rstrip("\n")
            if line == marker:
                return lines
            lines.append(line)
        raise RuntimeError("psql ended before %s:\n%s" % (marker, "\n".join(lines[-20:])))
    perf = None
    try:
        p.stdin.write(bench.session_sql(q, cfg, wm) +
                      "SELECT pg_backend_pid();\n\\echo @@PID\n")
        p.stdin.flush()
        pid = int([x for x in until("@@PID") if x.strip().isdigit()][-1])
        perf = subprocess.Popen(["perf", "record", "-q", "-g", "-e", "cpu-clock", "-F", "999",
                                 "-p", str(pid), "-o", data],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                start_new_session=True)
        time.sleep(1.0)                 # perf attached before the query starts
        t0 = time.monotonic()
        p.stdin.write("EXPLAIN (ANALYZE, TIMING OFF, BUFFERS) %s;\n\\echo @@DONE\n"
                      % QUERIES[q]["sql"])
        p.stdin.flush()
        explain = until("@@DONE")
        wall = time.monotonic() - t0
    finally:
        if perf:
            perf.send_signal(signal.SIGINT)
            try:
                perf.wait(60)
            except subprocess.TimeoutExpired:
                perf.kill()
                perf.wait()
        try:
            p.stdin.close()
        except OSError:
            pass
        p.wait()
    top = perf_table(data, "symbol", args.profile_top)
    dsos = perf_table(data, "dso", 10)
    folded, nsamples = fold_stacks(data)
    write_file(os.path.join(outdir, name + ".folded"), folded)
    text = ["# profile: %s at work_mem %s, %s" % (q, wm, cfg), "",
            "PostgreSQL %s; %s" % (meta.get("server_version", "?"), meta.get("command", "?")
                                   .split("  (", 1)[-1].rstrip(")")),
            "query: %s" % QUERIES[q]["sql"],
            "perf record -g -e cpu-clock -F 999 -p <backend>, for the EXPLAIN ANALYZE only: "
            "%d samples, %.1f s wall (client side)" % (nsamples, wall), "",
            "## top %d symbols by self time (perf report --no-children --sort symbol)"
            % args.profile_top, "",
            "| self % | symbol | shared object |", "|---:|---|---|"]
    text += ["| %s | `%s` | %s |" % (pct, sym, dso) for pct, sym, dso in top]
    text += ["", "## self time by shared object", "", "| self % | shared object |",
             "|---:|---|"]
    text += ["| %s | %s |" % (pct, dso) for pct, _, dso in dsos]
    text += ["", "## EXPLAIN (ANALYZE, TIMING OFF, BUFFERS)", "", "```"] + explain + ["```", ""]
    text = "\n".join(text)
    write_file(os.path.join(outdir, name + ".txt"), text)
    return text


def perf_table(data, sort, limit):
    """[(percent, symbol, dso)] of perf report --no-children --sort dso,SORT."""
    keys = "dso,sym" if sort == "symbol" else "dso"
    out = run(["perf", "report", "-i", data, "--no-children", "--sort", keys, "--stdio",
               "-g", "none", "--percent-limit", "0.1"], check=False).stdout
    rows = []
    for line in out.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        # perf pads the last column with spaces: a dso-only line ends in them
        m = re.match(r"\s*([\d.]+%)\s+(\S+)(?:\s+\[.\]\s+(.*?))?\s*$", line)
        if m:
            rows.append((m.group(1), (m.group(3) or "").strip(), m.group(2)))
        if len(rows) >= limit:
            break
    return rows


def fold_stacks(data):
    """perf script's samples as folded stacks ("root;...;leaf count")."""
    p = run(["perf", "script", "-i", data, "-F", "ip,sym,dso"], check=False)
    counts, stack, n = {}, [], 0

    def flush():
        nonlocal n
        if stack:
            key = ";".join(reversed(stack))
            counts[key] = counts.get(key, 0) + 1
            n += 1
    for line in p.stdout.splitlines():
        if not line.strip():
            flush()
            stack = []
            continue
        m = re.match(r"\s*[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$", line)
        if m:
            sym = m.group(1)
            if sym in ("[unknown]", ""):
                sym = "[%s]" % os.path.basename(m.group(2))
            stack.append(re.sub(r"\+0x[0-9a-f]+$", "", sym))
    flush()
    return "".join("%s %d\n" % kv for kv in sorted(counts.items())), n


def drop_slow(cluster, slow):
    """Tear down one speed's slow disk while the cluster keeps running."""
    slow.detach()
    cluster.psql("DROP TABLESPACE IF EXISTS bench_slow")
    slow.teardown()


def install(args, have_compspill):
    """make install of the work tree, or of --ref; returns a note for the
    command line in the report."""
    if not have_compspill:
        return ""
    note, build_dir = "", args.repo
    if args.no_install:
        # whatever is installed, which this work tree may not have built
        note = "  (--no-install: the compspill.so found installed)"
    elif args.ref:
        # build a committed state, not whatever the work tree holds right now
        sha = run(["git", "-C", args.repo, "rev-parse", args.ref]).stdout.strip()
        build_dir = tempfile.mkdtemp(prefix="csbench-src-", dir=args.tmpdir)
        _cleanups.append(lambda: shutil.rmtree(build_dir, ignore_errors=True))
        log("building compspill at %s (%s) in %s" % (args.ref, sha[:12], build_dir))
        arch = subprocess.Popen(["git", "-C", args.repo, "archive", sha], stdout=subprocess.PIPE)
        run(["tar", "-x", "-C", build_dir], stdin=arch.stdout)
        arch.wait()
        note = "  (compspill %s)" % sha[:12]
    else:
        p = run(["git", "-C", args.repo, "describe", "--always", "--dirty"], check=False)
        if p.returncode == 0:
            note = "  (compspill work tree %s)" % p.stdout.strip()
    pkglib = run([args.pg_config, "--pkglibdir"]).stdout.strip()
    if not args.no_install:
        # PG_CONFIG: the server of --pg-config, not whatever "pg_config" on
        # the PATH is (Debian's wrapper picks the newest installed server).
        # DESTDIR: a private install, which the benchmark cluster loads
        # through dynamic_library_path, so that the server's own
        # compspill.so (which other clusters and test runs load) stays as
        # it is. With --keep it lives in the work dir, next to the cluster.
        if args.keep:
            dest = os.path.join(os.path.abspath(args.workdir), "install")
            shutil.rmtree(dest, ignore_errors=True)
            os.makedirs(dest)
        else:
            dest = tempfile.mkdtemp(prefix="csbench-install-", dir=args.tmpdir)
            _cleanups.append(lambda: shutil.rmtree(dest, ignore_errors=True))
        os.chmod(dest, 0o755)
        log("make -C %s install PG_CONFIG=%s DESTDIR=%s" % (build_dir, args.pg_config, dest))
        run(["make", "-s", "-C", build_dir, "install", "PG_CONFIG=" + args.pg_config,
             "DESTDIR=" + dest])
        args.lib_dir = dest + pkglib
    so = os.path.join(getattr(args, "lib_dir", None) or pkglib, "compspill.so")
    if not os.path.exists(so):
        raise SystemExit("compspill.so is not installed in %s (use --no-compspill for "
                         "native only)" % os.path.dirname(so))
    with open(so, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:12]
    mtime = datetime.datetime.fromtimestamp(os.stat(so).st_mtime)
    return (note[:-1] if note else "  (compspill") + ", compspill.so sha256 %s of %s%s)" % (
        digest, mtime.strftime("%Y-%m-%d %H:%M"),
        ", PostgreSQL %s" % pg_major(args.pg_config))


def write_results(bench, args, meta, started, partial=False):
    text = report(bench.runs, bench.checks, args, meta)
    if partial:
        text = "**PARTIAL: the run was interrupted.**\n\n" + text
    print()
    print(text)
    name = started.strftime("%Y%m%d-%H%M%S") + "-s" + \
        "_".join(fmt_scale(s) for s in args.scales) + \
        ("-slow" + "_".join("%g" % d for d in args.slow_disk) if args.slow_disk else "")
    # the server's major version in the name, and never an existing
    # directory: two runs started in the same second on two servers (one
    # per core) must not write over each other's results
    major = (meta.get("server_version") or "").split(".")[0]
    if major.isdigit():
        name += "-pg" + major
    outdir = os.path.join(args.out, name)
    n = 1
    while os.path.exists(outdir):
        n += 1
        outdir = os.path.join(args.out, "%s-%d" % (name, n))
    os.makedirs(outdir)
    write_file(os.path.join(outdir, "results.md"), text)
    runs_json = os.path.join(outdir, "runs.json")
    with open(runs_json, "w") as f:
        json.dump({"args": vars(args), "meta": meta, "runs": bench.runs,
                   "checks": {"%s/%s/%s/%s" % ((fmt_scale(k[0]),) + k[1:]): v
                              for k, v in bench.checks.items()}}, f, indent=1)
    with open(os.path.join(outdir, "explain.json"), "w") as f:
        json.dump({"s%s/%s/%s/%s/%s" % ((fmt_scale(k[0]), disk_name(k[1])) + k[2:]): v
                   for k, v in bench.explains.items()}, f, indent=1)
    chart = os.path.join(outdir, "chart.png")
    if write_chart(runs_json, chart) and args.chart:
        shutil.copyfile(chart, args.chart)
        log("chart copied to %s" % args.chart)
    log("results in %s" % outdir)


if __name__ == "__main__":
    sys.exit(main())
