#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/) with clang, ASan and UBSan into build-fuzz/, writes their seed
# corpora, runs each for a bounded time and reports executions, coverage, crashes, hangs and
# out-of-memory findings per harness. Exits 1 if any harness crashed or hung.
#   bash scripts/fuzz.sh                   CI: 60 s per harness, NINEGRID_JOBS (2) harnesses at a time
#   bash scripts/fuzz.sh --seconds 1800    the long run: 30 minutes per harness
#   bash scripts/fuzz.sh --only onnx_load_fuzzer,npy_fuzzer --seconds 300
# Seeds come from generated models, images and .npy files, from ../shared (or $NINEGRID_SHARED) and from
# the test models in ${NINEGRID_CACHE:-.cache} when present. Everything goes under build-fuzz/: the
# growing corpus in corpus/HARNESS, each run's logs and crash/hang/oom inputs in runs/TIME/HARNESS.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${NINEGRID_FUZZ_BUILD_DIR:-$REPO/build-fuzz}"
CACHE="${NINEGRID_CACHE:-$REPO/.cache}"
SHARED="${NINEGRID_SHARED:-$REPO/../shared}"
JOBS="${NINEGRID_JOBS:-2}"
PYTHON=/usr/bin/python3
ALL_HARNESSES=(onnx_load_fuzzer ncnn_load_fuzzer ncnn_bin_fuzzer npy_fuzzer image_fuzzer onnx_run_fuzzer
               tuning_cache_fuzzer)

