#!/usr/bin/env bash
# One command on a fresh Debian 12 machine: install what ninegrid needs, build it (Release, into build/),
# and run the main job: face detection on the astronaut photo that ships with Debian's python3-skimage,
# printing the faces found and drawing them into out/astronaut_faces.png.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${NINEGRID_BUILD_DIR:-$REPO/build}"
JOBS="${NINEGRID_JOBS:-2}"
PHOTO=/usr/lib/python3/dist-packages/skimage/data/astronaut.png

log() { echo "[setup] $*"; }

log "installing dependencies"
bash "$REPO/scripts/install_deps.sh"

log "configuring and building (Release) in $BUILD"
cmake -S "$REPO" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD" -j"$JOBS"

log "running: ninegrid detect $PHOTO --out out/"
cd "$REPO"
"$BUILD/ninegrid" detect "$PHOTO" --out out/
log "done: see out/astronaut_faces.png"
