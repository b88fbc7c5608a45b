#!/usr/bin/env python3
"""compspill benchmark: native PostgreSQL Sort against CompSpill Sort.

Usage (as root, from anywhere; Python 3 standard library + psql only):

    test/bench/bench.py [--scale 1] [--reps 3] [--work-mem 4MB]
                        [--configs native,none,lz4,zstd1,zstd3]
                        [--queries q1,q2,q3] [--keep] [--no-check]
                        [--slow-disk MBPS] [--no-compspill] ...

    # quick end-to-end check (about 3 minutes):
    test/bench/bench.py --scale 0.1
    # the README table (scale 1, work_mem 4MB, 3 interleaved repetitions,
    # about 26 minutes; --ref builds that commit instead of the work tree):
    test/bench/bench.py --scale 1 --reps 3 --check-mode hash --keep --ref HEAD
    # temp files on a loop device throttled to 50 MB/s (root only, ~9 min):
    test/bench/bench.py --scale 0.3 --slow-disk 50 --check-mode hash \
        --configs native,lz4,zstd1,lz4-dio,zstd1-dio

What it does:
  1. `make -C <repo> install` (skip with --no-install; --ref COMMIT builds a
     `git archive` of that commit instead of the work tree), then initdb + pg_ctl
     start of a throwaway cluster (user postgres, unix socket only, in a temp
     dir, shared_preload_libraries=compspill); stopped and removed at exit.
     With --keep the cluster lives in --workdir (default
     /var/tmp/compspill-bench) and is reused, with its data, on later runs.
  2. Generates a TPC-H-like lineitem in SQL (lineitem.py; scale 1 =
     6,001,215 rows; l_comment from TPC-H's text grammar), VACUUM ANALYZE.
  3. For each repetition, for each query, runs every configuration once, in
     an order rotated by one each time (interleaved). Each run is a fresh
     session: SET work_mem and the configuration's settings, then
     EXPLAIN (ANALYZE, TIMING OFF, BUFFERS, FORMAT JSON) <query>, so the whole
     result is produced server side and nothing is shipped to the client.
     Measured per run: wall time (psql \\timing, client side), the backend's
     /proc/self/io before and after (wchar = bytes passed to write(): "bytes
     written"; write_bytes = bytes dirtied towards the block layer),
     pg_stat_database.temp_bytes delta (read after the backend has exited,
     so its stats are flushed), and from EXPLAIN the spill volume (native:
     Temp Written Blocks x 8 kB, all merge passes; compspill: its node's
     bytes written).
  4. Once per (query, configuration), untimed: md5 of the result with a
     total order (ties broken by l_orderkey, l_linenumber), compared with
     native's.
  5. Prints medians per (query, configuration) and ratios to native as a
     markdown table, written to test/bench/out/<run>/results.md with the raw
     runs (runs.json) and one EXPLAIN per configuration.

Configurations: native (compspill.enabled=off), none, lz4, zstd<level>
(e.g. zstd1, zstd3), any of them with "-dio" appended (compspill.enable_dio
=on). Extra settings for every session: --set name=value (repeatable).

Slow disk (--slow-disk MBPS, root): a sparse file on a loop device
(losetup --direct-io=on, so the loop device does not cache twice), ext4,
mounted in the work dir; a tablespace there as temp_tablespaces; a cgroup v1
blkio throttle of MBPS for reads and for writes on that device, set on the
root blkio cgroup, which holds the postgres processes and the kernel's
flusher threads that do buffered writeback (v1 limits are not hierarchical,
so a child cgroup for postgres would give it a budget besides writeback's:
--blkio-child does that anyway, into cgroup compspill_bench); the device's
dirty page cache is capped (bdi max_bytes + strict_limit, --dirty-mb) so
buffered writers wait for the disk; caches are dropped before each run, and
with --evict-every S clean page cache is dropped every S seconds during a run
so that buffered re-reads of temp files also come from the disk. All of it is
undone at exit.
"""

import argparse
import datetime
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
import lineitem  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))

