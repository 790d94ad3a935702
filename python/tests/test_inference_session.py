"""ninegrid.InferenceSession, the ONNX Runtime-style API (issue 16), against ONNX Runtime 1.30 (npm onnxruntime-node,
through ort_reference.py) on real models and on small generated models of every element type: metadata
(names, ORT type strings, shapes with symbolic dimensions), outputs, output selection, loading from bytes.
"""
import os
import tempfile
import unittest

import numpy as np

import ninegrid
import ort_reference
import session_models

SHARED = os.environ.get("NINEGRID_SHARED_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared"))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CACHE = os.environ.get("NINEGRID_CACHE", os.path.join(REPO, ".cache"))
PARAM = os.path.join(SHARED, "models", "mnet.25-opt.param")
GOLDEN = os.path.join(SHARED, "models", "mnet.25-golden")
ASTRONAUT = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png"
BLAZEFACE = os.path.join(CACHE, "npm/blazeface/package/ONNX/face_detection_front_128x128_barracuda.onnx")
PPOCR_DET = os.path.join(CACHE, "npm/ocr/package/assets/ch_PP-OCRv4_det_infer.onnx")
PPOCR_CLS = os.path.join(CACHE, "npm/ocr/package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx")
RETINAFACE_ONNX = os.path.join(CACHE, "models", "retinaface_mnet25.onnx")
# onnxruntime-node's tensor type names -> ONNX Runtime's Python type strings.
ORT_NODE_TYPES = {"float32": "tensor(float)", "float64": "tensor(double)"}


def ort_type(node_type):
    return ORT_NODE_TYPES.get(node_type, f"tensor({node_type})")


def node_shape(shape):
    """onnxruntime-node writes an unnamed dynamic dimension as the symbol ''; ONNX Runtime's Python API, and
    ninegrid's, as None."""
    return [None if d == "" else d for d in shape]


def astronaut(h, w):
    from skimage import io, transform
    rgb = io.imread(ASTRONAUT)
    return transform.resize(rgb, (h, w), anti_aliasing=True).astype(np.float32)  # HWC in [0, 1]


def text_page(size):
    """Dark glyph-like strokes in lines on white paper, normalised as PP-OCR expects (NCHW): the detector's
    probability map then spans 0..1, so a range-relative comparison means something."""
    page = np.ones((size, size, 3), np.float32)
    rng = np.random.default_rng(5)
    for top in range(40, size - 36, 40):
        for left in range(20, size - 26, 14):
            h, w = int(rng.integers(10, 16)), int(rng.integers(3, 9))
            page[top:top + h, left:left + w] = 0.05
    mean, std = np.array([0.485, 0.456, 0.406], np.float32), np.array([0.229, 0.224, 0.225], np.float32)
    return np.ascontiguousarray(((page - mean) / std).transpose(2, 0, 1)[None], np.float32)


