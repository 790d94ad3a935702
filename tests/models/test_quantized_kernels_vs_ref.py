"""Whole quantised models on the fast int8 kernels against the reference kernels: the same bytes.

Integer convolution is exact and the kernels requantise in the reference's single-precision steps, so a
model run on the VNNI or AVX2 kernels (ops/qconv_fast.h) must give exactly the output of the same model
under NINEGRID_ISA=ref (kernels/ref/qconv2d_ref.cpp), residual adds fused into the convs' epilogues
(graph/passes/fuse_qadd.cpp) included, on the torchvision models that
scripts/make_test_models.sh quantises (QDQ and QOperator, .cache/models/quantized/). Where the CPU has
AVX2, `ninegrid info --optimized` must name a fast int8 kernel for the model's convs (so the comparison
is not the reference against itself); with AVX-512 VNNI, the VNNI kernels and, capped at avx2, the AVX2
ones are both compared. On the best ISA the model runs twice more with the kernel family forced through
NINEGRID_CONV_ALGORITHMS: "indirect" (every conv that is not depthwise on the indirect kernel, which must
then name them) and "direct" (none on it).

usage: test_quantized_kernels_vs_ref.py NINEGRID_BINARY
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

BIN = None
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CACHE = os.environ.get("NINEGRID_CACHE", os.path.join(ROOT, ".cache"))
QUANTIZED = os.path.join(CACHE, "models", "quantized")
MODELS = ["resnet18_qdq", "resnet18_qoperator", "mobilenet_v2_qdq", "mobilenet_v2_qoperator",
          "squeezenet1_1_qdq", "squeezenet1_1_qoperator"]


def cpu_flags():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    return set()


def env_with_isa(isa, algorithms=None):
    env = dict(os.environ)
    env.pop("NINEGRID_ISA", None)
    env.pop("NINEGRID_CONV_ALGORITHMS", None)
    if isa:
        env["NINEGRID_ISA"] = isa
    if algorithms:
        env["NINEGRID_CONV_ALGORITHMS"] = algorithms
    return env


class QuantizedKernelsVsRef(unittest.TestCase):
    def run_model(self, path, inp, out_dir, isa, algorithms=None):
        subprocess.run([BIN, "run", path, "--input", f"input={inp}", "--output-dir", out_dir], check=True,
                       capture_output=True, timeout=300, env=env_with_isa(isa, algorithms))
        names = sorted(os.listdir(out_dir))
        return {n: np.load(os.path.join(out_dir, n)) for n in names}

    def layers(self, path, isa, algorithms=None):
        info = subprocess.run([BIN, "info", path, "--optimized", "--json"], check=True, capture_output=True,
                              text=True, timeout=300, env=env_with_isa(isa, algorithms))
        return json.loads(info.stdout)["layers"]

    def kernels(self, path, isa, algorithms=None):
        return [l.get("algorithm", "") for l in self.layers(path, isa, algorithms) if l["op"] == "ng.QConv"]

    def check(self, name):
        flags = cpu_flags()
        if "avx2" not in flags:
            self.skipTest("no AVX2: the fast int8 kernels do not run here")
        path = os.path.join(QUANTIZED, name + ".onnx")
        self.assertTrue(os.path.exists(path), f"missing {path}: run scripts/make_test_models.sh")
        isas = [("avx2", "int8-avx2-")]
        if "avx512_vnni" in flags and "avx512bw" in flags:
            isas.insert(0, (None, "int8-vnni-"))
        rng = np.random.default_rng(len(name))
        x = rng.standard_normal((1, 3, 64, 64)).astype(np.float32)
        with tempfile.TemporaryDirectory() as d:
            inp = os.path.join(d, "x.npy")
            np.save(inp, x)
            ref = self.run_model(path, inp, os.path.join(d, "ref"), "ref")
            self.assertTrue(ref)
            if name.startswith("resnet18"):
                # The residual adds run in the convs' epilogues (graph/passes/fuse_qadd.cpp), on every ISA.
                layers = self.layers(path, "ref")
                fused = [l for l in layers if l["op"] == "ng.QConv" and "QAdd" in l.get("fused", [])]
                self.assertEqual(len(fused), 8, f"{name}: residual adds fused into convs")
                self.assertFalse([l for l in layers if l["op"] == "ng.QAdd"], f"{name}: an ng.QAdd left")
            best_prefix = isas[0][1]
            runs = [(isa, prefix, None) for isa, prefix in isas]
            runs += [(isas[0][0], best_prefix + "indirect", "indirect"), (isas[0][0], best_prefix, "direct")]
            for isa, prefix, forced in runs:
                algorithms = self.kernels(path, isa, forced)
                self.assertTrue(algorithms, "no ng.QConv in the optimised model")
                fast = [a for a in algorithms if a.startswith(prefix)]
                self.assertTrue(fast, f"{name} at {isa or 'best'} {forced}: no conv on {prefix}*: {algorithms}")
                if forced == "direct":
                    self.assertFalse([a for a in algorithms if a.endswith("indirect")], f"{name}: {algorithms}")
                label = (isa or "best") + (forced or "")
                got = self.run_model(path, inp, os.path.join(d, label), isa, forced)
                self.assertEqual(sorted(got), sorted(ref))
                for out in ref:
                    self.assertEqual(got[out].shape, ref[out].shape)
                    differ = int(np.sum(got[out].view(np.uint32) != ref[out].view(np.uint32)))
                    self.assertEqual(differ, 0, f"{name} at {label}: {differ} of {ref[out].size} outputs "
                                                f"differ from the reference kernels'")

    def test_models(self):
        for name in MODELS:
            with self.subTest(name):
                self.check(name)


if __name__ == "__main__":
    BIN = sys.argv[1]
    unittest.main(argv=sys.argv[:1])
