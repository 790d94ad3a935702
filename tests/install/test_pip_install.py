"""`pip install .` from the source tree into a fresh venv of Debian's python3 (--system-site-packages, no
build isolation, no package index), then the installed package is used from another directory with no
environment help (the pip_install test):
  - it is imported from the venv, not the build tree, and runs on the engine it carries (libninegrid.so.*
    inside the package, loaded from there);
  - RetinaFace-MobileNet0.25 on the astronaut photo matches the reference implementation's golden files;
  - detect() with the face model the package carries finds the faces the build tree's CLI finds;
  - ninegrid.__version__, the distribution's metadata and `ninegrid --version` all say CMakeLists.txt's version.
The module comes from the suite's own build tree (NINEGRID_CMAKE_BUILD_DIR, see setup.py), so nothing is
compiled again. Exits 77 (skipped) when the venv module cannot make a venv with pip (python3-venv missing).

usage: test_pip_install.py --build BUILD --source SRC --shared SHARED --version X.Y.Z
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

SKIP = 77
ASTRONAUT = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png"

# Runs inside the venv, from a directory outside both trees; prints one JSON object.
CHECK = r"""
import importlib.metadata, json, os, sys
import numpy as np
from skimage import io
import ninegrid

shared, = sys.argv[1:]
package = os.path.dirname(os.path.abspath(ninegrid.__file__))
with open("/proc/self/maps") as f:
    engines = sorted({line.split()[-1] for line in f if "libninegrid.so" in line})
image = np.ascontiguousarray(io.imread(%r).transpose(2, 0, 1)[None].astype(np.float32))
model = ninegrid.Model(os.path.join(shared, "models", "mnet.25-opt.param"), threads=1)
out = model.run({"data": image})
golden_dir = os.path.join(shared, "models", "mnet.25-golden")
worst = {}
for name in os.listdir(golden_dir):
    ref = np.load(os.path.join(golden_dir, name))
    got = out[name[:-4]].reshape(ref.shape)
    worst[name[:-4]] = float(np.abs(got - ref).max()) / max(1.0, float(np.abs(ref).max()))
face_model = ninegrid.default_face_model()
faces = ninegrid.detect(io.imread(%r), threads=1)
print(json.dumps({"package": package, "engines": engines, "version": ninegrid.__version__,
                  "dist_version": importlib.metadata.version("ninegrid"), "worst": worst,
                  "face_model": face_model, "faces": faces}))
""" % (ASTRONAUT, ASTRONAUT)


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        fail(f"{' '.join(cmd)} exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
    return r.stdout


def main():
    parser = argparse.ArgumentParser()
    for a in ("--build", "--source", "--shared", "--version"):
        parser.add_argument(a, required=True)
    args = parser.parse_args()
    for name in ("build", "source", "shared"):  # the programs run from another directory
        setattr(args, name, os.path.abspath(getattr(args, name)))
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "NINEGRID_CACHE", "NINEGRID_BLAZEFACE_MODEL", "LD_LIBRARY_PATH")}

    with tempfile.TemporaryDirectory(prefix="ninegrid-pip-") as tmp:
        venv = os.path.join(tmp, "venv")
        r = subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print("SKIP: /usr/bin/python3 -m venv failed (Debian's python3-venv missing? scripts/install_deps.sh "
                  "installs it):\n" + r.stdout + r.stderr)
            sys.exit(SKIP)
        python = os.path.join(venv, "bin", "python")
        run([python, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--no-cache-dir", "--quiet",
             args.source],
            env=dict(env, NINEGRID_CMAKE_BUILD_DIR=os.path.abspath(args.build)), cwd=tmp)

        got = json.loads(run([python, "-c", CHECK, os.path.abspath(args.shared)], env=env, cwd=tmp))
        site = os.path.realpath(venv)
        if not os.path.realpath(got["package"]).startswith(site + os.sep):
            fail(f"ninegrid imported from {got['package']}, not from the venv {venv}")
        if len(got["engines"]) != 1 or os.path.dirname(os.path.realpath(got["engines"][0])) != os.path.realpath(
                got["package"]):
            fail(f"the engine was loaded from {got['engines']}, not from the package {got['package']}")
        cli_version = run([os.path.join(args.build, "ninegrid"), "--version"]).strip()
        versions = {"ninegrid.__version__": got["version"], "package metadata": got["dist_version"],
                    "ninegrid --version": cli_version.removeprefix("ninegrid ")}
        for what, v in versions.items():
            if v != args.version:
                fail(f"{what} is {v}, CMakeLists.txt says {args.version}")
        for name, err in got["worst"].items():
            if not err <= 1e-4:
                fail(f"{name}: relative difference {err} to the golden file")
        if len(got["worst"]) != 9:
            fail(f"compared {len(got['worst'])} outputs, expected 9")
        if os.path.dirname(os.path.dirname(os.path.dirname(got["face_model"]))) != got["package"]:
            fail(f"default face model {got['face_model']} is not the one in the package {got['package']}")
        want = run([os.path.join(args.build, "ninegrid"), "detect", ASTRONAUT, "--json", "--threads", "1",
                    "--model", got["face_model"], "--out", os.path.join(tmp, "faces")])
        want_faces = json.loads(want.splitlines()[0])
        if len(got["faces"]) != 1 or len(want_faces) != 1:
            fail(f"expected one face (the astronaut): Python found {got['faces']}, the CLI {want_faces}")
        for key in ("x1", "y1", "x2", "y2"):
            if abs(got["faces"][0][key] - want_faces[0][key]) > 0.01:
                fail(f"{key}: Python {got['faces'][0][key]}, CLI {want_faces[0][key]}")
    print(f"ok: pip install . into a venv; version {args.version}; golden outputs and faces match")


if __name__ == "__main__":
    main()