QUERIES = {
    "q1": dict(
        title="Q1 full-row sort by l_comment",
        sql="SELECT * FROM lineitem ORDER BY l_comment",
        check="SELECT * FROM lineitem ORDER BY l_comment, l_orderkey, l_linenumber"),
    "q2": dict(
        title="Q2 full-row sort by l_shipdate, l_orderkey",
        sql="SELECT * FROM lineitem ORDER BY l_shipdate, l_orderkey",
        check="SELECT * FROM lineitem ORDER BY l_shipdate, l_orderkey, l_linenumber"),
    "q3": dict(
        title="Q3 window row_number/rank over PARTITION BY l_orderkey "
              "ORDER BY l_extendedprice DESC",
        sql="SELECT l_orderkey, l_partkey, l_quantity, l_extendedprice, "
            "row_number() OVER w, rank() OVER w FROM lineitem "
            "WINDOW w AS (PARTITION BY l_orderkey ORDER BY l_extendedprice DESC)",
        # the tie-break makes row_number() and the output order deterministic
        check="SELECT l_orderkey, l_partkey, l_quantity, l_extendedprice, "
              "row_number() OVER w, rank() OVER w FROM lineitem "
              "WINDOW w AS (PARTITION BY l_orderkey "
              "ORDER BY l_extendedprice DESC, l_linenumber)"),
}

NATIVE = "native"
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


