#!/usr/bin/env bash
# Builds MNN from a source tree given by path (nothing is downloaded), with what bench/compare.py --peers mnn
# and bench/peers/convert_models.py need, into OUT:
#   OUT/build/             MNN's CMake build: libMNN.so (and its separately built parts), MNNConvert,
#                          quantized.out
#   OUT/bin/mnn_runner     bench/peers/mnn_runner.cpp linked with that library
#   OUT/bin/MNNConvert, quantized.out   links into OUT/build
#   OUT/build-info.txt     the source commit, compiler and options
#
#   bench/peers/build_mnn.sh --src DIR --out DIR [--build-dir DIR] [--jobs N] [--commit SHA] [--fp32-only]
#
# --fp32-only leaves out the quantiser and the training library it needs (about 80 files fewer); running the
# script again without it adds them to the same build.
#
# --commit names the source's commit in build-info.txt when the tree has no .snapshot-commit (written by
# extract_snapshot.sh).
# Run it under the machine's build lock: flock /tmp/ng-build.lock bench/peers/build_mnn.sh ...
#
# Options: MNN's x86-64 Release defaults (SSE, AVX2 with FMA, its own thread pool) plus what MNN's own
# benchmark build for PCs sets (benchmark/scripts/build.sh: MNN_SEP_BUILD=OFF, one libMNN.so, and
# MNN_AVX512=ON), and AVX-512 VNNI for int8 (MNN_AVX512_VNNI, named explicitly: its documented default is OFF,
# the CMake option's ON). The converter (MNN_BUILD_CONVERTER) uses Debian's protobuf instead of compiling MNN's copy
# (MNN_BUILD_PROTOBUFFER=OFF); the quantiser (MNN_BUILD_QUANTOOLS) brings MNN's training library with it.
# Left out: GPU backends, tests, demos, benchmark, tools/cpp, LLM parts. Only the targets MNN, MNNConvert
# and quantized.out are built.
# Build dependencies (Debian): cmake, ninja-build, g++, libprotobuf-dev, protobuf-compiler
# (scripts/install_deps.sh).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SRC="" OUT="" BUILD="" JOBS=2 COMMIT="" QUANT=ON
while (($#)); do
  case "$1" in
    --src) SRC="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --build-dir) BUILD="$2"; shift 2 ;;
    --jobs) JOBS="$2"; shift 2 ;;
    --commit) COMMIT="$2"; shift 2 ;;
    --fp32-only) QUANT=OFF; shift ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    *) echo "build_mnn.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -n "$SRC" && -n "$OUT" ]] || { echo "build_mnn.sh: --src and --out are required (--help)" >&2; exit 2; }
[[ -f "$SRC/include/MNN/Interpreter.hpp" && -f "$SRC/tools/converter/CMakeLists.txt" ]] ||
  { echo "build_mnn.sh: $SRC is not an MNN source tree (include/MNN/Interpreter.hpp, tools/converter)" >&2; exit 2; }
SRC="$(cd "$SRC" && pwd)"
mkdir -p "$OUT/bin"
OUT="$(cd "$OUT" && pwd)"
BUILD="${BUILD:-$OUT/build}"
mkdir -p "$BUILD"
BUILD="$(cd "$BUILD" && pwd)"

log() { echo "[build_mnn] $*" >&2; }
launcher=()
CXX_CMD=(g++)
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  CXX_CMD=(ccache g++)
fi

start=$(date +%s)
log "configure $SRC -> $BUILD"
cmake -S "$SRC" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" \
  -DMNN_AVX2=ON -DMNN_AVX512=ON -DMNN_AVX512_VNNI=ON -DMNN_SEP_BUILD=OFF -DMNN_USE_THREAD_POOL=ON -DMNN_OPENMP=OFF \
  -DMNN_BUILD_CONVERTER=ON -DMNN_BUILD_PROTOBUFFER=OFF -DMNN_BUILD_QUANTOOLS=$QUANT \
  -DMNN_BUILD_TOOLS=OFF -DMNN_BUILD_DEMO=OFF -DMNN_BUILD_TEST=OFF -DMNN_BUILD_BENCHMARK=OFF -DMNN_BUILD_LLM=OFF \
  -DMNN_BUILD_TRAIN=OFF -DMNN_EVALUATION=OFF -DMNN_OPENCL=OFF -DMNN_VULKAN=OFF -DMNN_CUDA=OFF -DMNN_KLEIDIAI=OFF \
  >"$BUILD/configure.log" 2>&1 || { tail -30 "$BUILD/configure.log" >&2; exit 1; }

targets=(MNN MNNConvert)
[[ $QUANT == ON ]] && targets+=(quantized.out)
log "build ${targets[*]} (-j$JOBS)"
cmake --build "$BUILD" -j "$JOBS" --target "${targets[@]}" >"$BUILD/build.log" 2>&1 ||
  { grep -B2 -A10 -m3 "error" "$BUILD/build.log" >&2 || tail -30 "$BUILD/build.log" >&2; exit 1; }
ln -sf "$BUILD/MNNConvert" "$OUT/bin/MNNConvert"
[[ $QUANT == ON ]] && ln -sf "$BUILD/quantized.out" "$OUT/bin/quantized.out"

log "mnn_runner"
"${CXX_CMD[@]}" -O2 -std=c++17 -I"$SRC/include" -I"$REPO/bench/peers" "$REPO/bench/peers/mnn_runner.cpp" \
  -L"$BUILD" -lMNN -Wl,-rpath,"$BUILD" -lpthread -o "$OUT/bin/mnn_runner"

{
  echo "MNN source: $SRC (commit ${COMMIT:-$(cat "$SRC/.snapshot-commit" 2>/dev/null || echo unknown)})"
  echo "compiler: $(g++ --version | head -1)"
  echo "quantiser: $QUANT"
  echo "options: $(grep -E '^MNN_(AVX2|AVX512|AVX512_VNNI|USE_SSE|USE_THREAD_POOL|OPENMP|BUILD_SHARED_LIBS|SEP_BUILD|LOW_MEMORY|SUPPORT_BF16):' "$BUILD/CMakeCache.txt" | tr '\n' ' ')"
  echo "built: $(date -u +%FT%TZ) in $(($(date +%s) - start)) s"
} >"$OUT/build-info.txt"
cat "$OUT/build-info.txt" >&2
