#!/usr/bin/python3
"""Tests of `ninegrid quantize`: the QDQ model it writes, checked by ONNX's checker, by reading its
quantisation parameters back, and by running it in ONNX Runtime 1.30 (npm onnxruntime-node, through
bench/ort_runner.js) and in ninegrid (`ninegrid run`); the calibration methods, --keep-float, --report,
opset raising, and the error messages.

usage: /usr/bin/python3 tests/cli/test_quantize.py PATH/TO/ninegrid   (or set NINEGRID_CLI)

The test model is built here with onnx.helper: Conv -> BatchNormalization -> Relu, MaxPool, a residual
Add -> Relu, Conv -> Clip(0, 6), AveragePool, Concat, GlobalAveragePool, Flatten, Gemm. Its weights are
random but scaled as in trained networks (He initialisation: every layer keeps its activations'
variance, BatchNorm statistics near their identity values), so no layer's output is lost in cancellation
or blown up, and a cosine of 0.99 to fp32 is a fair bar for 8 bits. (Default-initialised random models
can be badly conditioned: outputs that are small differences of large sums, where any quantisation noise
dominates, and a failing cosine would then say nothing about the quantiser.)

Calibration images are photos from Debian's python3-skimage data directory.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "models"))
from ort_exact_int8 import model_for_ort  # noqa: E402  (ORT's int8 is exact only with VNNI: see there)

CLI = os.environ.get("NINEGRID_CLI", "")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ORT_RUNNER = os.path.join(ROOT, "bench", "ort_runner.js")
SKIMAGE_DATA = "/usr/lib/python3/dist-packages/skimage/data"
PHOTOS = ["astronaut.png", "coffee.png", "chelsea.png", "rocket.jpg", "motorcycle_left.png", "hubble_deep_field.jpg",
          "retina.jpg", "ihc.png", "camera.png", "brick.png"]
# The test model's input is (pixel - 127.5) / 63.75, roughly [-2, 2].
PREPROCESS = ["--mean", "127.5", "--scale", "0.0156862745", "--resize", "stretch"]
SIZE = 48
CALIB_SIDE = 4 * SIZE  # the calibration photos' longest side (setUpClass)


def he(rng, shape):
    fan_in = int(np.prod(shape[1:]))
    return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)


def small_model(opset=13):
    """The test model (see the module docstring); node names are conv1, bn1, relu1, ... ."""
    rng = np.random.default_rng(1234)
    inits = []

    def init(name, array):
        inits.append(numpy_helper.from_array(np.asarray(array, np.float32), name))
        return name

    def conv(name, x, y, cin, cout, k, stride=1, bias=True):
        ins = [x, init(name + ".w", he(rng, (cout, cin, k, k)))]
        if bias:
            ins.append(init(name + ".b", rng.standard_normal(cout) * 0.05))
        return helper.make_node("Conv", ins, [y], name=name, kernel_shape=[k, k], strides=[stride, stride],
                                pads=[k // 2] * 4)

    c = 16
    nodes = [
        conv("conv1", "image", "c1", 3, c, 3, stride=2, bias=False),
        helper.make_node("BatchNormalization",
                         ["c1", init("bn1.g", rng.uniform(0.7, 1.3, c)), init("bn1.b", rng.normal(0.05, 0.1, c)),
                          init("bn1.m", rng.normal(0, 0.1, c)), init("bn1.v", rng.uniform(0.7, 1.3, c))],
                         ["b1"], name="bn1", epsilon=1e-5),
        helper.make_node("Relu", ["b1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        conv("conv2", "p1", "c2", c, c, 3),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        conv("conv3", "r2", "c3", c, c, 3),
        helper.make_node("Add", ["p1", "c3"], ["s1"], name="add1"),
        helper.make_node("Relu", ["s1"], ["r3"], name="relu3"),
        conv("conv4", "r3", "c4", c, 2 * c, 1),
        helper.make_node("Clip", ["c4", init("zero", 0.0), init("six", 6.0)], ["r4"], name="relu6"),
        helper.make_node("AveragePool", ["r4"], ["a4"], name="avgpool", kernel_shape=[2, 2], strides=[2, 2]),
        conv("conv5", "r3", "c5", c, c, 3, stride=2),
        helper.make_node("Relu", ["c5"], ["r5"], name="relu5"),
        helper.make_node("Concat", ["a4", "r5"], ["cat"], name="concat", axis=1),
        helper.make_node("GlobalAveragePool", ["cat"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", init("fc.w", he(rng, (10, 3 * c))), init("fc.b", rng.normal(0, 0.1, 10))],
                         ["logits"], name="fc", transB=1),
    ]
    x = helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, SIZE, SIZE])
    y = helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])
    graph = helper.make_graph(nodes, "small", [x], [y], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7 if opset >= 13 else 6
    onnx.checker.check_model(model)
    return model


def photo_input(name, size=SIZE):
    """A photo preprocessed as PREPROCESS says (stretched, (pixel - 127.5) / 63.75), NCHW."""
    from skimage import io, transform
    img = io.imread(os.path.join(SKIMAGE_DATA, name))
    if img.ndim == 2:
        img = np.stack([img] * 3, -1)
    img = transform.resize(img[..., :3], (size, size), anti_aliasing=True, preserve_range=True)
    return np.ascontiguousarray(((img - 127.5) / 63.75).transpose(2, 0, 1)[None], np.float32)


def initializers(model):
    return {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}


def cosine(a, b):
    a, b = np.ravel(a).astype(np.float64), np.ravel(b).astype(np.float64)
    return float(a @ b / np.sqrt((a @ a) * (b @ b)))


class QuantizeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name
        cls.calib = os.path.join(cls.dir, "calib")
        os.makedirs(cls.calib)
        # The photos shrunk to at most CALIB_SIDE pixels on a side (PNG), since the model reads 48x48 anyway:
        # decoding and resizing the full-size photos in every quantize run was most of this suite's time
        # under the sanitizers (bench/REPORT.md, "int8 MaxPool on the vector kernels; CI time; ...").
        from PIL import Image
        for p in PHOTOS:
            with Image.open(os.path.join(SKIMAGE_DATA, p)) as img:
                img = img.convert("RGB")
                img.thumbnail((CALIB_SIDE, CALIB_SIDE), Image.LANCZOS)
                img.save(os.path.join(cls.calib, os.path.splitext(p)[0] + ".png"))
        cls.float_path = os.path.join(cls.dir, "small.onnx")
        onnx.save(small_model(), cls.float_path)
        cls.quantized = {}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_cli(self, *args, expect=0):
        r = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=600, cwd=self.dir)
        self.assertGreaterEqual(r.returncode, 0, f"crashed with signal {-r.returncode}: {r.stderr}")
        if expect is not None:
            self.assertEqual(r.returncode, expect, f"{args}: stdout {r.stdout}\nstderr {r.stderr}")
        return r

    def quantize(self, *extra, model=None):
        """Quantises the small model (cached per option set); returns the written model's path."""
        key = (model, extra)
        if key not in self.quantized:
            out = os.path.join(self.dir, f"q{len(self.quantized)}.onnx")
            r = self.run_cli("quantize", model or self.float_path, "--calibration", self.calib, *PREPROCESS,
                             *extra, "-o", out)
            self.quantized[key] = (out, r.stdout)
        return self.quantized[key][0]

    def ort(self, model, x):
        d = tempfile.mkdtemp(dir=self.dir)
        inp = os.path.join(d, "x.npy")
        np.save(inp, x)
        r = subprocess.run(["node", ORT_RUNNER, model_for_ort(model, d), "--input", f"image={inp}", "--save-outputs", d,
                            "--runs", "0", "--warmup", "0"], capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        return np.load(os.path.join(d, "logits.npy"))

    def ninegrid(self, model, x, opt_level=2, extra=()):
        d = tempfile.mkdtemp(dir=self.dir)
        inp = os.path.join(d, "x.npy")
        np.save(inp, x)
        self.run_cli("run", model, "--input", f"image={inp}", "--output-dir", d, "--opt-level", str(opt_level),
                     *extra)
        return np.load(os.path.join(d, "logits.npy"))

    # --- the written model ---------------------------------------------------------------------------

    def test_written_model_is_valid_qdq(self):
        path = self.quantize("--per-channel")
        m = onnx.load(path)
        onnx.checker.check_model(m, full_check=True)
        self.assertGreaterEqual([o.version for o in m.opset_import if o.domain in ("", "ai.onnx")][0], 13)
        ops = [n.op_type for n in m.graph.node]
        self.assertNotIn("BatchNormalization", ops, "BatchNorm should be folded into conv1")
        w = initializers(m)
        producer = {o: n for n in m.graph.node for o in n.output}
        readers = {}
        for n in m.graph.node:
            for i in n.input:
                readers.setdefault(i, []).append(n)

        def dq_params(name):
            dq = producer[name]
            self.assertEqual(dq.op_type, "DequantizeLinear", name)
            return w[dq.input[0]], w[dq.input[1]], w[dq.input[2]], dq

        convs = [n for n in m.graph.node if n.op_type == "Conv"]
        self.assertEqual(len(convs), 5)
        for conv in convs:
            x_q, x_scale, x_zp, _ = (None, None, None, None)
            xq = producer[conv.input[0]]
            self.assertEqual(xq.op_type, "DequantizeLinear", f"{conv.name}: input not dequantised")
            x_scale, x_zp = w[xq.input[1]], w[xq.input[2]]
            self.assertEqual(x_zp.dtype, np.uint8)
            self.assertEqual(x_scale.shape, ())
            wq, ws, wz, wdq = dq_params(conv.input[1])
            self.assertEqual(wq.dtype, np.int8)
            self.assertEqual(ws.shape, (wq.shape[0],), f"{conv.name}: one weight scale per output channel")
            self.assertTrue(np.all(wz == 0), "symmetric weights")
            self.assertEqual([a.i for a in wdq.attribute if a.name == "axis"], [0])
            self.assertLessEqual(int(np.abs(wq.astype(np.int32)).max()), 127)
            self.assertEqual(int(np.abs(wq.astype(np.int32)).max()), 127, "the largest weight uses the full range")
            if len(conv.input) > 2:
                bq, bs, bz, _ = dq_params(conv.input[2])
                self.assertEqual(bq.dtype, np.int32)
                np.testing.assert_allclose(bs, x_scale * ws, rtol=1e-6, err_msg=f"{conv.name}: bias scale")
            # Conv -> Relu/Clip -> QuantizeLinear: the activation inside the island, no Q between.
            after = readers[conv.output[0]]
            self.assertEqual(len(after), 1)
            if conv.name in ("conv1", "conv2", "conv4", "conv5"):
                self.assertIn(after[0].op_type, ("Relu", "Clip"), conv.name)
                after = readers[after[0].output[0]]
            self.assertEqual([n.op_type for n in after], ["QuantizeLinear"], conv.name)
            self.assertEqual(w[after[0].input[2]].dtype, np.uint8)
        # conv1 carries the folded BatchNorm: its float weights are gone, its bias is new.
        conv1 = next(n for n in convs if n.name == "conv1")
        self.assertEqual(len(conv1.input), 3)
        # MaxPool's output takes its input's parameters.
        pool = next(n for n in m.graph.node if n.op_type == "MaxPool")
        q_in = producer[pool.input[0]]
        q_out = readers[pool.output[0]][0]
        self.assertEqual(q_out.op_type, "QuantizeLinear")
        self.assertEqual(w[q_in.input[1]], w[q_out.input[1]])
        self.assertEqual(w[q_in.input[2]], w[q_out.input[2]])
        # Gemm: per output channel along axis 0 of its transposed weight, and its output (the graph output)
        # is quantised too and keeps its name.
        gemm = next(n for n in m.graph.node if n.op_type == "Gemm")
        gq, gs, _, gdq = dq_params(gemm.input[1])
        self.assertEqual(gs.shape, (10,))
        self.assertEqual([o.name for o in m.graph.output], ["logits"])
        self.assertEqual(producer["logits"].op_type, "DequantizeLinear")
        # Everything that stays float is float: Flatten reads a dequantised tensor.
        flatten = next(n for n in m.graph.node if n.op_type == "Flatten")
        self.assertEqual(producer[flatten.input[0]].op_type, "DequantizeLinear")

    def test_onnxruntime_and_ninegrid_agree_within_one_step(self):
        path = self.quantize("--per-channel")
        m = onnx.load(path)
        w = initializers(m)
        out_dq = next(n for n in m.graph.node if "logits" in n.output)
        step = float(w[out_dq.input[1]])
        for photo in ("astronaut.png", "coffee.png", "gravel.png"):
            x = photo_input(photo)
            ref = self.ort(path, x)
            for level in (0, 2):
                got = self.ninegrid(path, x, level)
                worst = float(np.abs(got - ref).max())
                self.assertLessEqual(worst, step * 1.001,
                                     f"{photo} opt-level {level}: |ninegrid - ORT| = {worst}, one step = {step}")

    def test_int8_is_close_to_fp32(self):
        for extra in (("--per-channel",), ()):
            path = self.quantize(*extra)
            cos = []
            for photo in ("astronaut.png", "chelsea.png", "gravel.png", "coins.png"):
                x = photo_input(photo)
                cos.append(cosine(self.ort(path, x), self.ort(self.float_path, x)))
            self.assertGreaterEqual(min(cos), 0.99, f"{extra}: cosine to fp32 per photo {cos}")

    def test_corrections_can_be_turned_off(self):
        """Without equalisation and bias correction, every quantised weight and bias is the float one rounded
        (within half a step); with them (the default), the weights are rescaled and the biases moved, yet
        the model stays as close to fp32 (test_int8_is_close_to_fp32)."""
        float_w = initializers(onnx.load(self.float_path))
        # The float conv1 weight after BatchNorm folding, computed here from the BatchNorm parameters.
        s = float_w["bn1.g"] / np.sqrt(float_w["bn1.v"] + 1e-5)
        float_w["conv1.w"] = float_w["conv1.w"] * s[:, None, None, None]
        float_w["conv1.b"] = float_w["bn1.b"] - float_w["bn1.m"] * s

        def dequantised(path):
            m = onnx.load(path)
            w = initializers(m)
            producer = {o: n for n in m.graph.node for o in n.output}
            out = {}
            for conv in (n for n in m.graph.node if n.op_type in ("Conv", "Gemm")):
                for slot, kind in ((1, "w"), (2, "b")):
                    dq = producer[conv.input[slot]]
                    q, scale = w[dq.input[0]].astype(np.float64), w[dq.input[1]]
                    if scale.ndim == 1 and kind == "w":
                        scale = scale.reshape((-1,) + (1,) * (q.ndim - 1))
                    out[f"{conv.name}.{kind}"] = (q * scale, scale)
            return out, {p.key: p.value for p in m.metadata_props}

        plain, meta = dequantised(self.quantize("--per-channel", "--no-equalize", "--no-bias-correction"))
        self.assertIn("equalize=no", meta["ninegrid.quantize"])
        self.assertIn("bias-correction=no", meta["ninegrid.quantize"])
        for name, (value, scale) in plain.items():
            err = np.abs(value - float_w[name])
            self.assertTrue(np.all(err <= np.broadcast_to(scale, value.shape) * 0.5 + 1e-6 * np.abs(value)),
                            f"{name}: max error {err.max()}")
        corrected, meta = dequantised(self.quantize("--per-channel"))
        self.assertIn("equalize=yes", meta["ninegrid.quantize"])
        self.assertIn("bias-correction=yes", meta["ninegrid.quantize"])
        moved = [n for n, (v, _) in corrected.items() if n.endswith(".b") and not np.allclose(v, plain[n][0])]
        self.assertTrue(moved, "bias correction moved no bias")
        rescaled = [n for n, (v, _) in corrected.items() if n.endswith(".w") and not np.allclose(v, plain[n][0])]
        self.assertIn("conv2.w", rescaled, "conv1 -> conv2 is a Conv -> Relu -> Conv pair: conv2 is rescaled")

    def test_per_tensor_weights(self):
        m = onnx.load(self.quantize())
        w = initializers(m)
        producer = {o: n for n in m.graph.node for o in n.output}
        for conv in (n for n in m.graph.node if n.op_type in ("Conv", "Gemm")):
            dq = producer[conv.input[1]]
            self.assertEqual(w[dq.input[1]].shape, (), f"{conv.name}: per-tensor weight scale")
            self.assertFalse([a for a in dq.attribute if a.name == "axis"])

    def test_seven_bit_weights(self):
        """--weight-bits 7: every weight in [-63, 63], each channel's largest at 63; still close to fp32;
        on a CPU with AVX2 and no AVX-512 VNNI, ninegrid runs its direct and pointwise convs on the
        vpmaddubsw kernels (int8-avx2-w7-*), which the 8-bit weights of the same model do not allow: those run
        with rest vectors for the pairs beyond vpmaddubsw's bound (int8-avx2-w7r-*) or on vpmaddwd."""
        path = self.quantize("--per-channel", "--weight-bits", "7")
        m = onnx.load(path)
        w = initializers(m)
        producer = {o: n for n in m.graph.node for o in n.output}
        convs = [n for n in m.graph.node if n.op_type in ("Conv", "Gemm")]
        self.assertGreater(len(convs), 2)
        for conv in convs:
            q = w[producer[conv.input[1]].input[0]].astype(np.int64)
            self.assertEqual(int(np.abs(q).max()), 63, conv.name)
            if conv.op_type == "Conv":
                self.assertEqual(np.abs(q.reshape(q.shape[0], -1)).max(axis=1).tolist(), [63] * q.shape[0], conv.name)
        meta = {p.key: p.value for p in m.metadata_props}
        self.assertIn("weight-bits=7", meta["ninegrid.quantize"])
        cos = [cosine(self.ort(path, photo_input(p)), self.ort(self.float_path, photo_input(p)))
               for p in ("astronaut.png", "chelsea.png")]
        self.assertGreaterEqual(min(cos), 0.99, cos)
        with open("/proc/cpuinfo") as f:
            flags = f.read()
        if " avx2" not in flags or "avx512_vnni" in flags:
            return
        def algorithms(model):
            r = subprocess.run([CLI, "info", model, "--optimized", "--json"], capture_output=True, text=True,
                               timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
            return [l["algorithm"] for l in json.loads(r.stdout)["layers"] if l["op"] == "ng.QConv"]
        exact = ("int8-avx2-direct", "int8-avx2-pointwise", "int8-avx2-wide-pointwise",
                 "int8-avx2-pointwise-strided", "int8-avx2-wide-pointwise-strided")  # the vpmaddwd kernels
        seven = algorithms(path)
        self.assertEqual([a for a in seven if a in exact], [], seven)
        self.assertTrue([a for a in seven if a.startswith("int8-avx2-w7-")], seven)
        eight = algorithms(self.quantize("--per-channel"))
        self.assertTrue([a for a in eight if a in exact or a.startswith("int8-avx2-w7r-")], eight)
        # The whole 7-bit model on those kernels against the reference kernels: the same integers.
        x = photo_input("chelsea.png")
        np.testing.assert_array_equal(self.ninegrid(path, x), self.ninegrid(path, x, extra=("--isa", "ref")))

    def test_error_weight_bits(self):
        r = self.run_cli("quantize", self.float_path, "--calibration", self.calib, "--weight-bits", "6", "-o",
                         os.path.join(self.dir, "never.onnx"), expect=2)
        self.assertIn("--weight-bits", r.stderr)

    def activation_scales(self, path):
        m = onnx.load(path)
        w = initializers(m)
        return {n.output[0]: float(w[n.input[1]]) for n in m.graph.node if n.op_type == "QuantizeLinear"}

    def test_methods_clip_never_widen(self):
        minmax = self.activation_scales(self.quantize("--per-channel", "--method", "minmax"))
        for method in (["--method", "percentile", "--percentile", "99.9"], ["--method", "kl"], ["--method", "mse"]):
            path = self.quantize("--per-channel", *method)
            onnx.checker.check_model(onnx.load(path))
            scales = self.activation_scales(path)
            self.assertEqual(scales.keys(), minmax.keys())
            # The image input keeps its whole range whatever the method: nothing in it is an outlier.
            self.assertEqual(scales["image_quantized"], minmax["image_quantized"])
            for t, s in scales.items():
                self.assertLessEqual(s, minmax[t] * (1 + 1e-6), f"{method}: {t} wider than its min/max")
            narrower = [t for t in scales if scales[t] < minmax[t] * 0.999]
            self.assertTrue(narrower, f"{method}: no tensor clipped at all")
            cos = cosine(self.ort(path, photo_input("astronaut.png")), self.ort(self.float_path, photo_input("astronaut.png")))
            self.assertGreaterEqual(cos, 0.98, f"{method}: cosine {cos}")

    def test_keep_float(self):
        path = self.quantize("--per-channel", "--keep-float", "conv3,fc")
        m = onnx.load(path)
        w = initializers(m)
        producer = {o: n for n in m.graph.node for o in n.output}
        conv3 = next(n for n in m.graph.node if n.name == "conv3")
        self.assertIn(conv3.input[1], w, "conv3's weight should stay a float initializer")
        self.assertEqual(w[conv3.input[1]].dtype, np.float32)
        gemm = next(n for n in m.graph.node if n.name == "fc")
        self.assertEqual(w[gemm.input[1]].dtype, np.float32)
        self.assertNotEqual(producer["logits"].op_type, "DequantizeLinear", "fc's output stays float")
        # conv3's output still feeds the quantised Add, so it is quantised for the Add.
        self.assertEqual(producer["c3"].op_type, "DequantizeLinear")
        onnx.checker.check_model(m)

    def test_report(self):
        out = os.path.join(self.dir, "report.onnx")
        r = self.run_cli("quantize", self.float_path, "--calibration", self.calib, *PREPROCESS, "--per-channel",
                         "--report", "-o", out)
        lines = r.stdout.splitlines()
        start = next(i for i, l in enumerate(lines) if l.strip().startswith("layer "))
        rows = {}
        for l in lines[start + 1:]:
            if not l.strip():
                break
            parts = l.split()
            rows[parts[0]] = parts
        self.assertEqual(set(rows), {"conv1", "pool1", "conv2", "conv3", "add1", "conv4", "avgpool", "conv5", "concat",
                                     "gap", "fc"}, r.stdout)
        self.assertEqual(rows["conv1"][1], "Conv+Relu")
        self.assertEqual(rows["add1"][1], "Add+Relu")
        self.assertEqual(rows["conv4"][1], "Conv+Clip")
        for name, parts in rows.items():
            cos, own = float(parts[2]), float(parts[5])
            self.assertGreater(cos, 0.98, f"{name}: {parts}")
            self.assertLessEqual(cos, 1.0 + 1e-9)
            self.assertGreater(own, 0.99, f"{name}: {parts}")
        # MaxPool shares its input's parameters: it adds no error of its own.
        self.assertLess(float(rows["pool1"][6]), 1e-4)
        out_line = next(l for l in lines if l.strip().startswith("logits"))
        self.assertGreaterEqual(float(out_line.split()[1]), 0.99)

    def test_report_matches_onnxruntime_cosine(self):
        """--report's output cosine is the cosine of the int8 model's outputs to fp32's on the calibration
        images, so recomputing it with ONNX Runtime must give nearly the same number."""
        out = os.path.join(self.dir, "report2.onnx")
        calib = os.path.join(self.dir, "calib2")
        os.makedirs(calib, exist_ok=True)
        for p in ("astronaut.png", "coffee.png"):
            shutil.copy(os.path.join(SKIMAGE_DATA, p), calib)
        r = self.run_cli("quantize", self.float_path, "--calibration", calib, *PREPROCESS, "--report", "-o", out)
        line = next(l for l in r.stdout.splitlines() if l.strip().startswith("logits"))
        reported = float(line.split()[1])
        a = np.concatenate([self.ort(out, photo_input(p)).ravel() for p in ("astronaut.png", "coffee.png")])
        b = np.concatenate([self.ort(self.float_path, photo_input(p)).ravel() for p in ("astronaut.png", "coffee.png")])
        self.assertAlmostEqual(reported, cosine(a, b), delta=0.01)

    # --- opsets -------------------------------------------------------------------------------------

    def test_opset_11_model_is_raised(self):
        path = os.path.join(self.dir, "opset11.onnx")
        m = small_model(opset=11)
        onnx.save(m, path)
        q = onnx.load(self.quantize("--per-channel", model=path))
        onnx.checker.check_model(q)
        self.assertEqual([o.version for o in q.opset_import if o.domain in ("", "ai.onnx")], [13])
        self.assertGreaterEqual(q.ir_version, 7)

    def test_opset_11_softmax_is_refused(self):
        m = small_model(opset=11)
        m.graph.node.append(helper.make_node("Softmax", ["logits"], ["prob"], name="softmax"))
        m.graph.output[0].name = "prob"
        path = os.path.join(self.dir, "softmax11.onnx")
        onnx.save(m, path)
        r = self.run_cli("quantize", path, "--calibration", self.calib, "-o", os.path.join(self.dir, "x.onnx"), expect=1)
        self.assertIn("'softmax' (Softmax)", r.stderr)
        self.assertIn("opset 13", r.stderr)

    # --- errors -------------------------------------------------------------------------------------

    def test_error_no_images(self):
        empty = os.path.join(self.dir, "empty")
        os.makedirs(empty, exist_ok=True)
        with open(os.path.join(empty, "notes.txt"), "w") as f:
            f.write("not an image")
        r = self.run_cli("quantize", self.float_path, "--calibration", empty, "-o", os.path.join(self.dir, "x.onnx"),
                         expect=1)
        self.assertIn("holds no images", r.stderr)
        self.assertIn(empty, r.stderr)
        self.assertIn("1 other file ignored", r.stderr)
        r = self.run_cli("quantize", self.float_path, "--calibration", os.path.join(self.dir, "missing"), "-o",
                         os.path.join(self.dir, "x.onnx"), expect=1)
        self.assertIn("does not exist", r.stderr)

    def test_error_unreadable_image(self):
        bad = os.path.join(self.dir, "bad")
        os.makedirs(bad, exist_ok=True)
        shutil.copy(os.path.join(SKIMAGE_DATA, "astronaut.png"), bad)
        with open(os.path.join(bad, "broken.png"), "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n this is not really a png")
        out = os.path.join(self.dir, "never.onnx")
        r = self.run_cli("quantize", self.float_path, "--calibration", bad, "-o", out, expect=1)
        self.assertIn("broken.png", r.stderr)
        self.assertFalse(os.path.exists(out), "nothing is written when calibration fails")

    def test_error_keep_float_unknown_node(self):
        r = self.run_cli("quantize", self.float_path, "--calibration", self.calib, "--keep-float", "conv1,conv99",
                         "-o", os.path.join(self.dir, "x.onnx"), expect=1)
        self.assertIn("'conv99'", r.stderr)
        self.assertIn("no node named", r.stderr)
        self.assertIn("conv1", r.stderr)  # examples of real names

    def test_error_ncnn_model(self):
        shared = os.path.join(ROOT, "..", "shared", "models", "mnet.25-opt.param")
        param = shared if os.path.exists(shared) else os.path.join(self.dir, "m.param")
        if param != shared:
            with open(param, "w") as f:
                f.write("7767517\n1 1\nInput data 0 1 data 0=8 1=8 2=3\n")
        r = self.run_cli("quantize", param, "--calibration", self.calib, "-o", os.path.join(self.dir, "x.onnx"),
                         expect=1)
        self.assertIn("ncnn model", r.stderr)
        self.assertIn("ONNX", r.stderr)

    def test_error_already_quantised(self):
        r = self.run_cli("quantize", self.quantize("--per-channel"), "--calibration", self.calib, "-o",
                         os.path.join(self.dir, "x.onnx"), expect=1)
        self.assertIn("already quantised", r.stderr)

    def test_error_non_float_input(self):
        # An image model fed uint8 pixels (cast to float inside): quantize feeds float inputs only.
        x = helper.make_tensor_value_info("pixels", TensorProto.UINT8, [1, 3, SIZE, SIZE])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, SIZE, SIZE])
        w = numpy_helper.from_array(np.ones((4, 3, 1, 1), np.float32), "w")
        graph = helper.make_graph([helper.make_node("Cast", ["pixels"], ["f"], to=TensorProto.FLOAT),
                                   helper.make_node("Conv", ["f", "w"], ["y"], name="conv")],
                                  "u8", [x], [y], initializer=[w])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        path = os.path.join(self.dir, "uint8_input.onnx")
        onnx.save(model, path)
        r = self.run_cli("quantize", path, "--calibration", self.calib, "-o", os.path.join(self.dir, "x.onnx"), expect=1)
        self.assertIn("'pixels'", r.stderr)
        self.assertIn("uint8", r.stderr)
        self.assertIn("float input", r.stderr)

    def test_error_dynamic_size_needs_size(self):
        m = small_model()
        for d in m.graph.input[0].type.tensor_type.shape.dim[2:]:
            d.dim_param = "side"
        path = os.path.join(self.dir, "dynamic.onnx")
        onnx.save(m, path)
        r = self.run_cli("quantize", path, "--calibration", self.calib, "-o", os.path.join(self.dir, "x.onnx"), expect=1)
        self.assertIn("--size", r.stderr)
        out = self.quantize("--size", f"{SIZE}x{SIZE}", model=path)
        onnx.checker.check_model(onnx.load(out))

    def test_usage_errors(self):
        r = self.run_cli("quantize", self.float_path, "-o", os.path.join(self.dir, "x.onnx"), expect=2)
        self.assertIn("--calibration", r.stderr)
        r = self.run_cli("quantize", self.float_path, "--calibration", self.calib, expect=2)
        self.assertIn("-o", r.stderr)
        r = self.run_cli("quantize", self.float_path, "--calibration", self.calib, "--method", "entropy", "-o", "x.onnx",
                         expect=2)
        self.assertIn("minmax, percentile, kl or mse", r.stderr)
        r = self.run_cli("quantize", self.float_path, "--calibration", self.calib, "--mean", "1,2", "-o", "x.onnx",
                         expect=2)
        self.assertIn("--mean", r.stderr)
        r = self.run_cli("quantize", "--help")
        for word in ("--calibration", "--method", "--per-channel", "--keep-float", "--mean", "--scale", "--size",
                     "--layout", "--bgr", "--report", "dynamic", "--no-equalize", "--no-bias-correction"):
            self.assertIn(word, r.stdout)


