"""Quantised torchvision models against ONNX Runtime 1.30 (npm onnxruntime-node) on the same file.

The models are quantised by scripts/quantize_like_ort.py (ONNX Runtime's quantize_static layouts: QDQ with
per-channel int8 weights, and QOperator) at 64x64, made by scripts/make_test_models.sh into
.cache/models/quantized/. Per model and format:
  - ninegrid's output agrees with ONNX Runtime's: cosine similarity >= 0.999 and at least 99% of the
    values within one quantisation step of the output (the last DequantizeLinear's scale). Both engines
    compute exact integer sums and requantise in single precision, but an engine may round a tie or a
    last-bit difference the other way, which later layers carry, so a few outputs may differ by more than
    a step. Running the same file's QuantizeLinear/DequantizeLinear around float ops (--opt-level 0)
    misses the 99%. On an x86-64 CPU without VNNI, ORT's int8 kernels saturate, and ORT runs the file's
    exact uint8 re-encoding instead (tests/models/ort_exact_int8.py says why and how).
  - `ninegrid info --optimized` shows the whole model in int8: every layer from the first quantised one
    (the input's QuantizeLinear) to the last quantised one is int8, so no float conv or gemm remains.
  - The int8 tensors stay channel-blocked from one quantised op to the next: the optimised graph has no
    ng.Reorder, and (on a CPU with AVX2 or AVX-512) its convs write blocked NCHW[B]c tensors. The output
    is the same bytes as with `--isa ref`, whose plan is plain NCHW throughout (block 1): the integer
    arithmetic is the same in every layout.

usage: test_quantized_vs_onnxruntime.py NINEGRID_BINARY
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ort_exact_int8 import model_for_ort  # noqa: E402  (ORT's int8 is exact only with VNNI: see there)

BIN = None
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CACHE = os.environ.get("NINEGRID_CACHE", os.path.join(ROOT, ".cache"))
ORT_RUNNER = os.path.join(ROOT, "bench", "ort_runner.js")
QUANTIZED = os.path.join(CACHE, "models", "quantized")


def test_input(seed):
    """A crop of the astronaut photo, normalised as torchvision models expect (not a calibration input)."""
    from skimage import io, transform
    rgb = io.imread("/usr/lib/python3/dist-packages/skimage/data/astronaut.png")[..., :3] / 255.0
    rng = np.random.default_rng(seed)
    size = int(rng.integers(260, 400))
    top, left = (int(rng.integers(0, 512 - size + 1)) for _ in range(2))
    img = transform.resize(rgb[top:top + size, left:left + size], (64, 64), anti_aliasing=True)
    mean, std = np.array([0.485, 0.456, 0.406]), np.array([0.229, 0.224, 0.225])
    return np.ascontiguousarray(((img - mean) / std).transpose(2, 0, 1)[None], np.float32)


def cpu_has_vector_blocks():
    """Whether the layout pass blocks tensors here: an x86-64 CPU with AVX2 (or AVX-512), or AArch64."""
    import platform
    if platform.machine() in ("aarch64", "arm64"):
        return True
    try:
        with open("/proc/cpuinfo") as f:
            return " avx2" in f.read()
    except OSError:
        return False


def output_step(path):
    """The scale of the DequantizeLinear that writes the graph output."""
    import onnx
    from onnx import numpy_helper
    m = onnx.load(path)
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    out = m.graph.output[0].name
    dq = next(n for n in m.graph.node if out in n.output)
    while dq.op_type in ("Flatten", "Reshape"):  # a QOperator model runs Flatten on floats
        dq = next(n for n in m.graph.node if dq.input[0] in n.output)
    assert dq.op_type == "DequantizeLinear", dq.op_type
    return float(inits[dq.input[1]])


class QuantizedVsOnnxRuntime(unittest.TestCase):
    def check(self, name):
        path = os.path.join(QUANTIZED, name + ".onnx")
        self.assertTrue(os.path.exists(path), f"missing {path}: run scripts/make_test_models.sh")
        step = output_step(path)
        with tempfile.TemporaryDirectory() as d:
            inp = os.path.join(d, "x.npy")
            np.save(inp, test_input(len(name)))
            ort_dir, ng_dir = os.path.join(d, "ort"), os.path.join(d, "ng")
            subprocess.run(["node", ORT_RUNNER, model_for_ort(path, d), "--input", f"input={inp}", "--save-outputs",
                            ort_dir, "--runs", "0", "--warmup", "0"], check=True, capture_output=True, timeout=300)
            subprocess.run([BIN, "run", path, "--input", f"input={inp}", "--output-dir", ng_dir],
                           check=True, capture_output=True, timeout=300)
            plain_dir = os.path.join(d, "plain")
            subprocess.run([BIN, "run", path, "--input", f"input={inp}", "--output-dir", plain_dir, "--isa", "ref"],
                           check=True, capture_output=True, timeout=300)
            names = sorted(os.listdir(ort_dir))
            self.assertEqual(len(names), 1)
            ref = np.load(os.path.join(ort_dir, names[0])).astype(np.float64).ravel()
            got = np.load(os.path.join(ng_dir, names[0])).astype(np.float64).ravel()
            blocked_bytes = np.load(os.path.join(ng_dir, names[0])).tobytes()
            plain_bytes = np.load(os.path.join(plain_dir, names[0])).tobytes()
        self.assertTrue(blocked_bytes == plain_bytes, f"{name}: the blocked plan's output differs from --isa ref's")
        self.assertEqual(got.shape, ref.shape)
        self.assertGreater(np.ptp(ref), 10 * step, "ORT's output is nearly constant: the comparison would mean nothing")
        cosine = float(got @ ref / (np.linalg.norm(got) * np.linalg.norm(ref)))
        within = float(np.mean(np.abs(got - ref) <= step * 1.0001))
        print(f"{name}: cosine {cosine:.6f}, {100 * within:.1f}% within one step ({step:.4g}), "
              f"max |diff| {np.abs(got - ref).max() / step:.1f} steps", file=sys.stderr)
        self.assertGreaterEqual(cosine, 0.999, name)
        self.assertGreaterEqual(within, 0.99, name)

        info = subprocess.run([BIN, "info", path, "--optimized", "--json"], check=True, capture_output=True,
                              text=True, timeout=300)
        layers = json.loads(info.stdout)["layers"]
        int8 = [i for i, l in enumerate(layers) if l["precision"] == "int8"]
        self.assertTrue(int8, "no int8 layer")
        inside = layers[int8[0]:int8[-1] + 1]
        float_layers = [(l["name"], l["op"]) for l in inside if l["precision"] != "int8"]
        self.assertEqual(float_layers, [], f"{name}: float layers between the first and last int8 layer")
        ops = {l["op"] for l in layers}
        self.assertFalse(ops & {"Conv", "Gemm", "MatMul"}, f"{name}: float convs/gemms left: {sorted(ops)}")
        # An ng.QAdd fused into a conv's epilogue (graph/passes/fuse_qadd.cpp) runs in int8 as well.
        ops |= {"ng.QAdd" for l in layers if l["op"] == "ng.QConv" and "QAdd" in l.get("fused", [])}
        reorders = [l["name"] for l in layers if l["op"] == "ng.Reorder"]
        self.assertEqual(reorders, [], f"{name}: layout transforms in the int8 model")
        if cpu_has_vector_blocks():
            blocked = [l["name"] for l in layers if l["op"] == "ng.QConv" and l["layout"] != "NCHW"]
            self.assertGreater(len(blocked), len([l for l in layers if l["op"] == "ng.QConv"]) // 2,
                               f"{name}: most convs should write channel-blocked int8 tensors")
        self.assertIn("ng.QConv", ops)
        return ops

    def test_resnet18_qdq(self):
        ops = self.check("resnet18_qdq")
        self.assertTrue({"ng.QAdd", "ng.QGemm", "ng.QGlobalAveragePool", "MaxPool"} <= ops, sorted(ops))

    def test_resnet18_qoperator(self):
        ops = self.check("resnet18_qoperator")
        self.assertTrue({"ng.QAdd", "ng.QGemm", "ng.QGlobalAveragePool"} <= ops, sorted(ops))

    def test_mobilenet_v2_qdq(self):
        ops = self.check("mobilenet_v2_qdq")
        self.assertTrue({"ng.QAdd", "ng.QGemm", "ng.QGlobalAveragePool"} <= ops, sorted(ops))

    def test_mobilenet_v2_qoperator(self):
        ops = self.check("mobilenet_v2_qoperator")
        self.assertTrue({"ng.QAdd", "ng.QGemm", "ng.QGlobalAveragePool"} <= ops, sorted(ops))

    def test_squeezenet_qdq(self):
        ops = self.check("squeezenet1_1_qdq")
        self.assertIn("ng.QConcat", ops)

    def test_squeezenet_qoperator(self):
        ops = self.check("squeezenet1_1_qoperator")
        self.assertIn("ng.QConcat", ops)


if __name__ == "__main__":
    BIN = sys.argv[1]
    unittest.main(argv=sys.argv[:1])
