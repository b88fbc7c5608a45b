#!/usr/bin/env python3
"""compspill on a Citus cluster: native against compspill's codecs, per node.

Usage (as root, from anywhere; Python 3 standard library, psql, and Citus
installed for the server: test/build-citus.sh):

    test/bench/citus_bench.py --pg-config /var/cache/compspill/postgresql-18.6/bin/pg_config \\
        [--scale 0.3] [--reps 3] [--work-mem 4MB] [--configs native,auto,lz4,zstd]
        [--queries sort,window,mj] [--port 5460] [--out test/bench/out/citus-...]

What it does:
  1. initdb and start three throwaway clusters of --pg-config's server (a
     coordinator on --port, two workers on the next two ports; user
     postgres, unix socket only, in a temp dir), each with
     shared_preload_libraries = 'citus, compspill' and the settings of
     bench.py's cluster (no parallel query, no JIT, no autovacuum,
     log_temp_files = 0); CREATE EXTENSION citus and compspill on each, the
     workers added to the coordinator.  compspill is the server's installed
     compspill.so (make install PG_CONFIG=... first).  Stopped and removed
     at exit, also on Ctrl-C.
  2. Generates bench.py's data on the coordinator, from the same SQL
     (lineitem.py: the TPC-H-like lineitem at --scale, and orders), then
     distributes both on their order key (create_distributed_table, four
     shards, co-located; the coordinator's local copy truncated), so each
     worker holds half of each.
  3. For each repetition, for each query, runs every configuration once, in
     an order rotated each time (interleaved).  A run is one transaction in
     a fresh session: SET LOCAL work_mem, the configuration
     (compspill.enabled = off for native, else compspill.codec) and the
     query's planner settings, all sent on to the workers' sessions
     (citus.propagate_set_commands = 'local'), then COPY (query) TO
     '/dev/null': the whole result is made on the coordinator, the way a
     client would get it, and none of it is shipped to the client.  Measured
     per run: wall time (client side); on each node the delta of
     pg_stat_database.temp_bytes (read once the run's backends have exited,
     so their statistics are flushed) and the largest temporary file its
     log shows (log_temp_files = 0: one line per file at its removal).
  4. Once per query and configuration, untimed: the md5 of the query's rows
     in a total order (COPY ... TO STDOUT through hashlib), which must be
     native's.  A difference exits 1.
  5. Prints medians (and min-max of the time) as markdown and ratios to
     native, per node and in total, and writes them with every run to
     --out (results.md, runs.json).

Queries (--queries):
  sort    SELECT * FROM lineitem ORDER BY l_comment, l_orderkey, l_linenumber:
          the rows come to the coordinator (Custom Scan (Citus Adaptive)),
          which sorts them (CompSpill Sort); the workers only scan.
  window  row_number() and rank() over (PARTITION BY l_orderkey ORDER BY
          l_extendedprice DESC, l_linenumber): partitioned by the
          distribution column, so pushed down: each shard's task sorts on
          its worker; the coordinator only collects.
  mj      orders JOIN lineitem ON o_orderkey = l_orderkey (co-located) with
          hash joins and nested loops off on every node: each task is a
          Merge Join over two sorts (and a Material) on its worker.
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
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lineitem  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))

QUERIES = {
    "sort": {
        "sql": "SELECT * FROM lineitem ORDER BY l_comment, l_orderkey, l_linenumber",
        "check": None,
        "settings": {},
        "what": "ORDER BY l_comment, to the coordinator",
    },
    "window": {
        "sql": ("SELECT l_orderkey, l_linenumber, l_partkey, l_quantity, l_extendedprice, "
                "row_number() OVER w, rank() OVER w FROM lineitem "
                "WINDOW w AS (PARTITION BY l_orderkey "
                "ORDER BY l_extendedprice DESC, l_linenumber)"),
        "check": "ORDER BY l_orderkey, l_linenumber",
        "settings": {},
        "what": "window partitioned by l_orderkey, pushed down",
    },
    "mj": {
        "sql": ("SELECT o_orderkey, o_orderdate, o_orderpriority, o_comment, l_linenumber, "
                "l_partkey, l_quantity, l_extendedprice, l_comment "
                "FROM orders JOIN lineitem ON l_orderkey = o_orderkey"),
        "check": "ORDER BY o_orderkey, l_linenumber",
        "settings": {"enable_hashjoin": "off", "enable_nestloop": "off"},
        "what": "co-located merge join, on the workers",
    },
}

NODES = ["coordinator", "worker1", "worker2"]
_cleanups = []


def log(msg):
    print("[%s] %s" % (datetime.datetime.now().strftime("%H:%M:%S"), msg),
          file=sys.stderr, flush=True)


def run(cmd, check=True, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if check and p.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr))
    return p


class Node:
    """One cluster of the three: initdb, start, psql, stop."""

    def __init__(self, name, port, bindir, workdir):
        self.name = name
        self.port = port
        self.bindir = bindir
        self.sockdir = workdir
        self.datadir = os.path.join(workdir, name)
        self.logfile = os.path.join(workdir, name + ".log")
        self.root = os.geteuid() == 0

    def as_owner(self, cmd):
        return (["runuser", "-u", "postgres", "--"] + cmd) if self.root else cmd

    def bin(self, name):
        return os.path.join(self.bindir, name)

    def init_start(self, shared_buffers):
        run(self.as_owner([self.bin("initdb"), "-D", self.datadir, "-U", "postgres",
                           "-A", "trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync",
                           "--no-data-checksums"]))
        conf = {
            "port": str(self.port),
            "listen_addresses": "''",
            "unix_socket_directories": "'%s'" % self.sockdir,
            "shared_preload_libraries": "'citus, compspill'",
            "shared_buffers": "'%s'" % shared_buffers,
            "max_connections": "100",
            "max_prepared_transactions": "20",
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
            "citus.node_conninfo": "'sslmode=disable'",
            # a connection per task, closed at the end of the transaction,
            # so that the workers' backends exit and flush their statistics
            "citus.max_cached_conns_per_worker": "0",
            "citus.enable_statistics_collection": "off",
        }
        with open(os.path.join(self.datadir, "postgresql.conf"), "a") as f:
            f.write("".join("%s = %s\n" % kv for kv in conf.items()))
        p = run(self.as_owner([self.bin("pg_ctl"), "-D", self.datadir, "-l", self.logfile,
                               "-w", "-t", "300", "start"]), check=False)
        if p.returncode != 0:
            raise RuntimeError("pg_ctl start of %s failed:\n%s\n%s" % (
                self.name, p.stdout, run(["tail", "-20", self.logfile], check=False).stdout))

    def stop(self):
        run(self.as_owner([self.bin("pg_ctl"), "-D", self.datadir, "-m", "fast",
                           "-w", "-t", "120", "stop"]), check=False)

    def psql_cmd(self, db):
        return [self.bin("psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                "-h", self.sockdir, "-p", str(self.port), "-U", "postgres", "-d", db]

    def psql(self, sql, db="bench"):
        p = subprocess.run(self.psql_cmd(db), input=sql, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            raise RuntimeError("psql on %s failed: %s\n--- sql:\n%s" % (
                self.name, p.stderr.strip(), sql[:2000]))
        return p.stdout.strip()

    def temp_bytes(self):
        return int(self.psql("SELECT temp_bytes FROM pg_stat_database "
                             "WHERE datname = 'bench'"))

    def others(self):
        """Backends of database bench other than this session's."""
        return int(self.psql("SELECT count(*) FROM pg_stat_activity WHERE datname = 'bench' "
                             "AND pid <> pg_backend_pid() AND backend_type = 'client backend'"))

    def log_size(self):
        return os.path.getsize(self.logfile)

    def largest_temp_file(self, since):
        """The largest temporary file logged after offset `since`."""
        with open(self.logfile, "rb") as f:
            f.seek(since)
            text = f.read().decode(errors="replace")
        sizes = [int(m) for m in re.findall(r'temporary file: path "[^"]*", size (\d+)', text)]
        return max(sizes) if sizes else 0


