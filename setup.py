"""Builds the Python package `ninegrid` with CMake: `pip install --no-build-isolation .` (see pyproject.toml).

The extension module, the engine it links (libninegrid.so.*, found through RPATH $ORIGIN) and the default face
model are installed into the package directory by CMake's `python_package` install component
(cmake/install.cmake); setuptools adds __init__.py and makes the wheel.

Environment:
  NINEGRID_CMAKE_BUILD_DIR  an already configured (and built) ninegrid build tree to take the module from,
                            instead of configuring a new one (tests/install/test_pip_install.py uses the
                            suite's own build)
  NINEGRID_JOBS             parallel build jobs (default 2)
"""
import os
import re
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
PREBUILT = os.environ.get("NINEGRID_CMAKE_BUILD_DIR")
# setuptools' own build files: never the source tree's build/ itself (the usual CMake build directory).
BUILD_BASE = os.path.join(os.path.abspath(PREBUILT) if PREBUILT else os.path.join(ROOT, "build"), "pip")


def project_version():
    """The one version number: project(ninegrid VERSION x.y.z) in CMakeLists.txt."""
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        match = re.search(r"project\(\s*ninegrid\s+VERSION\s+([0-9]+\.[0-9]+\.[0-9]+)", f.read())
    if not match:
        raise RuntimeError("no project(ninegrid VERSION x.y.z) in CMakeLists.txt")
    return match.group(1)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        package_dir = os.path.dirname(os.path.abspath(self.get_ext_fullpath(ext.name)))
        jobs = os.environ.get("NINEGRID_JOBS", "2")
        if PREBUILT:
            build_dir = os.path.abspath(PREBUILT)
        else:
            build_dir = os.path.join(os.path.abspath(self.build_temp), "cmake")
            subprocess.run(["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
                            "-DNINEGRID_BUILD_TESTS=OFF", "-DPython3_EXECUTABLE=" + sys.executable], check=True)
        subprocess.run(["cmake", "--build", build_dir, "--target", "ninegrid_python", "-j", jobs], check=True)
        subprocess.run(["cmake", "--install", build_dir, "--component", "python_package",
                        "--prefix", os.path.dirname(package_dir)], check=True)
        # A wheel holds no symlinks: keep one file, under the soname the module asks for.
        for name in os.listdir(package_dir):
            path = os.path.join(package_dir, name)
            if name.startswith("libninegrid.so") and os.path.islink(path):
                target = os.path.realpath(path)
                os.unlink(path)
                os.replace(target, path)


os.makedirs(BUILD_BASE, exist_ok=True)
setup(
    version=project_version(),
    ext_modules=[Extension("ninegrid._ninegrid", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": BUILD_BASE}, "egg_info": {"egg_base": BUILD_BASE}},
    zip_safe=False,
)