def config_settings(name, have_compspill):
    """Settings for a configuration name: native, none, lz4, zstd<level>,
    each optionally with -dio."""
    if name == NATIVE:
        return {"compspill.enabled": "off"} if have_compspill else {}
    base, dio = name, "off"
    if base.endswith("-dio"):
        base, dio = base[:-4], "on"
    m = re.fullmatch(r"(none|lz4|zstd)(\d+)?", base)
    if not m or (m.group(2) and m.group(1) != "zstd"):
        raise SystemExit("unknown configuration %r (native, none, lz4, "
                         "zstd<level>, optionally with -dio)" % name)
    s = {"compspill.enabled": "on", "compspill.codec": m.group(1),
         "compspill.enable_dio": dio}
    if m.group(1) == "zstd":
        s["compspill.compression_level"] = m.group(2) or "1"
    return s


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
        run(self.as_owner([self.bin("initdb"), "-D", self.datadir, "-U", "postgres",
                           "-A", "trust", "-E", "UTF8", "--locale=" + self.args.locale,
                           "--no-sync"]))
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

    def psql_cmd(self, db="bench"):
        return [self.bin("psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                "-h", self.workdir, "-p", str(self.port), "-U", "postgres", "-d", db]

    def psql(self, sql, db="bench", check=True, timeout=None):
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

    def __init__(self, args, workdir):
        self.args = args
        self.mbps = args.slow_disk
        self.bps = int(self.mbps * 1000 * 1000)
        self.img = os.path.join(args.slow_image_dir, "csbench-disk-%d.img" % os.getpid())
        self.mnt = os.path.join(workdir, "slowdisk")
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


def num(v):
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def summarize_explain(doc):
    top = doc[0]
    plan = top["Plan"]
    res = {"exec_ms": top.get("Execution Time"), "rows": plan.get("Actual Rows"),
           "temp_written_bytes": (plan.get("Temp Written Blocks", 0) or 0) * 8192,
           "temp_read_bytes": (plan.get("Temp Read Blocks", 0) or 0) * 8192,
           "sorts": [], "cs_written_raw": None, "cs_in_raw": None,
           "cs_runs": None, "cs_passes": None, "cs_ratio": None}
    for n in walk(plan):
        if n.get("Node Type") == "Sort":
            res["sorts"].append("Sort(%s)" % n.get("Sort Method", "?"))
        elif n.get("Node Type") == "Custom Scan" and \
                "CompSpill" in str(n.get("Custom Plan Provider", "")):
            props = node_props(n)
            res["sorts"].append("CompSpill(%s)" % props.get("Sort Method", "?"))
            for key, field in (("cs_written_raw", r"bytes[ _]?written|written[ _]?bytes"),
                               ("cs_in_raw", r"bytes[ _]?before"),
                               ("cs_runs", r"^(spill )?runs$"),
                               ("cs_passes", r"merge[ _]?passes"),
                               ("cs_ratio", r"compression[ _]?ratio")):
                for k, v in props.items():
                    if re.search(field, k, re.I) and num(v) is not None:
                        res[key] = (res[key] or 0) + v
    return res


def resolve_units(rec):
    """EXPLAIN's JSON drops units: CompSpill's byte figures may be bytes or kB.
    Take the reading closest to pg_stat_database's temp_bytes for the run
    (kB when there is nothing to compare with)."""
    raw = rec.get("cs_written_raw")
    if raw is None:
        rec["spill_bytes"] = rec["temp_written_bytes"]
        return
    mult = 1024
    tb = rec.get("temp_bytes") or 0
    if tb > 0 and raw > 0:
        import math
        mult = min((1, 1024), key=lambda m: abs(math.log(raw * m / tb)))
    rec["cs_unit"] = mult
    rec["spill_bytes"] = raw * mult
    if rec.get("cs_in_raw") is not None:
        rec["cs_in_bytes"] = rec["cs_in_raw"] * mult


class Bench:
    def __init__(self, args, cluster, have_compspill, slow):
        self.args = args
        self.c = cluster
        self.have_compspill = have_compspill
        self.slow = slow
        self.temp_tablespace = None
        self.runs = []
        self.checks = {}
        self.explains = {}

    def session_sql(self, cfg):
        s = {"work_mem": self.args.work_mem, "max_parallel_workers_per_gather": "0",
             "statement_timeout": self.args.statement_timeout}
        if self.temp_tablespace:
            s["temp_tablespaces"] = self.temp_tablespace
        s.update(config_settings(cfg, self.have_compspill))
        for kv in self.args.set:
            k, v = kv.split("=", 1)
            s[k.strip()] = v.strip()
        return "".join("SET %s = '%s';\n" % (k, v.replace("'", "''")) for k, v in s.items())

    def temp_stats(self):
        out = self.c.psql("SELECT pg_stat_clear_snapshot(); SELECT temp_bytes, temp_files "
                          "FROM pg_stat_database WHERE datname = current_database();",
                          ).stdout.split()
        nums = [x for x in out if "|" in x][-1].split("|")
        return int(nums[0]), int(nums[1])

    def wait_gone(self, pid, timeout=30):
        t0 = time.time()
        while os.path.exists("/proc/%d" % pid) and time.time() - t0 < timeout:
            time.sleep(0.02)

    def one_run(self, q, cfg, rep, pos):
        sql = (self.session_sql(cfg) +
               "\\echo @@PID\nSELECT pg_backend_pid();\n"
               "\\echo @@IO0\nSELECT pg_read_file('/proc/self/io');\n"
               "\\echo @@EXPLAIN\n\\timing on\n"
               "EXPLAIN (ANALYZE, TIMING OFF, BUFFERS, FORMAT JSON) %s;\n"
               "\\timing off\n"
               "\\echo @@IO1\nSELECT pg_read_file('/proc/self/io');\n"
               "\\echo @@END\n" % QUERIES[q]["sql"])
        rec = {"query": q, "config": cfg, "rep": rep, "pos": pos, "ok": False}
        if self.slow:
            self.slow.drop_caches()
        tb0, tf0 = self.temp_stats()
        if self.slow:
            d0 = self.slow.disk_stat()
            self.slow.start_evicting()
        t0 = time.monotonic()
        try:
            p = self.c.psql(sql, check=False, timeout=self.args.run_timeout)
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
            rec["error"] = "timeout" if p is None else (p.stderr.strip() or "psql exit %d" % p.returncode)
            rec["server_log"] = self.c.log_tail()
            log("  FAILED %s %s: %s\n%s" % (q, cfg, rec["error"][:500], rec["server_log"]))
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
        ex_lines = sections["EXPLAIN"]
        m = [re.match(r"Time: ([\d.]+) ms", x) for x in ex_lines]
        times = [float(x.group(1)) for x in m if x]
        doc = json.loads("\n".join(x for x in ex_lines if not x.startswith("Time: ")))
        self.wait_gone(pid)
        tb1, tf1 = self.temp_stats()
        ex = summarize_explain(doc)
        rec.update(ok=True, wall_s=times[0] / 1000.0, io={k: io1[k] - io0[k] for k in IO_KEYS},
                   temp_bytes=tb1 - tb0, temp_files=tf1 - tf0, **ex)
        resolve_units(rec)
        if (q, cfg) not in self.explains:
            self.explains[(q, cfg)] = doc
        return rec

    def run_all(self):
        cfgs, qs = self.args.configs, self.args.queries
        total = self.args.reps * len(qs) * len(cfgs)
        n = 0
        for rep in range(self.args.reps):
            for qi, q in enumerate(qs):
                k = (rep + qi) % len(cfgs)
                order = cfgs[k:] + cfgs[:k]
                for pos, cfg in enumerate(order):
                    n += 1
                    rec = self.one_run(q, cfg, rep, pos)
                    self.runs.append(rec)
                    if rec["ok"]:
                        disk = ""
                        if "disk_read" in rec:
                            disk = "  disk r/w %.0f/%.0f MiB" % (rec["disk_read"] / 2**20,
                                                                rec["disk_written"] / 2**20)
                        log("run %d/%d rep %d %s %-10s %7.2f s  wchar %8.1f MiB  temp %8.1f MiB%s  %s"
                            % (n, total, rep + 1, q, cfg, rec["wall_s"], rec["io"]["wchar"] / 2**20,
                               rec["temp_bytes"] / 2**20, disk, ",".join(rec["sorts"])))

    def run_checks(self):
        for q in self.args.queries:
            for cfg in self.args.configs:
                if self.args.check_mode == "md5":
                    row = "md5(t::text)"          # every column's text form
                else:
                    row = "hash_record_extended(t, 0)::text"   # 64-bit, cheaper
                sql = (self.session_sql(cfg) +
                       "SELECT count(*) || ' ' || coalesce(md5(string_agg(%s, ',')), '-') "
                       "FROM (%s) t;\n" % (row, QUERIES[q]["check"]))
                t0 = time.monotonic()
                p = self.c.psql(sql, check=False, timeout=self.args.run_timeout)
                dt = time.monotonic() - t0
                if p.returncode != 0:
                    self.checks[(q, cfg)] = "error: " + p.stderr.strip()[:300]
                    log("check %s %s FAILED: %s\n%s" % (q, cfg, p.stderr.strip()[:500],
                                                         self.c.log_tail()))
                    if not self.c.wait_ready():
                        raise RuntimeError("server did not come back")
                else:
                    self.checks[(q, cfg)] = p.stdout.strip().splitlines()[-1]
                    log("check %s %-10s %s (%.1f s)" % (q, cfg, self.checks[(q, cfg)], dt))


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


def report(bench, args, meta):
    lines = []
    lines.append("compspill benchmark: lineitem scale %s (%s rows), work_mem %s, %d interleaved "
                 "repetition(s), medians%s." % (args.scale, meta["rows"], args.work_mem, args.reps,
                                                (", temp files on a loop device throttled to %g MB/s"
                                                 % args.slow_disk) if args.slow_disk else ""))
    lines.append("")
    lines.append("Command: `%s`" % meta["command"])
    lines.append("")
    head = lines
    compact = ["| query | config | wall s | wall vs native | bytes written MiB | written vs native "
               "| temp_bytes MiB | temp vs native | result |",
               "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    lines = ["Details:", ""]
    lines.append("| query | config | wall s (min-max) | wall vs native | bytes written MiB | written vs native "
                 "| write_bytes MiB | temp_bytes MiB | temp vs native | spill per EXPLAIN MiB "
                 "| runs / passes | comp. ratio | sort node | result |")
    lines.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
    if args.slow_disk:      # one more column: what really reached the disk
        lines[-2] = lines[-2].replace("| runs / passes", "| disk read / written MiB | runs / passes")
        lines[-1] = "|---|---|" + "---:|" * 11 + "---|---|"
    summary = {}
    for q in args.queries:
        base = None
        for cfg in args.configs:
            rs = [r for r in bench.runs if r["query"] == q and r["config"] == cfg and r["ok"]]
            nfail = len([r for r in bench.runs if r["query"] == q and r["config"] == cfg and not r["ok"]])
            s = {
                "wall": med([r["wall_s"] for r in rs]),
                "wmin": min([r["wall_s"] for r in rs], default=None),
                "wmax": max([r["wall_s"] for r in rs], default=None),
                "wchar": med([r["io"]["wchar"] for r in rs]),
                "write_bytes": med([r["io"]["write_bytes"] for r in rs]),
                "temp": med([r["temp_bytes"] for r in rs]),
                "spill": med([r["spill_bytes"] for r in rs]),
                "runs": med([r.get("cs_runs") for r in rs]),
                "disk_r": med([r.get("disk_read") for r in rs]),
                "disk_w": med([r.get("disk_written") for r in rs]),
                "passes": med([r.get("cs_passes") for r in rs]),
                "ratio": med([r.get("cs_ratio") for r in rs]),
                "sorts": ",".join(sorted(set(",".join(r["sorts"]) for r in rs))) or "-",
                "n": len(rs), "fail": nfail,
            }
            summary[(q, cfg)] = s
            if cfg == NATIVE:
                base = s
            chk = bench.checks.get((q, cfg))
            nat = bench.checks.get((q, NATIVE))
            if chk is None:
                verdict = "not checked"
            elif chk.startswith("error"):
                verdict = "ERROR"
            elif cfg == NATIVE:
                verdict = "reference"
            elif nat is None or nat.startswith("error"):
                verdict = "no reference"
            else:
                verdict = "identical" if chk == nat else "DIFFERENT"
            if nfail:
                verdict += " (%d run(s) failed)" % nfail
            b = base or {}
            row = ("| %s | %s | %s (%s-%s) | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                q, cfg,
                "-" if s["wall"] is None else "%.2f" % s["wall"],
                "-" if s["wmin"] is None else "%.2f" % s["wmin"],
                "-" if s["wmax"] is None else "%.2f" % s["wmax"],
                fmt_ratio(s["wall"], b.get("wall")),
                fmt_mib(s["wchar"]), fmt_ratio(s["wchar"], b.get("wchar")),
                fmt_mib(s["write_bytes"]),
                fmt_mib(s["temp"]), fmt_ratio(s["temp"], b.get("temp")),
                fmt_mib(s["spill"]),
                "-" if s["runs"] is None else "%g / %g" % (s["runs"], s["passes"] or 0),
                "-" if not s["ratio"] else "%.2f" % s["ratio"],
                s["sorts"], verdict))
            if args.slow_disk:
                cells = row.split(" | ")
                cells.insert(10, "%s / %s" % (fmt_mib(s["disk_r"]), fmt_mib(s["disk_w"])))
                row = " | ".join(cells)
            lines.append(row)
            compact.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                q, cfg, "-" if s["wall"] is None else "%.2f" % s["wall"],
                fmt_ratio(s["wall"], b.get("wall")),
                fmt_mib(s["wchar"]), fmt_ratio(s["wchar"], b.get("wchar")),
                fmt_mib(s["temp"]), fmt_ratio(s["temp"], b.get("temp")), verdict))
    lines.append("")
    lines.append("Queries: " + "; ".join("%s = `%s`" % (q, QUERIES[q]["sql"]) for q in args.queries) + ".")
    lines.append("")
    lines.append("Columns: wall = client-side time of `EXPLAIN (ANALYZE, TIMING OFF, BUFFERS, "
                 "FORMAT JSON)` of the query (rows produced server side, none shipped); bytes written = "
                 "`wchar` of the backend's /proc/<pid>/io (bytes passed to write(), temp files plus a few "
                 "kB of protocol); write_bytes = bytes the backend dirtied towards the block layer "
                 "(page-cache writes of a temp file deleted before writeback are counted here and again "
                 "in cancelled_write_bytes); temp_bytes = pg_stat_database delta (all temp files, sizes "
                 "at deletion); spill per EXPLAIN = native: Temp Written Blocks x 8 kB (every merge "
                 "pass), compspill: its node's Bytes Written; runs / passes and comp. ratio (bytes before encoding / bytes written) from compspill's EXPLAIN; disk read / written (slow disk only) = the loop device's own counters (/sys/block/<dev>/stat) over the run; result = md5 of the output with a total "
                 "order (ties broken by l_orderkey, l_linenumber; per row: %s), once per "
                 "configuration, untimed." % ("md5 of its text" if args.check_mode == "md5"
                                              else "hash_record_extended"))
    return "\n".join(head + compact + [""] + lines) + "\n", summary


