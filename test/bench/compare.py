#!/usr/bin/env python3
#
# test/bench/compare.py
#	  One table from two benchmark runs of the same queries on the same
#	  server: each configuration's CPU and temporary file against native's
#	  in the run before and in the run after, and the after run's Spill CPU
#	  (all of it, and the codec's own compress + decompress) and the CPU
#	  beyond the codec's own, as a share of native's.
#
#	test/bench/compare.py BEFORE/runs.json AFTER/runs.json [LABEL]
#
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402


def load(path):
    with open(path) as f:
        doc = json.load(f)
    return bench.summarize(doc["runs"] if isinstance(doc, dict) else doc)


def ratio(x, b):
    return "-" if x is None or not b else "%.2fx" % (x / b)


def main(argv):
    before, after = load(argv[0]), load(argv[1])
    label = argv[2] if len(argv) > 2 else ""
    print("| query | codec%s | CPU vs native, before | after | temp file vs native, before | after | merge passes, before / after | Spill CPU s (codec's own), after | beyond the codec, after |" % (
        ", " + label if label else ""))
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for key in sorted(after, key=lambda k: (k[2], k[3], k[4])):
        scale, disk, q, wm, cfg = key
        if cfg == bench.NATIVE:
            continue
        a, b = after[key], before.get(key) or {}
        na = after.get((scale, disk, q, wm, bench.NATIVE)) or {}
        nb = before.get((scale, disk, q, wm, bench.NATIVE)) or {}
        spill = "-" if a.get("spillcpu_s") is None else "%.2f (%.2f)" % (a["spillcpu_s"], a["codec_s"])
        print("| %s %s | %s | %s | %s | %s | %s | %s / %s | %s | %s |" % (
            q, wm, cfg, ratio(b.get("cpu"), nb.get("cpu")), ratio(a.get("cpu"), na.get("cpu")),
            ratio(b.get("temp"), nb.get("temp")), ratio(a.get("temp"), na.get("temp")),
            "-" if b.get("cs_passes") is None else "%g" % b["cs_passes"],
            "-" if a.get("cs_passes") is None else "%g" % a["cs_passes"],
            spill, bench.fmt_beyond(a, na)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