seconds=60
only=""
while (($#)); do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "fuzz.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "fuzz.sh: --seconds needs a whole number" >&2; exit 2; }
harnesses=("${ALL_HARNESSES[@]}")
[[ -n "$only" ]] && IFS=, read -r -a harnesses <<<"$only"

log() { echo "[fuzz] $*"; }

# Limits per harness: the longest input libFuzzer may build (bytes), and the seconds one input may take
# before it counts as a hang. Loader inputs stay small enough to mutate quickly (the seeds are at most
# 48 KB); ncnn_bin_fuzzer's input is a whole .bin (mnet.25's is 834 KB).
declare -A MAX_LEN=([onnx_load_fuzzer]=65536 [onnx_run_fuzzer]=65536 [ncnn_load_fuzzer]=65536
                    [ncnn_bin_fuzzer]=1048576 [npy_fuzzer]=4096 [image_fuzzer]=16384 [tuning_cache_fuzzer]=16384)
declare -A TIMEOUT=([onnx_load_fuzzer]=10 [onnx_run_fuzzer]=10 [ncnn_load_fuzzer]=10
                    [ncnn_bin_fuzzer]=10 [npy_fuzzer]=5 [image_fuzzer]=10 [tuning_cache_fuzzer]=10)
# Memory: libFuzzer reports an input as out-of-memory when one allocation exceeds MALLOC_MB or the process
# RSS_MB. No small input should need more; the image decoder's own limit (64 Mpixel) is 192 MB of RGB.
MALLOC_MB=1024
RSS_MB=2048

for h in "${harnesses[@]}"; do
  [[ -n "${MAX_LEN[$h]:-}" ]] || { echo "fuzz.sh: unknown harness '$h' (have: ${ALL_HARNESSES[*]})" >&2; exit 2; }
done

start=$(date +%s)
log "installing dependencies"
bash "$REPO/scripts/install_deps.sh"

log "configuring and building the harnesses with clang in $BUILD"
# Ninja for a fresh build directory, as in scripts/test.sh.
GENERATOR=()
if [[ ! -f "$BUILD/CMakeCache.txt" ]] && command -v ninja >/dev/null 2>&1; then GENERATOR=(-G Ninja); fi
# -O1 with line tables: sanitizer reports with file:line, at a fraction of -O2 -g's build time.
# Without the x86 int8 conv kernels (int8 convs run the reference kernel): they were most of this build's
# compile time, and the suite's ASan and TSan builds test them.
cmake -S "$REPO" -B "$BUILD" "${GENERATOR[@]}" -DNINEGRID_FUZZ=ON -DNINEGRID_X86_INT8_CONV_KERNELS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only"
cmake --build "$BUILD" -j"$JOBS" --target "${harnesses[@]}"
built=$(date +%s)

log "writing seed corpora"
rm -rf "$BUILD/seeds"
"$PYTHON" "$REPO/fuzz/seeds/make_seeds.py" "$BUILD/seeds" --shared "$SHARED" --cache "$CACHE"
# The tuning cache harness writes its own seeds: what the tuner writes for its fixture on this build, and
# every kernel family in place of each entry's plan (fuzz/tuning_cache_fuzzer.cpp).
if [[ " ${harnesses[*]} " == *" tuning_cache_fuzzer "* ]]; then
  mkdir -p "$BUILD/seeds/tuning_cache_fuzzer"
  NINEGRID_FUZZ_TUNING_SEEDS="$BUILD/seeds/tuning_cache_fuzzer" ASAN_OPTIONS=detect_leaks=0 \
    "$BUILD/fuzz/tuning_cache_fuzzer" 2>&1 | tail -1
fi

# LeakSanitizer needs ptrace-free support that some containers lack (as in scripts/test.sh).
leaks=1
probe_dir="$(mktemp -d)"
echo 'int main() { return 0; }' >"$probe_dir/probe.c"
if clang -fsanitize=address "$probe_dir/probe.c" -o "$probe_dir/probe" 2>/dev/null &&
   ! ASAN_OPTIONS=detect_leaks=1 "$probe_dir/probe" >/dev/null 2>&1; then
  leaks=0
  log "LeakSanitizer does not work here: fuzzing with -detect_leaks=0"
fi
rm -rf "$probe_dir"
# allocator_may_return_null: an allocation beyond what the machine can give fails as it would without
# ASan (posix_memalign returns ENOMEM, which the engine reports as an Error), instead of ASan aborting.
export ASAN_OPTIONS="detect_leaks=$leaks:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1"

LIMITS=(-rss_limit_mb=$RSS_MB -malloc_limit_mb=$MALLOC_MB -detect_leaks=$leaks)
RUN="$BUILD/runs/$(date +%Y%m%d-%H%M%S)"
# One harness's run (in the background: the harnesses run $JOBS at a time, each fuzzer being one process).
fuzz_one() {
  local h="$1" dir="$RUN/$1"
  # Fork mode: the fuzzing runs in a child process that is restarted after an out-of-memory input, a
  # timeout or a crash, so one expected resource finding does not end the run; every such input is kept
  # in artifacts/ and classified afterwards (fuzz/triage.py). New inputs go to the first corpus folder.
  # The outer timeout only guards against a fuzzer that does not stop on its own.
  timeout --signal=INT --kill-after=30 $((seconds + seconds / 2 + 60)) \
    "$BUILD/fuzz/$h" -fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 \
      -max_total_time="$seconds" -timeout="${TIMEOUT[$h]}" -max_len="${MAX_LEN[$h]}" "${LIMITS[@]}" \
      -artifact_prefix="$dir/artifacts/" "$BUILD/corpus/$h" "$BUILD/seeds/$h" >"$dir/fuzz.log" 2>&1 || true
}
running=0
for h in "${harnesses[@]}"; do
  dir="$RUN/$h"
  mkdir -p "$dir/artifacts" "$BUILD/corpus/$h" "$BUILD/seeds/$h"
  log "$h: ${seconds}s (max_len ${MAX_LEN[$h]}, timeout ${TIMEOUT[$h]}s) -> $dir/fuzz.log"
  if ((running >= JOBS)); then wait -n || true; running=$((running - 1)); fi
  fuzz_one "$h" &
  running=$((running + 1))
done
wait || true
for h in "${harnesses[@]}"; do
  grep -E '^#[0-9]+: cov:' "$RUN/$h/fuzz.log" | tail -1 | sed "s/^/$h: /" || log "$h: no status line (see $RUN/$h/fuzz.log)"
done

status=0
"$PYTHON" "$REPO/fuzz/triage.py" "$RUN" "$BUILD" -- -timeout=30 "${LIMITS[@]}" || status=$?
log "build $((built - start))s, fuzzing and triage $(( $(date +%s) - built ))s, total $(( $(date +%s) - start ))s"
exit $status
