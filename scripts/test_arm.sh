#!/usr/bin/env bash
# Cross-builds ninegrid for AArch64 (Debian's g++-aarch64-linux-gnu, cmake/toolchains/aarch64-linux-gnu.cmake,
# into build-arm/) and runs its tests under qemu-user twice: emulating a Cortex-A72 (NEON without the
# dot-product extension: the Raspberry Pi 4) and `-cpu max` (with it), so the HWCAP dispatch takes both
# paths. One cross build serves both runs. The binaries run on Debian's arm64 runtime (multiarch libc6:arm64,
# no qemu -L: see the toolchain file).
#   bash scripts/test_arm.sh            what CI runs (below)
#   bash scripts/test_arm.sh --all      every GoogleTest test on both CPUs
#
# What runs under which emulated CPU (CI runs the default; its time is in bench/REPORT.md, section Arm64):
#   -cpu cortex-a72 (HWCAP: asimd, no asimddp; dispatch picks neon), the Raspberry Pi 4's core:
#     - every GoogleTest test in ninegrid_tests (tests/unit) but seven (LARGE_GRAPH_TESTS below): the NEON
#       kernels against their reference twins, the ops, the graph passes and planner, the importers, and the
#       whole models against PyTorch, ONNX Runtime's and ncnn's outputs; the AVX2/AVX-512 cases skip
#       themselves on this CPU. Left out: the graph-level tests (optimised against unoptimised graph, tuned
#       plans, released float weights) on ResNet-50, ResNet-18 and GoogLeNet. They test passes that do not
#       depend on the ISA, and their unoptimised side runs the plain reference loops, so under emulation they
#       took 153 of the suite's 371 s; the x86 builds run them, and on this CPU the same models still run
#       against PyTorch (TorchvisionVsPyTorch) and every smaller model through the same graph-level tests;
#     - `ninegrid detect` on the astronaut photo through a qemu wrapper of the CLI (BlazeFace, and
#       RetinaFace-MobileNet0.25 from its ncnn files): two of tests/cli/test_detect_cli.py's cases;
#     - RetinaFace 320 quantised by `ninegrid quantize` under emulation, and `ninegrid detect` with it finding
#       the faces fp32 finds (tests/cli/test_quantize.py, RetinaFaceQuantizeTest.test_detect_finds_the_same_faces).
#   -cpu max (asimddp present; dispatch picks dotprod, whose fp32 kernels are the NEON ones), a subset to
#   stay within CI's time, chosen as what differs between the two CPUs or matters most:
#     - the CPU detection and instruction-set caps (CpuFeatures.*, checked against the CPU qemu was told);
#     - every NEON kernel against its reference twin over the randomised shapes the x86 kernels are tested
#       on (the parameterised ConvX86, IndirectX86, WinogradX86, PoolBlockedX86, SoftmaxX86 and UnaryX86
#       suites, FastConv2d.*, ConvSelectNeon.*, PoolBlockedFast.*), and the int8 dotprod and neon kernels
#       against the integer reference bit for bit (QConvX86.*, QConvDepthwiseX86.*, QdqGemm.*);
#     - whole models through the NEON kernels: RetinaFace-MobileNet0.25 (the paper's network) against
#       ncnn's golden outputs and against PyTorch, MobileNetV2 and ResNet-18 against PyTorch;
#     - the same `ninegrid detect` cases, fp32 and int8.
#   Not under emulation: the CTest-only tests (Python, the C API, ONNX's node tests, installing, the CLI's
#   other cases); `--all` runs every GoogleTest test on both CPUs.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${NINEGRID_ARM_BUILD_DIR:-$REPO/build-arm}"
JOBS="${NINEGRID_JOBS:-2}"

all=0
for arg in "$@"; do
  case "$arg" in
    --all) all=1 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "test_arm.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

log() { echo "[test_arm] $*"; }

log "installing dependencies (with the AArch64 cross toolchain)"
bash "$REPO/scripts/install_deps.sh" --arm

log "cross-building into $BUILD"
# Ninja for a fresh build directory, as in scripts/test.sh.
GENERATOR=()
if [[ ! -f "$BUILD/CMakeCache.txt" ]] && command -v ninja >/dev/null 2>&1; then GENERATOR=(-G Ninja); fi
cmake -S "$REPO" -B "$BUILD" "${GENERATOR[@]}" -DCMAKE_TOOLCHAIN_FILE="$REPO/cmake/toolchains/aarch64-linux-gnu.cmake" \
  -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD" -j"$JOBS" --target ninegrid_tests ninegrid_cli

