"""ninegrid.detect from Python: the same faces as the C++ detector on the astronaut photo, and clear errors."""
import json
import os
import subprocess
import unittest

import numpy as np

import ninegrid

SHARED = os.environ.get("NINEGRID_SHARED_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared"))
CLI = os.environ.get("NINEGRID_CLI")
ASTRONAUT = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png"
MNET = os.path.join(SHARED, "models", "mnet.25-opt.param")


def astronaut():
    from skimage import io
    return io.imread(ASTRONAUT)


class DetectTest(unittest.TestCase):
    def check_one_face(self, faces, min_score):
        self.assertEqual(len(faces), 1, faces)
        f = faces[0]
        self.assertTrue(f["x1"] <= 220 <= f["x2"] and f["y1"] <= 120 <= f["y2"], f)
        self.assertTrue(60 <= f["x2"] - f["x1"] <= 160, f)
        self.assertGreater(f["score"], min_score)
        self.assertEqual(len(f["landmarks"]), 5)

    def test_retinaface_finds_the_astronaut(self):
        self.check_one_face(ninegrid.detect(astronaut(), model=MNET, threads=1), 0.9)

    def test_default_model_is_blazeface(self):
        if not os.path.exists(ninegrid.default_face_model()):
            self.fail(ninegrid.default_face_model() + " missing: run scripts/setup.sh")
        self.check_one_face(ninegrid.detect(astronaut()), 0.5)

    def test_matches_the_command_line(self):
        if not CLI:
            self.skipTest("NINEGRID_CLI not set")
        out = subprocess.run([CLI, "detect", ASTRONAUT, "--model", MNET, "--json", "--threads", "1", "--out",
                              os.path.join(os.environ.get("TMPDIR", "/tmp"), "ng-py-detect")],
                             check=True, capture_output=True, text=True).stdout
        cli_faces = json.loads(out.strip().splitlines()[0])
        py_faces = ninegrid.detect(astronaut(), model=MNET, threads=1)
        self.assertEqual(len(cli_faces), len(py_faces))
        for a, b in zip(cli_faces, py_faces):
            for k in ("x1", "y1", "x2", "y2"):
                self.assertAlmostEqual(a[k], b[k], delta=0.01)

    def test_bad_image_shape(self):
        with self.assertRaises(ninegrid.Error):
            ninegrid.detect(np.zeros((10, 10), np.uint8), model=MNET)

    def test_image_dtype_is_checked(self):
        # A float image (here scaled to [0, 1]) was cast to uint8 without a word, giving a black image and no
        # faces; it is refused, naming both dtypes. uint8 in any memory order is accepted.
        img = astronaut()
        with self.assertRaises(ninegrid.Error) as cm:
            ninegrid.detect(img / 255.0, model=MNET, threads=1)
        self.assertIn("float64", str(cm.exception))
        self.assertIn("uint8", str(cm.exception))
        with self.assertRaises(ninegrid.Error):
            ninegrid.detect(img.astype(np.int64), model=MNET, threads=1)
        self.assertEqual(ninegrid.detect(np.asfortranarray(img), model=MNET, threads=1),
                         ninegrid.detect(img, model=MNET, threads=1))

    def test_missing_model(self):
        with self.assertRaises(ninegrid.Error) as cm:
            ninegrid.detect(astronaut(), model="/nonexistent.onnx")
        self.assertIn("/nonexistent.onnx", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
