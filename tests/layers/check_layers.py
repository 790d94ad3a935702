#!/usr/bin/env python3
"""Fails when a source file includes a header from a layer above its own.

The layers, lowest first (each may include the ones it lists, and the public headers in include/ninegrid):
  core      platform: tensors, aligned memory, CPU features, the thread pool, scratch buffers
  kernels   inner loops on pointers and strides (ref/, x86/)
  ir        the graph representation (Graph, Node, Value, attributes)
  ops       one operator per file: shape inference, preparation, the call into kernels
  import    ONNX and ncnn readers: bytes in, a Graph out
  graph     value inference over a graph and the optimisation passes
  runtime   Model, Session, the planner
  capi, detect            built on the public API only
  tools, python           the command line and the Python module: public API only (tools also the
                          generated ONNX schema, ninegrid_onnx/, to edit models in `ninegrid quantize`)

    check_layers.py SOURCE_ROOT
"""
import os
import re
import sys

ALLOWED = {
    "core": {"core"},
    "kernels": {"core", "kernels"},
    "ir": {"core", "ir"},
    "ops": {"core", "kernels", "ir", "ops"},
    "import": {"core", "ir", "import", "ninegrid_onnx"},
    "graph": {"core", "kernels", "ir", "ops", "graph"},
    "runtime": {"core", "kernels", "ir", "ops", "graph", "import", "runtime"},
    "capi": set(),
    "detect": {"detect"},
    "tools": {"ninegrid_onnx"},  # the generated ONNX schema, for `ninegrid quantize`
    "python": set(),
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(root, path):
    rel = os.path.relpath(path, root).split(os.sep)
    if rel[0] == "src":
        return rel[1]
    return rel[0]


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
    bad = []
    checked = 0
    for top in ("src", "tools", "python"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                if not name.endswith((".h", ".cpp", ".c")):
                    continue
                path = os.path.join(dirpath, name)
                layer = layer_of(root, path)
                if layer not in ALLOWED:
                    bad.append(f"{os.path.relpath(path, root)}: directory '{layer}' has no layer (add it to ALLOWED)")
                    continue
                checked += 1
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                for inc in INCLUDE.findall(text):
                    if "/" not in inc:
                        continue  # a header beside the file (tools/args.h)
                    target = inc.split("/")[0]
                    if target == "ninegrid" or target in ALLOWED[layer]:
                        continue
                    bad.append(f"{os.path.relpath(path, root)}: layer '{layer}' includes \"{inc}\" "
                               f"(allowed: {', '.join(sorted(ALLOWED[layer] | {'ninegrid'}))})")
    if bad:
        print("\n".join(bad))
        print(f"{len(bad)} include(s) cross the layers upwards")
        return 1
    print(f"{checked} files checked: every include points down or sideways within its layer")
    return 0


if __name__ == "__main__":
    sys.exit(main())
