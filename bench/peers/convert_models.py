#!/usr/bin/env python3
"""Converts the benchmark's ONNX files (bench/compare.py's MODELS) to each peer's own format with the peer's own
tools, and with --int8 also quantises them with the peer's own quantiser on calibration images.

  bench/peers/convert_models.py [--peers ncnn,mnn] [--models retinaface640,mobilenet_v2,...] [--int8]
                                [--peers-dir DIR] [--calibration DIR] [--force] [--mnn-feature-method KL|EMA]

Needs the builds of bench/peers/build_{ncnn,mnn}.sh in the peers directory (--peers-dir, else $NINEGRID_PEERS,
else <cache>/peers); writes models/<peer>/NAME.* there (NAME_int8.* for the int8 models) with a log of each
tool's output beside them (NAME.log). A model already converted is skipped unless --force.

ncnn: onnx2ncnn, then ncnnoptimize (fuses BatchNorm, activations ..., fp32 storage: flag 0), as ncnn's own
      documentation converts ONNX models; int8: ncnn2table (KL) then ncnn2int8.
MNN:  MNNConvert -f ONNX; int8: quantized.out with a JSON config (KL for activations, MAX_ABS per-channel
      weights, MNN's defaults in its documentation; --mnn-feature-method EMA for its moving-average
      calibration, which MNN's example config uses: MNN has no one method that suits every model here, see
      bench/REPORT.md). The config is kept beside the model (NAME.quant.json); an int8 model whose config
      differs from the one asked for is quantised again.
Calibration: the images in --calibration (default: nine colour photos of Debian's python3-skimage, linked into
<peers-dir>/calibration), stretched to the model's input size, RGB, with the model's mean and scale
(PREPROCESS in bench/peers/peers.py: torchvision's for the classifiers and PP-OCR, none for RetinaFace), the
same preprocessing each quantiser is told. Models whose input is not 3-channel NCHW (BlazeFace's NHWC) are not quantised.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from compare import CACHE, EXTRA_MODELS, MODELS  # noqa: E402
import peers as peer_lib  # noqa: E402

CALIBRATION = peer_lib.PREPROCESS  # name -> (width, height, mean and norm applied to 0..255 RGB pixels)
SKIMAGE_PHOTOS = ["astronaut.png", "chelsea.png", "coffee.png", "hubble_deep_field.jpg", "ihc.png",
                  "motorcycle_left.png", "motorcycle_right.png", "retina.jpg", "rocket.jpg"]
SKIMAGE_DIRS = ["/usr/lib/python3/dist-packages/skimage/data", "/usr/share/python3-skimage/data"]


def log(msg):
    print(f"[convert_models] {msg}", file=sys.stderr)


def tool(cmd, logfile, cwd=None):
    """Runs one converter step, appending its output to logfile; raises with the log's tail on failure."""
    with open(logfile, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        r = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=cwd)
    if r.returncode != 0:
        tail = open(logfile).read().splitlines()[-15:]
        raise RuntimeError(f"{os.path.basename(cmd[0])} failed (exit {r.returncode}); {logfile}:\n" + "\n".join(tail))


def calibration_images(pdir, given):
    if given:
        files = sorted(os.path.join(given, f) for f in os.listdir(given)
                       if f.lower().endswith((".png", ".jpg", ".jpeg", ".bmp")))
        if not files:
            sys.exit(f"no images in {given}")
        return given, files
    src = next((d for d in SKIMAGE_DIRS if os.path.exists(os.path.join(d, SKIMAGE_PHOTOS[0]))), None)
    if not src:
        sys.exit("no calibration images: install python3-skimage (scripts/install_deps.sh) or pass --calibration DIR")
    out = os.path.join(pdir, "calibration")
    os.makedirs(out, exist_ok=True)
    for f in SKIMAGE_PHOTOS:
        link = os.path.join(out, f)
        if not os.path.lexists(link):
            os.symlink(os.path.join(src, f), link)
    return out, [os.path.join(out, f) for f in SKIMAGE_PHOTOS]


def convert_ncnn(bindir, onnx, out, name, calib, int8, force):
    param, binf, logfile = (os.path.join(out, name + s) for s in (".param", ".bin", ".log"))
    if force or not (os.path.exists(param) and os.path.exists(binf)):
        open(logfile, "w").close()
        raw_param, raw_bin = os.path.join(out, name + ".raw.param"), os.path.join(out, name + ".raw.bin")
        tool([os.path.join(bindir, "onnx2ncnn"), onnx, raw_param, raw_bin], logfile)
        tool([os.path.join(bindir, "ncnnoptimize"), raw_param, raw_bin, param, binf, "0"], logfile)
        os.remove(raw_param)
        os.remove(raw_bin)
        log(f"ncnn {name}: {param}")
    if not int8:
        return
    q_param, q_bin, table = (os.path.join(out, name + s) for s in ("_int8.param", "_int8.bin", ".table"))
    if not force and os.path.exists(q_param) and os.path.exists(q_bin):
        return
    w, h, pre = calib["size"]
    listfile = os.path.join(out, name + ".images.txt")
    with open(listfile, "w") as f:
        f.write("\n".join(calib["files"]) + "\n")
    fmt = lambda v: "[" + ",".join(f"{x:g}" for x in v) + "]"  # noqa: E731
    tool([os.path.join(bindir, "ncnn2table"), param, binf, listfile, table, "mean=" + fmt(pre["mean"]),
          "norm=" + fmt(pre["norm"]), f"shape=[{w},{h},3]", "pixel=RGB", "thread=2", "method=kl"], logfile)
    tool([os.path.join(bindir, "ncnn2int8"), param, binf, q_param, q_bin, table], logfile)
    log(f"ncnn {name}_int8: {q_param}")


