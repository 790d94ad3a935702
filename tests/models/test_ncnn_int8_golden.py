"""RetinaFace-MobileNet0.25 (real weights) quantised by ncnn's own quantiser (ncnn2table + ncnn2int8), run by
ninegrid, against ncnn's own int8 run on the same input (scripts/make_ncnn_int8_golden.sh saves the model
and every blob of ncnn's run in the test-model cache).

- Layer by layer: each of the 56 int8 layers gets ncnn's own input blob (one ninegrid run of a param that
  holds every int8 layer alone behind its own Input), so the int8 sums are exactly ncnn's and only the
  final rounding can differ:
  - a requantised output (int8_scale_term 101/102) is within one int8 step of ncnn's everywhere, and a
    step off only where ncnn's real value y * s_out (computed here from the exact integer sums) lies within
    the documented roundings of a boundary k + 0.5: the importer's bias rounding to the accumulator's unit
    (ncnn_int8_model.fused_bias_error), ncnn's approximate reciprocal in its depthwise layers (relative
    error < 2^-11 of the scaled sum) and float rounding (1e-4 of a step). ncnn's own value must be
    float2int8 of that real value within the same windows, which checks the reference against ncnn;
  - a float output (int8_scale_term 1/2) is ncnn's sum * (1 / (s_in * s_w)) + bias, which ninegrid computes
    as a float conv of the dequantised values: within 2^-12 of the sum of the absolute terms (float
    rounding over at most 576 products, Winograd's transforms included), far below one step of the next
    layer's quantisation (1/127 of the range).
- Whole model: one-step differences compound through some 30 layers, so the outputs are held to the bar
  of a quantised model, cosine similarity >= 0.99 to ncnn's int8 outputs (measured: >= 0.997).

Skipped (exit 77) when the cache holds no golden (a machine without a built ncnn).
usage: test_ncnn_int8_golden.py NINEGRID_BINARY
"""
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ncnn_int8_model  # noqa: E402

BIN = None
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CACHE = os.environ.get("NINEGRID_CACHE", os.path.join(ROOT, ".cache"))
GOLDEN = os.path.join(CACHE, "models", "ncnn_int8")
F32 = np.float32
TAG_INT8, TAG_F16 = 0x000D4B38, 0x01306B47
NO_WEIGHTS = {"Input", "Split", "Concat", "ReLU", "Crop", "Interp", "Reshape", "Softmax", "BinaryOp", "Pooling",
              "Eltwise", "Flatten", "Permute", "Sigmoid"}


def parse_param(path):
    """[(type, name, bottoms, tops, {key: value string}, line)] of an ncnn param without arrays."""
    layers = []
    with open(path) as f:
        text = f.read()
    for line in text.split("\n")[2:]:
        f = line.split()
        if not f:
            continue
        nb, nt = int(f[2]), int(f[3])
        params = dict(kv.split("=", 1) for kv in f[4 + nb + nt:])
        layers.append((f[0], f[1], f[4:4 + nb], f[4 + nb:4 + nb + nt], params, line))
    return layers


