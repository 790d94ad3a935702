#!/usr/bin/env python3
"""Judges each engine's int8 model against the float model on photos as well as on compare.py's check input:
cosine (lowest over the outputs) of ninegrid's QDQ file, ncnn's and MNN's own int8 models, each against ONNX
Runtime on the float model, per input.

  bench/peers/int8_cosines.py --qdq-dir DIR [--models mobilenet_v2,retinaface640,...] [--images a.png,b.png]
                              [--peers ncnn,mnn] [--peers-dir DIR] [--ninegrid build/ninegrid]

--qdq-dir holds ninegrid's int8 files as NAME_int8.onnx (`ninegrid quantize` output). Inputs: "pattern" is
what compare.py's conversion check feeds (ORT's generated 0..1 pattern made pixel-like); each image is
stretched to the model's input size, RGB, with the model's mean and scale (bench/peers/peers.py PREPROCESS), as
the quantisers were told. Images default to three of the calibration photos in <peers-dir>/calibration: every
engine calibrated on them, so they show how each quantiser fits what it saw, not how it generalises.
Needs NumPy and scikit-image (python3-skimage); run it under the build lock.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
from skimage import io, transform

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from compare import CACHE, MODELS, ROOT  # noqa: E402
import peers as peer_lib  # noqa: E402


def photo_input(path, model):
    """The model's input made from one photo: stretched to its size, RGB, (pixel - mean) * norm, NCHW."""
    w, h, pre = peer_lib.PREPROCESS[model]
    img = io.imread(path)[..., :3].astype(np.float64)
    img = transform.resize(img, (h, w), order=1, preserve_range=True, anti_aliasing=False)
    x = (img - np.array(pre["mean"])) * np.array(pre["norm"])
    return x.transpose(2, 0, 1)[None].astype(np.float32)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--qdq-dir", required=True, help="ninegrid's int8 files, NAME_int8.onnx")
    ap.add_argument("--models", default="mobilenet_v2,resnet18,resnet50,retinaface640")
    ap.add_argument("--images", default="astronaut.png,chelsea.png,coffee.png",
                    help="comma-separated paths, or names in <peers-dir>/calibration")
    ap.add_argument("--peers", default="ncnn,mnn")
    ap.add_argument("--peers-dir", default=None)
    ap.add_argument("--ninegrid", default=os.path.join(ROOT, "build", "ninegrid"))
    args = ap.parse_args()
    pdir = peer_lib.peers_dir(CACHE, args.peers_dir)
    peer_names = peer_lib.parse_peers(args.peers)
    images = [i if os.path.isabs(i) else os.path.join(pdir, "calibration", i) for i in args.images.split(",") if i]
    ort_runner = os.path.join(ROOT, "bench", "ort_runner.js")
    engines = ["ninegrid"] + [peer_lib.label(p) for p in peer_names]
    print("| model | input | " + " | ".join(engines) + " |")
    print("| --- | --- | " + " | ".join("---:" for _ in engines) + " |")
    for m in [m for m in args.models.split(",") if m]:
        if m not in MODELS or m not in peer_lib.PREPROCESS:
            sys.exit(f"unknown model '{m}' or no preprocessing known for it")
        float_path, shape = os.path.join(CACHE, MODELS[m][0]), MODELS[m][1]
        qdq = os.path.join(args.qdq_dir, m + "_int8.onnx")
        with tempfile.TemporaryDirectory(prefix="ng-int8-cos-") as tmp:
            pattern_dir = os.path.join(tmp, "pattern")
            ort = ["node", ort_runner, float_path, "--runs", "0", "--warmup", "0"]
            subprocess.run(ort + ["--save-inputs", pattern_dir] + (["--shape", shape] if shape else []), check=True,
                           capture_output=True)
            peer_lib.pixel_like_inputs(pattern_dir, m)
            names = [f for f in os.listdir(pattern_dir) if f.endswith(".npy")]
            if len(names) != 1:
                sys.exit(f"{m}: one image input expected, ORT saved {names}")
            inputs = [("pattern", pattern_dir)]
            for i, image in enumerate(images):
                d = os.path.join(tmp, f"image{i}")
                os.makedirs(d)
                np.save(os.path.join(d, names[0]), photo_input(image, m))
                inputs.append((os.path.basename(image), d))
            for label, d in inputs:
                given = ["--input", names[0][:-4] + "=" + os.path.join(d, names[0])]
                ref = os.path.join(d, "ort")
                subprocess.run(ort + given + ["--save-outputs", ref], check=True, capture_output=True)
                out = os.path.join(d, "ninegrid")
                results = [peer_lib.run_and_compare([args.ninegrid, "run", qdq, "--threads", "1", "--output-dir", out]
                                                    + given, ref, out, 0.0)]
                for p in peer_names:
                    files = peer_lib.model_files(pdir, p, m + "_int8")
                    results.append(peer_lib.check(p, d, ref, d, [peer_lib.runner(pdir, p)] + files + ["--threads", "1"],
                                                  0.0) if files else ("not converted", None, []))
                cells = [f"{w:.4f}" if w is not None else s for s, w, _ in results]
                print(f"| {m}_int8 | {label} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