class VsOnnxRuntime(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        why = ort_reference.available()
        if why:
            raise unittest.SkipTest(f"ONNX Runtime cannot run: {why}")

    def require(self, path):
        if not os.path.exists(path):
            self.fail(f"missing {path}: run scripts/setup.sh (and scripts/make_test_models.sh)")

    def check_metadata(self, sess, meta):
        """get_inputs()/get_outputs() name, type and shape as ONNX Runtime reports them."""
        for ours, theirs in ((sess.get_inputs(), meta["inputs"]), (sess.get_outputs(), meta["outputs"])):
            self.assertEqual([a.name for a in ours], [m["name"] for m in theirs])
            for a, m in zip(ours, theirs):
                self.assertEqual(a.type, ort_type(m["type"]), a.name)
                self.assertEqual(a.dtype, np.dtype(m["type"] if m["type"] != "bool" else np.bool_), a.name)
                self.assertEqual(a.shape, node_shape(m["shape"]), a.name)

    def compare(self, path, feeds, fixed_outputs=True):
        self.require(path)
        sess = ninegrid.InferenceSession(path, threads=1)
        meta, ref = ort_reference.run(path, feeds)
        if fixed_outputs:
            self.check_metadata(sess, meta)
        else:  # shapes follow from dynamic inputs: compare the inputs' and the outputs' names and types only
            self.assertEqual([(a.name, a.shape) for a in sess.get_inputs()],
                             [(m["name"], node_shape(m["shape"])) for m in meta["inputs"]])
            self.assertEqual([(a.name, a.type) for a in sess.get_outputs()],
                             [(m["name"], ort_type(m["type"])) for m in meta["outputs"]])
        got = sess.run(None, feeds)
        self.assertEqual(len(got), len(meta["names"]))
        for name, g in zip(meta["names"], got):
            r = ref[name]
            self.assertEqual(g.shape, r.shape, name)
            self.assertEqual(g.dtype, r.dtype, name)
            rng = float(r.max() - r.min())
            self.assertGreater(rng, 0, f"{name}: ORT's output is constant, the comparison would mean nothing")
            worst = float(np.abs(g.astype(np.float64) - r).max())
            self.assertLessEqual(worst, 1e-4 * rng, f"{path} {name}: max |ninegrid - ORT| = {worst}")
        return sess, got

    def test_blazeface_on_the_astronaut(self):
        self.compare(BLAZEFACE, {"input:0": (astronaut(128, 128) * 2 - 1)[None]})

    def test_ppocr_det_with_dynamic_dimensions(self):
        sess, _ = self.compare(PPOCR_DET, {"x": text_page(256)}, fixed_outputs=False)
        # Its input is declared with dynamic batch, height and width.
        self.assertEqual(sess.get_inputs()[0].shape[1], 3)
        self.assertTrue(all(not isinstance(d, int) for i, d in enumerate(sess.get_inputs()[0].shape) if i != 1))

    def test_ppocr_cls(self):
        self.compare(PPOCR_CLS, {"x": np.random.default_rng(4).uniform(-1, 1, (1, 3, 48, 192)).astype(np.float32)})

    def test_retinaface_onnx(self):
        x = astronaut(640, 640).transpose(2, 0, 1)[None] * 255  # RGB, 0..255, its fixed 640x640
        self.compare(RETINAFACE_ONNX, {self.first_input(RETINAFACE_ONNX): np.ascontiguousarray(x, np.float32)})

    def first_input(self, path):
        self.require(path)
        return ninegrid.InferenceSession(path, threads=1).get_inputs()[0].name

    def test_every_dtype_against_onnx_runtime(self):
        with tempfile.TemporaryDirectory() as d:
            for name in session_models.DTYPES:
                if name == "bfloat16":
                    continue  # onnxruntime-node has no bfloat16 tensors: EveryDtype checks it against numpy
                with self.subTest(dtype=name):
                    path = session_models.every_dtype(d, name)
                    x = session_models.sample(name, (5, 3), seed=len(name))
                    sess = ninegrid.InferenceSession(path, threads=1)
                    meta, ref = ort_reference.run(path, {"x": x})
                    self.check_metadata(sess, meta)
                    got = sess.run(None, {"x": x})
                    for out, g in zip(meta["names"], got):
                        self.assertEqual(g.dtype, ref[out].dtype, out)
                        np.testing.assert_array_equal(g, ref[out], err_msg=f"{name} {out}")


class EveryDtype(unittest.TestCase):
    """Every element type of the engine crosses the API: metadata, values, dtypes (bfloat16 as uint16 bits)."""

    def test_values_and_metadata(self):
        with tempfile.TemporaryDirectory() as d:
            for name, (np_type, _) in session_models.DTYPES.items():
                with self.subTest(dtype=name):
                    want = np.dtype(np_type if np_type is not None else np.uint16)
                    sess = ninegrid.InferenceSession(session_models.every_dtype(d, name), threads=1)
                    (x,) = sess.get_inputs()
                    t, c = sess.get_outputs()
                    self.assertEqual((x.name, x.type, x.shape, x.dtype), ("x", session_models.ORT_TYPES[name], ["batch", 3], want))
                    self.assertEqual((t.name, t.type, t.shape, t.dtype), ("t", session_models.ORT_TYPES[name], [3, "batch"], want))
                    self.assertEqual((c.name, c.shape), ("c", [None, 3]))
                    for rows in (1, 4):  # a new batch size re-plans the session
                        value = session_models.sample(name, (rows, 3), seed=rows)
                        self.assertEqual(value.dtype, want)
                        got_t, got_c = sess.run(None, {"x": value})
                        self.assertEqual((got_t.dtype, got_c.dtype), (want, want))
                        np.testing.assert_array_equal(got_t, value.T)
                        np.testing.assert_array_equal(got_c, np.concatenate([value, value]))

    def test_fixed_input_shapes_fix_the_outputs(self):
        with tempfile.TemporaryDirectory() as d:
            sess = ninegrid.InferenceSession(session_models.every_dtype(d, "int16"), input_shapes={"x": (4, 3)})
            self.assertEqual(sess.get_inputs()[0].shape, [4, 3])
            self.assertEqual([o.shape for o in sess.get_outputs()], [[3, 4], [8, 3]])


class RealModels(unittest.TestCase):
    def test_ncnn_model_matches_the_golden_outputs(self):
        from skimage import io
        image = np.ascontiguousarray(io.imread(ASTRONAUT).transpose(2, 0, 1)[None].astype(np.float32))
        sess = ninegrid.InferenceSession(PARAM, threads=1)
        self.assertEqual(sess.format, "ncnn")
        names = [o.name for o in sess.get_outputs()]
        got = dict(zip(names, sess.run(None, {"data": image})))
        for f in os.listdir(GOLDEN):
            ref = np.load(os.path.join(GOLDEN, f))
            scale = max(1.0, float(np.abs(ref).max()))
            np.testing.assert_allclose(got[f[:-4]].reshape(ref.shape), ref, rtol=0, atol=1e-4 * scale, err_msg=f)

    def test_output_names_choose_and_order_the_outputs(self):
        x = np.random.default_rng(3).uniform(0, 255, (1, 3, 64, 64)).astype(np.float32)
        sess = ninegrid.InferenceSession(PARAM, threads=1)
        names = [o.name for o in sess.get_outputs()]
        every = dict(zip(names, sess.run(None, {"data": x})))
        self.assertEqual(len(sess.run([], {"data": x})), len(names))  # [] means all, as in ONNX Runtime
        chosen = [names[5], names[0], names[5]]
        for name, got in zip(chosen, sess.run(chosen, {"data": x})):
            np.testing.assert_array_equal(got, every[name])

    def test_from_bytes_as_from_the_file(self):
        if not os.path.exists(BLAZEFACE):
            self.fail(f"missing {BLAZEFACE}: run scripts/setup.sh")
        x = (astronaut(128, 128) * 2 - 1)[None]
        ref = ninegrid.InferenceSession(BLAZEFACE, threads=1).run(None, {"input:0": x})
        with open(BLAZEFACE, "rb") as f:
            data = f.read()
        strided = memoryview(bytes(b for c in data for b in (c, 0)))[::2]  # every other byte: not contiguous
        for source in (data, bytearray(data), memoryview(data), strided):
            with self.subTest(type=type(source).__name__):
                sess = ninegrid.InferenceSession(source, threads=1)
                self.assertEqual(sess.format, "onnx")
                if isinstance(source, bytearray):
                    source[:] = b"\0" * len(source)  # copied at load: the session does not read it again
                for a, b in zip(sess.run(None, {"input:0": x}), ref):
                    np.testing.assert_array_equal(a, b)

    def test_path_like(self):
        import pathlib
        sess = ninegrid.InferenceSession(pathlib.Path(PARAM), threads=1)
        self.assertEqual(sess.get_inputs()[0].name, "data")


if __name__ == "__main__":
    unittest.main()
