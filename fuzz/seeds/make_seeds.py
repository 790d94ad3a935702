#!/usr/bin/python3
"""Writes the seed corpora of the fuzz harnesses, one folder per harness, under OUT:

  onnx_load_fuzzer/  single-op models (onnx_ops.py) and windows of the real ONNX models found in the
                     cache (onnx_windows.py)
  onnx_run_fuzzer/   the single-op models, and windows cut down to small images and few weights
  ncnn_load_fuzzer/  small generated ncnn models and the real params of ../shared, each as param NUL bin
  ncnn_bin_fuzzer/   the real .bin of the fixed param, whole and truncated
  npy_fuzzer/        .npy files (npy_files.py)
  image_fuzzer/      PNG, JPEG, BMP, GIF, TGA, PNM, PSD and HDR images (images.py)

Real models are optional: what is missing is skipped with a note, so a fresh machine gets at least the
generated seeds. Usage: make_seeds.py OUT --shared DIR --cache DIR [--ncnn-param FILE]
"""
import argparse
import glob
import hashlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import images  # noqa: E402
import ncnn_models  # noqa: E402
import npy_files  # noqa: E402
import onnx_ops  # noqa: E402
import onnx_windows  # noqa: E402

# The real ONNX models windows are cut from, relative to the cache (scripts/make_test_models.sh and
# scripts/install_deps.sh put them there).
REAL_ONNX = ["models/retinaface_mnet25.onnx", "models/torchvision/*.onnx", "npm/blazeface/package/ONNX/*.onnx",
             "npm/ocr/package/assets/*.onnx"]
# Real ncnn params in ../shared; ncnn_load_fuzzer gets each with at most this much of its .bin.
REAL_NCNN = ["mnet.25-opt", "squeezenet_v1.1"]
NCNN_BIN_PREFIX = 48 * 1024


def write(folder, name, data):
    """Writes one seed; returns its size. Names carry a short hash so reruns overwrite, not duplicate."""
    os.makedirs(folder, exist_ok=True)
    digest = hashlib.sha1(data).hexdigest()[:8]
    with open(os.path.join(folder, "%s-%s" % (name, digest)), "wb") as f:
        f.write(data)
    return len(data)


def onnx_seeds(out, cache):
    ops = [(name, m.SerializeToString()) for name, m in onnx_ops.all_models()]
    real = sorted(p for pattern in REAL_ONNX for p in glob.glob(os.path.join(cache, pattern)))
    if not real:
        print("[seeds] no real ONNX models under %s: single-op seeds only" % cache)
    count = 0
    for harness, small in (("onnx_load_fuzzer", False), ("onnx_run_fuzzer", True)):
        models = list(ops)
        for path in real:
            base = os.path.splitext(os.path.basename(path))[0]
            try:
                models += [("%s_%s" % (base, name), m.SerializeToString())
                           for name, m in onnx_windows.windows(path, small=small)]
            except Exception as e:  # one unreadable model must not cost the others
                print("[seeds] skipping %s: %s" % (path, e))
        for name, data in models:
            write(os.path.join(out, harness), name, data)
        count += len(models)
    return count


def ncnn_seeds(out, shared, ncnn_param):
    folder = os.path.join(out, "ncnn_load_fuzzer")
    count = 0
    for name, param, weights in ncnn_models.generated_models():
        write(folder, name, ncnn_models.joined(param, weights))
        count += 1
    for base in REAL_NCNN:
        param_path = os.path.join(shared, "models", base + ".param")
        if not os.path.exists(param_path):
            print("[seeds] %s not found: skipped" % param_path)
            continue
        param = open(param_path).read()
        weights = open(os.path.join(shared, "models", base + ".bin"), "rb").read()
        write(folder, base, ncnn_models.joined(param, weights[:NCNN_BIN_PREFIX]))
        count += 1

    bin_path = os.path.splitext(ncnn_param)[0] + ".bin"
    if os.path.exists(bin_path):
        weights = open(bin_path, "rb").read()
        folder = os.path.join(out, "ncnn_bin_fuzzer")
        write(folder, "real", weights)
        write(folder, "half", weights[:len(weights) // 2])
        write(folder, "empty", b"")
    else:
        print("[seeds] %s not found: ncnn_bin_fuzzer starts from nothing" % bin_path)
    return count


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--shared", required=True, help="the shared/ folder with models/*.param, *.bin")
    parser.add_argument("--cache", required=True, help="NINEGRID_CACHE: models/ and npm/ of the test models")
    parser.add_argument("--ncnn-param", help="the .param ncnn_bin_fuzzer loads (default: shared mnet.25)")
    args = parser.parse_args()
    ncnn_param = args.ncnn_param or os.path.join(args.shared, "models", "mnet.25-opt.param")

    n_onnx = onnx_seeds(args.out, args.cache)
    n_ncnn = ncnn_seeds(args.out, args.shared, ncnn_param)
    n_npy = sum(1 for name, data in npy_files.npy_files() if write(os.path.join(args.out, "npy_fuzzer"), name, data))
    n_img = sum(1 for name, data in images.images() if write(os.path.join(args.out, "image_fuzzer"), name, data))
    print("[seeds] onnx %d, ncnn %d, npy %d, images %d -> %s" % (n_onnx, n_ncnn, n_npy, n_img, args.out))


if __name__ == "__main__":
    main()
