"""ONNX Runtime's view of a model, for comparing ninegrid.InferenceSession with it: ONNX Runtime 1.30 from npm
(onnxruntime-node, which scripts/install_deps.sh fetches) driven by ort_node.js. Debian has no Python
onnxruntime package."""
import json
import os
import shutil
import subprocess
import tempfile

import numpy as np

_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ort_node.js")


def _node_env():
    # The sanitised test runs preload the sanitizer runtime into Python; node must not inherit it.
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    return env


def available():
    """Why ONNX Runtime cannot be run here, or None when it can."""
    if shutil.which("node") is None:
        return "node is not installed (run scripts/setup.sh)"
    repo = os.path.dirname(os.path.dirname(os.path.dirname(_SCRIPT)))
    cache = os.environ.get("NINEGRID_CACHE", os.path.join(repo, ".cache"))
    if not os.path.isdir(os.path.join(cache, "npm", "ort", "node_modules", "onnxruntime-node")):
        return f"onnxruntime-node is not in {cache}/npm/ort (run scripts/setup.sh)"
    return None


def run(model, feeds=None):
    """ONNX Runtime on `model` (a path): returns (meta, outputs), meta as ort_node.js writes it ({inputs,
    outputs: [{name, type, shape}], names}) and outputs {name: ndarray} (empty without feeds)."""
    with tempfile.TemporaryDirectory(prefix="ninegrid_ort_") as d:
        args = []
        for i, (name, value) in enumerate((feeds or {}).items()):
            f = os.path.join(d, f"in{i}.npy")
            np.save(f, np.ascontiguousarray(value))
            args.append(f"{name}={f}")
        out_dir = os.path.join(d, "out")
        r = subprocess.run(["node", _SCRIPT, model, out_dir, *args], capture_output=True, text=True, timeout=600,
                           env=_node_env())
        if r.returncode != 0:
            raise RuntimeError(f"ONNX Runtime failed on {model}: {r.stderr.strip()}")
        with open(os.path.join(out_dir, "meta.json")) as f:
            meta = json.load(f)
        outputs = {}
        if feeds:
            for i, name in enumerate(meta["names"]):
                outputs[name] = np.load(os.path.join(out_dir, f"{i}.npy"))
        return meta, outputs
