"""QOperator nodes against ONNX Runtime 1.30 (npm onnxruntime-node), and the errors of bad quantised models.

A small model applies each QOperator node ninegrid rewrites into QDQ form at import (QLinearConv,
QLinearMatMul, and ONNX Runtime's com.microsoft QLinearAdd, QLinearMul, QLinearConcat, QLinearAveragePool,
QLinearGlobalAveragePool, QLinearLeakyRelu, QLinearSigmoid, QGemm) to the output of one QLinearConv (which
both engines compute exactly), so every output is one op away from an exact tensor and must be within one
quantisation step of ONNX Runtime's. Bad models (an unsupported com.microsoft op, NHWC pooling, a zero
scale, per-channel scales of the wrong length, a missing input) are refused with an error naming the node.

usage: test_qoperator_import.py NINEGRID_BINARY
"""
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

BIN = None
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ORT_RUNNER = os.path.join(ROOT, "bench", "ort_runner.js")
MS = "com.microsoft"


def const(name, value):
    return numpy_helper.from_array(np.asarray(value), name)


def qoperator_model():
    rng = np.random.default_rng(3)
    inits = [const("xs", np.float32(0.02)), const("xz", np.int8(-3)),
             const("w", rng.integers(-127, 128, (8, 4, 3, 3)).astype(np.int8)),
             const("ws", rng.uniform(0.002, 0.01, 8).astype(np.float32)), const("wz", np.zeros(8, np.int8)),
             const("b", rng.integers(-3000, 3000, 8).astype(np.int32)),
             const("as", np.float32(0.04)), const("az", np.int8(-10)),
             const("w2", rng.integers(-127, 128, (8, 4, 1, 1)).astype(np.int8)),
             const("cs", np.float32(0.015)), const("cz", np.int8(5)),
             const("ys", np.float32(0.03)), const("yz", np.int8(2)),
             const("sig_s", np.float32(1 / 256)), const("sig_z", np.int8(-128)),
             const("gw", rng.integers(-127, 128, (6, 8)).astype(np.int8)),
             const("gws", rng.uniform(0.002, 0.01, 6).astype(np.float32)), const("gwz", np.zeros(6, np.int8)),
             const("gb", rng.integers(-500, 500, 6).astype(np.int32)),
             const("mb", rng.integers(-127, 128, (9, 5)).astype(np.int8)),
             const("mbs", np.float32(0.006)), const("mbz", np.int8(0)),
             const("shape2d", np.array([-1, 9], np.int64))]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("QLinearConv", ["xq", "xs", "xz", "w", "ws", "wz", "as", "az", "b"], ["a"], name="conv",
                         pads=[1, 1, 1, 1]),
        helper.make_node("QLinearConv", ["xq", "xs", "xz", "w2", "ws", "wz", "cs", "cz"], ["c"], name="conv2"),
        helper.make_node("QLinearAveragePool", ["a", "as", "az", "ys", "yz"], ["pool"], domain=MS, name="pool",
                         kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1),
        helper.make_node("QLinearGlobalAveragePool", ["a", "as", "az", "ys", "yz"], ["gap"], domain=MS, name="gap",
                         channels_last=0),
        helper.make_node("QLinearAdd", ["a", "as", "az", "c", "cs", "cz", "ys", "yz"], ["add"], domain=MS, name="add"),
        helper.make_node("QLinearMul", ["a", "as", "az", "c", "cs", "cz", "ys", "yz"], ["mul"], domain=MS, name="mul"),
        helper.make_node("QLinearConcat", ["ys", "yz", "a", "as", "az", "c", "cs", "cz"], ["cat"], domain=MS,
                         name="cat", axis=1),
        helper.make_node("QLinearLeakyRelu", ["a", "as", "az", "ys", "yz"], ["leaky"], domain=MS, name="leaky",
                         alpha=0.1),
        helper.make_node("QLinearSigmoid", ["a", "as", "az", "sig_s", "sig_z"], ["sig"], domain=MS, name="sig"),
        helper.make_node("Flatten", ["gap"], ["gapf"]),
        helper.make_node("QGemm", ["gapf", "ys", "yz", "gw", "gws", "gwz", "gb", "cs", "cz"], ["gemm"], domain=MS,
                         name="gemm", transB=1),
        helper.make_node("Reshape", ["a", "shape2d"], ["rows"]),
        helper.make_node("QLinearMatMul", ["rows", "as", "az", "mb", "mbs", "mbz", "ys", "yz"], ["matmul"],
                         name="matmul"),
    ]
    outputs = {"pool": "ys", "gap": "ys", "add": "ys", "mul": "ys", "cat": "ys", "leaky": "ys", "sig": "sig_s",
               "gemm": "cs", "matmul": "ys"}
    zps = {"ys": "yz", "sig_s": "sig_z", "cs": "cz"}
    for name, s in outputs.items():
        nodes.append(helper.make_node("DequantizeLinear", [name, s, zps[s]], [name + "_y"]))
    graph = helper.make_graph(nodes, "qoperator", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 9, 9])],
                              [helper.make_tensor_value_info(n + "_y", TensorProto.FLOAT, None) for n in outputs],
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid(MS, 1)])
    steps = {n + "_y": float(numpy_helper.to_array(next(i for i in inits if i.name == s))) for n, s in outputs.items()}
    return model, steps


