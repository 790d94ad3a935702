"""ninegrid.InferenceSession beyond the numbers: errors that name the input, SessionOptions and its settings,
zero-copy inputs, the GIL released during run() and run() from several threads at once."""
import os
import sys
import tempfile
import threading
import tracemalloc
import unittest

import numpy as np

import ninegrid
import session_models
import tiny_models

SHARED = os.environ.get("NINEGRID_SHARED_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared"))
PARAM = os.path.join(SHARED, "models", "mnet.25-opt.param")
SHAPE = (1, 3, 96, 96)


def image(seed=5):
    return np.random.default_rng(seed).uniform(0, 255, SHAPE).astype(np.float32)


class Errors(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.two, _ = tiny_models.two_inputs(cls.dir.name)  # out = Relu(Conv(x) + y), x and y float32 1x4x8x8
        cls.sess = ninegrid.InferenceSession(cls.two, threads=1)
        cls.x = np.zeros((1, 4, 8, 8), np.float32)

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def error(self, feeds, output_names=None):
        with self.assertRaises(ninegrid.Error) as cm:
            self.sess.run(output_names, feeds)
        return str(cm.exception)

    def test_unknown_input(self):
        msg = self.error({"x": self.x, "y": self.x, "z": self.x})
        self.assertIn("'z' is not an input", msg)
        self.assertIn("'x', 'y'", msg)
        self.assertIn(self.two, msg)

    def test_missing_input(self):
        msg = self.error({"x": self.x})
        self.assertIn("input 'y' missing", msg)

    def test_wrong_dtype(self):
        msg = self.error({"x": self.x, "y": self.x.astype(np.float64)})
        self.assertIn("input 'y'", msg)
        self.assertIn("float64", msg)
        self.assertIn("tensor(float)", msg)
        msg = self.error({"x": self.x.astype(np.int32), "y": self.x})
        self.assertIn("input 'x'", msg)
        self.assertIn("int32", msg)

    def test_wrong_shape(self):
        msg = self.error({"x": self.x, "y": np.zeros((1, 4, 8), np.float32)})
        self.assertIn("input 'y'", msg)
        self.assertIn("(1, 4, 8)", msg)
        self.assertIn("3 dimensions", msg)
        msg = self.error({"x": np.zeros((1, 4, 8, 7), np.float32), "y": self.x})
        self.assertIn("input 'x'", msg)
        self.assertIn("dimension 3 is 7, not 8", msg)

    def test_bad_arguments(self):
        self.assertIn("not an output", self.error({"x": self.x, "y": self.x}, ["out", "nope"]))
        self.assertIn("list of output names", self.error({"x": self.x, "y": self.x}, "out"))
        with self.assertRaises(ninegrid.Error) as cm:
            self.sess.run(None, [self.x, self.x])
        self.assertIn("dict", str(cm.exception))
        with self.assertRaises(ninegrid.Error):
            self.sess.run(None, {"x": self.x, "y": self.x}, run_options=object())
        # After all of these, the session still runs.
        (out,) = self.sess.run(None, {"x": self.x, "y": np.ones_like(self.x)})
        np.testing.assert_array_equal(out, np.ones_like(self.x))

    def test_loading(self):
        with self.assertRaises(ninegrid.Error) as cm:
            ninegrid.InferenceSession("/nonexistent/model.onnx")
        self.assertIn("/nonexistent/model.onnx", str(cm.exception))
        with self.assertRaises(ninegrid.Error) as cm:
            ninegrid.InferenceSession(b"\x08\x07garbage" * 10)
        self.assertIn("bytes", str(cm.exception))
        with self.assertRaises(ninegrid.Error) as cm:
            ninegrid.InferenceSession(42)
        self.assertIn("int", str(cm.exception))
        with self.assertRaises(ninegrid.Error) as cm:
            ninegrid.InferenceSession(self.two, providers=["CUDAExecutionProvider"])
        self.assertIn("CPUExecutionProvider", str(cm.exception))
        ninegrid.InferenceSession(self.two, providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
        with self.assertRaises(ninegrid.Error) as cm:
            ninegrid.InferenceSession(self.two, input_shapes={"x": (1, 4, 9, 9)})
        self.assertIn("'x'", str(cm.exception))
        with self.assertRaises(ninegrid.Error) as cm:
            ninegrid.InferenceSession(self.two, input_shapes={"nope": (1,)})
        self.assertIn("'nope'", str(cm.exception))
        with self.assertRaises(ninegrid.Error):
            ninegrid.InferenceSession(self.two, threads=-1)
        with self.assertRaises(ninegrid.Error):
            ninegrid.InferenceSession(self.two, graph_optimization_level=5)

    def test_options_refuse_unknown_settings(self):
        opts = ninegrid.SessionOptions()
        with self.assertRaises(AttributeError):
            opts.intra_op_threads = 2  # a typo is not silently ignored
        with self.assertRaises(AttributeError):
            ninegrid.InferenceSession(self.two, nonsense=1)
        with self.assertRaises(TypeError):
            ninegrid.InferenceSession(self.two, {"threads": 1})


class Options(unittest.TestCase):
    """Every Options setting reaches the engine from SessionOptions (ONNX Runtime's names where it has one)."""

    @classmethod
    def setUpClass(cls):
        cls.default = ninegrid.InferenceSession(PARAM, threads=1)
        cls.names = [o.name for o in cls.default.get_outputs()]
        cls.ref = cls.default.run(None, {"data": image()})

    def check_outputs(self, sess):
        for name, ref, got in zip(self.names, self.ref, sess.run(None, {"data": image()})):
            scale = max(1.0, float(np.abs(ref).max()))
            np.testing.assert_allclose(got, ref, rtol=0, atol=1e-4 * scale, err_msg=name)

    def conv_algorithms(self, sess):
        sess.run(None, {"data": image()})
        return [s["algorithm"] for s in sess.get_profile() if s["op_type"] == "Conv"]

    def test_threads(self):
        opts = ninegrid.SessionOptions()
        opts.intra_op_num_threads = 2
        self.assertEqual(ninegrid.InferenceSession(PARAM, opts).threads, 2)
        self.assertEqual(self.default.threads, 1)
        self.assertEqual(opts.threads, 2)

    def test_optimization_levels(self):
        for level in ninegrid.GraphOptimizationLevel:
            with self.subTest(level=level.name):
                opts = ninegrid.SessionOptions(intra_op_num_threads=1, graph_optimization_level=level)
                sess = ninegrid.InferenceSession(PARAM, opts)
                self.check_outputs(sess)
        # Level 0 keeps every node; the default fuses activations into convolutions.
        plain = ninegrid.InferenceSession(PARAM, threads=1, opt_level=0, enable_profiling=True)
        fused = ninegrid.InferenceSession(PARAM, threads=1, enable_profiling=True)
        for s in (plain, fused):
            s.run(None, {"data": image()})
        self.assertGreater(len(plain.get_profile()), len(fused.get_profile()))

    def test_input_shapes(self):
        sess = ninegrid.InferenceSession(PARAM, threads=1, input_shapes={"data": SHAPE})
        self.assertEqual(sess.get_inputs()[0].shape, list(SHAPE))
        self.assertTrue(all(isinstance(d, int) for o in sess.get_outputs() for d in o.shape))
        self.check_outputs(sess)

    def test_profiling(self):
        sess = ninegrid.InferenceSession(PARAM, threads=1)
        self.assertEqual(sess.get_profile(), [])
        sess.set_profiling(True)
        sess.run(None, {"data": image()})
        steps = sess.get_profile()
        self.assertGreater(len(steps), 10)
        self.assertGreater(sum(s["time_ms"] for s in steps), 0)
        self.assertEqual(steps[0]["op_type"], "Conv")
        self.assertTrue(sess.get_session_options().enable_profiling)

    def test_kernel_settings(self):
        ref = ninegrid.InferenceSession(PARAM, threads=1, isa="ref", enable_profiling=True)
        self.assertEqual(ref.isa, "ref")
        self.assertEqual(set(self.conv_algorithms(ref)), {"ref"})
        self.check_outputs(ref)
        if self.default.isa == "ref":
            self.skipTest("no vector kernels on this CPU")
        direct = ninegrid.InferenceSession(PARAM, threads=1, conv_algorithms="direct", enable_profiling=True)
        algorithms = self.conv_algorithms(direct)
        self.assertTrue(any(a.startswith("direct/") for a in algorithms), algorithms)
        self.assertFalse(any(a.startswith(("winograd", "strassen", "indirect")) for a in algorithms), algorithms)
        six = ninegrid.InferenceSession(PARAM, threads=1, winograd_tile=6, enable_profiling=True)
        winograd = [a for a in self.conv_algorithms(six) if a.startswith("winograd")]
        self.assertTrue(winograd and all(a.startswith("winograd63") for a in winograd), winograd)
        for bad, word in (({"isa": "sse9"}, "'sse9'"), ({"conv_algorithms": "fft"}, "'fft'"),
                          ({"winograd_tile": 5}, "5")):
            with self.assertRaises(ninegrid.Error) as cm:
                ninegrid.InferenceSession(PARAM, **bad)
            self.assertIn(word, str(cm.exception))

    def test_spin_microseconds(self):
        # The same outputs whether idle threads spin or not; out-of-range values are refused by name.
        for spin in (0, 1000000):
            self.check_outputs(ninegrid.InferenceSession(PARAM, threads=2, spin_microseconds=spin))
        opts = ninegrid.SessionOptions(spin_microseconds=0)
        self.assertEqual(opts.copy().spin_microseconds, 0)
        for bad in (-2, 1000001):
            with self.assertRaises(ninegrid.Error) as cm:
                ninegrid.InferenceSession(PARAM, spin_microseconds=bad)
            self.assertIn("spin_microseconds", str(cm.exception))

    def test_budget(self):
        with self.assertRaises(ninegrid.Error) as cm:
            ninegrid.InferenceSession(PARAM, input_shapes={"data": SHAPE}, max_arena_bytes=1 << 12)
        self.assertIn("working memory", str(cm.exception))
        with self.assertRaises(ninegrid.Error) as cm:
            ninegrid.InferenceSession(PARAM, input_shapes={"data": SHAPE}, max_tensor_bytes=1 << 12)
        self.assertIn("node", str(cm.exception))
        with open(PARAM.replace(".param", ".bin"), "rb") as f:
            head = f.read(4096)
        with self.assertRaises(ninegrid.Error) as cm:
            ninegrid.InferenceSession(head, max_file_bytes=100)
        self.assertIn("max_file_bytes", str(cm.exception))
        with self.assertRaises(ninegrid.Error):
            ninegrid.InferenceSession(PARAM, max_arena_bytes=-1)

    def test_weights_path(self):
        with tempfile.TemporaryDirectory() as d:
            param = os.path.join(d, "renamed.param")  # no renamed.bin beside it
            with open(PARAM, "rb") as src, open(param, "wb") as dst:
                dst.write(src.read())
            with self.assertRaises(ninegrid.Error) as cm:
                ninegrid.InferenceSession(param)
            self.assertIn("renamed.bin", str(cm.exception))
            sess = ninegrid.InferenceSession(param, threads=1, weights_path=PARAM.replace(".param", ".bin"))
            self.check_outputs(sess)


class ZeroCopy(unittest.TestCase):
    """An input of the right dtype that is C-contiguous, aligned and native-endian is read in place; others are
    copied once. Seen through tracemalloc, which counts numpy's array allocations (not the engine's)."""

    def peak_during_run(self, sess, x):
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            sess.run(None, {"x": x})
            return tracemalloc.get_traced_memory()[1] - before
        finally:
            tracemalloc.stop()

    def test_inputs_read_in_place(self):
        with tempfile.TemporaryDirectory() as d:
            sess = ninegrid.InferenceSession(session_models.every_dtype(d, "float32"), threads=1)
            x = np.arange(3 * 1_000_000, dtype=np.float32).reshape(-1, 3)  # 12 MB
            self.assertLess(self.peak_during_run(sess, x), x.nbytes // 4)
            # The controls: a Fortran-ordered and a byte-swapped array are copied (and still give the values).
            for other in (np.asfortranarray(x), x.astype(x.dtype.newbyteorder())):
                self.assertGreaterEqual(self.peak_during_run(sess, other), x.nbytes)
                t, _ = sess.run(None, {"x": other})
                np.testing.assert_array_equal(t, x.T)


class Threads(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.long_model = session_models.conv_chain(cls.dir.name)
        cls.short_model = session_models.scaled_relu(cls.dir.name)

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def test_gil_released_during_run(self):
        """Thread A runs a model of several convolutions, thread B a tiny one, each with its own session. B's
        runs that start after A entered a run and end before A left it are counted per A-run. The switch
        interval is made huge, so the interpreter never takes the GIL from a thread: a thread runs Python
        code only when another gives the GIL up. Were it held during run(), B could not run at all while
        A is in its loop; three B runs inside one A-run mean that B made progress while A was inside run()."""
        a_sess = ninegrid.InferenceSession(self.long_model, threads=1)
        b_sess = ninegrid.InferenceSession(self.short_model, threads=1)
        xa = np.random.default_rng(1).standard_normal((1, 32, 96, 96)).astype(np.float32)
        xb = np.linspace(-1, 1, 16, dtype=np.float32)[None]
        state = {"entered": 0, "left": 0, "stop": False}
        inside = {}  # A-run number -> B runs completed wholly inside it
        b_errors = []

        def run_a():
            for _ in range(200):
                state["entered"] += 1
                a_sess.run(None, {"x": xa})
                state["left"] += 1
                if max(inside.values(), default=0) >= 3:
                    break
            state["stop"] = True

        def run_b():
            try:
                while not state["stop"]:
                    entered, left = state["entered"], state["left"]
                    (y,) = b_sess.run(None, {"x": xb})
                    if state["entered"] == entered and state["left"] == left == entered - 1:
                        inside[entered] = inside.get(entered, 0) + 1
                    if not np.array_equal(y, np.maximum(xb, 0) * 2):
                        b_errors.append(y)
            except Exception as e:  # reported below
                b_errors.append(e)
                state["stop"] = True

        threads = [threading.Thread(target=run_a), threading.Thread(target=run_b)]
        interval = sys.getswitchinterval()
        sys.setswitchinterval(1000)
        try:
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        finally:
            sys.setswitchinterval(interval)
        self.assertEqual(b_errors, [])
        self.assertGreaterEqual(max(inside.values(), default=0), 3,
                                f"no A-run saw three B runs inside it; per A-run: {inside}")

    def test_one_session_from_many_threads(self):
        """ONNX Runtime allows concurrent run() calls on one session; so does ninegrid, each call on an engine
        session of its own. Every thread's results equal the same inputs run one at a time."""
        sess = ninegrid.InferenceSession(self.long_model, threads=1)
        inputs = [np.random.default_rng(i).standard_normal((1, 32, 96, 96)).astype(np.float32) for i in range(4)]
        expected = [sess.run(None, {"x": x})[0] for x in inputs]
        results, errors = {}, []
        start = threading.Barrier(len(inputs))

        def work(i):
            try:
                start.wait()
                for _ in range(3):
                    (y,) = sess.run(None, {"x": inputs[i]})
                    results.setdefault(i, []).append(y)
            except Exception as e:
                errors.append(e)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(len(inputs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        for i, ys in results.items():
            self.assertEqual(len(ys), 3)
            for y in ys:
                np.testing.assert_array_equal(y, expected[i])
        self.assertLessEqual(sess._session.sessions, len(inputs))


if __name__ == "__main__":
    unittest.main()