log "generating test models (skipped when present)"
bash "$REPO/scripts/make_test_models.sh"

KERNELS='CpuFeatures.*:Isa/ConvX86.*:Isa/IndirectX86.*:Isa/WinogradX86.*:Isas/PoolBlockedX86.*'
KERNELS+=':Isas/SoftmaxX86.*:Isas/UnaryX86.*:FastConv2d.*:ConvSelectNeon.*:PoolBlockedFast.*'
KERNELS+=':QConvX86.*:QConvDepthwiseX86.*:QdqGemm.*'
MODELS='RetinaFaceBlocked.*:RetinaFaceOnnxVsPyTorch.*:TorchvisionVsPyTorch.MobileNetV2*:TorchvisionVsPyTorch.ResNet18*'
SELECTED="$KERNELS:$MODELS"
LARGE_GRAPH_TESTS='Models/OptimizedModel.MatchesUnoptimisedAndIsFused/resnet50'
LARGE_GRAPH_TESTS+=':Models/OptimizedModel.MatchesUnoptimisedAndIsFused/resnet18'
LARGE_GRAPH_TESTS+=':Models/OptimizedModel.MatchesUnoptimisedAndIsFused/googlenet'
LARGE_GRAPH_TESTS+=':Models/TunedTorchvision.MatchesPyTorch/resnet50:Models/TunedTorchvision.MatchesPyTorch/resnet18'
LARGE_GRAPH_TESTS+=':Models/TunedTorchvision.MatchesPyTorch/googlenet'
LARGE_GRAPH_TESTS+=':ReleasedWeights.SessionsOfAModelWithoutItsFloatWeightsMatchPyTorch'

# The CLI through qemu, for the command-line detection test.
WRAPPER="$BUILD/ninegrid-qemu"
printf '#!/bin/sh\nexec qemu-aarch64 "%s" "$@"\n' "$BUILD/ninegrid" >"$WRAPPER"
chmod +x "$WRAPPER"

status=0
for cpu in cortex-a72 max; do
  case "$cpu" in
    cortex-a72) expected=neon FILTER="*-$LARGE_GRAPH_TESTS" ;;
    max) expected=dotprod FILTER="$SELECTED" ;;
  esac
  if ((all)); then FILTER='*'; fi
  log "QEMU_CPU=$cpu: ninegrid_tests --gtest_filter=$FILTER"
  start=$SECONDS
  if ! QEMU_CPU="$cpu" NINEGRID_EXPECTED_HARDWARE_ISA="$expected" \
      qemu-aarch64 "$BUILD/tests/ninegrid_tests" --gtest_filter="$FILTER" --gtest_brief=1 \
        --gtest_output="xml:$BUILD/gtest-$cpu.xml"; then
    status=1
  fi
  # The slowest tests under emulation, for whoever next has to fit this step into CI's time.
  /usr/bin/python3 - "$BUILD/gtest-$cpu.xml" <<'PY' || true
import sys
import xml.etree.ElementTree as ET
cases = [(float(c.get("time", 0)), c.get("classname") + "." + c.get("name")) for c in ET.parse(sys.argv[1]).iter("testcase")]
print("[test_arm] slowest: " + ", ".join(f"{name} {t:.1f} s" for t, name in sorted(cases, reverse=True)[:8]))
PY
  log "QEMU_CPU=$cpu: ninegrid detect on the astronaut photo (BlazeFace, and mnet.25 from ncnn files)"
  if ! QEMU_CPU="$cpu" /usr/bin/python3 "$REPO/tests/cli/test_detect_cli.py" "$WRAPPER" \
      DetectCliTest.test_default_model_json DetectCliTest.test_mnet_ncnn; then
    status=1
  fi
  log "QEMU_CPU=$cpu: ninegrid quantize, then detect with the int8 RetinaFace against fp32 (same faces, IoU >= 0.9)"
  if ! QEMU_CPU="$cpu" /usr/bin/python3 "$REPO/tests/cli/test_quantize.py" "$WRAPPER" \
      RetinaFaceQuantizeTest.test_detect_finds_the_same_faces; then
    status=1
  fi
  log "QEMU_CPU=$cpu: $((SECONDS - start)) s"
done
if ((status)); then
  log "FAILED"
  exit 1
fi
log "all passed"
