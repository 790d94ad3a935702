"""The Python module under misuse (issue 17): every case here is either refused with a ninegrid.Error that says
which input and what was wrong, or converted exactly; none reads memory it does not own.

Each test names the fault it guards against. Checked against the module built at 03e1a76 (before the fixes):
test_run_without_an_input_after_a_run (SIGSEGV there), test_run_missing_one_of_two_inputs (no error, a freed
array read), test_byte_order (all-NaN outputs), test_unsupported_dtypes_are_refused (object and complex arrays
accepted, complex silently dropping the imaginary part), test_shapes_errors_talk_about_shapes (the message said
"--shape") all fail there."""
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
import unittest

import numpy as np

import ninegrid
import tiny_models

SHARED = os.environ.get("NINEGRID_SHARED_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared"))
PARAM = os.path.join(SHARED, "models", "mnet.25-opt.param")
OUT = "face_rpn_cls_prob_reshape_stride16"


def image(seed, size=64):
    return (np.random.RandomState(seed).rand(1, 3, size, size) * 255).astype(np.float32)


class InputLifetimeTest(unittest.TestCase):
    def test_run_without_an_input_after_a_run(self):
        # Fault: run({}) after a run read the earlier call's array after the binding had released it (heap
        # use-after-free, SIGSEGV in the first-layer kernel). In a child process, so that a crash is a failure
        # of this test rather than of the whole suite. The array is big enough (3 MB) that freeing it unmaps
        # its pages: a read after free faults instead of passing by luck.
        script = textwrap.dedent(f"""
            import gc, numpy as np, ninegrid
            m = ninegrid.Model({PARAM!r}, threads=1)
            x = (np.random.RandomState(0).rand(1, 3, 512, 512) * 255).astype(np.float32)
            m.run({{"data": x}})
            del x
            gc.collect()
            try:
                m.run({{}})
                print("NO ERROR")
            except ninegrid.Error as e:
                print("ERROR", e)
            """)
        r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, f"child died (signal {-r.returncode})\n{r.stderr}")
        self.assertIn("ERROR", r.stdout)
        self.assertIn("missing 'data'", r.stdout)

    def test_run_missing_one_of_two_inputs(self):
        # Fault: a dict without 'y' silently reused the previous call's (freed) 'y'.
        with tempfile.TemporaryDirectory() as d:
            path, w = tiny_models.two_inputs(d)
            m = ninegrid.Model(path, threads=1)
            x = np.random.RandomState(1).standard_normal((1, 4, 8, 8)).astype(np.float32)
            y = np.random.RandomState(2).standard_normal((1, 4, 8, 8)).astype(np.float32)
            out = m.run({"x": x, "y": y})["out"]
            np.testing.assert_allclose(out, np.maximum(tiny_models.conv_reference(x, w) + y, 0), rtol=1e-5, atol=1e-5)
            with self.assertRaises(ninegrid.Error) as cm:
                m.run({"x": x})
            self.assertIn("missing 'y'", str(cm.exception))
            self.assertNotIn("'x'", str(cm.exception).split("missing")[1])
            with self.assertRaises(ninegrid.Error) as cm:
                m.run({})
            self.assertIn("missing 'x', 'y'", str(cm.exception))
            # After the refused calls the model still works, on the new arrays only.
            np.testing.assert_array_equal(m.run({"x": x, "y": y})["out"], out)

    def test_input_arrays_are_read_not_written(self):
        # The engine reads inputs in place: it must never write into them (a read-only buffer stays as it was).
        x = image(3)
        frozen = np.frombuffer(x.tobytes(), np.float32).reshape(x.shape)
        self.assertFalse(frozen.flags.writeable)
        m = ninegrid.Model(PARAM, threads=1)
        out = m.run({"data": frozen})[OUT]
        np.testing.assert_array_equal(frozen, x)
        np.testing.assert_array_equal(out, m.run({"data": x})[OUT])


class DtypeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = ninegrid.Model(PARAM, threads=1)
        cls.x = image(4)
        cls.ref = cls.model.run({"data": cls.x})[OUT]

    def run_model(self, x):
        return self.model.run({"data": x})[OUT]

    def test_byte_order(self):
        # Fault: a big-endian array was read in place as little-endian (all-NaN outputs).
        big = self.x.astype(">f4")
        self.assertFalse(big.dtype.isnative)
        np.testing.assert_array_equal(self.run_model(big), self.ref)
        np.testing.assert_array_equal(big, self.x)  # converted into a copy, the caller's array untouched
        np.testing.assert_array_equal(self.run_model(self.x.astype(">f8")), self.ref)

    def test_layouts_are_converted(self):
        np.testing.assert_array_equal(self.run_model(np.asfortranarray(self.x)), self.ref)
        strided = np.repeat(self.x, 2, axis=3)[:, :, :, ::2]
        self.assertFalse(strided.flags.c_contiguous)
        np.testing.assert_array_equal(self.run_model(strided), self.ref)
        # Misaligned: float32 elements starting one byte into a buffer.
        raw = np.zeros(self.x.nbytes + 1, np.uint8)
        misaligned = raw[1:].view(np.float32).reshape(self.x.shape)
        misaligned[...] = self.x
        self.assertFalse(misaligned.flags.aligned)
        np.testing.assert_array_equal(self.run_model(misaligned), self.ref)

    def test_safe_casts_convert_exactly(self):
        # The image's values are integers 0..254, so every one of these types holds them exactly: the outputs
        # must equal the float32 run's bit for bit.
        whole = np.floor(self.x)
        ref = self.run_model(whole)
        for dtype in (np.float16, np.uint8, np.int16, np.float64, ">f2", ">i2"):
            np.testing.assert_array_equal(self.run_model(whole.astype(dtype)), ref, err_msg=str(dtype))
        # float64 is rounded to float32 as astype rounds it.
        x64 = self.x.astype(np.float64) + 1e-9
        np.testing.assert_array_equal(self.run_model(x64), self.run_model(x64.astype(np.float32)))
        # Lists go through numpy.asarray.
        np.testing.assert_array_equal(self.run_model(self.x.tolist()), self.ref)

    def test_unsupported_dtypes_are_refused(self):
        # Fault: object and complex arrays were converted with astype (complex dropping its imaginary part,
        # object arrays going element by element), strings parsed as numbers.
        cases = {
            "object": self.x.astype(object),
            "complex64": self.x.astype(np.complex64),
            "complex128": self.x.astype(np.complex128),
            "<U5": np.full(self.x.shape, "1.5"),
            "|S3": np.full(self.x.shape, b"1.5"),
            "int64": self.x.astype(np.int64),
            "uint32": self.x.astype(np.uint32),
            "<M8[s]": np.zeros(self.x.shape, "datetime64[s]"),
            "float128": self.x.astype(np.longdouble),
        }
        for name, bad in cases.items():
            with self.assertRaises(ninegrid.Error, msg=name) as cm:
                self.run_model(bad)
            msg = str(cm.exception)
            self.assertIn("input 'data'", msg)
            self.assertIn(str(bad.dtype), msg)
            self.assertIn("float32", msg)

    def test_int64_input(self):
        with tempfile.TemporaryDirectory() as d:
            m = ninegrid.Model(tiny_models.int64_input(d), threads=1)
        a = np.array([1, -2, 3, 2**40, 5, -6], np.int64)
        got = m.run({"a": a})["twice"]
        self.assertEqual(got.dtype, np.int64)
        np.testing.assert_array_equal(got, 2 * a)
        np.testing.assert_array_equal(m.run({"a": a.astype(">i8")})["twice"], 2 * a)
        small = np.array([1, -2, 3, 4, 5, -6], np.int32)
        np.testing.assert_array_equal(m.run({"a": small})["twice"], 2 * small.astype(np.int64))
        for bad in (a.astype(np.float32), a.astype(np.uint64), np.array([1.5] * 6)):
            with self.assertRaises(ninegrid.Error) as cm:
                m.run({"a": bad})
            self.assertIn("input 'a'", str(cm.exception))
            self.assertIn(str(bad.dtype), str(cm.exception))
            self.assertIn("int64", str(cm.exception))