# ------------------------------------------------------------------ main

def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="See the module docstring / README.md for details.")
    ap.add_argument("--report", metavar="RUNS_JSON",
                    help="only print the tables of an earlier run (out/<run>/runs.json)")
    ap.add_argument("--scale", type=float, default=1.0, help="lineitem scale (1 = 6,001,215 rows)")
    ap.add_argument("--reps", type=int, default=3, help="interleaved repetitions (default 3)")
    ap.add_argument("--work-mem", default="4MB")
    ap.add_argument("--configs", default="native,none,lz4,zstd1,zstd3",
                    help="comma list: native, none, lz4, zstd<level>, each optionally -dio")
    ap.add_argument("--queries", default="q1,q2,q3")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="extra setting for every benchmark session (repeatable)")
    ap.add_argument("--no-compspill", action="store_true",
                    help="don't load compspill; only the native configuration")
    ap.add_argument("--no-install", action="store_true", help="don't run make install")
    ap.add_argument("--repo", default=REPO, help="compspill source tree for make install")
    ap.add_argument("--ref", help="build this git commit of --repo (git archive into a temp "
                                  "dir) instead of the work tree")
    ap.add_argument("--no-check", action="store_true", help="skip the result checks")
    ap.add_argument("--check-mode", choices=("md5", "hash"), default="md5",
                    help="result check: md5 of each row's text (default) or "
                         "hash_record_extended of each row (about 2x faster); either way "
                         "the md5 of all of them in output order")
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
    ap.add_argument("--slow-disk", type=float, default=0, metavar="MBPS",
                    help="temp files on a loop device throttled to MBPS MB/s (root)")
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
    a = ap.parse_args()
    a.configs = [c.strip() for c in a.configs.split(",") if c.strip()]
    a.queries = [q.strip() for q in a.queries.split(",") if q.strip()]
    for q in a.queries:
        if q not in QUERIES:
            ap.error("unknown query %s" % q)
    if a.no_compspill:
        a.configs = [NATIVE]
    if NATIVE in a.configs:
        a.configs.remove(NATIVE)
    a.configs.insert(0, NATIVE)
    for c in a.configs:
        config_settings(c, True)
    return a


