#!/usr/bin/env bash
# Generates the models and reference outputs that the whole-model tests compare against, into
# ${NINEGRID_CACHE:-<repo>/.cache}/models/ (each export is skipped when its .onnx is already there):
#   torchvision/<name>.onnx + .input.npy + .expected.npy   nine torchvision classifiers, seeded random weights
#   retinaface_mnet25.onnx + .input.npy + .<output>.npy    RetinaFace-MobileNet0.25, real weights from shared/
#   retinaface_mnet25_320.onnx                             the same at 320x320, for bench/compare.py
#   quantized/<name>_{qdq,qoperator}.onnx                  ResNet-18, MobileNetV2, SqueezeNet 1.1 at 64x64
#                                                          quantised as ONNX Runtime's quantize_static writes
#                                                          them (scripts/quantize_like_ort.py; needs npm ORT)
#   ncnn_int8/                                             RetinaFace quantised by ncnn2table + ncnn2int8 and
#                                                          ncnn's blobs on it (scripts/make_ncnn_int8_golden.sh)
# Uses Debian's Python (/usr/bin/python3 with python3-torch, python3-torchvision, python3-onnx).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${NINEGRID_CACHE:-$REPO/.cache}"
SHARED="${NINEGRID_SHARED:-$REPO/../shared}"
PYTHON=/usr/bin/python3
MODELS="$CACHE/models"

log() { echo "[make_test_models] $*"; }

TORCHVISION_MODELS=(mobilenet_v2 mobilenet_v3_large resnet18 resnet50 shufflenet_v2_x1_0 efficientnet_b0
                    squeezenet1_1 googlenet regnet_y_400mf)
missing=()
for name in "${TORCHVISION_MODELS[@]}"; do
  [[ -f "$MODELS/torchvision/$name.onnx" ]] || missing+=("$name")
done
if ((${#missing[@]} == 0)); then
  log "torchvision models present in $MODELS/torchvision"
else
  log "exporting torchvision models: ${missing[*]}"
  "$PYTHON" "$REPO/scripts/export_torchvision.py" --cache "$CACHE" --only "${missing[@]}"
fi

if [[ -f "$MODELS/retinaface_mnet25.onnx" && -f "$MODELS/retinaface_mnet25_320.onnx" ]]; then
  log "RetinaFace export present: $MODELS/retinaface_mnet25.onnx"
elif [[ -f "$SHARED/models/mnet.25-opt.param" ]]; then
  log "exporting RetinaFace-MobileNet0.25 from $SHARED/models/mnet.25-opt.{param,bin}"
  "$PYTHON" "$REPO/scripts/export_retinaface.py" --cache "$CACHE" --shared "$SHARED"
else
  log "error: $SHARED/models/mnet.25-opt.param not found (shared/ must sit beside the repository," \
      "or set NINEGRID_SHARED)" >&2
  exit 1
fi
QUANTIZED=(resnet18:qdq resnet18:qoperator mobilenet_v2:qdq mobilenet_v2:qoperator squeezenet1_1:qdq
           squeezenet1_1:qoperator)
mkdir -p "$MODELS/quantized"
for spec in "${QUANTIZED[@]}"; do
  name=${spec%%:*} format=${spec##*:}
  out="$MODELS/quantized/${name}_$format.onnx"
  [[ -f "$out" ]] && continue
  log "quantising $name ($format) -> $out"
  NINEGRID_CACHE="$CACHE" "$PYTHON" "$REPO/scripts/quantize_like_ort.py" "$MODELS/torchvision/$name.onnx" "$out.tmp" \
    --format "$format"
  mv "$out.tmp" "$out"
done
# RetinaFace quantised by ncnn's own tools, and ncnn's run of it (skipped without a built ncnn).
NINEGRID_CACHE="$CACHE" NINEGRID_SHARED="$SHARED" "$REPO/scripts/make_ncnn_int8_golden.sh"
log "done"