def config_settings(name):
    if name == "native":
        return {"compspill.enabled": "off"}
    return {"compspill.enabled": "on", "compspill.codec": name}


def txn_sql(cfg, q, work_mem, body):
    sets = {"citus.propagate_set_commands": "local", "work_mem": work_mem}
    sets.update(config_settings(cfg))
    sets.update(QUERIES[q]["settings"])
    return ("BEGIN;\n" + "".join("SET LOCAL %s = '%s';\n" % kv for kv in sets.items())
            + body + "\nCOMMIT;\n")


def wait_quiet(nodes):
    """Wait until the run's backends have exited on every node."""
    deadline = time.time() + 60
    while time.time() < deadline:
        if all(n.others() == 0 for n in nodes):
            return
        time.sleep(0.1)
    raise RuntimeError("backends of the run did not exit")


def one_run(nodes, cfg, q, work_mem):
    coord = nodes[0]
    wait_quiet(nodes)
    before = {n.name: n.temp_bytes() for n in nodes}
    offsets = {n.name: n.log_size() for n in nodes}
    sql = txn_sql(cfg, q, work_mem, "COPY (%s) TO '/dev/null';" % QUERIES[q]["sql"])
    t0 = time.time()
    coord.psql(sql)
    wall = time.time() - t0
    wait_quiet(nodes)
    rec = {"query": q, "config": cfg, "wall": wall, "temp": {}, "largest": {}}
    for n in nodes:
        rec["temp"][n.name] = n.temp_bytes() - before[n.name]
        rec["largest"][n.name] = n.largest_temp_file(offsets[n.name])
    return rec