def ensure_data(cluster, args):
    c = cluster
    if c.psql("SELECT 1 FROM pg_database WHERE datname = 'bench'", db="postgres").stdout.strip() != "1":
        c.psql("CREATE DATABASE bench", db="postgres")
    want = {"scale": args.scale, "rows": lineitem.expected_rows(args.scale),
            "pool_mb": args.pool_mb, "gen": lineitem.GEN_VERSION}
    have = c.psql("SELECT obj_description(to_regclass('lineitem'), 'pg_class')").stdout.strip()
    if have:
        try:
            if json.loads(have) == want:
                log("reusing lineitem (%s)" % have)
                return want
        except ValueError:
            pass
    log("generating lineitem: scale %g, %d rows" % (args.scale, want["rows"]))
    t0 = time.time()
    c.psql("SET work_mem = '256MB';\nSET maintenance_work_mem = '1GB';\nBEGIN;\n" +
           lineitem.generate_sql(args.scale, args.pool_mb) +
           "COMMENT ON TABLE lineitem IS '%s';\nCOMMIT;\n" % json.dumps(want))
    t1 = time.time()
    c.psql("VACUUM (FREEZE, ANALYZE) lineitem; CHECKPOINT;")
    n = int(c.psql("SELECT count(*) FROM lineitem").stdout.strip())
    size = c.psql("SELECT pg_size_pretty(pg_table_size('lineitem'))").stdout.strip()
    log("generated %d rows (%s) in %.0f s, vacuum %.0f s" % (n, size, t1 - t0, time.time() - t1))
    if n != want["rows"]:
        raise RuntimeError("expected %d rows, got %d" % (want["rows"], n))
    return want


