#!/usr/bin/env python3
#
# test/include-graph.py
#	  Draw the include graph of compspill's own files under src/, one
#	  module per file name (a .c and the .h of the same name are one
#	  module; the files of codec/enc/ are the block codec's), and check
#	  that it has no circle.
#
#	test/include-graph.py [--dot] [--check] [SRC_DIR]
#
#	  (no option)  the modules in layer order, each with the modules it
#	               includes, then the circles found (strongly connected
#	               components of more than one module), then line counts
#	  --dot        the graph in Graphviz's dot language instead
#	  --check      exit 1 if there is a circle, if a module includes
#	               one of a layer above its own (LAYERS below), or if a
#	               module outside a folder includes that folder's private
#	               header (a name ending in _private.h: spill/run_private.h)
#
# Only includes of the project's own headers count ("dir/file.h", relative
# to src/); PostgreSQL's and the libraries' headers are left out.
#
import os
import re
import sys

# the layers from the top down: a module may include its own layer's and
# the layers' below, never one above (the entry point is the top)
LAYERS = [
    ("entry", ["compspill"]),
    ("nodes", ["nodes/"]),
    ("sort", ["sort/"]),
    ("spill", ["spill/"]),
    ("codec", ["codec/"]),
    ("shared memory", ["shared/"]),
    ("ground", ["base/", "compat"]),
]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


# folders whose files are the parts of one module: the column encodings
# are the block codec's, one file each behind its ops table (enc/encoding.h)
PARTS = {"codec/enc/": "codec/blockcodec"}


def module_of(path):
    """The module of a file under src/: its path without the extension, or
    the module it is a part of (PARTS)."""
    for folder, module in PARTS.items():
        if path.startswith(folder):
            return module
    return os.path.splitext(path)[0]


def layer_of(module):
    """The index in LAYERS of the layer a module belongs to."""
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if module == p or (p.endswith("/") and module.startswith(p)):
                return i
    return len(LAYERS)


def read_graph(src):
    """Return (edges, lines): module -> set of modules, module -> lines."""
    edges = {}
    lines = {}
    for root, _, files in os.walk(src):
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(root, f)
            rel = os.path.relpath(path, src)
            mod = module_of(rel)
            edges.setdefault(mod, set())
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.readlines()
            lines[rel] = len(text)
            for line in text:
                m = INCLUDE.match(line)
                if not m:
                    continue
                inc = m.group(1)
                if not os.path.exists(os.path.join(src, inc)):
                    continue        # a PostgreSQL or library header
                target = module_of(inc)
                if target != mod:
                    edges[mod].add(target)
    return edges, lines


def circles(edges):
    """The strongly connected components of more than one module (Tarjan)."""
    index = {}
    low = {}
    stack = []
    on_stack = set()
    found = []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def upward(edges):
    """The includes of a module of a layer above the includer's."""
    bad = []
    for v in sorted(edges):
        for w in sorted(edges[v]):
            if layer_of(w) < layer_of(v):
                bad.append((v, w))
    return bad


def private_leaks(edges):
    """The includes of a folder's private header (a module whose name ends
    in _private) by a module of another folder."""
    bad = []
    for v in sorted(edges):
        for w in sorted(edges[v]):
            if (w.endswith("_private") and
                    os.path.dirname(w) != os.path.dirname(v)):
                bad.append((v, w))
    return bad


def main(argv):
    dot = "--dot" in argv
    check = "--check" in argv
    rest = [a for a in argv if not a.startswith("--")]
    src = rest[0] if rest else os.path.join(os.path.dirname(__file__), "..", "src")
    edges, lines = read_graph(src)
    order = sorted(edges, key=lambda m: (layer_of(m), m))

    if dot:
        print("digraph compspill {")
        print("  rankdir=TB; node [shape=box, fontname=monospace];")
        for v in order:
            for w in sorted(edges[v]):
                print('  "%s" -> "%s";' % (v, w))
        print("}")
        return 0

    circ = circles(edges)
    up = upward(edges)
    leaks = private_leaks(edges)
    if not check:
        for v in order:
            name = LAYERS[layer_of(v)][0] if layer_of(v) < len(LAYERS) else "?"
            print("%-22s %-14s -> %s" % (v, "[" + name + "]",
                                         ", ".join(sorted(edges[v])) or "-"))
        print()
        print("circles: %d" % len(circ))
        for c in circ:
            print("  " + " <-> ".join(c))
        print("includes of a layer above: %d" % len(up))
        for v, w in up:
            print("  %s -> %s" % (v, w))
        print("includes of another folder's private header: %d" % len(leaks))
        for v, w in leaks:
            print("  %s -> %s" % (v, w))
        print()
        print("lines per file:")
        for rel in sorted(lines, key=lambda r: (layer_of(module_of(r)), r)):
            print("  %6d  %s" % (lines[rel], rel))
        print("  %6d  total" % sum(lines.values()))
        return 0

    for c in circ:
        print("include circle: " + " <-> ".join(c))
    for v, w in up:
        print("include of a layer above: %s -> %s" % (v, w))
    for v, w in leaks:
        print("include of another folder's private header: %s -> %s" % (v, w))
    return 1 if circ or up or leaks else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
