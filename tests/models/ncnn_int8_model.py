"""Writes ncnn int8 models in the format ncnn's quantiser (ncnn2table, then ncnn2int8) writes, and computes
their outputs with a NumPy reference of ncnn's int8 arithmetic, written from ncnn's formulas
(src/layer/convolution.cpp, convolutiondepthwise.cpp, innerproduct.cpp; docs/how-to-use-and-FAQ/
quantized-int8-inference.md), not from ninegrid's code.

The .param is text; the .bin holds each layer's blobs in layer order. A quantised Convolution,
ConvolutionDepthWise or InnerProduct (int8_scale_term, param 8) stores
  weights      a 4-byte tag then the data: 0x000D4B38 and int8 bytes padded to 4 (what ncnn2int8 writes),
               or 0 and float32 (ncnn then quantises them when it loads them)
  bias         raw float32 (bias_term)
  weight scales raw float32: one per output channel (ConvolutionDepthWise: one per group with
               int8_scale_term 1/101, one for the layer with 2/102)
  input scale  raw float32
  output scale raw float32, only with int8_scale_term > 100
A scale s is 127 / threshold. ncnn computes
  x_q = float2int8(x * s_in)        float2int8: round half away from zero, saturate to [-127, 127]
  sum = integer convolution of x_q and w_q (padding adds nothing)
  y   = act(float(sum) * (1 / (s_in * s_w[c])) + bias[c])     in float32; the factor is 0 for s_w = 0
  y_q = float2int8(y * s_out)       with int8_scale_term > 100: the output is int8, and an int8 layer
                                    reading it takes it as it is
Every step below is done in float32 like ncnn (x86's fused multiply-add in its dequantisation aside: the
tests' exact models make both roundings agree).

The network is built and run at once (Net): each layer's reference output is computed as it is added, so
activation scales can follow the data, as ncnn2table's calibration does.
"""
import struct

import numpy as np

TAG_INT8 = 0x000D4B38
F32 = np.float32


def float2int8(v):
    """ncnn's float2int8 as its x86 SIMD code computes it (float2int8_sse/avx/avx512): v + copysign(0.5, v)
    in float32, truncated, saturated to [-127, 127]: round half away from zero."""
    v = np.asarray(v, np.float32)
    r = np.trunc((v + np.copysign(np.float32(0.5), v)).astype(np.float32))
    return np.clip(r, -127, 127).astype(np.int8)


def conv_sums(xq, wq, stride, pad, dilation, group):
    """Integer convolution: xq int8 [C, H, W], wq int8 [O, C / group, kh, kw] -> int64 [O, OH, OW]."""
    c, h, w = xq.shape
    o, cg, kh, kw = wq.shape
    x = np.zeros((c, h + 2 * pad, w + 2 * pad), np.int64)
    x[:, pad:pad + h, pad:pad + w] = xq
    oh = (h + 2 * pad - dilation * (kh - 1) - 1) // stride + 1
    ow = (w + 2 * pad - dilation * (kw - 1) - 1) // stride + 1
    og = o // group
    out = np.zeros((o, oh, ow), np.int64)
    for g in range(group):
        xs = x[g * cg:(g + 1) * cg]
        ws = wq[g * og:(g + 1) * og].astype(np.int64)
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, i * dilation:i * dilation + stride * (oh - 1) + 1:stride,
                           j * dilation:j * dilation + stride * (ow - 1) + 1:stride]
                out[g * og:(g + 1) * og] += np.einsum("oc,chw->ohw", ws[:, :, i, j], patch)
    return out


def activation(v, act, params):
    if act == 0:
        return v
    if act == 1:
        return np.maximum(v, F32(0))
    if act == 2:
        return np.where(v < 0, v * F32(params[0]), v).astype(np.float32)
    raise ValueError(act)


def fused_bias_error(bias, s_in, w_scales, s_out, channels):
    """Per output channel, how far (in output steps) ONNX's integer form of the layer may place a value from
    ncnn's: its int32 bias is round_half_even(bias / (x_scale * w_scale)) in accumulator units (x_scale =
    1 / s_in, w_scale = 1 / s_w, y_scale = 1 / s_out, each a float32, as a QDQ model holds them), and the
    units become output steps through m = x_scale * w_scale / y_scale. Channels ncnn ignores (s_w 0 or inf)
    output their bias alone, rounded to a unit the importer chooses: up to half a step."""
    x_scale, y_scale = np.float32(1) / np.float32(s_in), np.float32(1) / np.float32(s_out)
    err = np.zeros(channels)
    if bias is None:
        return err
    for c in range(channels):
        if w_scales[c] == 0 or np.isinf(w_scales[c]):
            err[c] = 0.5
            continue
        unit = float(x_scale * (np.float32(1) / np.float32(w_scales[c])))
        q = bias[c] / unit
        m = float(x_scale * (np.float32(1) / np.float32(w_scales[c])) / y_scale)
        err[c] = abs(q - np.round(q)) * m
    return err


