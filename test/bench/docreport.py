#!/usr/bin/env python3
"""docreport.py: the docs' benchmark tables and chart, from recorded runs.

bench.py --report (no file) runs this: it reads test/bench/docs.json, which
names for each table the recorded runs it comes from (one per server, in
test/bench/out/<run>/: runs.json where it was kept, else the results.md
that bench.py wrote beside it), and

  - replaces, in doc/performance.md and README.md, the text between
    <!-- bench:begin NAME --> and <!-- bench:end NAME --> with table NAME;
  - draws the summary chart (docs.json's "chart", doc/perf-summary.png)
    with matplotlib (Debian: apt-get install -y python3-matplotlib; when
    this interpreter has none, /usr/bin/python3 draws it).

So the docs' figures are regenerated from the runs, never copied by hand.
Run names, commits and hashes stay in docs.json and the runs; the docs name
a build by the label docs.json gives it.

Table kinds:
  summary  ranges (min-max over the row's queries) of CPU time, wall time
           and temp-file size against native, per codec, on each server
  paired   every figure per query, the servers side by side
  runs     what was run: the build, the date, the servers, the commands
"""

import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
OUT = os.path.join(HERE, "out")
SERVERS = ("15", "18")
NATIVE = "native"
CODEC_NAMES = {"auto": "`auto`", "lz4": "`lz4`", "zstd1": "`zstd` (level 1)", "none": "`none`"}


# ------------------------------------------------------------- reading runs


def results_text(rundir):
    """The results.md text of a run: made again from runs.json when the run
    kept it (bench.py's own report), else the results.md it wrote."""
    runs_json = os.path.join(rundir, "runs.json")
    if os.path.exists(runs_json):
        import bench        # noqa: E402  (only when a runs.json is there)
        with open(runs_json) as f:
            d = json.load(f)
        a = bench.load_args(d)
        return bench.report(d["runs"], bench.load_checks(d, a), a, d["meta"])
    with open(os.path.join(rundir, "results.md")) as f:
        return f.read()


def parse_results(text):
    """A run's header and its details tables: {"server", "command", "ref",
    "date", "scale", "tables": {disk: {(query, work_mem, config): {column:
    cell}}}, "order": {disk: [keys in the report's order]}}."""
    lines = text.splitlines()
    out = {"tables": {}, "order": {}}
    m = re.search(r"compspill benchmark on PostgreSQL (\S+)", text)
    out["server"] = m.group(1).rstrip(":") if m else "?"
    m = re.search(r"^Command: `(.*?)\s*(\(compspill .*\))?`$", text, re.M)
    cmd = m.group(1).strip() if m else ""
    out["command"] = cmd
    m = re.search(r"--ref (\S+)", cmd)
    out["ref"] = m.group(1) if m else None
    m = re.search(r"compspill\.so sha256 \S+ of (\d{4}-\d\d-\d\d)", text)
    out["date"] = m.group(1) if m else "?"
    m = re.search(r"^Queries: (.*)$", text, re.M)
    out["queries"] = m.group(1) if m else ""
    try:
        i = lines.index("Details:")
    except ValueError:
        raise SystemExit("no details table in results")
    disk = None
    cols = None
    for line in lines[i + 1:]:
        h = re.match(r"^scale (\S+), (.+):$", line)
        if h:
            out["scale"] = h.group(1)
            disk = h.group(2)
            out["tables"].setdefault(disk, {})
            out["order"].setdefault(disk, [])
            cols = None
            continue
        if disk is None or not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == "query":
            cols = cells
            continue
        if cells[0].startswith("---") or cols is None:
            continue
        row = dict(zip(cols, cells))
        key = (row["query"], row["work_mem"], row["config"])
        out["tables"][disk][key] = row
        out["order"][disk].append(key)
    return out


def load_set(conf, name):
    runs = conf["sets"][name]
    return {srv: parse_results(results_text(os.path.join(OUT, runs[srv])))
            for srv in SERVERS if srv in runs}


# ------------------------------------------------------------------ cells


def fnum(cell):
    """The leading number of a cell ("0.81x", "12.36 (10.85-13.71)"), or None."""
    m = re.match(r"^\s*(-?[0-9.]+)", cell or "")
    return float(m.group(1)) if m else None


def wall_cell(cell):
    return cell or "-"


def passes(row):
    """Merge passes, the final merge included: compspill's nodes', else the
    native tuplesort's (trace_sort)."""
    for col in ("runs / passes compspill", "runs / passes tuplesort"):
        v = row.get(col, "-")
        if v and v != "-":
            return v.split("/")[-1].strip()
    return "-"


def mib(cell):
    v = fnum(cell)
    return "-" if v is None else "%.0f MiB" % v