def check_md5(nodes, cfg, q, work_mem):
    coord = nodes[0]
    query = QUERIES[q]["sql"]
    if QUERIES[q]["check"]:
        query = "SELECT * FROM (%s) s %s" % (query, QUERIES[q]["check"])
    sql = txn_sql(cfg, q, work_mem, "COPY (%s) TO STDOUT;" % query)
    p = subprocess.Popen(coord.psql_cmd("bench"), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdin.write(sql.encode())
    p.stdin.close()
    h, n = hashlib.md5(), 0
    for chunk in iter(lambda: p.stdout.read(1 << 20), b""):
        h.update(chunk)
        n += chunk.count(b"\n")
    err = p.stderr.read().decode()
    if p.wait() != 0:
        raise RuntimeError("check of %s %s failed: %s" % (q, cfg, err))
    return h.hexdigest(), n


def explain_nodes(nodes, cfg, q, work_mem):
    """Where compspill's nodes ran and how (one EXPLAIN ANALYZE, for the
    report): {node name: [provider codec spilled ...]}."""
    coord = nodes[0]
    sql = txn_sql(cfg, q, work_mem, "SET LOCAL citus.explain_all_tasks = on;\n"
                  "EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF, FORMAT JSON) %s;" % QUERIES[q]["sql"])
    doc = json.loads(coord.psql(sql))
    ports = {str(n.port): n.name for n in nodes}
    found = {}

    def walk(x, where):
        if isinstance(x, list):
            for v in x:
                walk(v, where)
        elif isinstance(x, dict):
            if "Remote Plan" in x and "Node" in x:
                m = re.search(r"port=(\d+)", x["Node"])
                walk(x["Remote Plan"], ports.get(m.group(1) if m else "", "?"))
                return
            prov = x.get("Custom Plan Provider", "")
            if prov.startswith("CompSpill"):
                spilled = (x.get("Sort Method", "").startswith("external")
                           or x.get("Storage") == "Disk")
                found.setdefault(where, []).append(
                    "%s%s" % (prov[len("CompSpill "):], " (spilled)" if spilled else ""))
            for v in x.values():
                if isinstance(v, (list, dict)):
                    walk(v, where)

    walk(doc, "coordinator")
    return {k: sorted(set(v)) for k, v in found.items()}, doc


def mib(b):
    return "%.1f" % (b / 1048576.0)


def ratio(a, b):
    if not b:
        return "-"
    return "%.2fx" % (a / b)


def report(runs, checks, wheres, meta):
    out = []
    out.append("# compspill on a Citus cluster\n")
    for k, v in meta.items():
        out.append("- %s: %s" % (k, v))
    out.append("")
    out.append("Medians of %d interleaved runs. Time: wall time of the query on the "
               "coordinator, s (min-max). Per node: MiB of pg_stat_database.temp_bytes "
               "the node wrote during the run, and in brackets its largest temporary "
               "file, MiB (log_temp_files); total: the three nodes' temp bytes. Rows: "
               "md5 of the rows in a total order against native's.\n" % meta["reps"])
    hdr = ("| query | config | time s | vs native | coordinator temp (largest) | "
           "worker1 temp (largest) | worker2 temp (largest) | total temp | vs native | rows |")
    out.append(hdr)
    out.append("|" + "---|" * 10)
    for q in meta["queries"]:
        base = None
        for cfg in meta["configs"]:
            rs = [r for r in runs if r["query"] == q and r["config"] == cfg]
            if not rs:
                continue
            wall = statistics.median(r["wall"] for r in rs)
            temp = {n: statistics.median(r["temp"][n] for r in rs) for n in NODES}
            total = statistics.median(sum(r["temp"].values()) for r in rs)
            lg = {n: statistics.median(r["largest"][n] for r in rs) for n in NODES}
            if cfg == "native":
                base = (wall, total)
            chk = checks.get((q, cfg))
            native_chk = checks.get((q, "native"))
            verdict = ("same" if chk and native_chk and chk == native_chk else
                       "DIFFERENT" if chk and native_chk else "-")
            out.append("| %s | %s | %.2f (%.2f-%.2f) | %s | %s | %s | %s | %s | %s | %s |" % (
                q, cfg, wall, min(r["wall"] for r in rs), max(r["wall"] for r in rs),
                ratio(wall, base[0]) if base and cfg != "native" else "",
                *["%s (%s)" % (mib(temp[n]), mib(lg[n])) for n in NODES],
                mib(total), ratio(total, base[1]) if base and cfg != "native" else "",
                verdict))
    out.append("")
    out.append("Where compspill's nodes ran (one EXPLAIN ANALYZE with "
               "citus.explain_all_tasks per query, config auto):\n")
    for q in meta["queries"]:
        w = wheres.get(q, {})
        out.append("- %s (%s): %s" % (q, QUERIES[q]["what"], "; ".join(
            "%s: %s" % (n, ", ".join(w[n])) for n in NODES if n in w) or "none"))
    out.append("")
    out.append("Rows: " + ", ".join("%s %s %s (%d rows)" % (q, cfg, checks[(q, cfg)][0][:8],
                                                              checks[(q, cfg)][1])
                                    for (q, cfg) in sorted(checks)))
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pg-config", default="pg_config")
    ap.add_argument("--scale", type=float, default=0.3)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--work-mem", default="4MB")
    ap.add_argument("--configs", default="native,auto,lz4,zstd")
    ap.add_argument("--queries", default="sort,window,mj")
    ap.add_argument("--port", type=int, default=5460)
    ap.add_argument("--shared-buffers", default="128MB")
    ap.add_argument("--pool-mb", type=int, default=64)
    ap.add_argument("--tmpdir", default="/var/tmp")
    ap.add_argument("--out", default=None)
    ap.add_argument("--report", metavar="DIR",
                    help="print the tables of a run again from DIR/runs.json (and rewrite "
                         "DIR/results.md)")
    args = ap.parse_args()
    if args.report:
        with open(os.path.join(args.report, "runs.json")) as f:
            d = json.load(f)
        checks = {tuple(k.split(" ")): tuple(v) for k, v in d["checks"].items()}
        text = report(d["runs"], checks, d.get("wheres", {}), d["meta"])
        with open(os.path.join(args.report, "results.md"), "w") as f:
            f.write(text)
        print(text)
        return 0
    args.configs = args.configs.split(",")
    args.queries = args.queries.split(",")
    for q in args.queries:
        if q not in QUERIES:
            ap.error("unknown query %s" % q)
    if args.configs[0] != "native":
        ap.error("the first configuration must be native")

    bindir = run([args.pg_config, "--bindir"]).stdout.strip()
    pg_config = os.path.join(bindir, "pg_config")
    pkglib = run([pg_config, "--pkglibdir"]).stdout.strip()
    for lib in ("citus.so", "compspill.so"):
        if not os.path.exists(os.path.join(pkglib, lib)):
            raise SystemExit("%s is not installed in %s" % (lib, pkglib))
    workdir = tempfile.mkdtemp(prefix="cscitus-", dir=args.tmpdir)
    os.chmod(workdir, 0o755)
    if os.geteuid() == 0:
        pw = pwd.getpwnam("postgres")
        os.chown(workdir, pw.pw_uid, pw.pw_gid)
    nodes = [Node(name, args.port + i, bindir, workdir) for i, name in enumerate(NODES)]
    started = []

    def cleanup(*_):
        for n in started:
            n.stop()
        shutil.rmtree(workdir, ignore_errors=True)

    def on_signal(signum, frame):
        cleanup()
        sys.exit(1)

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    t_start = time.time()
    try:
        for n in nodes:
            log("initdb and start %s on port %d" % (n.name, n.port))
            n.init_start(args.shared_buffers)
            started.append(n)
            n.psql("CREATE DATABASE bench", db="postgres")
            n.psql("CREATE EXTENSION citus; CREATE EXTENSION compspill;")
        coord = nodes[0]
        coord.psql("SELECT citus_set_coordinator_host('%s', %d);" % (workdir, coord.port))
        for n in nodes[1:]:
            coord.psql("SELECT citus_add_node('%s', %d);" % (workdir, n.port))
        versions = {
            "server": coord.psql("SELECT version()"),
            "citus": coord.psql("SELECT citus_version()"),
            "compspill": coord.psql("SELECT compspill_version()"),
        }
        log("generating lineitem and orders at scale %s" % args.scale)
        t0 = time.time()
        coord.psql("SET work_mem = '256MB';\nBEGIN;\n" + lineitem.generate_sql(args.scale, args.pool_mb)
                   + lineitem.orders_sql(args.scale) + "COMMIT;\n")
        log("generated in %.0f s; distributing" % (time.time() - t0))
        t0 = time.time()
        coord.psql("""
SET citus.shard_count = 4;
SELECT create_distributed_table('lineitem', 'l_orderkey');
SELECT create_distributed_table('orders', 'o_orderkey', colocate_with := 'lineitem');
SELECT truncate_local_data_after_distributing_table('lineitem');
SELECT truncate_local_data_after_distributing_table('orders');
VACUUM ANALYZE lineitem; VACUUM ANALYZE orders;
""")
        for n in nodes:
            n.psql("CHECKPOINT")
        nrows = int(coord.psql("SELECT count(*) FROM lineitem"))
        if nrows != lineitem.expected_rows(args.scale):
            raise RuntimeError("lineitem has %d rows, expected %d" % (
                nrows, lineitem.expected_rows(args.scale)))
        sizes = coord.psql("SELECT nodeport || ':' || pg_size_pretty(sum(shard_size)) "
                           "FROM citus_shards GROUP BY nodeport ORDER BY nodeport")
        log("distributed in %.0f s: lineitem %d rows, per node %s" % (
            time.time() - t0, nrows, sizes.replace("\n", ", ")))

        checks, wheres, docs = {}, {}, {}
        for q in args.queries:
            for cfg in args.configs:
                log("check %s %s" % (q, cfg))
                checks[(q, cfg)] = check_md5(nodes, cfg, q, args.work_mem)
                if checks[(q, cfg)] != checks[(q, "native")]:
                    log("check %s %s: DIFFERENT from native" % (q, cfg))
            cfg = "auto" if "auto" in args.configs else args.configs[-1]
            wheres[q], docs[q] = explain_nodes(nodes, cfg, q, args.work_mem)
            log("%s: compspill nodes %s" % (q, wheres[q]))

        runs = []
        for rep in range(args.reps):
            for qi, q in enumerate(args.queries):
                k = (rep + qi) % len(args.configs)
                order = args.configs[k:] + args.configs[:k]
                for cfg in order:
                    r = one_run(nodes, cfg, q, args.work_mem)
                    r["rep"] = rep
                    runs.append(r)
                    log("rep %d %s %-6s %.2f s temp %s largest %s" % (
                        rep + 1, q, cfg, r["wall"],
                        "/".join(mib(r["temp"][n]) for n in NODES),
                        "/".join(mib(r["largest"][n]) for n in NODES)))

        meta = {
            "command": " ".join([os.path.relpath(sys.argv[0], REPO)] + sys.argv[1:]),
            "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
            "server": versions["server"].split(" on ")[0],
            "citus": versions["citus"].split(" on ")[0],
            "compspill": versions["compspill"],
            "compspill commit": run(["git", "-C", REPO, "describe", "--always", "--dirty"],
                                    check=False).stdout.strip(),
            "data": "lineitem scale %s (%d rows) and orders, 4 shards on 2 workers (%s)" % (
                args.scale, nrows, sizes.replace("\n", ", ")),
            "work_mem": args.work_mem,
            "reps": args.reps,
            "configs": args.configs,
            "queries": args.queries,
            "elapsed": "%.0f s" % (time.time() - t_start),
        }
        text = report(runs, checks, wheres, meta)
        print(text)
        out = args.out or os.path.join(HERE, "out", "citus-%s-s%s" % (
            datetime.datetime.now().strftime("%Y%m%d-%H%M"), args.scale))
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "results.md"), "w") as f:
            f.write(text)
        with open(os.path.join(out, "runs.json"), "w") as f:
            json.dump({"meta": meta, "runs": runs,
                       "checks": {"%s %s" % k: v for k, v in checks.items()},
                       "wheres": wheres, "explain": docs}, f, indent=1)
        log("results in %s" % out)
        bad = [k for k in checks if checks[k] != checks[(k[0], "native")]]
        return 1 if bad else 0
    finally:
        cleanup()


if __name__ == "__main__":
    sys.exit(main())