def pow2_floor(v):
    return float(2.0 ** np.floor(np.log2(v)))


class Blob:
    """A blob's reference value: float32 [C, H, W] or [N], or ncnn's int8 tensor with the scale it was
    requantised with."""

    def __init__(self, value, int8_scale=None):
        self.value = value
        self.int8_scale = int8_scale
        self.input_scale = None  # the scale every int8 layer reading this blob quantises it with


class Net:
    """An ncnn model under construction with its reference outputs for one input.

    exact: every scale a power of two and every bias a whole number of accumulator units, so that the
    float32 arithmetic of a float convolution over dequantised values is exact (products of at most 14
    bits, sums well below 2^24): any correct implementation then gives ncnn's values bit for bit.
    Otherwise scales are 127 / (absmax of the calibration data) times a random factor, as ncnn2table's
    would be.
    """

    def __init__(self, x, exact, seed):
        self.exact = exact
        self.rng = np.random.default_rng(seed)
        self.lines = []
        self.bin = bytearray()
        self.blobs = {}
        self.consumed = set()
        # Per requantised output: ncnn's value before float2int8 and fused_bias_error per channel.
        self.requantised = {}
        c, h, w = x.shape
        self.layer("Input", "input", [], ["data"], {0: w, 1: h, 2: c})
        self.blobs["data"] = Blob(np.asarray(x, np.float32))

    # -- .param / .bin ------------------------------------------------------------------------------
    def layer(self, kind, name, bottoms, tops, params):
        fields = []
        for k, v in params.items():
            if isinstance(v, (list, tuple)):
                fields.append(f"{-23300 - k}={len(v)}," + ",".join(f"{float(e):e}" for e in v))
            elif isinstance(v, float):
                fields.append(f"{k}={v:e}")
            else:
                fields.append(f"{k}={int(v)}")
        self.lines.append(f"{kind:<24} {name:<24} {len(bottoms)} {len(tops)} " + " ".join(bottoms + tops + fields))
        self.consumed.update(bottoms)

    def raw(self, values):
        self.bin += np.asarray(values, "<f4").tobytes()

    def weights(self, wq=None, wf=None):
        if wq is not None:
            self.bin += struct.pack("<I", TAG_INT8) + np.asarray(wq, np.int8).tobytes()
            while len(self.bin) % 4:
                self.bin.append(0)
        else:
            self.bin += struct.pack("<I", 0) + np.asarray(wf, "<f4").tobytes()

    def write(self, param_path, bin_path):
        blob_count = len({t for line in self.lines for t in line.split()[4:]
                          if "=" not in t})  # every blob name, inputs and outputs
        with open(param_path, "w") as f:
            f.write(f"7767517\n{len(self.lines)} {blob_count}\n" + "\n".join(self.lines) + "\n")
        with open(bin_path, "wb") as f:
            f.write(bytes(self.bin))

    def outputs(self):
        """The blobs no layer reads (ncnn's and ninegrid's model outputs), as float32 arrays."""
        out = {}
        for name, blob in self.blobs.items():
            if name in self.consumed:
                continue
            out[name] = blob.value.astype(np.float32) / F32(blob.int8_scale) if blob.int8_scale else blob.value
        return out

    # -- scales ---------------------------------------------------------------------------------------
    def scale_for(self, values, saturate=1.0):
        """127 / threshold for data `values` (threshold = absmax / saturate: > 1 clips the largest)."""
        s = 127.0 * saturate / max(float(np.max(np.abs(values))), 1e-6)
        if self.exact:
            return pow2_floor(s * 1.5)
        return float(F32(s * self.rng.uniform(0.9, 1.1)))

    def weight_scales(self, w):
        """Per output channel 127 / absmax (power of two when exact); inf for an all-zero filter, as
        ncnn2table computes it (127 / 0)."""
        absmax = np.max(np.abs(w.reshape(w.shape[0], -1)), axis=1)
        with np.errstate(divide="ignore"):
            s = 127.0 / absmax
        if self.exact:
            s = np.where(np.isinf(s), s, 2.0 ** np.floor(np.log2(s)))
        return s.astype(np.float32)

    # -- the int8 layers ---------------------------------------------------------------------------------
    def quantised_input(self, bottom, s_in):
        blob = self.blobs[bottom]
        if blob.int8_scale is not None:
            return blob.value  # ncnn reads an int8 blob as it is
        return float2int8(blob.value * F32(s_in))

    def input_scale(self, bottom):
        """The blob's requantisation scale for an int8 blob (ncnn2int8 gives the reader the same), else one
        calibrated scale per blob (ncnn2table's readers of one blob, as after a Split, get the same)."""
        blob = self.blobs[bottom]
        if blob.int8_scale is not None:
            return blob.int8_scale
        if blob.input_scale is None:
            blob.input_scale = self.scale_for(blob.value, saturate=1.2)
        return blob.input_scale

    def finish_int8(self, kind, name, bottom, top, params, sums, w_scales, s_in, bias, act, act_params, requantise):
        """ncnn's dequantisation, activation and optional requantisation of int32 sums [O, ...]."""
        shape = (-1,) + (1,) * (sums.ndim - 1)
        with np.errstate(divide="ignore"):
            factor = np.where(w_scales == 0, F32(0), F32(1) / (F32(s_in) * w_scales.astype(np.float32)))
        y = sums.astype(np.float32) * factor.astype(np.float32).reshape(shape)
        if bias is not None:
            y = (y + bias.astype(np.float32).reshape(shape)).astype(np.float32)
        y = activation(y, act, act_params)
        if requantise:
            s_out = self.scale_for(y)
            real = (y * F32(s_out)).astype(np.float32)
            self.blobs[top] = Blob(float2int8(real), int8_scale=s_out)
            self.requantised[top] = (real, fused_bias_error(bias, s_in, w_scales, s_out, sums.shape[0]))
            self.raw([s_out])
        else:
            self.blobs[top] = Blob(y.astype(np.float32))

    def conv(self, name, bottom, top, out_channels, kernel, stride=1, pad=0, dilation=1, depthwise=False, act=0,
             act_params=(), requantise=False, store_float=False, zero_filter=None, bias=True):
        x = self.blobs[bottom]
        c = x.value.shape[0]
        group = c if depthwise else 1
        w = self.rng.normal(0, 1, (out_channels, c // group, kernel, kernel)).astype(np.float32)
        if zero_filter is not None:
            w[zero_filter] = 0
        s_in = self.input_scale(bottom)
        if depthwise:
            per_group = self.weight_scales(w.reshape(group, -1))
            w_scales = np.repeat(per_group, out_channels // group)
        else:
            per_group = w_scales = self.weight_scales(w)
        # ncnn2int8's weights: float2int8(w * s_w) (an all-zero filter with s_w = inf: NaN, which ncnn's x86
        # build turns into -127; ncnn ignores that channel's sums).
        with np.errstate(invalid="ignore"):
            prod = w * w_scales.reshape(-1, 1, 1, 1)
        wq = np.where(np.isnan(prod), np.int8(-127), float2int8(np.nan_to_num(prod)))
        b = None
        if bias:
            if self.exact:
                unit = np.where(np.isinf(w_scales), 1.0, 1.0 / (s_in * w_scales))
                b = (self.rng.integers(-3000, 3000, out_channels) * unit).astype(np.float32)
            else:
                b = self.rng.normal(0, 0.5, out_channels).astype(np.float32)
        term = (1 if depthwise else 2) + (100 if requantise else 0)
        params = {0: out_channels, 1: kernel, 2: dilation, 3: stride, 4: pad, 5: int(bias), 6: w.size}
        if depthwise:
            params[7] = group
        params[8] = term
        if act:
            params[9] = act
            if act_params:
                params[10] = list(act_params)
        self.layer("ConvolutionDepthWise" if depthwise else "Convolution", name, [bottom], [top], params)
        if store_float:
            # ncnn quantises float weights of an int8 layer when it loads them: float2int8(w * s_w).
            self.weights(wf=w)
            wq = float2int8(w * w_scales.reshape(-1, 1, 1, 1))
        else:
            self.weights(wq=wq)
        if bias:
            self.raw(b)
        self.raw(per_group)
        self.raw([s_in])
        xq = self.quantised_input(bottom, s_in)
        sums = conv_sums(xq, wq, stride, pad, dilation, group)
        self.finish_int8("conv", name, bottom, top, params, sums, w_scales, s_in, b, act, act_params, requantise)

    def inner_product(self, name, bottom, top, out_channels, act=0, zero_output=None):
        x = self.blobs[bottom]
        n_in = x.value.size
        w = self.rng.normal(0, 1, (out_channels, n_in)).astype(np.float32)
        s_in = self.input_scale(bottom)
        w_scales = self.weight_scales(w)
        if zero_output is not None:
            w_scales[zero_output] = 0  # ncnn's explicit "no weights" scale: the output is the bias
        wq = float2int8(w * w_scales.reshape(-1, 1))
        if self.exact:
            unit = np.where(w_scales == 0, 1.0, 1.0 / (s_in * np.where(w_scales == 0, 1, w_scales)))
            b = (self.rng.integers(-3000, 3000, out_channels) * unit).astype(np.float32)
        else:
            b = self.rng.normal(0, 0.5, out_channels).astype(np.float32)
        params = {0: out_channels, 1: 1, 2: w.size, 8: 2}
        if act:
            params[9] = act
        self.layer("InnerProduct", name, [bottom], [top], params)
        self.weights(wq=wq)
        self.raw(b)
        self.raw(w_scales)
        self.raw([s_in])
        xq = self.quantised_input(bottom, s_in).reshape(-1).astype(np.int64)
        sums = wq.astype(np.int64) @ xq
        self.finish_int8("fc", name, bottom, top, params, sums, w_scales, s_in, b, act, (), False)

    # -- float layers --------------------------------------------------------------------------------------
    def split(self, name, bottom, tops):
        self.layer("Split", name, [bottom], tops, {})
        for t in tops:
            self.blobs[t] = self.blobs[bottom]

    def concat(self, name, bottoms, top):
        self.layer("Concat", name, bottoms, [top], {})
        self.blobs[top] = Blob(np.concatenate([self.blobs[b].value for b in bottoms], axis=0))

    def relu(self, name, bottom, top):
        self.layer("ReLU", name, [bottom], [top], {})
        self.blobs[top] = Blob(np.maximum(self.blobs[bottom].value, F32(0)))

    def global_max_pool(self, name, bottom, top):
        self.layer("Pooling", name, [bottom], [top], {0: 0, 4: 1})
        self.blobs[top] = Blob(np.max(self.blobs[bottom].value, axis=(1, 2)))


def build(x, exact, seed=5):
    """The test network on input x [3, H, W]: every int8 layer kind and int8_scale_term form ncnn2int8
    writes, requantised chains (int8 outputs read as they are), float outputs, a Split read by two int8
    convs with one scale, a Concat, weights stored as float, an all-zero filter (scale inf) and an output
    with weight scale 0. Outputs: 'head' (float conv), 'q_out' (an int8 output, dequantised), 'fc'."""
    n = Net(x, exact, seed)
    n.conv("conv0", "data", "c0", 16, 3, stride=2, pad=1, act=1, requantise=True)
    n.conv("dw1", "c0", "c1", 16, 3, pad=1, depthwise=True, act=1, requantise=True)
    n.conv("conv2", "c1", "c2", 24, 1, act=1)
    n.split("split2", "c2", ["c2a", "c2b"])
    n.conv("conv3", "c2a", "c3", 8, 3, pad=1)
    n.conv("conv4", "c2b", "c4", 8, 3, pad=2, dilation=2, act=2, act_params=(0.125,))
    n.concat("cat", ["c3", "c4"], "cat")
    n.relu("cat_relu", "cat", "catr")
    n.split("split_cat", "catr", ["catr_a", "catr_b", "catr_c"])
    n.conv("head", "catr_a", "head", 6, 1, zero_filter=2)
    n.conv("conv6", "catr_b", "c6", 12, 3, stride=2, pad=1, act=1, requantise=True, store_float=True)
    n.conv("conv7", "c6", "q_out", 10, 1, requantise=True)
    n.global_max_pool("pool", "catr_c", "pooled")
    n.inner_product("fc1", "pooled", "h", 12, act=1)
    n.inner_product("fc2", "h", "fc", 5, zero_output=1)
    return n
