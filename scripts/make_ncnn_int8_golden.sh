#!/usr/bin/env bash
# Quantises RetinaFace-MobileNet0.25 (real weights, ../shared/models/mnet.25-opt) with ncnn's own quantiser
# and saves ncnn's own results on it, for tests/models/test_ncnn_int8_golden.py, into
# ${NINEGRID_CACHE:-<repo>/.cache}/models/ncnn_int8/:
#   mnet25_int8.{param,bin}  ncnn2table (KL calibration on skimage's sample images at 320x320) + ncnn2int8
#   input.npy                the astronaut at 320x320, RGB 0..255 (what the model takes, no mean or norm)
#   blobs.npz                every blob of ncnn's int8 run on it (ncnn_int8/ncnn_dump_blobs.cpp, linked
#                            with that ncnn): float32, or int8 for a requantised layer output
# Needs a built ncnn with its tools: NCNN_SRC (source tree) and NCNN_BUILD (its CMake build, with
# tools/quantize/ncnn2table, ncnn2int8 and src/libncnn.a). Skipped when those are missing.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${NINEGRID_CACHE:-$REPO/.cache}"
SHARED="${NINEGRID_SHARED:-$REPO/../shared}"
NCNN_SRC="${NCNN_SRC:-/work/ncnn-src}"
NCNN_BUILD="${NCNN_BUILD:-/work/ncnn-build}"
PYTHON=/usr/bin/python3
OUT="$CACHE/models/ncnn_int8"
SIZE=320

log() { echo "[make_ncnn_int8_golden] $*"; }

if [[ -f "$OUT/blobs.npz" ]]; then
  log "present: $OUT"
  exit 0
fi
for f in "$NCNN_BUILD/tools/quantize/ncnn2table" "$NCNN_BUILD/tools/quantize/ncnn2int8" "$NCNN_BUILD/src/libncnn.a" \
         "$NCNN_SRC/src/net.h" "$SHARED/models/mnet.25-opt.param"; do
  if [[ ! -f "$f" ]]; then
    log "skipped: $f not found (set NCNN_SRC, NCNN_BUILD, NINEGRID_SHARED)"
    exit 0
  fi
done

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
log "building ncnn_dump_blobs against $NCNN_BUILD"
g++ -O2 -std=c++17 -fopenmp -I"$NCNN_SRC/src" -I"$NCNN_BUILD/src" "$REPO/scripts/ncnn_int8/ncnn_dump_blobs.cpp" \
  "$NCNN_BUILD/src/libncnn.a" -lpthread -o "$WORK/ncnn_dump_blobs"

# Calibration images: skimage's colour samples (the Debian package's data folder).
"$PYTHON" - "$WORK" "$SIZE" <<'PY'
import os, sys
import numpy as np
import skimage.data
from PIL import Image
work, size = sys.argv[1], int(sys.argv[2])
folder = os.path.dirname(skimage.data.__file__)
names = ["astronaut.png", "chelsea.png", "coffee.png", "hubble_deep_field.jpg", "motorcycle_left.png", "rocket.jpg"]
with open(os.path.join(work, "images.txt"), "w") as f:
    for n in names:
        f.write(os.path.join(folder, n) + "\n")
img = Image.fromarray(skimage.data.astronaut()).convert("RGB").resize((size, size), Image.BILINEAR)
x = np.asarray(img, np.float32).transpose(2, 0, 1)[None].copy()
np.save(os.path.join(work, "input.npy"), x)
PY

log "ncnn2table (KL) on $(wc -l < "$WORK/images.txt") images"
(cd "$WORK" && "$NCNN_BUILD/tools/quantize/ncnn2table" "$SHARED/models/mnet.25-opt.param" "$SHARED/models/mnet.25-opt.bin" \
  images.txt mnet25.table "mean=[0,0,0]" "norm=[1,1,1]" "shape=[$SIZE,$SIZE,3]" pixel=RGB thread=1 method=kl \
  > table.log 2>&1) || { cat "$WORK/table.log"; exit 1; }
log "ncnn2int8"
"$NCNN_BUILD/tools/quantize/ncnn2int8" "$SHARED/models/mnet.25-opt.param" "$SHARED/models/mnet.25-opt.bin" \
  "$WORK/mnet25_int8.param" "$WORK/mnet25_int8.bin" "$WORK/mnet25.table" > "$WORK/int8.log" 2>&1 \
  || { cat "$WORK/int8.log"; exit 1; }

# Every blob the param names (the tops of its layers).
mapfile -t BLOBS < <("$PYTHON" - "$WORK/mnet25_int8.param" <<'PY'
import sys
lines = open(sys.argv[1]).read().split("\n")[2:]
for line in lines:
    f = line.split()
    if len(f) < 4 or f[0] == "Input":
        continue
    nb, nt = int(f[2]), int(f[3])
    for top in f[4 + nb:4 + nb + nt]:
        print(top)
PY
)
mkdir -p "$WORK/blobs"
log "ncnn's int8 run: ${#BLOBS[@]} blobs"
"$WORK/ncnn_dump_blobs" "$WORK/mnet25_int8.param" "$WORK/mnet25_int8.bin" "$WORK/input.npy" data "$WORK/blobs" "${BLOBS[@]}"
"$PYTHON" - "$WORK" <<'PY'
import os, sys
import numpy as np
work = sys.argv[1]
d = os.path.join(work, "blobs")
np.savez_compressed(os.path.join(work, "blobs.npz"), **{f[:-4]: np.load(os.path.join(d, f)) for f in os.listdir(d)})
PY

mkdir -p "$OUT.tmp"
cp "$WORK/mnet25_int8.param" "$WORK/mnet25_int8.bin" "$WORK/input.npy" "$WORK/mnet25.table" "$OUT.tmp/"
mv "$WORK/blobs.npz" "$OUT.tmp/blobs.npz"
rm -rf "$OUT" && mv "$OUT.tmp" "$OUT"
log "done: $OUT"
