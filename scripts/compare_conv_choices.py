#!/usr/bin/env python3
"""Compares two ninegrid builds' per-layer choices on the test set's models: every step's op, output layout
and algorithm as `ninegrid info MODEL --optimized --json` prints them, at each ISA cap this CPU has. A
refactor of the conv policy must leave the rule-based choices exactly as they were.

  scripts/compare_conv_choices.py --baseline OLD/ninegrid --ninegrid NEW/ninegrid [--isa avx512,avx2]
                                  [--extra-args '--no-tuning-cache']

Exits 1 and lists the differences when any layer differs; 0 when every model matches.
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.environ.get("NINEGRID_CACHE", os.path.join(ROOT, ".cache"))
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "models")

# (path, shape option or None)
MODELS = [
    (os.path.join(CACHE, "models/retinaface_mnet25.onnx"), "data=1x3x640x640"),
    (os.path.join(CACHE, "models/retinaface_mnet25_320.onnx"), "data=1x3x320x320"),
    (os.path.join(CACHE, "npm/blazeface/package/ONNX/face_detection_front_128x128_barracuda.onnx"), None),
    (os.path.join(CACHE, "npm/blazeface/package/ONNX/face_detection_back_256x256_barracuda.onnx"), None),
    (os.path.join(CACHE, "npm/ocr/package/assets/ch_PP-OCRv4_det_infer.onnx"), "x=1x3x640x640"),
    (os.path.join(CACHE, "npm/ocr/package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx"), "x=1x3x48x192"),
    (os.path.join(SHARED, "mnet.25-opt.param"), "data=1x3x640x640"),
    (os.path.join(SHARED, "squeezenet_v1.1.param"), "data=1x3x227x227"),
] + [(os.path.join(CACHE, "models/torchvision", name + ".onnx"), None)
     for name in ("mobilenet_v2", "mobilenet_v3_large", "resnet18", "resnet50", "shufflenet_v2_x1_0",
                  "efficientnet_b0", "squeezenet1_1", "googlenet", "regnet_y_400mf")] + [
    (os.path.join(CACHE, "models/quantized", name + ".onnx"), None)
    for name in ("resnet18_qdq", "mobilenet_v2_qdq", "squeezenet1_1_qdq")]


def layers(binary, model, shape, isa, extra):
    cmd = [binary, "info", model, "--optimized", "--json", "--isa", isa] + extra
    if shape:
        cmd += ["--shape", shape]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    info = json.loads(out)
    return [(l["name"], l["op"], l["layout"], l["algorithm"]) for l in info["layers"]]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", required=True)
    ap.add_argument("--ninegrid", default=os.path.join(ROOT, "build", "ninegrid"))
    ap.add_argument("--isa", default="avx512,avx2")
    ap.add_argument("--extra-args", default="", help="added to the new build's command line only")
    args = ap.parse_args()
    extra = args.extra_args.split()
    differences = 0
    compared = 0
    for model, shape in MODELS:
        if not os.path.exists(model):
            print(f"skip (missing): {model}")
            continue
        for isa in args.isa.split(","):
            old = layers(args.baseline, model, shape, isa, [])
            new = layers(args.ninegrid, model, shape, isa, extra)
            compared += 1
            convs = sum(1 for l in new if l[1] == "Conv")
            if old == new:
                print(f"same  {isa:7s} {os.path.basename(model)} ({len(new)} steps, {convs} convs)")
                continue
            differences += 1
            print(f"DIFF  {isa:7s} {os.path.basename(model)}")
            for i in range(max(len(old), len(new))):
                a = old[i] if i < len(old) else None
                b = new[i] if i < len(new) else None
                if a != b:
                    print(f"    was {a}\n    now {b}")
    print(f"{compared} model/ISA pairs compared, {differences} differ")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
