"""The benchmark peers besides ONNX Runtime (ncnn, MNN) for bench/compare.py --peers: where their runners and
converted models are, the command that times one, and the check that a conversion computes what ORT
computes. Plain Python (no NumPy): compare.py runs on any python3.

Layout under the peers directory (--peers-dir, else $NINEGRID_PEERS, else <cache>/peers):
  ncnn/bin/ncnn_runner        bench/peers/build_ncnn.sh
  mnn/bin/mnn_runner          bench/peers/build_mnn.sh
  models/ncnn/NAME.param/.bin bench/peers/convert_models.py (NAME_int8.*: ncnn's own int8 quantiser)
  models/mnn/NAME.mnn         bench/peers/convert_models.py (NAME_int8.mnn: MNN's quantized.out)
"""
import array
import math
import os
import re
import subprocess
import sys

PEERS = {
    # name: (label in tables, runner path in the peers dir, model file suffixes in models/<name>/)
    "ncnn": ("ncnn", os.path.join("ncnn", "bin", "ncnn_runner"), (".param", ".bin")),
    "mnn": ("MNN", os.path.join("mnn", "bin", "mnn_runner"), (".mnn",)),
}


IMAGENET = {"mean": [123.675, 116.28, 103.53], "norm": [0.017125, 0.017507, 0.017429]}
RAW = {"mean": [0.0, 0.0, 0.0], "norm": [1.0, 1.0, 1.0]}
# How each model's input is made from 0..255 RGB pixels, (pixel - mean) * norm, at (width, height): what the
# peers' quantisers are told (convert_models.py) and what the conversion check's input imitates.
PREPROCESS = {
    "retinaface640": (640, 640, RAW),
    "retinaface320": (320, 320, RAW),
    "ppocr_det": (640, 640, IMAGENET),
    "mobilenet_v2": (224, 224, IMAGENET),
    "resnet18": (224, 224, IMAGENET),
    "resnet50": (224, 224, IMAGENET),
}
for _name in ("efficientnet_b0", "googlenet", "mobilenet_v3_large", "regnet_y_400mf", "shufflenet_v2_x1_0",
              "squeezenet1_1"):
    PREPROCESS[_name] = (224, 224, IMAGENET)


def preprocess(model):
    """The PREPROCESS entry of a model or of the float model of an int8 row (NAME_int8), else None."""
    return PREPROCESS.get(model[:-len("_int8")] if model.endswith("_int8") else model)


def peers_dir(cache, given=None):
    return given or os.environ.get("NINEGRID_PEERS") or os.path.join(cache, "peers")


def parse_peers(text):
    names = [p.strip() for p in text.split(",") if p.strip()]
    for p in names:
        if p not in PEERS:
            sys.exit(f"unknown peer '{p}' (known: {', '.join(PEERS)})")
    return names


def runner(pdir, peer):
    return os.path.join(pdir, PEERS[peer][1])


def model_files(pdir, peer, model):
    """The converted model's files, or None when convert_models.py has not written them."""
    files = [os.path.join(pdir, "models", peer, model + s) for s in PEERS[peer][2]]
    return files if all(os.path.exists(f) for f in files) else None


def label(peer):
    """The peer's name in tables; other engines (ninegrid in the conversion check) by their own name."""
    return PEERS[peer][0] if peer in PEERS else peer