MNN_FEATURE_METHODS = ("KL", "EMA")  # MNN's third, ADMM, crashes quantized.out at 4d40bdb on these models


def mnn_quant_config(calib, method):
    """quantized.out's JSON config: the model's preprocessing, the calibration images, and the activation
    method (weights: MAX_ABS, one scale per output channel)."""
    if method not in MNN_FEATURE_METHODS:
        raise ValueError(f"MNN feature method '{method}' (known: {', '.join(MNN_FEATURE_METHODS)})")
    w, h, pre = calib["size"]
    config = {"format": "RGB", "mean": pre["mean"], "normal": pre["norm"], "width": w, "height": h,
              "path": calib["dir"] + "/", "used_image_num": len(calib["files"]),
              "feature_quantize_method": method, "weight_quantize_method": "MAX_ABS"}
    if method == "EMA":
        # EMA turns on MNN's int8 Winograd for 3x3 convs by default; with it RetinaFace's outputs fall to
        # cosine 0.04 against the float model (0.99 without), so it stays off.
        config["winogradOpt"] = False
    return config


def convert_mnn(bindir, onnx, out, name, calib, int8, force, method="KL"):
    model, logfile = os.path.join(out, name + ".mnn"), os.path.join(out, name + ".log")
    if force or not os.path.exists(model):
        open(logfile, "w").close()
        tool([os.path.join(bindir, "MNNConvert"), "-f", "ONNX", "--modelFile", onnx, "--MNNModel", model,
              "--bizCode", "ninegrid"], logfile)
        if not os.path.exists(model):
            raise RuntimeError(f"MNNConvert wrote no {model}; see {logfile}")
        log(f"MNN {name}: {model}")
    if not int8:
        return
    q_model = os.path.join(out, name + "_int8.mnn")
    config, config_file = mnn_quant_config(calib, method), os.path.join(out, name + ".quant.json")
    if not force and os.path.exists(q_model) and os.path.exists(config_file):
        with open(config_file) as f:
            if json.load(f) == config:
                return
    with open(config_file, "w") as f:
        json.dump(config, f, indent=1)
    tool([os.path.join(bindir, "quantized.out"), model, q_model, config_file], logfile)
    log(f"MNN {name}_int8 ({method}): {q_model}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--peers", default="ncnn,mnn")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--int8", action="store_true", help="also quantise with each peer's own quantiser")
    ap.add_argument("--peers-dir", default=None)
    ap.add_argument("--calibration", default=None, help="directory of calibration images")
    ap.add_argument("--force", action="store_true", help="convert again even when the files exist")
    ap.add_argument("--mnn-feature-method", default="KL", choices=MNN_FEATURE_METHODS,
                    help="MNN's activation calibration (quantized.out's feature_quantize_method)")
    args = ap.parse_args()
    pdir = peer_lib.peers_dir(CACHE, args.peers_dir)
    names = [m for m in args.models.split(",") if m]
    known = dict(MODELS, **EXTRA_MODELS)
    for m in names:
        if m not in known:
            sys.exit(f"unknown model '{m}' (known: {', '.join(known)})")
    calib_dir, calib_files = calibration_images(pdir, args.calibration) if args.int8 else (None, [])

    failures = []
    for p in peer_lib.parse_peers(args.peers):
        bindir = os.path.join(pdir, p, "bin")
        if not os.path.isdir(bindir):
            sys.exit(f"{bindir} missing: build it with bench/peers/build_{p}.sh")
        out = os.path.join(pdir, "models", p)
        os.makedirs(out, exist_ok=True)
        for m in names:
            onnx = os.path.join(CACHE, known[m][0])
            if not os.path.exists(onnx):
                log(f"skip {m}: {onnx} missing")
                continue
            int8 = args.int8 and m in CALIBRATION
            if args.int8 and not int8:
                log(f"{p} {m}: no calibration preprocessing known (input not 3-channel NCHW): fp32 only")
            calib = {"size": CALIBRATION.get(m), "dir": calib_dir, "files": calib_files}
            try:
                if p == "ncnn":
                    convert_ncnn(bindir, onnx, out, m, calib, int8, args.force)
                else:
                    convert_mnn(bindir, onnx, out, m, calib, int8, args.force, args.mnn_feature_method)
            except RuntimeError as e:
                failures.append(f"{p} {m}: {e}")
                log(f"FAILED {p} {m}: {e}")
    if failures:
        sys.exit("conversion failed for: " + ", ".join(f.split(":")[0] for f in failures))


if __name__ == "__main__":
    main()