def rerender(path):
    """Print the tables again from a runs.json (--report)."""
    import types
    d = json.load(open(path))
    args = types.SimpleNamespace(**d["args"])
    args.check_mode = getattr(args, "check_mode", "md5")
    b = types.SimpleNamespace(runs=d["runs"],
                              checks={tuple(k.split("/")): v for k, v in d["checks"].items()})
    print(report(b, args, d["meta"])[0])
    return 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--report":
        return rerender(sys.argv[2])
    args = parse_args()
    have_compspill = not args.no_compspill
    started = datetime.datetime.now()
    cmdline = " ".join(["test/bench/bench.py"] + sys.argv[1:])

    def on_signal(signum, frame):
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)      # let the cleanup finish
        raise SystemExit("interrupted by signal %d" % signum)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)

    cluster = slow = bench = meta = None
    reported = False
    try:
        cmdline += install(args, have_compspill)
        cluster = Cluster(args)
        if args.slow_disk:
            slow = SlowDisk(args, cluster.workdir)
            slow_ts = slow.setup()
        cluster.init()
        cluster.start(preload=have_compspill)
        cluster.wait_ready()
        meta = ensure_data(cluster, args)
        meta["command"] = cmdline
        if have_compspill:
            v = cluster.psql("SELECT current_setting('compspill.enabled', true)").stdout.strip()
            log("compspill loaded, compspill.enabled = %r" % v)
        bench = Bench(args, cluster, have_compspill, slow)
        if slow:
            cluster.psql("DROP TABLESPACE IF EXISTS bench_slow", db="postgres")
            cluster.psql("CREATE TABLESPACE bench_slow LOCATION '%s'" % slow_ts, db="postgres")
            bench.temp_tablespace = "bench_slow"
            slow.attach(cluster.postmaster_pid())
        # warm the table into the page cache (and shared buffers)
        cluster.psql("SELECT count(*) FROM lineitem")
        bench.run_all()
        if not args.no_check:
            bench.run_checks()
        write_results(bench, args, meta, started)
        reported = True
        bad = [k for k, v in bench.checks.items() if v.startswith("error")] + \
              [(r["query"], r["config"]) for r in bench.runs if not r["ok"]]
        nat = {q: bench.checks.get((q, NATIVE)) for q in args.queries}
        bad += [k for k, v in bench.checks.items() if nat.get(k[0]) and v != nat[k[0]]]
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
            if cluster.running:
                cluster.psql("DROP TABLESPACE IF EXISTS bench_slow", db="postgres", check=False)
        if cluster:
            cluster.stop()
        if slow:
            slow.teardown()
        if cluster:
            cluster.remove()
        for fn in reversed(_cleanups):
            fn()


