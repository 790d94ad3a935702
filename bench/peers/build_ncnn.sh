#!/usr/bin/env bash
# Builds ncnn from a source tree given by path (nothing is downloaded), with what bench/compare.py --peers
# ncnn and bench/peers/convert_models.py need, into OUT:
#   OUT/build/            ncnn's CMake build: the library (src/libncnn.a) and its tools
#   OUT/bin/ncnn_runner   bench/peers/ncnn_runner.cpp linked with that library
#   OUT/bin/onnx2ncnn     ncnn's ONNX converter (tools/onnx; ncnn's CMake no longer builds it, so it is
#                         compiled here from its source and onnx.proto with Debian's protobuf)
#   OUT/bin/ncnnoptimize, ncnn2table, ncnn2int8   links to ncnn's own tools in OUT/build
#   OUT/build-info.txt    the source commit, compiler and options
#
#   bench/peers/build_ncnn.sh --src DIR --out DIR [--build-dir DIR] [--jobs N] [--commit SHA]
#
# --commit names the source's commit in build-info.txt when the tree has no .snapshot-commit (written by
# extract_snapshot.sh).
# Run it under the machine's build lock: flock /tmp/ng-build.lock bench/peers/build_ncnn.sh ...
#
# Options are ncnn's defaults for an x86-64 Release build, which is what its own benchmark (benchncnn) is built
# with: NCNN_RUNTIME_CPU with every x86 extension the compiler has (SSE2, AVX, FMA, XOP, F16C, AVX2, AVX-512,
# AVX-512 VNNI/BF16/FP16, AVX-VNNI), dispatched by what the CPU reports at run time; OpenMP threads. Left out:
# Vulkan, tests, examples, benchncnn, the Python module, and every tool the benchmark does not use.
# NCNN_VERSION (ncnn's date-like version, compiled into every object) is pinned to the source's file date so
# that a rebuild of the same tree is identical and ccache can reuse it; set NCNN_VERSION to override.
# Build dependencies (Debian): cmake, g++, libprotobuf-dev, protobuf-compiler (scripts/install_deps.sh).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SRC="" OUT="" BUILD="" JOBS=2 COMMIT=""
while (($#)); do
  case "$1" in
    --src) SRC="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --build-dir) BUILD="$2"; shift 2 ;;
    --jobs) JOBS="$2"; shift 2 ;;
    --commit) COMMIT="$2"; shift 2 ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "build_ncnn.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -n "$SRC" && -n "$OUT" ]] || { echo "build_ncnn.sh: --src and --out are required (--help)" >&2; exit 2; }
[[ -f "$SRC/src/net.h" && -f "$SRC/tools/onnx/onnx2ncnn.cpp" ]] ||
  { echo "build_ncnn.sh: $SRC is not an ncnn source tree (src/net.h, tools/onnx/onnx2ncnn.cpp)" >&2; exit 2; }
# ncnnoptimize's model writer includes the tests' random number generator; a tree extracted without tests/
# would fail only after the library's half-hour build.
[[ -f "$SRC/tests/prng.h" ]] ||
  { echo "build_ncnn.sh: $SRC lacks tests/prng.h, which tools/modelwriter.h includes (extract it too)" >&2; exit 2; }
SRC="$(cd "$SRC" && pwd)"
mkdir -p "$OUT/bin"
OUT="$(cd "$OUT" && pwd)"
BUILD="${BUILD:-$OUT/build}"
mkdir -p "$BUILD"
BUILD="$(cd "$BUILD" && pwd)"
NCNN_VERSION="${NCNN_VERSION:-$(date -u -r "$SRC/CMakeLists.txt" +%Y%m%d)}"

log() { echo "[build_ncnn] $*" >&2; }
launcher=()
CXX_CMD=(g++)
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  CXX_CMD=(ccache g++)
fi

start=$(date +%s)
log "configure $SRC -> $BUILD (NCNN_VERSION=$NCNN_VERSION)"
# Unix Makefiles, as ncnn's own build instructions use.
cmake -S "$SRC" -B "$BUILD" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" \
  -DNCNN_VERSION="$NCNN_VERSION" \
  -DNCNN_VULKAN=OFF -DNCNN_BUILD_TESTS=OFF -DNCNN_BUILD_EXAMPLES=OFF -DNCNN_BUILD_BENCHMARK=OFF \
  -DNCNN_BUILD_TOOLS=ON -DNCNN_PYTHON=OFF -DNCNN_SHARED_LIB=OFF -DNCNN_OPENMP=ON >"$BUILD/configure.log" 2>&1 ||
  { tail -30 "$BUILD/configure.log" >&2; exit 1; }

log "build ncnn, ncnnoptimize, ncnn2table, ncnn2int8 (-j$JOBS)"
cmake --build "$BUILD" -j "$JOBS" --target ncnn ncnnoptimize ncnn2table ncnn2int8 >"$BUILD/build.log" 2>&1 ||
  { grep -B2 -A10 -m3 "error" "$BUILD/build.log" >&2 || tail -30 "$BUILD/build.log" >&2; exit 1; }
ln -sf "$BUILD/tools/ncnnoptimize" "$OUT/bin/ncnnoptimize"
ln -sf "$BUILD/tools/quantize/ncnn2table" "$OUT/bin/ncnn2table"
ln -sf "$BUILD/tools/quantize/ncnn2int8" "$OUT/bin/ncnn2int8"

log "onnx2ncnn (tools/onnx, with Debian's protobuf)"
mkdir -p "$BUILD/onnx2ncnn"
protoc --proto_path="$SRC/tools/onnx" --cpp_out="$BUILD/onnx2ncnn" "$SRC/tools/onnx/onnx.proto"
"${CXX_CMD[@]}" -O2 -std=c++17 -I"$BUILD/onnx2ncnn" "$SRC/tools/onnx/onnx2ncnn.cpp" "$BUILD/onnx2ncnn/onnx.pb.cc" \
  $(pkg-config --cflags --libs protobuf) -lpthread -o "$OUT/bin/onnx2ncnn"

log "ncnn_runner"
"${CXX_CMD[@]}" -O2 -std=c++17 -fopenmp -I"$SRC/src" -I"$BUILD/src" -I"$REPO/bench/peers" \
  "$REPO/bench/peers/ncnn_runner.cpp" "$BUILD/src/libncnn.a" -lpthread -o "$OUT/bin/ncnn_runner"

{
  echo "ncnn source: $SRC (commit ${COMMIT:-$(cat "$SRC/.snapshot-commit" 2>/dev/null || echo unknown)})"
  echo "NCNN_VERSION: $NCNN_VERSION"
  echo "compiler: $(g++ --version | head -1)"
  echo "options: $(grep -E '^NCNN_(RUNTIME_CPU|AVX|AVX2|AVX512|AVX512VNNI|AVX512BF16|AVX512FP16|AVXVNNI|FMA|F16C|XOP|OPENMP|INT8|VULKAN):' "$BUILD/CMakeCache.txt" | tr '\n' ' ')"
  echo "built: $(date -u +%FT%TZ) in $(($(date +%s) - start)) s"
} >"$OUT/build-info.txt"
cat "$OUT/build-info.txt" >&2
