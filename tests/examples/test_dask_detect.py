#!/usr/bin/python3
"""examples/dask_detect.py on a LocalCluster of two workers, against `ninegrid detect --json` run in one process
on the same images: the same faces, image by image (to the CLI's printed precision: 1/100 px, 4 decimals of
score). The images are PNGs made from Debian's skimage photos (lossless, so both decoders see the same
pixels): the astronaut, her mirror image, two smaller copies side by side, a grey photograph and one without
faces. The same run with --ship-images gives the same faces.

usage: test_dask_detect.py NINEGRID_CLI PYTHONPATH_OF_THE_MODULE      (exits 77, a skip, without Dask)
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLE = os.path.join(REPO, "examples", "dask_detect.py")
CACHE = os.environ.get("NINEGRID_CACHE") or os.path.join(REPO, ".cache")
BLAZEFACE = os.path.join(CACHE, "npm/blazeface/package/ONNX/face_detection_front_128x128_barracuda.onnx")
SKIMAGE = "/usr/lib/python3/dist-packages/skimage/data"
CLI = PYTHONPATH = None


def make_images(folder):
    from PIL import Image, ImageOps
    astronaut = Image.open(os.path.join(SKIMAGE, "astronaut.png")).convert("RGB")
    astronaut.save(os.path.join(folder, "a_astronaut.png"))
    ImageOps.mirror(astronaut).save(os.path.join(folder, "b_mirrored.png"))
    pair = Image.new("RGB", (640, 400), (90, 90, 90))
    small = astronaut.resize((320, 320), Image.BILINEAR)
    pair.paste(small, (0, 40))
    pair.paste(ImageOps.mirror(small), (320, 40))
    pair.save(os.path.join(folder, "c_pair.png"))
    Image.open(os.path.join(SKIMAGE, "camera.png")).save(os.path.join(folder, "d_camera_grey.png"))
    Image.open(os.path.join(SKIMAGE, "coffee.png")).convert("RGB").save(os.path.join(folder, "e_coffee.png"))
    with open(os.path.join(folder, "notes.txt"), "w") as f:  # not an image: not listed
        f.write("not an image\n")
    return sorted(os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".png"))


class DaskDetect(unittest.TestCase):
    def test_two_workers_match_one_process(self):
        self.assertTrue(os.path.exists(BLAZEFACE), f"missing {BLAZEFACE}: run scripts/setup.sh")
        with tempfile.TemporaryDirectory(prefix="ninegrid_dask_") as d:
            folder = os.path.join(d, "images")
            os.mkdir(folder)
            images = make_images(folder)
            out = os.path.join(d, "faces.json")
            env = dict(os.environ, PYTHONPATH=PYTHONPATH)
            r = subprocess.run([sys.executable, EXAMPLE, folder, "--workers", "2", "--threads", "1", "--model",
                                BLAZEFACE, "-o", out], capture_output=True, text=True, timeout=600, env=env, cwd=d)
            self.assertEqual(r.returncode, 0, f"dask_detect.py failed:\n{r.stdout}\n{r.stderr}")
            with open(out) as f:
                report = json.load(f)
            # --ship-images: the images travel with the tasks instead of being read by the workers.
            shipped = os.path.join(d, "shipped.json")
            r = subprocess.run([sys.executable, EXAMPLE, folder, "--workers", "2", "--threads", "1", "--model",
                                BLAZEFACE, "--ship-images", "-o", shipped], capture_output=True, text=True,
                               timeout=600, env=env, cwd=d)
            self.assertEqual(r.returncode, 0, f"dask_detect.py --ship-images failed:\n{r.stdout}\n{r.stderr}")
            with open(shipped) as f:
                self.assertEqual([i["faces"] for i in json.load(f)["images"]], [i["faces"] for i in report["images"]])
            single = subprocess.run([CLI, "detect", "--json", "--threads", "1", "--model", BLAZEFACE, "--out",
                                     os.path.join(d, "drawn"), *images], capture_output=True, text=True, timeout=600)
            self.assertEqual(single.returncode, 0, single.stderr)
            expected = [json.loads(line) for line in single.stdout.splitlines()]

        # Two worker processes, neither of them this one, did the work.
        pids = {w["pid"] for w in report["workers"]}
        self.assertEqual(len(report["workers"]), 2, report["workers"])
        self.assertEqual(len(pids), 2)
        self.assertNotIn(os.getpid(), pids)
        self.assertEqual([r["image"] for r in report["images"]], images)
        total = 0
        for result, faces in zip(report["images"], expected):
            name = os.path.basename(result["image"])
            self.assertIn(result["worker_pid"], pids, name)
            self.assertNotIn("error", result, name)
            self.assertEqual(len(result["faces"]), len(faces), f"{name}: {result['faces']} vs {faces}")
            for got, want in zip(result["faces"], faces):
                for k in ("x1", "y1", "x2", "y2"):
                    self.assertAlmostEqual(got[k], want[k], delta=0.0051, msg=f"{name} {k}")
                self.assertAlmostEqual(got["score"], want["score"], delta=0.000051, msg=name)
                for (gx, gy), (wx, wy) in zip(got["landmarks"], want["landmarks"]):
                    self.assertAlmostEqual(gx, wx, delta=0.0051, msg=name)
                    self.assertAlmostEqual(gy, wy, delta=0.0051, msg=name)
            total += len(faces)
        # The comparison is not vacuous: the astronaut and her mirror image have a face each, and the photo
        # without people has none.
        self.assertGreaterEqual(total, 2)
        self.assertEqual(len(expected[0]), 1)
        self.assertEqual(len(expected[1]), 1)
        self.assertEqual(expected[4], [])


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    CLI, PYTHONPATH = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    try:
        import distributed  # noqa: F401
    except ImportError as e:
        print(f"SKIP: Dask distributed is not importable ({e}); install Debian's python3-distributed "
              "(scripts/install_deps.sh does)")
        sys.exit(77)
    unittest.main(argv=sys.argv[:1])