def install(args, have_compspill):
    """make install of the work tree, or of --ref; returns a note for the
    command line in the report."""
    if not have_compspill:
        return ""
    note, build_dir = "", args.repo
    if args.ref:
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
    if not args.no_install:
        log("make -C %s install" % build_dir)
        run(["make", "-s", "-C", build_dir, "install"])
    pkglib = run([args.pg_config, "--pkglibdir"]).stdout.strip()
    if not os.path.exists(os.path.join(pkglib, "compspill.so")):
        raise SystemExit("compspill.so is not installed in %s (use --no-compspill for "
                         "native only)" % pkglib)
    return note


def write_results(bench, args, meta, started, partial=False):
    text, _ = report(bench, args, meta)
    if partial:
        text = "**PARTIAL: the run was interrupted.**\n\n" + text
    print()
    print(text)
    name = started.strftime("%Y%m%d-%H%M%S") + "-s%g" % args.scale + \
        ("-slow%g" % args.slow_disk if args.slow_disk else "")
    outdir = os.path.join(args.out, name)
    os.makedirs(outdir, exist_ok=True)
    write_file(os.path.join(outdir, "results.md"), text)
    with open(os.path.join(outdir, "runs.json"), "w") as f:
        json.dump({"args": vars(args), "meta": meta, "runs": bench.runs,
                   "checks": {"%s/%s" % k: v for k, v in bench.checks.items()}}, f, indent=1)
    with open(os.path.join(outdir, "explain.json"), "w") as f:
        json.dump({"%s/%s" % k: v for k, v in bench.explains.items()}, f, indent=1)
    log("results in %s" % outdir)


if __name__ == "__main__":
    sys.exit(main())
