#!/usr/bin/python3
"""Checks that core/ is layered: every #include "core/..." of a file in core/ goes to its own
folder or to a folder below it, and no include cycle exists between files. The layers, bottom to
top (docs/architecture.md draws them):

  common, graph, threads, kernels, compiler, params, runtime, artifact, import, loader, stream,
  vision, track

core/kernels/fast and core/kernels/ref are part of kernels. Run from anywhere:

  /usr/bin/python3 scripts/check_layers.py        # prints each violation, exits 1 on any
"""
import os
import re
import sys

LAYERS = ["common", "graph", "threads", "kernels", "compiler", "params", "runtime", "artifact", "import",
          "loader", "stream", "vision", "track", "publish"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"(core/[^"]+)"', re.M)


def layer_of(path):
    parts = path.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "core" else None


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    os.chdir(root)
    rank = {name: i for i, name in enumerate(LAYERS)}
    files = {}
    for base, _, names in os.walk("core"):
        for n in names:
            if n.endswith((".h", ".cpp")):
                p = os.path.join(base, n)
                with open(p, encoding="utf-8") as f:
                    files[p] = INCLUDE.findall(f.read())
    problems = []
    for path, includes in sorted(files.items()):
        mine = layer_of(path)
        if mine not in rank:
            problems.append(f"{path}: folder core/{mine} is not in the layer list of scripts/check_layers.py")
            continue
        for inc in includes:
            theirs = layer_of(inc)
            if theirs not in rank:
                problems.append(f"{path}: includes {inc}, whose folder is not a layer")
            elif rank[theirs] > rank[mine]:
                problems.append(f"{path}: includes {inc} (layer {theirs} is above {mine})")
            elif not os.path.exists(inc):
                problems.append(f"{path}: includes {inc}, which does not exist")
    # Include cycles between files (depth-first search over the include graph).
    state = {}
    stack = []

    def visit(p):
        state[p] = 1
        stack.append(p)
        for inc in files.get(p, []):
            if inc not in files:
                continue
            if state.get(inc) == 1:
                cycle = stack[stack.index(inc):] + [inc]
                problems.append("include cycle: " + " -> ".join(cycle))
            elif inc not in state:
                visit(inc)
        stack.pop()
        state[p] = 2

    for p in sorted(files):
        if p not in state:
            visit(p)
    for line in problems:
        print(line)
    print(f"check_layers: {len(files)} files of core/, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