def read_npy(path):
    """(shape, values) of a float32 .npy, as ort_runner.js and the peer runners write them."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise ValueError(f"{path}: not a .npy file")
    if data[6] == 1:
        hlen, start = int.from_bytes(data[8:10], "little"), 10
    else:
        hlen, start = int.from_bytes(data[8:12], "little"), 12
    header = data[start:start + hlen].decode("latin1")
    descr = re.search(r"'descr':\s*'([^']+)'", header).group(1)
    if descr != "<f4":
        raise ValueError(f"{path}: dtype {descr}, expected <f4")
    shape = tuple(int(x) for x in re.search(r"'shape':\s*\(([^)]*)\)", header).group(1).split(",") if x.strip())
    values = array.array("f")
    values.frombytes(data[start + hlen:])
    if sys.byteorder != "little":
        values.byteswap()
    return shape, values


def write_npy(path, shape, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % (
        ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else ""))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    data = array.array("f", values)
    if sys.byteorder != "little":
        data.byteswap()
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode("latin1") + data.tobytes())


def pixel_like_inputs(inputs_dir, model):
    """Rescales the generated inputs ORT saved (uniform 0..1) of a model with known preprocessing to what its
    preprocessing makes of 0..255 pixels, so that int8 models see activations in their calibrated ranges.
    Only 3-channel NCHW inputs; returns whether any input changed."""
    pre = preprocess(model)
    changed = False
    for f in sorted(f for f in os.listdir(inputs_dir) if f.endswith(".npy")) if pre else []:
        path = os.path.join(inputs_dir, f)
        shape, values = read_npy(path)
        if len(shape) != 4 or shape[1] != 3:
            continue
        plane = shape[2] * shape[3]
        mean, norm = pre[2]["mean"], pre[2]["norm"]
        out = array.array("f", values)
        for i in range(len(out)):
            c = (i // plane) % 3
            out[i] = (values[i] * 255.0 - mean[c]) * norm[c]
        write_npy(path, shape, out)
        changed = True
    return changed


def cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    if na == 0 or nb == 0:
        return 1.0 if na == nb else 0.0
    return dot / (na * nb)


def compare_outputs(ref_dir, peer_dir):
    """Matches the peer's outputs to ORT's (by name, else by element count when that is unique) and returns
    [(ORT output name, cosine or None when the peer has no matching output)]. Outputs are compared as flat
    vectors: each engine keeps ONNX's element order (ncnn drops the batch dimension, MNN's host copy is NCHW)."""
    ref = {f[:-4]: read_npy(os.path.join(ref_dir, f)) for f in sorted(os.listdir(ref_dir)) if f.endswith(".npy")}
    got = {f[:-4]: read_npy(os.path.join(peer_dir, f)) for f in sorted(os.listdir(peer_dir)) if f.endswith(".npy")}
    out = []
    for name, (_, values) in ref.items():
        match = got.get(name)
        if match is None:
            same_size = [g for g in got.values() if len(g[1]) == len(values)]
            match = same_size[0] if len(same_size) == 1 and sum(len(r[1]) == len(values) for r in ref.values()) == 1 \
                else None
        if match is None or len(match[1]) != len(values):
            out.append((name, None))
        else:
            out.append((name, cosine(values, match[1])))
    return out


def check(peer, run_dir, ort_outputs, inputs_dir, cmd_prefix, min_cosine):
    """Runs the peer once on the inputs ORT ran on (inputs_dir) and compares its outputs with ORT's.
    Returns (status, min cosine or None, detail): status 'ok', 'mismatch' or 'failed'."""
    out_dir = os.path.join(run_dir, peer)
    os.makedirs(out_dir, exist_ok=True)
    cmd = list(cmd_prefix) + ["--runs", "0", "--warmup", "0", "--save-outputs", out_dir]
    for f in sorted(os.listdir(inputs_dir)):
        if f.endswith(".npy"):
            cmd += ["--input", f[:-4] + "=" + os.path.join(inputs_dir, f)]
    return run_and_compare(cmd, ort_outputs, out_dir, min_cosine)


def run_and_compare(cmd, ort_outputs, out_dir, min_cosine):
    """Runs cmd, which writes its outputs as .npy into out_dir, and compares them with ORT's (ort_outputs).
    Returns (status, min cosine or None, detail) as check() does."""
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return "failed", None, (r.stderr or r.stdout).strip().splitlines()[-1:] or ["exit " + str(r.returncode)]
    pairs = compare_outputs(ort_outputs, out_dir)
    missing = [n for n, c in pairs if c is None]
    if missing:
        return "mismatch", None, [f"no output matching {', '.join(missing)}"]
    worst_name, worst = min(pairs, key=lambda nc: nc[1])
    detail = [f"{len(pairs)} output(s), lowest {worst_name} (1 - cosine = {1 - worst:.1e})"]
    return ("ok" if worst >= min_cosine else "mismatch"), worst, detail


def input_shapes(inputs_dir):
    """--shape arguments for the inputs ORT ran on (file names as ort_runner.js writes them)."""
    args = []
    for f in sorted(os.listdir(inputs_dir)):
        if f.endswith(".npy"):
            shape, _ = read_npy(os.path.join(inputs_dir, f))
            args += ["--shape", f[:-4] + "=" + "x".join(str(d) for d in shape)]
    return args