def read_layer_weights(data, offset, kind, p):
    """One conv layer's part of the .bin: (end offset, dict of its arrays)."""
    def floats(n):
        nonlocal offset
        v = np.frombuffer(data, "<f4", n, offset).copy()
        offset += 4 * n
        return v
    n_out, size, term = int(p.get("0", 0)), int(p.get("6", 0)), int(p.get("8", 0))
    tag = int.from_bytes(data[offset:offset + 4], "little")
    offset += 4
    if tag == TAG_INT8:
        w = np.frombuffer(data, np.int8, size, offset).copy()
        offset += (size + 3) // 4 * 4
    elif tag == 0:
        w = floats(size)
    elif tag == TAG_F16:
        w = np.frombuffer(data, "<f2", size, offset).astype(F32)
        offset += (2 * size + 3) // 4 * 4
    else:
        raise ValueError("unexpected weight storage tag %#x" % tag)
    out = {"weight": w, "bias": floats(n_out) if p.get("5", "0") == "1" else None}
    if term:
        group = int(p.get("7", 1))
        if kind == "ConvolutionDepthWise":
            n = group if term % 100 == 1 else 1
            out["w_scales"] = np.repeat(floats(n), n_out // n)
        else:
            out["w_scales"] = floats(n_out)
        out["s_in"] = floats(1)[0]
        out["s_out"] = floats(1)[0] if term > 100 else None
    return offset, out


def int8_layers(param_path, bin_path):
    """The model's int8 conv layers with their byte range in the .bin and their weights."""
    with open(bin_path, "rb") as f:
        data = f.read()
    offset, found = 0, []
    for kind, name, bottoms, tops, p, line in parse_param(param_path):
        if kind in ("Convolution", "ConvolutionDepthWise"):
            start = offset
            offset, w = read_layer_weights(data, offset, kind, p)
            if "8" in p:
                found.append(dict(kind=kind, name=name, bottom=bottoms[0], top=tops[0], params=p, line=line,
                                  bin=data[start:offset], **w))
        elif kind not in NO_WEIGHTS:
            raise ValueError("layer type %s: its weights are not parsed here" % kind)
    assert offset == len(data), (offset, len(data))
    return found


def run_ninegrid(param, weights, inputs, out_dir):
    args = [BIN, "run", param, "--output-dir", out_dir, "--threads", "1"]
    for name, path in inputs.items():
        args += ["--input", "%s=%s" % (name, path)]
    r = subprocess.run(args, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise AssertionError("ninegrid run failed: " + r.stderr[-2000:])


@unittest.skipUnless(os.path.exists(os.path.join(GOLDEN, "blobs.npz")), "no golden")
class NcnnInt8Golden(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.param = os.path.join(GOLDEN, "mnet25_int8.param")
        cls.bin = os.path.join(GOLDEN, "mnet25_int8.bin")
        with np.load(os.path.join(GOLDEN, "blobs.npz")) as blobs:
            cls.blobs = dict(blobs)
        cls.blobs["data"] = np.load(os.path.join(GOLDEN, "input.npy"))
        cls.layers = int8_layers(cls.param, cls.bin)

    def test_every_int8_layer_on_ncnns_input(self):
        layers = self.layers
        self.assertEqual(len(layers), 56)
        with tempfile.TemporaryDirectory() as tmp:
            lines, inputs, weights = [], {}, b""
            for i, l in enumerate(layers):
                x = self.blobs[l["bottom"]][0]
                if x.dtype == np.int8:  # ncnn's requantised blob: ninegrid quantises q / s_in back to q exactly
                    x = (x.astype(F32) / F32(l["s_in"])).astype(F32)
                inp = "in%d" % i
                path = os.path.join(tmp, inp + ".npy")
                np.save(path, x[None])
                inputs[inp] = path
                c, h, w = x.shape
                lines.append("Input %s 0 1 %s 0=%d 1=%d 2=%d" % (inp, inp, w, h, c))
                f = l["line"].split()
                lines.append(" ".join([f[0], f[1], "1", "1", inp, l["top"]] + f[6:]))
                weights += l["bin"]
            param, binp = os.path.join(tmp, "layers.param"), os.path.join(tmp, "layers.bin")
            with open(param, "w") as fp:
                fp.write("7767517\n%d %d\n%s\n" % (len(lines), len(lines), "\n".join(lines)))
            with open(binp, "wb") as fp:
                fp.write(weights)
            run_ninegrid(param, binp, inputs, os.path.join(tmp, "out"))
            got = {l["top"]: np.load(os.path.join(tmp, "out", l["top"] + ".npy"))[0] for l in layers}

        for l in layers:
            with self.subTest(layer=l["name"]):
                self.check_layer(l, got[l["top"]])

    def check_layer(self, l, got):
        p = l["params"]
        x = self.blobs[l["bottom"]][0]
        xq = x if x.dtype == np.int8 else ncnn_int8_model.float2int8(x.astype(F32) * F32(l["s_in"]))
        group = int(p.get("7", 1))
        n_out, k = int(p["0"]), int(p["1"])
        wq = l["weight"].reshape(n_out, -1, k, k)
        stride, pad, dil = int(p.get("3", 1)), int(p.get("4", 0)), int(p.get("2", 1))
        sums = ncnn_int8_model.conv_sums(xq, wq, stride, pad, dil, group)
        abs_sums = ncnn_int8_model.conv_sums(np.abs(xq.astype(np.int64)), np.abs(wq.astype(np.int64)), stride, pad,
                                             dil, group)
        w_scales = l["w_scales"].astype(F32)
        with np.errstate(divide="ignore"):
            factor = np.where((w_scales == 0) | np.isinf(w_scales), F32(0),
                              F32(1) / (F32(l["s_in"]) * w_scales)).astype(F32).reshape(-1, 1, 1)
        bias = np.zeros(n_out, F32) if l["bias"] is None else l["bias"]
        scaled = (sums.astype(F32) * factor).astype(F32)
        y = (scaled + bias.reshape(-1, 1, 1)).astype(F32)
        act = int(p.get("9", 0))
        y = ncnn_int8_model.activation(y, act, [])
        ref = self.blobs[l["top"]][0]
        self.assertEqual(got.shape, ref.shape)
        if l["s_out"] is None:
            self.assertEqual(ref.dtype, np.float32)
            tol = 2.0 ** -12 * (abs_sums * factor + np.abs(bias).reshape(-1, 1, 1)) + 1e-6
            worst = np.abs(got.astype(np.float64) - ref) - tol
            self.assertLessEqual(float(worst.max()), 0, "float output off by more than the float rounding: "
                                 "max excess %g" % worst.max())
            return
        self.assertEqual(ref.dtype, np.int8)
        s_out = F32(l["s_out"])
        real = (y * s_out).astype(np.float64)
        window = ncnn_int8_model.fused_bias_error(l["bias"], l["s_in"], w_scales, s_out, n_out).reshape(-1, 1, 1)
        rcp = 2.0 ** -11 * np.abs(scaled.astype(np.float64) * s_out) if l["kind"] == "ConvolutionDepthWise" else 0
        near = np.abs(np.abs(real) - np.floor(np.abs(real)) - 0.5)
        # ncnn's own value against the formula: off only where its reciprocal or float rounding reach.
        ncnn_off = np.flatnonzero((ncnn_int8_model.float2int8(real.astype(F32)) != ref) & (near > rcp + 1e-4))
        self.assertEqual(ncnn_off.size, 0, "ncnn departs from its formula: real %s -> %s" %
                         (real.ravel()[ncnn_off[:4]], ref.ravel()[ncnn_off[:4]]))
        q_got = np.round(got.astype(np.float64) * s_out).astype(np.int32)
        diff = q_got - ref.astype(np.int32)
        self.assertLessEqual(int(np.abs(diff).max()), 1, "more than one int8 step from ncnn")
        allowed = near <= window + rcp + 1e-4
        bad = np.flatnonzero((diff != 0) & ~allowed)
        self.assertEqual(bad.size, 0, "%d of %d values a step from ncnn away from a rounding boundary: ncnn's real "
                         "%s -> %s, ninegrid %s" % (bad.size, diff.size, real.ravel()[bad[:4]], ref.ravel()[bad[:4]],
                                                    q_got.ravel()[bad[:4]]))

    def test_whole_model_outputs(self):
        with tempfile.TemporaryDirectory() as tmp:
            run_ninegrid(self.param, self.bin, {"data": os.path.join(GOLDEN, "input.npy")}, tmp)
            names = sorted(f[:-4] for f in os.listdir(tmp))
            self.assertEqual(len(names), 9)
            for name in names:
                with self.subTest(output=name):
                    a = np.load(os.path.join(tmp, name + ".npy")).astype(np.float64).ravel()
                    b = self.blobs[name].astype(np.float64).ravel()
                    self.assertEqual(a.size, b.size)
                    self.assertGreaterEqual(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)), 0.99)


if __name__ == "__main__":
    BIN = sys.argv.pop(1)
    if not os.path.exists(os.path.join(GOLDEN, "blobs.npz")):
        print("skipped: no %s (scripts/make_ncnn_int8_golden.sh makes it with a built ncnn)" % GOLDEN)
        sys.exit(77)
    unittest.main()
