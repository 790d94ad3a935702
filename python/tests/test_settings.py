"""Settings and profiling from Python (issue 14): isa, conv_algorithms, winograd_tile, spin_microseconds, the
resource budget, profiling=, set_profiling(), profile(), format, isa, threads."""
import os
import tempfile
import unittest

import numpy as np

import ninegrid
import tiny_models

SHARED = os.environ.get("NINEGRID_SHARED_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared"))
PARAM = os.path.join(SHARED, "models", "mnet.25-opt.param")
SHAPE = (1, 3, 160, 160)
KEYS = {"name", "op_type", "fused", "algorithm", "precision", "layout", "input_shapes", "output_shapes", "macs",
        "bytes", "time_ms"}


def image():
    return (np.random.RandomState(5).rand(*SHAPE) * 255).astype(np.float32)


def conv_algorithms(model):
    return [s["algorithm"] for s in model.profile() if s["op_type"] == "Conv"]


class SettingsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.default = ninegrid.Model(PARAM, threads=1, shapes={"data": SHAPE})
        cls.outputs = cls.default.run({"data": image()})

    def check_outputs(self, model):
        out = model.run({"data": image()})
        for name, ref in self.outputs.items():
            scale = max(1.0, float(np.abs(ref).max()))
            np.testing.assert_allclose(out[name], ref, rtol=0, atol=1e-4 * scale, err_msg=name)

    def test_format_and_isa(self):
        self.assertEqual(self.default.format, "ncnn")
        self.assertIn(self.default.isa, ("avx512", "avx2", "neon", "dotprod", "ref"))
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(ninegrid.Model(tiny_models.int64_input(d)).format, "onnx")
        self.assertEqual(self.default.threads, 1)
        self.assertEqual(self.default.path, PARAM)

    def test_isa_cap(self):
        ref = ninegrid.Model(PARAM, threads=1, shapes={"data": SHAPE}, isa="ref")
        self.assertEqual(ref.isa, "ref")
        self.check_outputs(ref)
        self.assertEqual(set(conv_algorithms(ref)), {"ref"})
        with self.assertRaises(ninegrid.Error) as cm:
            ninegrid.Model(PARAM, isa="sse9")
        self.assertIn("'sse9'", str(cm.exception))
        self.assertIn(PARAM, str(cm.exception))

    def test_conv_algorithms(self):
        if self.default.isa == "ref":
            self.skipTest("no vector kernels on this CPU")
        direct = ninegrid.Model(PARAM, threads=1, shapes={"data": SHAPE}, conv_algorithms="direct")
        self.check_outputs(direct)
        algorithms = conv_algorithms(direct)
        self.assertTrue(any(a.startswith("direct/") for a in algorithms), algorithms)
        self.assertFalse(any(a.startswith(("winograd", "strassen", "indirect")) for a in algorithms), algorithms)
        with self.assertRaises(ninegrid.Error) as cm:
            ninegrid.Model(PARAM, conv_algorithms="fft")
        self.assertIn("'fft'", str(cm.exception))

    def test_winograd_tile(self):
        if self.default.isa == "ref":
            self.skipTest("no vector kernels on this CPU")
        six = ninegrid.Model(PARAM, threads=1, shapes={"data": SHAPE}, winograd_tile=6)
        self.check_outputs(six)
        winograd = [a for a in conv_algorithms(six) if a.startswith("winograd")]
        self.assertTrue(winograd)
        self.assertTrue(all(a.startswith("winograd63") for a in winograd), winograd)
        with self.assertRaises(ninegrid.Error) as cm:
            ninegrid.Model(PARAM, winograd_tile=5)
        self.assertIn("winograd_tile", str(cm.exception))

    def test_spin_microseconds(self):
        # The same outputs whether idle threads spin or not; values out of range are refused by name.
        for spin in (0, 1000000):
            self.check_outputs(ninegrid.Model(PARAM, threads=2, shapes={"data": SHAPE}, spin_microseconds=spin))
        for bad in (-2, 1000001):
            with self.assertRaises(ninegrid.Error, msg=f"spin_microseconds={bad}") as cm:
                ninegrid.Model(PARAM, spin_microseconds=bad)
            self.assertIn("spin_microseconds", str(cm.exception))
            self.assertIn(str(bad), str(cm.exception))
        with self.assertRaises(TypeError):
            ninegrid.Model(PARAM, spin_microseconds="fast")

    def test_budget_keywords(self):
        # None keeps the defaults, 0 removes a limit, a negative or non-int value is refused by name.
        ninegrid.Model(PARAM, max_tensor_bytes=None, max_arena_bytes=0, max_file_bytes=0)
        small = ninegrid.Model(PARAM, threads=1, max_arena_bytes=1 << 16)
        with self.assertRaises(ninegrid.Error):
            small.run({"data": image()})
        # Enough for 32x32 (the budget is checked per plan, not once).
        small.run({"data": image()[:, :, :32, :32].copy()})
        for kw in ("max_tensor_bytes", "max_arena_bytes", "max_file_bytes"):
            for bad in (-1, "1G", 1.5, 2**70):
                with self.assertRaises(ninegrid.Error, msg=f"{kw}={bad!r}") as cm:
                    ninegrid.Model(PARAM, **{kw: bad})
                self.assertIn(kw, str(cm.exception))

    def test_settings_are_keyword_only(self):
        with self.assertRaises(TypeError):
            ninegrid.Model(PARAM, 1, None, 2, "", "avx2")