def run_ninegrid(path, x, out_dir):
    return subprocess.run([BIN, "run", path, "--input", f"x={x}", "--output-dir", out_dir], capture_output=True,
                          text=True, timeout=120)


class QOperatorVsOnnxRuntime(unittest.TestCase):
    def test_each_node_within_one_step(self):
        model, steps = qoperator_model()
        with tempfile.TemporaryDirectory() as d:
            path, xf = os.path.join(d, "m.onnx"), os.path.join(d, "x.npy")
            onnx.save(model, path)
            np.save(xf, np.random.default_rng(1).uniform(-2.6, 2.6, (1, 4, 9, 9)).astype(np.float32))
            subprocess.run(["node", ORT_RUNNER, path, "--input", f"x={xf}", "--save-outputs", os.path.join(d, "ort"),
                            "--runs", "0", "--warmup", "0"], check=True, capture_output=True, timeout=300)
            r = run_ninegrid(path, xf, os.path.join(d, "ng"))
            self.assertEqual(r.returncode, 0, r.stderr)
            for name, step in steps.items():
                ref = np.load(os.path.join(d, "ort", name + ".npy"))
                got = np.load(os.path.join(d, "ng", name + ".npy"))
                self.assertEqual(got.shape, ref.shape, name)
                self.assertGreater(np.ptp(ref), 5 * step, f"{name}: ORT's output is nearly constant")
                worst = float(np.abs(got - ref).max())
                self.assertLessEqual(worst, step * 1.0001, f"{name}: {worst / step:.2f} steps from ORT")