class ErrorMessageTest(unittest.TestCase):
    def test_shapes_errors_talk_about_shapes(self):
        # Fault: the library's message for an unknown name in shapes= said "--shape", a flag Python has not.
        cases = [({"nope": (1, 3, 32, 32)}, "'nope'"), ({"data": (1, 3, 32)}, "'data'"),
                 ({"data": (1, -3, 32, 32)}, "'data'"), ({"data": "1x3x32x32"}, "'data'"),
                 ({"data": (1, 3, 32.5, 32)}, "'data'")]
        for shapes, name in cases:
            with self.assertRaises(ninegrid.Error, msg=str(shapes)) as cm:
                ninegrid.Model(PARAM, shapes=shapes)
            msg = str(cm.exception)
            self.assertNotIn("--", msg)
            self.assertIn(name, msg)
        with self.assertRaises(ninegrid.Error) as cm:
            ninegrid.Model(PARAM, shapes=[(1, 3, 32, 32)])
        self.assertIn("shapes=", str(cm.exception))

    def test_run_errors_name_the_file_and_input(self):
        m = ninegrid.Model(PARAM, threads=1)
        with self.assertRaises(ninegrid.Error) as cm:
            m.run({"data": image(0), "nope": image(0)})
        self.assertIn("'nope'", str(cm.exception))
        self.assertIn("'data'", str(cm.exception))  # lists the model's inputs
        self.assertIn(PARAM, str(cm.exception))
        with self.assertRaises(ninegrid.Error) as cm:
            m.run({"data": np.zeros((3, 32, 32), np.float32)})
        self.assertIn("'data'", str(cm.exception))
        self.assertIn(PARAM, str(cm.exception))
        with self.assertRaises(ninegrid.Error) as cm:
            m.run([image(0)])
        self.assertIn("dict", str(cm.exception))
        with self.assertRaises(ninegrid.Error) as cm:
            m.run({0: image(0)})
        self.assertIn("no input named 0", str(cm.exception))
        with self.assertRaises(ninegrid.Error) as cm:
            m.run({"data": [[1.0, 2.0], [3.0]]})
        self.assertIn("input 'data'", str(cm.exception))

    def test_budget_errors_name_the_node_and_size(self):
        with self.assertRaises(ninegrid.Error) as cm:
            ninegrid.Model(PARAM, threads=1, shapes={"data": (1, 3, 160, 160)}, max_tensor_bytes=1 << 16)
        msg = str(cm.exception)
        self.assertIn("node 'mobilenet0_conv0_fwd'", msg)
        self.assertIn("200.0 KiB", msg)
        self.assertNotIn("internal error", msg)
        m = ninegrid.Model(PARAM, threads=1, max_arena_bytes=1 << 16)
        with self.assertRaises(ninegrid.Error) as cm:
            m.run({"data": image(0, 160)})
        self.assertIn("working memory", str(cm.exception))
        self.assertIn(PARAM, str(cm.exception))
        with self.assertRaises(ninegrid.Error) as cm:
            ninegrid.Model(PARAM, max_file_bytes=1000)
        self.assertIn(PARAM, str(cm.exception))
        self.assertIn("1000 bytes", str(cm.exception))


class ThreadTest(unittest.TestCase):
    def test_threads_sharing_one_model(self):
        # Several Python threads on one Model: the GIL is released while it runs, the model's mutex serialises
        # them, so every result equals the one-thread result for its input, and no call meets the session's
        # busy check (which would raise ninegrid.Error). profile() and set_profiling() take the same mutex.
        m = ninegrid.Model(PARAM, threads=1)
        inputs = [image(s, 96) for s in range(4)]
        expected = [m.run({"data": x})[OUT] for x in inputs]
        errors, mismatches = [], []

        def worker(k):
            try:
                for i in range(6):
                    j = (k + i) % len(inputs)
                    if not np.array_equal(m.run({"data": inputs[j]})[OUT], expected[j]):
                        mismatches.append((k, i))
            except Exception as e:  # noqa: BLE001 - any exception is a failure, reported below
                errors.append(repr(e))

        def poker():
            try:
                for i in range(40):
                    m.set_profiling(i % 2 == 0)
                    m.profile()
            except Exception as e:  # noqa: BLE001
                errors.append(repr(e))

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(3)] + [threading.Thread(target=poker)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(mismatches, [])


if __name__ == "__main__":
    unittest.main()
