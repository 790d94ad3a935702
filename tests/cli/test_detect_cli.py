#!/usr/bin/python3
"""Tests of `ninegrid detect`, driven as a user would.

usage: /usr/bin/python3 tests/cli/test_detect_cli.py PATH/TO/ninegrid   (or set NINEGRID_CLI)

Expected values come from the issue's description of the photo (the astronaut's face contains the point
(220, 120) and is 60 to 160 px wide) and from Pillow reading the written files, never from the binary.
A negative return code means the binary died from a signal (a crash), which fails the test.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from PIL import Image

CLI = os.environ.get("NINEGRID_CLI", "")
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SHARED = os.path.join(REPO, "..", "shared")
CACHE = os.environ.get("NINEGRID_CACHE") or os.path.join(REPO, ".cache")
ASTRONAUT = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png"
BLAZEFACE = os.path.join(CACHE, "npm/blazeface/package/ONNX/face_detection_front_128x128_barracuda.onnx")
MNET = os.path.join(SHARED, "models/mnet.25-opt.param")
BOX_COLOUR = (0, 230, 0)


class DetectCliTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="ninegrid_detect_test_")
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def cli(self, *args, env=None):
        r = subprocess.run([CLI, "detect", *map(str, args)], capture_output=True, text=True, timeout=300,
                           cwd=self.tmp, env=env)
        self.assertGreaterEqual(r.returncode, 0, f"died from signal {-r.returncode}\nstderr: {r.stderr}")
        return r

    def check_astronaut_face(self, face):
        self.assertEqual(sorted(face), ["landmarks", "score", "x1", "x2", "y1", "y2"])
        self.assertLess(face["x1"], 220)
        self.assertGreater(face["x2"], 220)
        self.assertLess(face["y1"], 120)
        self.assertGreater(face["y2"], 120)
        self.assertTrue(60 <= face["x2"] - face["x1"] <= 160, face)
        self.assertEqual(len(face["landmarks"]), 5)
        for x, y in face["landmarks"]:
            self.assertTrue(face["x1"] <= x <= face["x2"] and face["y1"] <= y <= face["y2"], face)

    def check_drawn(self, path, face):
        with Image.open(path) as im:
            im.verify()  # Pillow's own check of the file's chunks and their CRCs (convert() below decodes it)
        with Image.open(path) as im:
            self.assertEqual(im.format, "PNG")
            self.assertEqual(im.size, (512, 512))
            rgb = im.convert("RGB")
            # The box's top edge is drawn in the box colour; a pixel far from the face is the photo's.
            self.assertEqual(rgb.getpixel((int((face["x1"] + face["x2"]) / 2), round(face["y1"]))), BOX_COLOUR)
        with Image.open(ASTRONAUT) as orig:
            self.assertEqual(rgb.getpixel((10, 500)), orig.convert("RGB").getpixel((10, 500)))

    def test_help(self):
        r = self.cli("--help")
        self.assertEqual(r.returncode, 0)
        for word in ("IMAGE...", "--model", "--arch", "--json", "ninegrid-out", "scripts/setup.sh"):
            self.assertIn(word, r.stdout)

    @unittest.skipUnless(os.path.isfile(BLAZEFACE), "BlazeFace missing: run scripts/setup.sh")
    def test_default_model_json(self):
        out = os.path.join(self.tmp, "drawn")
        r = self.cli(ASTRONAUT, "--json", "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertEqual(len(lines), 1, r.stdout)
        faces = json.loads(lines[0])
        self.assertEqual(len(faces), 1, faces)
        self.check_astronaut_face(faces[0])
        self.check_drawn(os.path.join(out, "astronaut_faces.png"), faces[0])

    @unittest.skipUnless(os.path.isfile(BLAZEFACE), "BlazeFace missing: run scripts/setup.sh")
    def test_default_out_dir_text_and_same_names(self):
        other = os.path.join(self.tmp, "other")
        os.makedirs(other)
        shutil.copy(ASTRONAUT, os.path.join(other, "astronaut.png"))
        r = self.cli(ASTRONAUT, os.path.join(other, "astronaut.png"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.count("1 face "), 2, r.stdout)
        self.assertIn("blazeface", r.stdout)
        # Two photos with one name: the second gets a suffix instead of overwriting the first.
        self.assertTrue(os.path.isfile(os.path.join(self.tmp, "ninegrid-out", "astronaut_faces.png")))
        self.assertTrue(os.path.isfile(os.path.join(self.tmp, "ninegrid-out", "astronaut_2_faces.png")))

    @unittest.skipUnless(os.path.isfile(MNET), "shared mnet.25 missing")
    def test_mnet_ncnn(self):
        r = self.cli(ASTRONAUT, "--model", MNET, "--score", "0.9", "--json", "--out", self.tmp)
        self.assertEqual(r.returncode, 0, r.stderr)
        faces = json.loads(r.stdout)
        self.assertEqual(len(faces), 1, faces)
        self.assertGreater(faces[0]["score"], 0.9)
        self.check_astronaut_face(faces[0])
        self.check_drawn(os.path.join(self.tmp, "astronaut_faces.png"), faces[0])

    @unittest.skipUnless(os.path.isfile(BLAZEFACE), "BlazeFace missing: run scripts/setup.sh")
    def test_bad_images_are_reported_and_the_rest_still_run(self):
        text = os.path.join(self.tmp, "notes.png")
        with open(text, "w") as f:
            f.write("not a picture\n")
        missing = os.path.join(self.tmp, "missing.jpg")
        r = self.cli(missing, ASTRONAUT, text, "--json", "--out", self.tmp)
        self.assertEqual(r.returncode, 1)
        lines = r.stdout.splitlines()
        self.assertEqual(len(lines), 3, r.stdout)
        self.assertEqual(lines[0], "null")
        self.assertEqual(len(json.loads(lines[1])), 1)
        self.assertEqual(lines[2], "null")
        self.assertIn(missing, r.stderr)
        self.assertIn(text, r.stderr)
        self.assertNotIn("internal error", r.stderr)

    def test_usage_errors(self):
        for args, mention in [((), "IMAGE"), ((ASTRONAUT, "--score", "2"), "--score"),
                              ((ASTRONAUT, "--nms", "x"), "--nms"), ((ASTRONAUT, "--size", "100"), "--size"),
                              ((ASTRONAUT, "--arch", "yolo"), "yolo"), ((ASTRONAUT, "--threads"), "--threads"),
                              ((ASTRONAUT, "--frobnicate"), "--frobnicate")]:
            r = self.cli(*args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(mention, r.stderr)

    def test_missing_default_model_says_how_to_get_it(self):
        env = dict(os.environ, NINEGRID_BLAZEFACE_MODEL=os.path.join(self.tmp, "nope.onnx"))
        r = self.cli(ASTRONAUT, env=env)
        self.assertEqual(r.returncode, 1)
        self.assertIn("scripts/setup.sh", r.stderr)
        self.assertIn("nope.onnx", r.stderr)

    @unittest.skipUnless(os.path.isfile(os.path.join(SHARED, "models/squeezenet_v1.1.param")), "shared models missing")
    def test_a_classifier_is_not_a_face_detector(self):
        r = self.cli(ASTRONAUT, "--model", os.path.join(SHARED, "models/squeezenet_v1.1.param"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("--arch", r.stderr)
        self.assertNotIn("internal error", r.stderr)


if __name__ == "__main__":
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        CLI = sys.argv.pop(1)
    if not CLI or not os.path.isfile(CLI):
        sys.exit(f"usage: {sys.argv[0]} PATH/TO/ninegrid  (or set NINEGRID_CLI); got '{CLI}'")
    CLI = os.path.abspath(CLI)
    unittest.main(argv=sys.argv)
