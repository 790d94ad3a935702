#!/usr/bin/env bash
# Builds ninegrid and runs its whole test suite with CTest.
#   bash scripts/test.sh              Release build in build/
#   bash scripts/test.sh --sanitize   AddressSanitizer + UndefinedBehaviorSanitizer build in build-asan/
#   bash scripts/test.sh --tsan       ThreadSanitizer build in build-tsan/
# Installs missing dependencies first and generates the whole-model test models when they are missing.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JOBS="${NINEGRID_JOBS:-2}"

sanitize=0
tsan=0
for arg in "$@"; do
  case "$arg" in
    --sanitize) sanitize=1 ;;
    --tsan) tsan=1 ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) echo "test.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

log() { echo "[test] $*"; }

# Instrumented builds compile at -O1 with line tables only: sanitizer reports keep file:line and every load
# and store stays instrumented, at a fraction of -O2 -g's compile time (CI builds the library five times).
INSTRUMENTED_FLAGS=("-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
                    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG")

if ((sanitize && tsan)); then
  echo "test.sh: --sanitize and --tsan need separate builds; give one" >&2
  exit 2
elif ((tsan)); then
  BUILD="${NINEGRID_BUILD_DIR:-$REPO/build-tsan}"
  CMAKE_FLAGS=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DNINEGRID_TSAN=ON "${INSTRUMENTED_FLAGS[@]}")
  TEST_TIMEOUT=1800
elif ((sanitize)); then
  BUILD="${NINEGRID_BUILD_DIR:-$REPO/build-asan}"
  CMAKE_FLAGS=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DNINEGRID_SANITIZE=ON "${INSTRUMENTED_FLAGS[@]}")
  # Per-test limit: sanitised reference kernels on whole models are several times slower.
  TEST_TIMEOUT=1800
else
  BUILD="${NINEGRID_BUILD_DIR:-$REPO/build}"
  CMAKE_FLAGS=(-DCMAKE_BUILD_TYPE=Release)
  TEST_TIMEOUT=600
fi

log "installing dependencies"
bash "$REPO/scripts/install_deps.sh"

log "configuring and building ${CMAKE_FLAGS[*]} in $BUILD"
# Ninja for a fresh build directory (it keeps both cores busy to the end of a build, and its .ninja_log
# gives each file's compile time); an existing directory keeps the generator it was made with.
GENERATOR=()
if [[ ! -f "$BUILD/CMakeCache.txt" ]] && command -v ninja >/dev/null 2>&1; then
  GENERATOR=(-G Ninja)
fi
cmake -S "$REPO" -B "$BUILD" "${GENERATOR[@]}" "${CMAKE_FLAGS[@]}"
cmake --build "$BUILD" -j"$JOBS"

log "generating test models (skipped when present)"
bash "$REPO/scripts/make_test_models.sh"

if ((sanitize)); then
  # Leak checking needs ptrace-free LeakSanitizer support, which some containers lack: probe it with a tiny
  # sanitised program and turn leak detection off only where it cannot run.
  leaks=1
  probe_dir="$(mktemp -d)"
  echo 'int main() { return 0; }' >"$probe_dir/probe.c"
  if cc -fsanitize=address "$probe_dir/probe.c" -o "$probe_dir/probe" 2>/dev/null &&
     ! ASAN_OPTIONS=detect_leaks=1 "$probe_dir/probe" >/dev/null 2>&1; then
    leaks=0
    log "LeakSanitizer does not work here: running with detect_leaks=0"
  fi
  rm -rf "$probe_dir"
  export ASAN_OPTIONS="detect_leaks=$leaks:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  log "ASAN_OPTIONS=$ASAN_OPTIONS"
fi
if ((tsan)); then
  # Any report fails the test that produced it.
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"
  log "TSAN_OPTIONS=$TSAN_OPTIONS"
fi

log "running ctest (-j$JOBS, per-test timeout ${TEST_TIMEOUT}s)"
cd "$BUILD"
ctest --output-on-failure -j"$JOBS" --timeout "$TEST_TIMEOUT"
