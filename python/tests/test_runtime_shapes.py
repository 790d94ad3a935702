"""Shape arguments given as model inputs (issue 16): a hand-built model whose Reshape target, Expand shape and
Resize sizes are int64 inputs, run with several contents in turn and checked against numpy."""
import os
import tempfile
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper

import ninegrid


def runtime_shapes_model(directory):
    """reshaped = Reshape(x, target); expanded = Expand(col, eshape); nearest / linear = Resize(img, sizes)."""
    nodes = [
        helper.make_node("Reshape", ["x", "target"], ["reshaped"], name="reshape"),
        helper.make_node("Expand", ["col", "eshape"], ["expanded"], name="expand"),
        helper.make_node("Resize", ["img", "", "", "sizes"], ["nearest"], name="resize_nearest", mode="nearest",
                         coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
        helper.make_node("Resize", ["img", "", "", "sizes"], ["linear"], name="resize_linear", mode="linear",
                         coordinate_transformation_mode="half_pixel"),
    ]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4]),
              helper.make_tensor_value_info("target", TensorProto.INT64, [2]),
              helper.make_tensor_value_info("col", TensorProto.FLOAT, [3, 1]),
              helper.make_tensor_value_info("eshape", TensorProto.INT64, [3]),
              helper.make_tensor_value_info("img", TensorProto.FLOAT, [1, 2, 5, 7]),
              helper.make_tensor_value_info("sizes", TensorProto.INT64, [4])]
    # Output shapes follow from the inputs' contents: symbolic dimensions.
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [n + str(d) for d in range(rank)])
               for n, rank in (("reshaped", 2), ("expanded", 3), ("nearest", 4), ("linear", 4))]
    model = helper.make_model(helper.make_graph(nodes, "runtime_shapes", inputs, outputs),
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    path = os.path.join(directory, "runtime_shapes.onnx")
    onnx.save(model, path)
    return path


def nearest_asymmetric_floor(img, out_h, out_w):
    """Resize's nearest mode with asymmetric coordinates and floor rounding: output o reads input o * in / out."""
    h, w = img.shape[2:]
    rows = np.minimum(np.floor(np.arange(out_h) * h / out_h).astype(int), h - 1)
    cols = np.minimum(np.floor(np.arange(out_w) * w / out_w).astype(int), w - 1)
    return img[:, :, rows][:, :, :, cols]


def linear_half_pixel(img, out_h, out_w):
    """Resize's linear mode with half_pixel coordinates, one axis after the other, in float64: output o sits at
    (o + 0.5) * in / out - 0.5 in the input, clamped to its edges."""
    def along(a, axis, out):
        n = a.shape[axis]
        pos = np.clip((np.arange(out) + 0.5) * n / out - 0.5, 0, n - 1)
        lo = np.floor(pos).astype(int)
        hi = np.minimum(lo + 1, n - 1)
        frac = pos - lo
        shape = [1] * a.ndim
        shape[axis] = out
        return np.take(a, lo, axis) * (1 - frac).reshape(shape) + np.take(a, hi, axis) * frac.reshape(shape)
    return along(along(img.astype(np.float64), 2, out_h), 3, out_w)


class RuntimeShapesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.model = ninegrid.Model(runtime_shapes_model(cls.dir.name), threads=1)

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def check(self, seed, target, eshape, out_hw):
        rng = np.random.RandomState(seed)
        x = rng.standard_normal((2, 3, 4)).astype(np.float32)
        col = rng.standard_normal((3, 1)).astype(np.float32)
        img = rng.standard_normal((1, 2, 5, 7)).astype(np.float32)
        out = self.model.run({"x": x, "target": np.array(target, np.int64), "col": col,
                              "eshape": np.array(eshape, np.int64), "img": img,
                              "sizes": np.array([1, 2, *out_hw], np.int64)})
        np.testing.assert_array_equal(out["reshaped"], x.reshape(target))
        np.testing.assert_array_equal(out["expanded"], col * np.ones(eshape, np.float32))
        np.testing.assert_array_equal(out["nearest"], nearest_asymmetric_floor(img, *out_hw))
        want = linear_half_pixel(img, *out_hw)
        self.assertEqual(out["linear"].shape, want.shape)
        np.testing.assert_allclose(out["linear"], want, rtol=0, atol=1e-5)

    def test_each_run_follows_its_shape_inputs(self):
        # Output sizes coprime with the input's 5 x 7, so that no output coordinate but 0 lands exactly on an
        # input pixel (where float rounding could tip floor() either way).
        self.check(1, [6, 4], [2, 3, 4], (8, 10))
        self.check(2, [6, 4], [2, 3, 4], (8, 10))   # same shapes, new data
        self.check(3, [4, 6], [4, 3, 1], (3, 4))    # every shape input changes
        self.check(4, [-1, 8], [1, 3, 6], (3, 4))   # some change
        self.check(5, [6, 4], [2, 3, 4], (8, 10))   # back to the first

    def test_a_negative_size_is_refused_naming_the_node(self):
        with self.assertRaises(ninegrid.Error) as cm:
            self.model.run({"x": np.zeros((2, 3, 4), np.float32), "target": np.array([6, 4], np.int64),
                            "col": np.zeros((3, 1), np.float32), "eshape": np.array([2, 3, 4], np.int64),
                            "img": np.zeros((1, 2, 5, 7), np.float32), "sizes": np.array([1, 2, -3, 4], np.int64)})
        self.assertIn("resize_nearest", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