def both(a, b):
    return "%s / %s" % (a, b)


def get(rows, srv, key):
    return (rows.get(srv) or {}).get(key) or {}


# ----------------------------------------------------------------- tables


def paired_table(conf, spec):
    data = load_set(conf, spec["set"])
    checked = load_set(conf, spec["result_from"]) if spec.get("result_from") else data
    out = []
    for disk in spec.get("disks") or [spec["disk"]]:
        rows = {srv: d["tables"].get(disk, {}) for srv, d in data.items()}
        crow = {srv: d["tables"].get(disk, {}) for srv, d in checked.items()}
        order = []
        for srv in SERVERS:
            for k in (data.get(srv) or {}).get("order", {}).get(disk, []):
                if k not in order:
                    order.append(k)
        if spec.get("configs"):
            order = [k for k in order if k[2] in spec["configs"]]
        if len(spec.get("disks") or []) > 1:
            out += ["%s:" % disk, ""]
        out.append("| query | work_mem | config | 15: wall s | 15: vs native | 18: wall s "
                   "| 18: vs native | CPU vs native (15 / 18) | written vs native (15 / 18) "
                   "| temp file vs native (15 / 18) | merge passes (15 / 18) | result (15 / 18) |")
        out.append("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        for key in order:
            r15, r18 = get(rows, "15", key), get(rows, "18", key)
            nat = key[2] == NATIVE
            if nat:
                cpu = both(*("-" if fnum(r.get("backend CPU s")) is None
                             else "%.1f s" % fnum(r.get("backend CPU s")) for r in (r15, r18)))
                wr = both(mib(r15.get("bytes written MiB")), mib(r18.get("bytes written MiB")))
                tf = both(mib(r15.get("temp_bytes MiB")), mib(r18.get("temp_bytes MiB")))
            else:
                cpu = both(r15.get("CPU vs native", "-"), r18.get("CPU vs native", "-"))
                wr = both(r15.get("written vs native", "-"), r18.get("written vs native", "-"))
                tf = both(r15.get("temp vs native", "-"), r18.get("temp vs native", "-"))
            res = both(get(crow, "15", key).get("result", "-"),
                       get(crow, "18", key).get("result", "-"))
            if res == "reference / reference" or res == "identical / identical" \
                    or res == "not checked / not checked":
                res = res.split(" / ")[0]
            cells = [key[0], key[1], key[2],
                     wall_cell(r15.get("wall s (min-max)")), r15.get("wall vs native", "-"),
                     wall_cell(r18.get("wall s (min-max)")), r18.get("wall vs native", "-"),
                     cpu, wr, tf, both(passes(r15), passes(r18)), res]
            out.append("| " + " | ".join(c if c else "-" for c in cells) + " |")
        out.append("")
    return out[:-1]


def span(values, fmt="%.2fx"):
    vs = [v for v in values if v is not None]
    if not vs:
        return "-"
    lo, hi = min(vs), max(vs)
    return fmt % lo if "%.2f" % lo == "%.2f" % hi else "%.2f-%.2fx" % (lo, hi)


def summary_table(conf, spec):
    out = ["| where | codec | CPU vs native, 15 | CPU vs native, 18 | wall vs native, 15 "
           "| wall vs native, 18 | temp file vs native, 15 | temp file vs native, 18 |",
           "|---|---|---:|---:|---:|---:|---:|---:|"]
    for rs in spec["rows"]:
        data = load_set(conf, rs["set"])
        for cfg in spec["configs"]:
            cells = [rs["where"], CODEC_NAMES.get(cfg, cfg)]
            for col in ("CPU vs native", "wall vs native", "temp vs native"):
                for srv in SERVERS:
                    t = data[srv]["tables"].get(rs["disk"], {})
                    cells.append(span([fnum(t.get((q, rs["work_mem"], cfg), {}).get(col))
                                       for q in rs["queries"]]))
            out.append("| " + " | ".join(cells) + " |")
    return out


def public_command(cmd):
    """A run's command as the docs show it: the commit built is REF."""
    return re.sub(r"--ref \S+", "--ref REF", cmd)


def runs_table(conf, spec):
    out = []
    for name in spec["sets"]:
        data = load_set(conf, name)
        ref = next((d["ref"] for d in data.values() if d["ref"]), None)
        label = conf["builds"].get(ref, "the work tree") if ref else "the work tree"
        dates = sorted(set(d["date"] for d in data.values()))
        servers = " and ".join("PostgreSQL %s" % d["server"] for d in data.values())
        out.append("- **%s** (%s): %s; %s" % (name, ", ".join(dates), label, servers))
        out.append("")
        out.append("  ```sh")
        for d in data.values():
            out.append("  " + public_command(d["command"]))
        out.append("  ```")
        out.append("")
    return out[:-1]


KINDS = {"paired": paired_table, "summary": summary_table, "runs": runs_table}


# ---------------------------------------------------------------- writing


def replace_block(text, name, body, path):
    begin = "<!-- bench:begin %s -->" % name
    end = "<!-- bench:end %s -->" % name
    i, j = text.find(begin), text.find(end)
    if i < 0 or j < i:
        raise SystemExit("%s: no %s ... %s markers" % (path, begin, end))
    return text[:i + len(begin)] + "\n" + "\n".join(body) + "\n" + text[j:]


def write_tables(conf, quiet=False):
    targets = {}
    for spec in conf["tables"]:
        body = KINDS[spec["kind"]](conf, spec)
        for t in spec["target"]:
            path = os.path.join(REPO, conf[t])
            if path not in targets:
                with open(path) as f:
                    targets[path] = f.read()
            targets[path] = replace_block(targets[path], spec["name"], body, conf[t])
    for path, text in targets.items():
        with open(path, "w") as f:
            f.write(text)
        if not quiet:
            print("docreport: wrote %s" % os.path.relpath(path, REPO))


# ------------------------------------------------------------------ chart


def draw_chart(conf, path):
    """Two rows (backend CPU time, temp-file size, each against native) by
    one column per server; per query one bar per codec."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    spec = conf["chart_spec"]
    data = load_set(conf, spec["set"])
    qs, cfgs = spec["queries"], spec["configs"]
    colors = {"auto": "#4c72b0", "lz4": "#dd8452", "zstd1": "#55a868", "none": "#8172b3"}
    fig, axes = plt.subplots(2, len(SERVERS), figsize=(11, 6.4), dpi=100, sharey="row")
    rows = (("CPU vs native", "backend CPU time\nagainst native"),
            ("temp vs native", "temporary file size\nagainst native"))
    w = 0.8 / len(cfgs)
    for ci, srv in enumerate(SERVERS):
        t = data[srv]["tables"].get(spec["disk"], {})
        for ri, (col, ylabel) in enumerate(rows):
            ax = axes[ri][ci]
            for k, cfg in enumerate(cfgs):
                vals = [fnum(t.get((q, spec["work_mem"], cfg), {}).get(col)) for q in qs]
                xs = [i + (k - (len(cfgs) - 1) / 2) * w for i in range(len(qs))]
                bars = ax.bar(xs, [v or 0 for v in vals], w, color=colors.get(cfg),
                              label=CODEC_NAMES.get(cfg, cfg).replace("`", ""))
                for b, v in zip(bars, vals):
                    if v is not None:
                        ax.annotate("%.2f" % v, (b.get_x() + b.get_width() / 2, v),
                                    ha="center", va="bottom", fontsize=6.5,
                                    xytext=(0, 1), textcoords="offset points")
            ax.axhline(1.0, color="black", lw=0.9, ls="--")
            ax.set_xticks(range(len(qs)))
            ax.set_xticklabels(qs)
            ax.grid(axis="y", alpha=0.3)
            if ci == 0:
                ax.set_ylabel(ylabel)
            if ri == 0:
                ax.set_title("PostgreSQL %s" % data[srv]["server"].split(" ")[0])
    axes[0][0].legend(fontsize=8, loc="upper left", title="native = 1.0 (dashed)",
                      title_fontsize=7)
    fig.suptitle("compspill %s against native PostgreSQL: work_mem = %s, temporary files "
                 "in the page cache, scale %s, medians of 3" % (
                     conf["release"], spec["work_mem"], data[SERVERS[0]].get("scale", "?")),
                 fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)


def write_chart(conf, quiet=False):
    path = os.path.join(REPO, conf["chart"])
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        if os.path.exists("/usr/bin/python3") and \
                os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3"):
            return subprocess.call(["/usr/bin/python3", os.path.abspath(__file__), "--chart-only"]
                                   + (["--quiet"] if quiet else []))
        print("docreport: no chart: matplotlib is not available "
              "(apt-get install -y python3-matplotlib)", file=sys.stderr)
        return 1
    draw_chart(conf, path)
    if not quiet:
        print("docreport: wrote %s" % os.path.relpath(path, REPO))
    return 0


def main(argv=None, quiet=False):
    argv = sys.argv[1:] if argv is None else argv
    with open(os.path.join(HERE, "docs.json")) as f:
        conf = json.load(f)
    quiet = quiet or "--quiet" in argv
    if "--chart-only" in argv:
        return write_chart(conf, quiet)
    write_tables(conf, quiet)
    return write_chart(conf, quiet)


if __name__ == "__main__":
    sys.exit(main())
