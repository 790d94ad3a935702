"""`cmake --install` into a temporary prefix, then use it as a user would (the install_consumer test):
  - the installed CLI runs from another directory with no environment help, finds its library (RPATH) and
    its default face model (PREFIX/share/ninegrid/...), and finds the same faces as the build tree's CLI;
  - examples/consumer/ (C++, find_package(ninegrid)) builds against the prefix, and its outputs for
    RetinaFace-MobileNet0.25 on the astronaut photo match the reference implementation's golden files;
  - examples/consumer/run_raw.c (C API) builds with pkg-config alone and matches the same golden file;
  - every interface reports the version in CMakeLists.txt.

usage: test_install.py --build BUILD --source SRC --shared SHARED --version X.Y.Z --cmake CMAKE --cc CC --cxx CXX
                       [--flags "FLAGS"]   (FLAGS: the sanitizer flags the library was built with)
"""
import argparse
import glob
import json
import os
import shlex
import subprocess
import sys
import tempfile
import unittest

import numpy as np

ASTRONAUT = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png"
FACE_MODEL = "face_detection_front_128x128_barracuda.onnx"
ARGS = None


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise AssertionError(f"{shlex.join(cmd)} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return r.stdout


def clean_env(**extra):
    """The environment of a user who has set nothing for ninegrid."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("NINEGRID_CACHE", "NINEGRID_BLAZEFACE_MODEL", "LD_LIBRARY_PATH", "PKG_CONFIG_PATH")}
    env.update(extra)
    return env


def astronaut_chw():
    from skimage import io
    return np.ascontiguousarray(io.imread(ASTRONAUT).transpose(2, 0, 1)[None].astype(np.float32))


def assert_matches_golden(test, got, name):
    ref = np.load(os.path.join(ARGS.shared, "models", "mnet.25-golden", name + ".npy"))
    test.assertEqual(got.size, ref.size, name)
    scale = max(1.0, float(np.abs(ref).max()))
    np.testing.assert_allclose(got.reshape(ref.shape), ref, rtol=0, atol=1e-4 * scale, err_msg=name)


class InstalledPrefixTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="ninegrid-install-")
        cls.prefix = os.path.join(cls.tmp.name, "prefix")
        run([ARGS.cmake, "--install", ARGS.build, "--prefix", cls.prefix])
        pcs = glob.glob(os.path.join(cls.prefix, "lib*", "**", "pkgconfig", "ninegrid.pc"), recursive=True)
        if len(pcs) != 1:
            raise AssertionError(f"expected one ninegrid.pc under {cls.prefix}, found {pcs}")
        cls.pkgconfig_dir = os.path.dirname(pcs[0])
        cls.libdir = os.path.dirname(cls.pkgconfig_dir)
        cls.cli = os.path.join(cls.prefix, "bin", "ninegrid")
        cls.model_dir = os.path.join(cls.prefix, "share", "ninegrid", "models", "blazeface")
        cls.elsewhere = os.path.join(cls.tmp.name, "elsewhere")  # a working directory unrelated to both trees
        os.makedirs(cls.elsewhere)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_layout(self):
        for rel in ("include/ninegrid/ninegrid.h", "include/ninegrid/ninegrid_c.h", "include/ninegrid/version.h",
                    "include/ninegrid/detect.h", "include/ninegrid/tensor.h", "include/ninegrid/npy.h"):
            self.assertTrue(os.path.isfile(os.path.join(self.prefix, rel)), rel)
        major, minor, _ = ARGS.version.split(".")
        soname = os.path.join(self.libdir, f"libninegrid.so.{major}.{minor}")
        self.assertTrue(os.path.exists(soname), soname)
        self.assertTrue(os.path.exists(os.path.join(self.libdir, "libninegrid.so")), "the link-time name")
        for name in ("ninegrid-config.cmake", "ninegrid-config-version.cmake", "ninegridTargets.cmake"):
            self.assertTrue(os.path.isfile(os.path.join(self.libdir, "cmake", "ninegrid", name)), name)
        self.assertTrue(os.path.isfile(os.path.join(self.model_dir, FACE_MODEL)), "default face model")
        self.assertTrue(os.path.isfile(os.path.join(self.model_dir, "LICENSE")), "the model's licence")
        self.assertFalse(glob.glob(os.path.join(self.prefix, "**", "_ninegrid*"), recursive=True),
                         "the Python component is for setup.py only")

    def test_cli_runpath_is_relative(self):
        dynamic = run(["readelf", "-d", self.cli])
        runpath = [line for line in dynamic.splitlines() if "RUNPATH" in line or "RPATH" in line]
        self.assertEqual(len(runpath), 1, dynamic)
        self.assertIn("[$ORIGIN/", runpath[0])
        self.assertNotIn(os.path.abspath(ARGS.build), runpath[0])

    def test_cli_version(self):
        out = run([self.cli, "--version"], cwd=self.elsewhere, env=clean_env())
        self.assertEqual(out.strip(), "ninegrid " + ARGS.version)

    def test_cli_detect_uses_installed_model(self):
        installed = os.path.realpath(os.path.join(self.model_dir, FACE_MODEL))
        help_text = run([self.cli, "detect", "--help"], cwd=self.elsewhere, env=clean_env())
        self.assertIn("here:\n" + " " * 26 + installed + "\n", help_text)
        out_dir = os.path.join(self.tmp.name, "faces")
        got = run([self.cli, "detect", ASTRONAUT, "--json", "--threads", "1", "--out", out_dir],
                  cwd=self.elsewhere, env=clean_env())
        build_cli = os.path.join(ARGS.build, "ninegrid")
        want = run([build_cli, "detect", ASTRONAUT, "--json", "--threads", "1", "--model", installed, "--out", out_dir])
        faces = json.loads(got.splitlines()[0])
        self.assertEqual(len(faces), 1, got)  # one astronaut
        self.assertEqual(faces, json.loads(want.splitlines()[0]))
        self.assertTrue(os.path.isfile(os.path.join(out_dir, "astronaut_faces.png")))

    def test_cmake_consumer_matches_golden(self):
        build = os.path.join(self.tmp.name, "consumer-build")
        run([ARGS.cmake, "-S", os.path.join(ARGS.source, "examples", "consumer"), "-B", build,
             "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_PREFIX_PATH=" + self.prefix, "-DCMAKE_CXX_COMPILER=" + ARGS.cxx,
             "-DCMAKE_CXX_FLAGS=" + ARGS.flags, "-DCMAKE_EXE_LINKER_FLAGS=" + ARGS.flags], env=clean_env())
        run([ARGS.cmake, "--build", build], env=clean_env())
        out_dir = os.path.join(self.tmp.name, "consumer-out")
        os.makedirs(out_dir)
        param = os.path.join(ARGS.shared, "models", "mnet.25-opt.param")
        out = run([os.path.join(build, "run_on_photo"), param, ASTRONAUT, out_dir], cwd=self.elsewhere,
                  env=clean_env())
        self.assertEqual(out.splitlines()[0], f"ninegrid {ARGS.version} (headers {ARGS.version})")
        goldens = os.listdir(os.path.join(ARGS.shared, "models", "mnet.25-golden"))
        self.assertEqual(len(goldens), 9)
        for name in goldens:
            assert_matches_golden(self, np.load(os.path.join(out_dir, name)), name[:-4])

    def test_pkg_config_c_consumer_matches_golden(self):
        env = clean_env(PKG_CONFIG_PATH=self.pkgconfig_dir)
        self.assertEqual(run(["pkg-config", "--modversion", "ninegrid"], env=env).strip(), ARGS.version)
        flags = shlex.split(run(["pkg-config", "--cflags", "--libs", "ninegrid"], env=env))
        exe = os.path.join(self.tmp.name, "run_raw")
        # pkg-config gives -L; where to find the library at run time is the program's choice (here an RPATH).
        run([ARGS.cc, *shlex.split(ARGS.flags), os.path.join(ARGS.source, "examples", "consumer", "run_raw.c"),
             *flags, "-Wl,-rpath," + self.libdir, "-o", exe], env=env)
        image = astronaut_chw()
        raw_in = os.path.join(self.tmp.name, "astronaut.f32")
        raw_out = os.path.join(self.tmp.name, "stride16.f32")
        image.tofile(raw_in)
        name = "face_rpn_cls_prob_reshape_stride16"
        param = os.path.join(ARGS.shared, "models", "mnet.25-opt.param")
        out = run([exe, param, raw_in, "x".join(map(str, image.shape)), name, raw_out], cwd=self.elsewhere,
                  env=clean_env())
        self.assertEqual(out.splitlines()[0], f"ninegrid {ARGS.version} (headers {ARGS.version})")
        assert_matches_golden(self, np.fromfile(raw_out, dtype=np.float32), name)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    for a in ("--build", "--source", "--shared", "--version", "--cmake", "--cc", "--cxx"):
        parser.add_argument(a, required=True)
    parser.add_argument("--flags", default="")
    ARGS, rest = parser.parse_known_args()
    for name in ("build", "source", "shared"):  # the programs run from another directory
        setattr(ARGS, name, os.path.abspath(getattr(ARGS, name)))
    unittest.main(argv=[sys.argv[0], "-v", *rest])
