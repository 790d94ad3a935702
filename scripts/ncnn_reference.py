#!/usr/bin/python3
"""Independent reference for ninegrid's ncnn importer.

Reads an ncnn .param/.bin pair with its own parser (written from ncnn's documented format, sharing no
code with the C++ importer) and runs the network with torch.nn.functional, layer by layer, in ncnn's
semantics. Supports the layers of the two ncnn models in ../shared/models: Input, Convolution,
ConvolutionDepthWise, Pooling, ReLU, Split, Concat, Crop, Interp, BinaryOp, Reshape, Softmax, Dropout.

It first checks itself against the golden outputs of RetinaFace-MobileNet0.25 (mnet.25-golden, computed
by ncnn), then writes SqueezeNet 1.1's input and output for the C++ test:
    <cache>/models/ncnn_ref/squeezenet_v1.1/input.npy   1x3x227x227 float32 (BGR, mean subtracted)
    <cache>/models/ncnn_ref/squeezenet_v1.1/prob.npy    (1000,) float32
<cache> is $NINEGRID_CACHE or <repo>/.cache.

Usage: /usr/bin/python3 scripts/ncnn_reference.py [--shared DIR] [--out DIR]
"""
import argparse
import os
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F

FLT_MAX = float(np.finfo(np.float32).max)


# ---- .param ----------------------------------------------------------------------------------------

def parse_value(text):
    if any(ch in text for ch in ".eE"):
        return float(text)
    return int(text)


def parse_param(path):
    tokens = open(path).read().split()
    if int(tokens[0]) != 7767517:
        raise ValueError("bad magic")
    layer_count, _blob_count = int(tokens[1]), int(tokens[2])
    pos = 3
    layers = []
    for _ in range(layer_count):
        ltype, name = tokens[pos], tokens[pos + 1]
        nin, nout = int(tokens[pos + 2]), int(tokens[pos + 3])
        pos += 4
        bottoms = tokens[pos:pos + nin]
        pos += nin
        tops = tokens[pos:pos + nout]
        pos += nout
        params = {}
        while pos < len(tokens) and "=" in tokens[pos] and tokens[pos].split("=")[0].lstrip("-").isdigit():
            key, value = tokens[pos].split("=", 1)
            key = int(key)
            if key <= -23300:
                items = value.split(",")
                params[-key - 23300] = [parse_value(v) for v in items[1:]]
            else:
                params[key] = parse_value(value)
            pos += 1
        layers.append(dict(type=ltype, name=name, bottoms=bottoms, tops=tops, params=params))
    return layers


# ---- .bin ------------------------------------------------------------------------------------------

