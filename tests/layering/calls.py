#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The one-way flow checked on the calls, as check.sh checks the includes.

Reads the product objects' symbol tables (nm) under BUILD: a file calls
another when its object uses a symbol the other defines.  Reports, one
line each, and exits 1 when there is any:

  - a call from runtime/init/ into runtime/lifecycle/ (the init is handed
    what it needs from the lifecycle as data or a callback);
  - a circle of calls between files (a strongly connected set of two or
    more files), except those named in ALLOWED_CIRCLES with the reason;
  - a call into one of agent/'s rooms (agent/ROOM/) from outside it to
    anything its interface, agent/ROOM/ROOM.h, does not declare.

An object whose source is neither in the tree nor under $PLANT (a file
moved or deleted since the build) is stale, and left out.

    tests/layering/calls.py BUILD
"""
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

PRODUCT = ("cmd", "agent", "runtime", "spec", "lib", "hooks")

# Circles kept on purpose: {frozenset of files: why}.
ALLOWED_CIRCLES = {}


def symbols(obj):
    """(defined global symbols, undefined symbols) of one object."""
    out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDBRGS":
            defined.add(parts[2])
        elif len(parts) == 2 and parts[0] == "U":
            used.add(parts[1])
    return defined, used


def source_exists(src):
    """src is in the tree, or planted (plant.sh: PLANT=DIR)."""
    plant = os.environ.get("PLANT")
    return (os.path.exists(os.path.join(ROOT, src)) or
            bool(plant) and os.path.exists(os.path.join(plant, src)))


def call_graph(build):
    defs, uses = {}, {}
    for top in PRODUCT:
        for dirpath, _, files in sorted(os.walk(os.path.join(build, top))):
            for f in sorted(files):
                # embed-*.o: generated data (seccomp profiles, the init)
                if not f.endswith(".o") or f.startswith("embed-"):
                    continue
                obj = os.path.join(dirpath, f)
                src = os.path.relpath(obj, build)[:-2] + ".c"
                if not source_exists(src):
                    continue
                d, u = symbols(obj)
                for s in d:
                    defs[s] = src
                uses[src] = u
    edges = {src: {defs[s] for s in u if s in defs and defs[s] != src}
             for src, u in uses.items()}
    return edges, defs, uses


def circles(edges):
    """Tarjan's strongly connected components of two or more files."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(100000)

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

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def room_of(path):
    """"sandbox" for agent/sandbox/..., else None."""
    parts = path.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "agent" else None


def declared(header):
    """The identifiers a header names outside its comments."""
    try:
        with open(os.path.join(ROOT, header)) as f:
            text = f.read()
    except OSError:
        return set()
    text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)
    return set(re.findall(r"[A-Za-z_]\w*", text))


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    if not os.path.isdir(os.path.join(build, "runtime")):
        print("layering: no objects under %s (build first)" % build)
        return 2
    edges, defs, uses = call_graph(build)
    bad = 0
    for src in sorted(edges):
        for dst in sorted(edges[src]):
            if src.startswith("runtime/init/") and dst.startswith("runtime/lifecycle/"):
                names = sorted(s for s in uses[src] if defs.get(s) == dst)
                print("layering: %s calls up into %s (%s)" % (src, dst, ", ".join(names)))
                bad = 1
    interfaces = {}
    for src in sorted(edges):
        for dst in sorted(edges[src]):
            room = room_of(dst)
            if not room or room_of(src) == room:
                continue
            header = "agent/%s/%s.h" % (room, room)
            if header not in interfaces:
                interfaces[header] = declared(header)
            names = sorted(s for s in uses[src] if defs.get(s) == dst and s not in interfaces[header])
            if names:
                print("layering: %s calls %s's %s: outside agent/%s/ only what %s declares" %
                      (src, dst, ", ".join(names), room, header))
                bad = 1
    for comp in circles(edges):
        if frozenset(comp) in ALLOWED_CIRCLES:
            continue
        print("layering: files call each other in a circle: %s" % " ".join(comp))
        for a in comp:
            for b in comp:
                if b in edges.get(a, ()):
                    names = sorted(s for s in uses[a] if defs.get(s) == b)
                    print("layering:   %s -> %s (%s)" % (a, b, ", ".join(names)))
        bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main())