CACHE = os.environ.get("NINEGRID_CACHE") or os.path.join(ROOT, ".cache")
RETINAFACE_320 = os.path.join(CACHE, "models", "retinaface_mnet25_320.onnx")
# A handful of photos for a face detector: the astronaut and the cameraman have faces, the rest give the
# range of ordinary scenes.
RETINAFACE_CALIBRATION = ["astronaut.png", "camera.png", "coffee.png", "chelsea.png", "motorcycle_left.png"]


def iou(a, b):
    ix = max(0.0, min(a["x2"], b["x2"]) - max(a["x1"], b["x1"]))
    iy = max(0.0, min(a["y2"], b["y2"]) - max(a["y1"], b["y1"]))
    inter = ix * iy
    area = lambda f: (f["x2"] - f["x1"]) * (f["y2"] - f["y1"])
    return inter / (area(a) + area(b) - inter)


@unittest.skipUnless(os.path.isfile(RETINAFACE_320), "RetinaFace ONNX export missing: run scripts/make_test_models.sh")
class RetinaFaceQuantizeTest(unittest.TestCase):
    """RetinaFace-MobileNet0.25 with its real weights (the 320x320 ONNX export of shared/models/mnet.25),
    quantised by `ninegrid quantize` on five photos, against the float model: `ninegrid detect` finds the
    same faces, and every output stays close to fp32 (ONNX Runtime's fp32 outputs as the reference)."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        calib = os.path.join(cls.tmp.name, "calib")
        os.makedirs(calib)
        for p in RETINAFACE_CALIBRATION:
            shutil.copy(os.path.join(SKIMAGE_DATA, p), calib)
        cls.int8 = os.path.join(cls.tmp.name, "retinaface_int8.onnx")
        # The ncnn model's convention: RGB planes, raw 0..255; detect letterboxes the photo.
        r = subprocess.run([CLI, "quantize", RETINAFACE_320, "--calibration", calib, "--mean", "0", "--scale", "1",
                            "--resize", "letterbox", "--per-channel", "-o", cls.int8],
                           capture_output=True, text=True, timeout=900)
        cls.quantize_result = r

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def setUp(self):
        r = self.quantize_result
        self.assertEqual(r.returncode, 0, f"quantize failed: {r.stdout}\n{r.stderr}")

    def detect(self, model):
        r = subprocess.run([CLI, "detect", os.path.join(SKIMAGE_DATA, "astronaut.png"), "--model", model, "--json"],
                           capture_output=True, text=True, timeout=300, cwd=self.tmp.name)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_detect_finds_the_same_faces(self):
        fp32, int8 = self.detect(RETINAFACE_320), self.detect(self.int8)
        self.assertGreaterEqual(len(fp32), 1)
        self.assertEqual(len(int8), len(fp32), f"fp32 {fp32}\nint8 {int8}")
        for f in fp32:
            best = max(iou(f, g) for g in int8)
            self.assertGreaterEqual(best, 0.9, f"fp32 face {f}: best IoU {best} among {int8}")
        # The astronaut's face (it contains (220, 120); see tests/cli/test_detect_cli.py) is among them.
        self.assertTrue(any(g["x1"] < 220 < g["x2"] and g["y1"] < 120 < g["y2"] for g in int8), int8)

    def ort_outputs(self, model, x, names):
        d = tempfile.mkdtemp(dir=self.tmp.name)
        np.save(os.path.join(d, "x.npy"), x)
        r = subprocess.run(["node", ORT_RUNNER, model_for_ort(model, d), "--input", f"data={os.path.join(d, 'x.npy')}",
                            "--save-outputs", d, "--runs", "0", "--warmup", "0"], capture_output=True, text=True,
                           timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        return {n: np.load(os.path.join(d, n + ".npy")) for n in names}

    def ninegrid_outputs(self, model, x, names, *flags):
        d = tempfile.mkdtemp(dir=self.tmp.name)
        np.save(os.path.join(d, "x.npy"), x)
        r = subprocess.run([CLI, "run", model, "--input", f"data={os.path.join(d, 'x.npy')}", "--output-dir", d,
                            *flags], capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        return {n: np.load(os.path.join(d, n + ".npy")) for n in names}

    def optimized_layers(self, *flags):
        """`ninegrid info --optimized --json` of the int8 model: its layers."""
        r = subprocess.run([CLI, "info", self.int8, "--optimized", "--json", *flags], capture_output=True, text=True,
                           timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)["layers"]

    def test_outputs_close_to_fp32_and_onnxruntime_agrees(self):
        from PIL import Image
        m = onnx.load(self.int8)
        names = [o.name for o in m.graph.output]
        self.assertEqual(len(names), 9)
        # The astronaut (512x512) stretched to the input: RGB planes, 0..255.
        with Image.open(os.path.join(SKIMAGE_DATA, "astronaut.png")) as im:
            img = np.asarray(im.convert("RGB").resize((320, 320), Image.BILINEAR), np.float32)
        x = np.ascontiguousarray(img.transpose(2, 0, 1)[None])
        fp32 = self.ort_outputs(RETINAFACE_320, x, names)
        ng8 = self.ninegrid_outputs(self.int8, x, names)
        ort8 = self.ort_outputs(self.int8, x, names)
        w = initializers(m)
        producer = {o: n for n in m.graph.node for o in n.output}
        for n in names:
            c = cosine(ng8[n], fp32[n])
            self.assertGreaterEqual(c, 0.99, f"{n}: cosine of ninegrid's int8 output to fp32")
            # Outputs written by a DequantizeLinear are on its grid: ninegrid and ORT may differ by one step
            # there. The class probabilities are a 2-way Softmax (through Reshapes) of a dequantised tensor:
            # one step on each logit moves a probability by at most 2 * step / 4 (the logistic's slope is
            # at most 1/4).
            node, factor = producer[n], 1.0
            while node.op_type != "DequantizeLinear":
                if node.op_type == "Softmax":
                    factor = 0.5
                node = producer[node.input[0]]
            step = float(w[node.input[1]]) * factor
            worst = float(np.abs(ng8[n] - ort8[n]).max())
            self.assertLessEqual(worst, step * 1.001, f"{n}: |ninegrid - ORT| = {worst}, bound = {step}")

    def test_fpn_upsampling_shares_its_sources_parameters(self):
        """What the FPN's nearest Resize (and the crops after it) computes takes the quantisation parameters
        of the Resize's input, as ONNX Runtime's quantiser shares them across ops that only move values: the
        DequantizeLinear -> Resize -> Slice... -> QuantizeLinear between them drops out when ninegrid loads
        the model, with nothing to requantise."""
        m = onnx.load(self.int8)
        producer = {o: n for n in m.graph.node for o in n.output}
        readers = {}
        for n in m.graph.node:
            for i in n.input:
                readers.setdefault(i, []).append(n)
        resizes = [n for n in m.graph.node if n.op_type == "Resize"]
        self.assertEqual(len(resizes), 2)
        for r in resizes:
            dq = producer[r.input[0]]
            self.assertEqual(dq.op_type, "DequantizeLinear", r.name)
            node = r
            while node.op_type != "QuantizeLinear":
                following = readers[node.output[0]]
                self.assertEqual(len(following), 1, node.name)
                node = following[0]
            self.assertEqual(list(node.input[1:]), list(dq.input[1:]), r.name)

    def test_conv_algorithms_without_indirect(self):
        """--conv-algorithms without "indirect" takes the int8 convs off the indirect kernel as it does the
        float ones, and only off it: with VNNI the heads (plain NCHW outputs, the indirect kernel's under the
        rules there) go to the direct family; under AVX2 the rules already put no conv on the indirect
        kernel, so nothing changes. Either way the first conv keeps the first-layer kernel, no conv falls to
        the reference, and the outputs are the same bytes (integer arithmetic; the same float ops after the
        heads). (The heads' direct kernels under AVX2: QConvX86.PlainOutputHeadsMatchReference.)"""
        with open("/proc/cpuinfo") as f:
            cpuinfo = f.read()
        if " avx2" not in cpuinfo:
            self.skipTest("the indirect int8 kernel is x86-64's")
        vnni = " avx512_vnni" in cpuinfo
        rng = np.random.default_rng(11)
        x = rng.uniform(0, 255, (1, 3, 320, 320)).astype(np.float32)
        names = [o.name for o in onnx.load(self.int8).graph.output]
        algorithms, outs = {}, {}
        for key, flags in (("rules", []), ("direct", ["--conv-algorithms", "winograd,strassen,direct"])):
            algorithms[key] = {l["name"]: l["algorithm"] for l in self.optimized_layers(*flags) if l["op"] == "ng.QConv"}
            outs[key] = self.ninegrid_outputs(self.int8, x, names, *flags)
        rules, direct = algorithms["rules"], algorithms["direct"]
        self.assertEqual(rules.keys(), direct.keys())
        indirect = [n for n, a in rules.items() if a.endswith("-indirect")]
        if vnni:
            self.assertGreaterEqual(len(indirect), 9, rules)  # at least the nine heads
        else:
            self.assertEqual(indirect, [], rules)
        self.assertEqual([n for n, a in direct.items() if "indirect" in a], [], direct)
        self.assertNotIn("int8-ref", direct.values())
        for n in indirect:
            self.assertRegex(direct[n], r"^int8-(vnni|avx2|avx2-w7|avx2-w7r)-(direct|pointwise)$", n)
        for n, a in rules.items():
            if not a.endswith("-indirect"):
                self.assertEqual(direct[n], a, n)
        self.assertTrue([a for a in direct.values() if a.endswith("-first-layer")], direct)
        for n in names:
            self.assertTrue(outs["rules"][n].tobytes() == outs["direct"][n].tobytes(), n)

    def test_int8_tensors_stay_blocked(self):
        """The layout pass keeps the int8 tensors channel-blocked from one quantised op to the next:
        `info --optimized` lists no ng.Reorder. The SSH modules' Concat -> Relu and the FPN's nearest Resize
        run on the int8 tensors (ng.QConcat with the ReLU as its clamp; Resize on uint8), so the only
        DequantizeLinear nodes left are the nine heads'. The outputs are the same bytes as the
        plain plan's (--opt-level 1 plans no layout; same kernels otherwise), and the outputs that no
        float vector kernel touches (all but the Softmax probabilities) are those of --isa ref too."""
        layers = self.optimized_layers()
        self.assertEqual([l["name"] for l in layers if l["op"] == "ng.Reorder"], [])
        qconvs = [l for l in layers if l["op"] == "ng.QConv"]
        self.assertGreater(len(qconvs), 50)
        ops = [l["op"] for l in layers]
        self.assertEqual(ops.count("ng.QConcat"), 3, sorted(set(ops)))
        self.assertEqual([l["name"] for l in layers if l["op"] in ("Concat", "Relu")], [])
        resizes = [l for l in layers if l["op"] == "Resize"]
        self.assertEqual(len(resizes), 2)
        self.assertEqual([l["name"] for l in resizes if l["precision"] != "int8"], [])
        self.assertEqual(ops.count("DequantizeLinear"), 9, [l["name"] for l in layers if l["op"] == "DequantizeLinear"])
        with open("/proc/cpuinfo") as f:
            vector_blocks = " avx2" in f.read()
        if vector_blocks:
            # Every conv but the nine head convs (class, box and landmark heads of three strides: their
            # DequantizeLinear feeds a Reshape or a graph output) writes a blocked tensor.
            plain = [l["name"] for l in qconvs if l["layout"] == "NCHW"]
            self.assertEqual(len(plain), 9, plain)
        rng = np.random.default_rng(5)
        x = rng.uniform(0, 255, (1, 3, 320, 320)).astype(np.float32)
        names = [o.name for o in onnx.load(self.int8).graph.output]
        outs = {}
        for key, flags in (("planned", []), ("plain", ["--opt-level", "1"]), ("ref", ["--isa", "ref"])):
            outs[key] = self.ninegrid_outputs(self.int8, x, names, *flags)
        for n in names:
            self.assertTrue(outs["planned"][n].tobytes() == outs["plain"][n].tobytes(), f"{n}: blocked vs plain plan")
            if "cls_prob" not in n:
                self.assertTrue(outs["planned"][n].tobytes() == outs["ref"][n].tobytes(), f"{n}: blocked vs --isa ref")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        CLI = os.path.abspath(sys.argv.pop(1))
    if not CLI:
        sys.exit("usage: test_quantize.py PATH/TO/ninegrid")
    unittest.main()