class ProfileTest(unittest.TestCase):
    def test_profiling_on_creation(self):
        m = ninegrid.Model(PARAM, threads=1, shapes={"data": SHAPE}, profiling=True)
        self.assertTrue(m.profiling)
        self.assertEqual(m.profile(), [])  # nothing planned before the first run
        m.run({"data": image()})
        steps = m.profile()
        self.assertGreater(len(steps), 10)
        for s in steps:
            self.assertEqual(set(s), KEYS)
            self.assertIsInstance(s["name"], str)
            self.assertIsInstance(s["fused"], list)
            self.assertTrue(all(isinstance(t, tuple) for t in s["input_shapes"] + s["output_shapes"]))
            self.assertGreaterEqual(s["time_ms"], 0)
            self.assertGreater(s["bytes"], 0)
        first = steps[0]
        self.assertEqual(first["op_type"], "Conv")
        self.assertEqual(first["input_shapes"][0], SHAPE)
        self.assertEqual(first["precision"], "fp32")
        convs = [s for s in steps if s["op_type"] == "Conv"]
        self.assertTrue(all(s["macs"] > 0 for s in convs))
        # The first conv: 8 output channels, 3x3 over 3 channels, stride 2 -> 80x80.
        self.assertEqual(first["output_shapes"][0], (1, 8, 80, 80))
        self.assertEqual(first["macs"], 8 * 80 * 80 * 3 * 3 * 3)
        self.assertGreater(sum(s["time_ms"] for s in steps), 0)
        self.assertTrue(any("Relu" in s["fused"] for s in convs))

    def test_set_profiling(self):
        m = ninegrid.Model(PARAM, threads=1, shapes={"data": SHAPE})
        self.assertFalse(m.profiling)
        m.run({"data": image()})
        steps = m.profile()
        self.assertTrue(steps)
        self.assertTrue(all(s["time_ms"] == 0 for s in steps))  # not timed
        m.set_profiling(True)
        self.assertTrue(m.profiling)
        m.run({"data": image()})
        self.assertGreater(sum(s["time_ms"] for s in m.profile()), 0)
        self.assertEqual([s["name"] for s in m.profile()], [s["name"] for s in steps])

    def test_times_belong_to_their_plan(self):
        # A new input shape re-plans the session: with profiling off, the new plan's steps have no times
        # (they showed the old plan's times, step by step, before the session dropped them on re-planning).
        m = ninegrid.Model(PARAM, threads=1, profiling=True)
        m.run({"data": image()})
        self.assertGreater(sum(s["time_ms"] for s in m.profile()), 0)
        m.set_profiling(False)
        m.run({"data": image()[:, :, :32, :32].copy()})
        steps = m.profile()
        self.assertEqual(steps[0]["input_shapes"][0], (1, 3, 32, 32))
        self.assertEqual([s["time_ms"] for s in steps], [0.0] * len(steps))


if __name__ == "__main__":
    unittest.main()