class ModelBin:
    def __init__(self, path):
        self.data = open(path, "rb").read()
        self.pos = 0

    def read(self, n):
        if self.pos + n > len(self.data):
            raise ValueError("weights truncated")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def load(self, count, kind):
        if kind == 1:
            return np.frombuffer(self.read(4 * count), dtype="<f4").copy()
        flag = struct.unpack("<I", self.read(4))[0]
        if flag == 0x01306B47:
            nbytes = (2 * count + 3) // 4 * 4
            return np.frombuffer(self.read(nbytes)[:2 * count], dtype="<f2").astype(np.float32)
        if flag == 0x000D4B38:
            raise ValueError("int8 weights not supported")
        if flag == 0x0002C056 or flag == 0:
            return np.frombuffer(self.read(4 * count), dtype="<f4").copy()
        table = np.frombuffer(self.read(1024), dtype="<f4")
        index = np.frombuffer(self.read((count + 3) // 4 * 4)[:count], dtype=np.uint8)
        return table[index].astype(np.float32)


# ---- layers ----------------------------------------------------------------------------------------
# Blobs are torch tensors with a leading batch dimension of 1: ncnn (c,h,w) -> (1,c,h,w), (w) -> (1,w).

def conv(p, x, mb, depthwise):
    num_output = p.get(0, 0)
    kw = p.get(1, 0)
    kh = p.get(11, kw)
    dw = p.get(2, 1)
    dh = p.get(12, dw)
    sw = p.get(3, 1)
    sh = p.get(13, sw)
    pl = p.get(4, 0)
    pr = p.get(15, pl)
    pt = p.get(14, pl)
    pb = p.get(16, pt)
    bias_term = p.get(5, 0)
    wsize = p.get(6, 0)
    group = p.get(7, 1) if depthwise else 1
    act = p.get(9, 0)
    act_params = p.get(10, [])
    w = mb.load(wsize, 0)
    b = mb.load(num_output, 1) if bias_term else None
    cin_g = wsize // (num_output * kh * kw)
    weight = torch.from_numpy(w.reshape(num_output, cin_g, kh, kw))
    bias = torch.from_numpy(b) if b is not None else None
    if min(pl, pr, pt, pb) < 0:
        raise ValueError("SAME padding not needed by these models")
    x = F.pad(x, (pl, pr, pt, pb))
    y = F.conv2d(x, weight, bias, stride=(sh, sw), dilation=(dh, dw), groups=group)
    if act == 1:
        y = F.relu(y)
    elif act == 2:
        y = F.leaky_relu(y, act_params[0])
    elif act == 3:
        y = torch.clamp(y, act_params[0], act_params[1])
    elif act == 4:
        y = torch.sigmoid(y)
    elif act != 0:
        raise ValueError("activation %d not needed by these models" % act)
    return y


def pooling(p, x):
    ptype = p.get(0, 0)
    kw = p.get(1, 0)
    kh = p.get(11, kw)
    sw = p.get(2, 1)
    sh = p.get(12, sw)
    pl = p.get(3, 0)
    pr = p.get(14, pl)
    pt = p.get(13, pl)
    pb = p.get(15, pt)
    glob = p.get(4, 0)
    pad_mode = p.get(5, 0)
    if glob:
        y = x.amax(dim=(2, 3)) if ptype == 0 else x.mean(dim=(2, 3))
        return y  # ncnn returns a 1-D blob of channels: (1, c)
    if pad_mode != 0 or ptype != 0:
        raise ValueError("only max pooling with full padding is needed by these models")
    h, w = x.shape[2], x.shape[3]
    # "full" padding: a tail on the bottom/right makes the last window fit (C remainder semantics).
    htail = int(np.fmod(h + pt + pb - kh, sh))
    wtail = int(np.fmod(w + pl + pr - kw, sw))
    htailpad = sh - htail if htail != 0 else 0
    wtailpad = sw - wtail if wtail != 0 else 0
    x = F.pad(x, (pl, pr + wtailpad, pt, pb + htailpad), value=-FLT_MAX)
    return F.max_pool2d(x, (kh, kw), (sh, sw))


def crop(p, xs):
    x, ref = xs
    wo, ho, co = p.get(0, 0), p.get(1, 0), p.get(2, 0)
    oh, ow = ref.shape[2], ref.shape[3]
    oc = ref.shape[1]
    return x[:, co:co + oc, ho:ho + oh, wo:wo + ow]


def interp(p, x):
    rtype = p.get(0, 0)
    hs = p.get(1, 1.0)
    ws = p.get(2, 1.0)
    oh = p.get(3, 0)
    ow = p.get(4, 0)
    if rtype != 1 or oh or ow:
        raise ValueError("only nearest by scale is needed by these models")
    h, w = x.shape[2], x.shape[3]
    oh, ow = int(np.float32(h) * np.float32(hs)), int(np.float32(w) * np.float32(ws))
    # ncnn: source index = min(int(dst * (1/scale)), size - 1)
    iy = np.minimum((np.arange(oh, dtype=np.float32) * np.float32(1.0 / hs)).astype(np.int64), h - 1)
    ix = np.minimum((np.arange(ow, dtype=np.float32) * np.float32(1.0 / ws)).astype(np.int64), w - 1)
    return x[:, :, torch.from_numpy(iy)][:, :, :, torch.from_numpy(ix)]


def binary_op(p, xs):
    op = p.get(0, 0)
    if p.get(1, 0):
        a, b = xs[0], torch.tensor(float(p.get(2, 0.0)))
    else:
        a, b = xs
    fns = {0: torch.add, 1: torch.sub, 2: torch.mul, 3: torch.div, 4: torch.maximum, 5: torch.minimum}
    if op in fns:
        return fns[op](a, b)
    if op == 7:
        return b - a
    if op == 8:
        return b / a
    raise ValueError("BinaryOp %d not needed" % op)


def reshape(p, x):
    # ncnn names dimensions w (innermost), h, c; 0 keeps the input's same-named size, -1 infers.
    tw, th, tc = p.get(0, -233), p.get(1, -233), p.get(2, -233)
    dims = x.dim() - 1
    shape = list(x.shape[1:])
    iw = shape[-1]
    ih = shape[-2] if dims >= 2 else 1
    ic = shape[0] if dims >= 3 else 1
    total = iw * ih * ic
    if tc != -233:
        target = [tc, th, tw]
        same = [ic, ih, iw]
    elif th != -233:
        target, same = [th, tw], [ih, iw]
    else:
        target, same = [tw], [iw]
    target = [s if t == 0 else t for t, s in zip(target, same)]
    if -1 in target:
        known = int(np.prod([t for t in target if t != -1]))
        target[target.index(-1)] = total // known
    return x.reshape([1] + target)


def softmax(p, x):
    axis = p.get(0, 0)
    return F.softmax(x, dim=axis + 1 if axis >= 0 else axis)


def run_network(param_path, bin_path, inputs):
    layers = parse_param(param_path)
    mb = ModelBin(bin_path)
    blobs = {}
    consumed = set()
    for layer in layers:
        t, p = layer["type"], layer["params"]
        xs = [blobs[b] for b in layer["bottoms"]]
        consumed.update(layer["bottoms"])
        if t == "Input":
            ys = [inputs[layer["tops"][0]]]
        elif t in ("Convolution", "ConvolutionDepthWise"):
            ys = [conv(p, xs[0], mb, t == "ConvolutionDepthWise")]
        elif t == "Pooling":
            ys = [pooling(p, xs[0])]
        elif t == "ReLU":
            slope = p.get(0, 0.0)
            ys = [F.relu(xs[0]) if slope == 0 else F.leaky_relu(xs[0], slope)]
        elif t == "Split":
            ys = [xs[0]] * len(layer["tops"])
        elif t == "Concat":
            axis = p.get(0, 0)
            ys = [torch.cat(xs, dim=axis + 1 if axis >= 0 else axis)]
        elif t == "Crop":
            ys = [crop(p, xs)]
        elif t == "Interp":
            ys = [interp(p, xs[0])]
        elif t == "BinaryOp":
            ys = [binary_op(p, xs)]
        elif t == "Reshape":
            ys = [reshape(p, xs[0])]
        elif t == "Softmax":
            ys = [softmax(p, xs[0])]
        elif t == "Dropout":
            scale = p.get(0, 1.0)
            ys = [xs[0] if scale == 1.0 else xs[0] * scale]
        else:
            raise ValueError("layer type %s not supported by the reference" % t)
        for name, y in zip(layer["tops"], ys):
            blobs[name] = y
    outputs = {}
    for layer in layers:
        for name in layer["tops"]:
            if name not in consumed:
                outputs[name] = blobs[name][0].numpy()  # drop the batch dimension
    return outputs


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(here)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", default=os.path.join(repo, "..", "shared"))
    cache = os.environ.get("NINEGRID_CACHE", os.path.join(repo, ".cache"))
    ap.add_argument("--out", default=os.path.join(cache, "models", "ncnn_ref"))
    args = ap.parse_args()
    models = os.path.join(args.shared, "models")
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))

    import skimage.data
    image = skimage.data.astronaut()  # 512 x 512 RGB uint8

    # 1. Check the reference itself against ncnn's own outputs for mnet.25.
    x = torch.from_numpy(image.transpose(2, 0, 1).astype(np.float32))[None]
    with torch.no_grad():
        outs = run_network(os.path.join(models, "mnet.25-opt.param"), os.path.join(models, "mnet.25-opt.bin"),
                           {"data": x})
    golden_dir = os.path.join(models, "mnet.25-golden")
    worst = 0.0
    for name, y in outs.items():
        g = np.load(os.path.join(golden_dir, name + ".npy"))
        if g.shape != y.shape:
            sys.exit("reference self-check failed: %s has shape %s, golden %s" % (name, y.shape, g.shape))
        err = float(np.max(np.abs(y - g)) / max(1.0, float(np.max(np.abs(g)))))
        worst = max(worst, err)
        print("mnet.25 %-40s %-14s relative error %.2e" % (name, "x".join(map(str, y.shape)), err))
    if worst > 1e-4:
        sys.exit("reference self-check failed: worst relative error %.2e > 1e-4" % worst)
    print("mnet.25 reference matches the golden outputs (worst %.2e)" % worst)

    # 2. SqueezeNet 1.1 on the centre 227 x 227 crop, BGR, mean (104, 117, 123) subtracted.
    off = (512 - 227) // 2
    crop_bgr = image[off:off + 227, off:off + 227, ::-1].astype(np.float32)
    crop_bgr -= np.array([104.0, 117.0, 123.0], dtype=np.float32)
    sx = np.ascontiguousarray(crop_bgr.transpose(2, 0, 1))[None]
    with torch.no_grad():
        sq = run_network(os.path.join(models, "squeezenet_v1.1.param"), os.path.join(models, "squeezenet_v1.1.bin"),
                         {"data": torch.from_numpy(sx)})
    prob = sq["prob"].astype(np.float32)
    out_dir = os.path.join(args.out, "squeezenet_v1.1")
    os.makedirs(out_dir, exist_ok=True)
    np.save(os.path.join(out_dir, "input.npy"), sx.astype(np.float32))
    np.save(os.path.join(out_dir, "prob.npy"), prob)
    top = np.argsort(-prob)[:5]
    print("squeezenet_v1.1 prob sum %.6f, top-5 %s" % (prob.sum(), ", ".join("%d:%.4f" % (i, prob[i]) for i in top)))
    print("wrote", out_dir)


if __name__ == "__main__":
    main()