class IntegerOpsVsNumpy(unittest.TestCase):
    """ConvInteger and MatMulInteger with the forms ONNX's node tests leave out: int8 x with uint8 weights,
    per-output-channel weight zero points, groups and strides; per-row and per-column zero points."""

    def run_model(self, nodes, inputs, inits, out_shape):
        graph = helper.make_graph(nodes, "int", [helper.make_tensor_value_info(n, t, v.shape) for n, (t, v) in inputs.items()],
                                  [helper.make_tensor_value_info("y", TensorProto.INT32, out_shape)], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.onnx")
            onnx.save(model, path)
            args = [BIN, "run", path, "--output-dir", os.path.join(d, "out")]
            for n, (_, v) in inputs.items():
                np.save(os.path.join(d, n + ".npy"), v)
                args += ["--input", f"{n}={os.path.join(d, n + '.npy')}"]
            r = subprocess.run(args, capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            return np.load(os.path.join(d, "out", "y.npy"))

    def test_conv_integer_per_channel_weight_zero_points(self):
        rng = np.random.default_rng(7)
        x = rng.integers(-128, 128, (2, 6, 7, 8)).astype(np.int8)
        w = rng.integers(0, 256, (4, 3, 3, 3)).astype(np.uint8)
        xz, wz = np.int8(-7), rng.integers(0, 256, 4).astype(np.uint8)
        got = self.run_model([helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], group=2, strides=[2, 1],
                                               pads=[1, 0, 1, 2])],
                             {"x": (TensorProto.INT8, x)}, [const("w", w), const("xz", xz), const("wz", wz)], None)
        # The padded input holds the zero point, so its taps add nothing.
        xp = np.pad(x.astype(np.int64) - xz, ((0, 0), (0, 0), (1, 1), (0, 2)))
        want = np.zeros((2, 4, 4, 8), np.int64)
        for m in range(4):
            g = m // 2
            for oh in range(4):
                for ow in range(8):
                    win = xp[:, g * 3:(g + 1) * 3, oh * 2:oh * 2 + 3, ow:ow + 3]
                    want[:, m, oh, ow] = (win * (w[m].astype(np.int64) - wz[m])).sum(axis=(1, 2, 3))
        np.testing.assert_array_equal(got, want)

    def test_matmul_integer_per_row_and_column_zero_points(self):
        rng = np.random.default_rng(8)
        a = rng.integers(0, 256, (2, 5, 7)).astype(np.uint8)
        b = rng.integers(-128, 128, (7, 3)).astype(np.int8)
        az, bz = rng.integers(0, 256, 5).astype(np.uint8), rng.integers(-128, 128, 3).astype(np.int8)
        got = self.run_model([helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])],
                             {"a": (TensorProto.UINT8, a)}, [const("b", b), const("az", az), const("bz", bz)], None)
        want = (a.astype(np.int64) - az[:, None]) @ (b.astype(np.int64) - bz[None, :])
        np.testing.assert_array_equal(got, want)


class QuantisedModelErrors(unittest.TestCase):
    def load_error(self, model):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.onnx")
            onnx.save(model, path)
            r = subprocess.run([BIN, "run", path, "--output-dir", os.path.join(d, "out")], capture_output=True,
                               text=True, timeout=120)
        self.assertNotEqual(r.returncode, 0, "a bad model ran")
        self.assertNotIn("Segmentation", r.stderr)
        return r.stderr

    def edited(self, edit):
        model, _ = qoperator_model()
        edit(model.graph)
        return model

    def test_an_unsupported_microsoft_op_is_named(self):
        def edit(g):
            g.node.append(helper.make_node("QLinearSoftmax", ["a", "as", "az", "ys", "yz"], ["sm"], domain=MS,
                                           name="the_softmax"))
            g.output.append(helper.make_tensor_value_info("sm", TensorProto.INT8, None))
        e = self.load_error(self.edited(edit))
        self.assertIn("the_softmax", e)
        self.assertIn("unsupported operator 'QLinearSoftmax' of domain 'com.microsoft'", e)

    def test_nhwc_pooling_is_refused(self):
        def edit(g):
            for n in g.node:
                if n.name == "gap":
                    n.attribute[0].i = 1
        e = self.load_error(self.edited(edit))
        self.assertIn("'gap'", e)
        self.assertIn("channels_last", e)

    def test_a_zero_scale_is_named(self):
        def edit(g):
            for i in g.initializer:
                if i.name == "as":
                    i.CopyFrom(const("as", np.float32(0)))
        e = self.load_error(self.edited(edit))
        self.assertIn("node 'conv::", e)  # a node of the QLinearConv's QDQ form, named after it
        self.assertIn("not a positive finite number", e)

    def test_per_channel_scales_of_the_wrong_length_are_named(self):
        def edit(g):
            for i in g.initializer:
                if i.name == "ws":
                    i.CopyFrom(const("ws", np.full(5, 0.01, np.float32)))
        e = self.load_error(self.edited(edit))
        self.assertIn("conv", e)
        self.assertIn("per-axis scale has 5 values", e)

    def test_a_missing_input_is_named(self):
        def edit(g):
            for n in g.node:
                if n.name == "add":
                    del n.input[6:]
        e = self.load_error(self.edited(edit))
        self.assertIn("'add'", e)
        self.assertIn("needs 7 to 8 inputs, got 6", e)


if __name__ == "__main__":
    BIN = sys.argv[1]
    unittest.main(argv=sys.argv[:1])
