#!/usr/bin/env python3
"""Quantises a float ONNX model the way ONNX Runtime's quantize_static writes it, for the tests that
compare ninegrid with ONNX Runtime on quantised models. ORT's Python quantiser is not packaged for Debian
(only its Node.js runtime, npm onnxruntime-node, is available here), so this script reproduces the file
layout of its two formats with ORT's default settings; ORT itself then runs the result.

  QDQ        (QuantFormat.QDQ, per_channel=True, QInt8 activations and weights): QuantizeLinear ->
             DequantizeLinear pairs on every activation tensor a quantised op reads or writes; int8 weights
             behind a DequantizeLinear, symmetric, one scale per output channel; int32 biases in units of
             input scale x weight scale; Relu/Clip after a Conv/Gemm dropped (the output's range keeps
             their clamp); MaxPool/Reshape/Transpose/Squeeze/Unsqueeze outputs share their input's
             parameters; Add, Concat, GlobalAveragePool, AveragePool, Flatten and MatMul quantise every
             input and output with its own parameters.
  QOperator  (QuantFormat.QOperator): QLinearConv, com.microsoft QGemm / QLinearAdd / QLinearConcat /
             QLinearGlobalAveragePool / QLinearAveragePool, MaxPool and Reshape run on the int8 tensor,
             QuantizeLinear/DequantizeLinear where a float op (Flatten) or the graph's edges need floats.

Calibration is MinMax (ORT's default): each tensor's range over the calibration inputs, widened to
include 0; activations are asymmetric int8: scale = (max - min) / 255, zero point = round(-128 - min /
scale). The float activations come from ONNX Runtime itself (bench/ort_runner.js on a copy of the model
that outputs every tensor). Before quantising, BatchNormalization is folded into the Conv before it and
Constant nodes become initializers, as ORT's pre-processing does.

usage: quantize_like_ort.py MODEL.onnx OUT.onnx --format qdq|qoperator [--shape 1x3x64x64]
                            [--calibration N] [--seed S]
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORT_RUNNER = os.path.join(ROOT, "bench", "ort_runner.js")

ACTIVATION_FUSED = ("Relu", "Clip")
SAME_AS_INPUT = ("MaxPool", "Reshape", "Transpose", "Squeeze", "Unsqueeze")
OWN_PARAMS = ("Add", "Concat", "GlobalAveragePool", "AveragePool", "Flatten", "MatMul")
WEIGHTED = ("Conv", "Gemm")


def safe(name):
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)


# ---- pre-processing ----

def preprocess(model, shape):
    g = model.graph
    inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    nodes = []
    for n in g.node:
        if n.op_type == "Constant":
            inits[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
        elif n.op_type in ("Identity", "Dropout"):
            for m in g.node:
                for i, name in enumerate(m.input):
                    if name == n.output[0]:
                        m.input[i] = n.input[0]
            for o in g.output:
                if o.name == n.output[0]:
                    raise SystemExit("an Identity writes a graph output; not handled")
        else:
            nodes.append(n)
    # Fold BatchNormalization into the Conv that alone feeds it.
    readers = {}
    for n in nodes:
        for i in n.input:
            readers.setdefault(i, []).append(n)
    out = []
    producer = {o: n for n in nodes for o in n.output}
    dropped = set()
    for n in nodes:
        if n.op_type == "BatchNormalization":
            conv = producer.get(n.input[0])
            if conv is not None and conv.op_type == "Conv" and len(readers[n.input[0]]) == 1:
                scale, bias, mean, var = (inits[x] for x in n.input[1:5])
                eps = next((a.f for a in n.attribute if a.name == "epsilon"), 1e-5)
                k = scale / np.sqrt(var + eps)
                w = inits[conv.input[1]]
                b = inits[conv.input[2]] if len(conv.input) > 2 else np.zeros(w.shape[0], np.float32)
                inits[conv.input[1]] = (w * k.reshape(-1, 1, 1, 1)).astype(np.float32)
                bname = conv.input[1] + "_folded_bias"
                inits[bname] = ((b - mean) * k + bias).astype(np.float32)
                if len(conv.input) > 2:
                    conv.input[2] = bname
                else:
                    conv.input.append(bname)
                conv.output[0] = n.output[0]
                dropped.add(id(n))
                continue
        out.append(n)
    used = {i for n in out for i in n.input}
    del g.node[:]
    g.node.extend(out)
    del g.initializer[:]
    g.initializer.extend(numpy_helper.from_array(v, k) for k, v in inits.items() if k in used)
    del g.value_info[:]
    if shape:
        dims = g.input[0].type.tensor_type.shape.dim
        for d, v in zip(dims, shape):
            d.ClearField("dim_param")
            d.dim_value = v
    return model


# ---- calibration ----

def calibrate(model, inputs):
    """Min and max of every float tensor a node writes (and of the graph input) over `inputs`."""
    aug = onnx.ModelProto()
    aug.CopyFrom(model)
    have = {o.name for o in aug.graph.output}
    for n in aug.graph.node:
        for o in n.output:
            if o not in have:
                aug.graph.output.append(helper.make_tensor_value_info(o, TensorProto.FLOAT, None))
                have.add(o)
    ranges = {}
    in_name = model.graph.input[0].name
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "aug.onnx")
        onnx.save(aug, path)
        for i, x in enumerate(inputs):
            xf, od = os.path.join(d, f"x{i}.npy"), os.path.join(d, f"out{i}")
            np.save(xf, x)
            subprocess.run(["node", ORT_RUNNER, path, "--input", f"{in_name}={xf}", "--save-outputs", od,
                            "--runs", "0", "--warmup", "0"], check=True, capture_output=True, timeout=600)
            values = {in_name: x}
            for name in have:
                f = os.path.join(od, safe(name) + ".npy")
                if os.path.exists(f):
                    values[name] = np.load(f)
            for name, v in values.items():
                if v.dtype != np.float32:
                    continue
                lo, hi = float(v.min()), float(v.max())
                if name in ranges:
                    lo, hi = min(lo, ranges[name][0]), max(hi, ranges[name][1])
                ranges[name] = (lo, hi)
    return ranges


def activation_params(lo, hi):
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    if hi == lo:
        return np.float32(1.0), np.int8(0)
    scale = np.float32((hi - lo) / 255.0)
    zp = int(np.clip(np.round(-128 - lo / scale), -128, 127))
    return scale, np.int8(zp)


def quantize_weights(w, axis):
    """Symmetric int8 per channel along `axis`: scale = max|w| / 127."""
    moved = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
    absmax = np.abs(moved).max(axis=1)
    scale = np.where(absmax > 0, absmax / 127.0, 1.0).astype(np.float32)
    shape = [1] * w.ndim
    shape[axis] = -1
    q = np.clip(np.round(w / scale.reshape(shape)), -127, 127).astype(np.int8)
    return q, scale


# ---- the two formats ----

class Writer:
    def __init__(self, model, ranges):
        self.model = model
        self.g = model.graph
        self.inits = {i.name: numpy_helper.to_array(i) for i in self.g.initializer}
        self.ranges = ranges
        self.params = {}  # tensor -> (scale, zp) initializer names
        self.new_inits = []
        self.nodes = []

    def const(self, name, value):
        self.new_inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def tensor_params(self, t, like=None):
        if t not in self.params:
            if like is not None:
                self.params[t] = self.params[like]
            else:
                s, z = activation_params(*self.ranges[t])
                self.params[t] = (self.const(t + "_scale", s), self.const(t + "_zero_point", z))
        return self.params[t]

    def bias(self, b_name, x_scale_name, w_scale, prefix):
        x_scale = numpy_helper.to_array(next(i for i in self.new_inits if i.name == x_scale_name))
        b = self.inits[b_name]
        bs = (np.float32(x_scale) * w_scale).astype(np.float32)
        bq = np.round(b / bs).astype(np.int32)
        return bq, bs

    def output_tensor(self, n):
        """The tensor a quantised node's output range is taken from: a Relu/Clip's output if it alone
        reads the node's output (ORT then drops it: the output's range keeps its clamp)."""
        readers = [m for m in self.g.node if n.output[0] in m.input]
        graph_out = any(o.name == n.output[0] for o in self.g.output)
        if len(readers) == 1 and not graph_out and readers[0].op_type in ACTIVATION_FUSED:
            return readers[0].output[0], readers[0]
        return n.output[0], None


def write_qdq(model, ranges):
    w = Writer(model, ranges)
    g = model.graph
    skip = set()
    quantised = {}  # float tensor -> its dequantised name
    to_quantise = []  # (tensor, params-like)
    plan = []
    for n in g.node:
        if n.output[0] in skip:  # a Relu/Clip fused into the op before it
            continue
        if n.op_type in WEIGHTED or n.op_type == "Add":
            out, act = w.output_tensor(n)
            if act is not None:
                skip.add(act.output[0])
                n.output[0] = out
        if n.op_type in WEIGHTED:
            plan.append(("weighted", n))
        elif n.op_type in SAME_AS_INPUT or n.op_type in OWN_PARAMS:
            plan.append(("activation", n))
        else:
            plan.append(("float", n))
    new_nodes = []

    def qdq_of(t, like=None):
        if t in quantised:
            return quantised[t]
        s, z = w.tensor_params(t, like)
        q, dq = t + "_QuantizeLinear_Output", t + "_DequantizeLinear_Output"
        new_nodes.append(helper.make_node("QuantizeLinear", [t, s, z], [q], name=t + "_QuantizeLinear"))
        new_nodes.append(helper.make_node("DequantizeLinear", [q, s, z], [dq], name=t + "_DequantizeLinear"))
        quantised[t] = dq
        return dq

    renames = {}
    for kind, n in plan:
        orig = list(n.input)  # float tensor names: the keys of the parameters and of `quantised`
        if kind == "float":
            n.input[:] = [renames.get(i, i) for i in n.input]
            new_nodes.append(n)
            continue
        if kind == "weighted":
            x = qdq_of(orig[0])
            axis = 0 if n.op_type == "Conv" or any(a.name == "transB" and a.i for a in n.attribute) else 1
            wq, ws = quantize_weights(w.inits[n.input[1]], axis)
            wname = n.name + "/" + n.input[1]  # per node: equal initializers are shared
            w.const(wname + "_quantized", wq)
            w.const(wname + "_scale", ws)
            w.const(wname + "_zero_point", np.zeros(ws.shape, np.int8))
            new_nodes.append(helper.make_node("DequantizeLinear", [wname + "_quantized", wname + "_scale",
                                                                   wname + "_zero_point"],
                                              [wname + "_DequantizeLinear_Output"], axis=axis))
            ins = [x, wname + "_DequantizeLinear_Output"]
            if len(n.input) > 2 and n.input[2]:
                bq, bs = w.bias(n.input[2], w.tensor_params(orig[0])[0], ws, n.name)
                bname = n.name + "/" + n.input[2]
                w.const(bname + "_quantized", bq)
                w.const(bname + "_quantized_scale", bs)
                w.const(bname + "_quantized_zero_point", np.zeros(bs.shape, np.int32))
                new_nodes.append(helper.make_node("DequantizeLinear", [bname + "_quantized", bname + "_quantized_scale",
                                                                       bname + "_quantized_zero_point"],
                                                  [bname + "_DequantizeLinear_Output"], axis=0))
                ins.append(bname + "_DequantizeLinear_Output")
            n.input[:] = ins
            new_nodes.append(n)
            to_quantise.append((n.output[0], None))
        else:
            like = orig[0] if n.op_type in SAME_AS_INPUT else None
            data_inputs = len(n.input) if n.op_type in ("Add", "Concat", "MatMul") else 1
            for i in range(data_inputs):
                n.input[i] = qdq_of(orig[i])
            new_nodes.append(n)
            to_quantise.append((n.output[0], like))
        # Quantise the outputs right after their node, and make later readers read the dequantised copy.
        for t, like in to_quantise:
            dq = qdq_of(t, like)
            renames[t] = dq
        to_quantise = []
    # Graph outputs: the dequantised copy takes the output's name.
    for o in g.output:
        if o.name in quantised:
            dq = quantised[o.name]
            for nd in new_nodes:
                for i, name in enumerate(nd.output):
                    if name == o.name:
                        nd.output[i] = o.name + "_float"
                for i, name in enumerate(nd.input):
                    if name == o.name:
                        nd.input[i] = o.name + "_float"
            for nd in new_nodes:
                for i, name in enumerate(nd.output):
                    if name == dq:
                        nd.output[i] = o.name
    del g.node[:]
    g.node.extend(new_nodes)
    finish(w)
    return model


def write_qoperator(model, ranges):
    w = Writer(model, ranges)
    g = model.graph
    skip = set()
    qname = {}  # float tensor -> its int8 tensor
    new_nodes = []
    graph_outputs = {o.name for o in g.output}

    def quantized(t, like=None):
        if t not in qname:
            s, z = w.tensor_params(t, like)
            new_nodes.append(helper.make_node("QuantizeLinear", [t, s, z], [t + "_quantized"], name=t + "_QuantizeLinear"))
            qname[t] = t + "_quantized"
        return qname[t]

    def produce(t, like=None):
        """The int8 name a quantised op writes for float tensor t; its float form is made on demand."""
        w.tensor_params(t, like)
        qname[t] = t + "_quantized"
        return qname[t]

    float_needed = set()
    for n in g.node:
        if n.output[0] in skip:  # a Relu/Clip fused into the op before it
            continue
        op = n.op_type
        if op in WEIGHTED:
            out, act = w.output_tensor(n)
            if act is not None:
                skip.add(act.output[0])
            x = quantized(n.input[0])
            xs, xz = w.params[n.input[0]]
            trans_b = op == "Gemm" and any(a.name == "transB" and a.i for a in n.attribute)
            axis = 0 if op == "Conv" or trans_b else 1
            wq, ws = quantize_weights(w.inits[n.input[1]], axis)
            wn = n.name + "/" + n.input[1]  # per node: equal initializers are shared
            w.const(wn + "_quantized", wq)
            w.const(wn + "_scale", ws)
            w.const(wn + "_zero_point", np.zeros(ws.shape, np.int8))
            y = produce(out)
            ys, yz = w.params[out]
            bias = []
            if len(n.input) > 2 and n.input[2]:
                bq, _ = w.bias(n.input[2], xs, ws, n.name)
                bias = [w.const(n.name + "/" + n.input[2] + "_quantized", bq)]
            if op == "Conv":
                new_nodes.append(helper.make_node("QLinearConv", [x, xs, xz, wn + "_quantized", wn + "_scale",
                                                                  wn + "_zero_point", ys, yz] + bias, [y],
                                                  name=n.name + "_quant", **{a.name: helper.get_attribute_value(a)
                                                                            for a in n.attribute}))
            else:
                attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute if a.name in ("alpha", "transA", "transB")}
                new_nodes.append(helper.make_node("QGemm", [x, xs, xz, wn + "_quantized", wn + "_scale",
                                                            wn + "_zero_point"] + (bias or [""]) + [ys, yz], [y],
                                                  name=n.name + "_quant", domain="com.microsoft", **attrs))
        elif op in ("Add", "Concat", "GlobalAveragePool", "AveragePool"):
            ins = [quantized(i) for i in n.input]
            out = n.output[0]
            if op == "Add":
                out, act = w.output_tensor(n)
                if act is not None:
                    skip.add(act.output[0])
            y = produce(out)
            ys, yz = w.params[out]
            attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
            if op == "Add":
                a, b = n.input
                new_nodes.append(helper.make_node("QLinearAdd", [ins[0], *w.params[a], ins[1], *w.params[b], ys, yz], [y],
                                                  name=n.name + "_quant", domain="com.microsoft"))
            elif op == "Concat":
                flat = [ys, yz]
                for t, qt in zip(n.input, ins):
                    flat += [qt, *w.params[t]]
                new_nodes.append(helper.make_node("QLinearConcat", flat, [y], name=n.name + "_quant",
                                                  domain="com.microsoft", **attrs))
            else:
                qop = "QLinearGlobalAveragePool" if op == "GlobalAveragePool" else "QLinearAveragePool"
                new_nodes.append(helper.make_node(qop, [ins[0], *w.params[n.input[0]], ys, yz], [y],
                                                  name=n.name + "_quant", domain="com.microsoft", channels_last=0,
                                                  **attrs))
        elif op in ("MaxPool", "Reshape"):
            x = quantized(n.input[0])
            y = produce(n.output[0], like=n.input[0])
            new_nodes.append(helper.make_node(op, [x] + list(n.input[1:]), [y], name=n.name,
                                              **{a.name: helper.get_attribute_value(a) for a in n.attribute}))
        else:  # a float op: reads float tensors
            for t in n.input:
                if t in qname and t not in float_needed:
                    float_needed.add(t)
                    s, z = w.params[t]
                    new_nodes.append(helper.make_node("DequantizeLinear", [qname[t], s, z], [t], name=t + "_DequantizeLinear"))
            new_nodes.append(n)
    for t in graph_outputs:
        if t in qname and t not in float_needed:
            s, z = w.params[t]
            new_nodes.append(helper.make_node("DequantizeLinear", [qname[t], s, z], [t], name=t + "_DequantizeLinear"))
    del g.node[:]
    g.node.extend(new_nodes)
    finish(w)
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return model


def finish(w):
    g = w.g
    used = {i for n in g.node for i in n.input}
    kept = [i for i in g.initializer if i.name in used]
    del g.initializer[:]
    g.initializer.extend(kept + [i for i in w.new_inits if i.name in used])


def calibration_inputs(shape, count, seed):
    """The astronaut photo (Debian's python3-skimage) resized, normalised as torchvision models expect,
    plus random crops of it: realistic activation ranges."""
    from skimage import io, transform
    rgb = io.imread("/usr/lib/python3/dist-packages/skimage/data/astronaut.png")[..., :3] / 255.0
    rng = np.random.default_rng(seed)
    mean, std = np.array([0.485, 0.456, 0.406]), np.array([0.229, 0.224, 0.225])
    out = []
    h, w = shape[2], shape[3]
    for i in range(count):
        if i == 0:
            crop = rgb
        else:
            size = int(rng.integers(200, 512))
            top, left = (int(rng.integers(0, 512 - size + 1)) for _ in range(2))
            crop = rgb[top:top + size, left:left + size]
        img = transform.resize(crop, (h, w), anti_aliasing=True)
        x = ((img - mean) / std).transpose(2, 0, 1)[None].astype(np.float32)
        out.append(np.ascontiguousarray(x))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("out")
    ap.add_argument("--format", choices=["qdq", "qoperator"], required=True)
    ap.add_argument("--shape", default="1x3x64x64")
    ap.add_argument("--calibration", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    shape = [int(v) for v in args.shape.split("x")]
    model = preprocess(onnx.load(args.model), shape)
    ranges = calibrate(model, calibration_inputs(shape, args.calibration, args.seed))
    model = (write_qdq if args.format == "qdq" else write_qoperator)(model, ranges)
    onnx.checker.check_model(model)
    onnx.save(model, args.out)


if __name__ == "__main__":
    main()
