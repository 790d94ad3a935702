#!/usr/bin/python3
"""Export RetinaFace-MobileNet0.25, with its real trained weights, from ncnn's format to ONNX.

The ncnn model (shared/models/mnet.25-opt.param + .bin) is read by a small, independent ncnn reader written
here in Python, executed with PyTorch ops, checked against the golden outputs in shared/models/mnet.25-golden/
(512x512 astronaut photo), and only then exported with torch.onnx.export (opset 13, static shapes) to

    <cache>/models/retinaface_mnet25.onnx                     input `data` 1x3x640x640, nine named outputs
    <cache>/models/retinaface_mnet25.input.npy                 astronaut photo resized to 640x640, RGB 0..255
    <cache>/models/retinaface_mnet25.<output name>.npy         PyTorch's outputs on that input

so that ninegrid's ONNX path can be compared with PyTorch on a model with real weights.

Run with Debian's interpreter: /usr/bin/python3 scripts/export_retinaface.py [--cache DIR] [--shared DIR]
"""
import argparse
import os
import struct
import sys
import warnings

import numpy as np
import torch
import torch.nn.functional as F

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ASTRONAUT = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png"
EXPORT_SIZE = 640
GOLDEN_TOLERANCE = 1e-4  # of each output's range, as for the engine itself


# --- ncnn .param ---------------------------------------------------------------------------------------

class NcnnLayer:
    def __init__(self, type_, name, inputs, outputs, params):
        self.type = type_
        self.name = name
        self.inputs = inputs
        self.outputs = outputs
        self.params = params  # {int key: int | float | list}

    def get(self, key, default):
        return self.params.get(key, default)


def _parse_value(text):
    # ncnn writes floats with a '.' or an exponent; everything else is an int.
    if any(c in text for c in ".eE") and not text.lstrip("-").isdigit():
        return float(text)
    return int(text)


def parse_param(path):
    with open(path) as f:
        tokens_per_line = [line.split() for line in f if line.strip()]
    if not tokens_per_line or tokens_per_line[0] != ["7767517"]:
        raise ValueError(f"{path}: not an ncnn .param file (magic 7767517 missing)")
    layer_count, _blob_count = (int(t) for t in tokens_per_line[1])
    layers = []
    for tokens in tokens_per_line[2:2 + layer_count]:
        type_, name, n_in, n_out = tokens[0], tokens[1], int(tokens[2]), int(tokens[3])
        inputs = tokens[4:4 + n_in]
        outputs = tokens[4 + n_in:4 + n_in + n_out]
        params = {}
        for item in tokens[4 + n_in + n_out:]:
            key_text, value_text = item.split("=", 1)
            key = int(key_text)
            if key <= -23300:  # array: -233xx=count,v0,v1,...
                values = value_text.split(",")
                params[-key - 23300] = [_parse_value(v) for v in values[1:]]
            else:
                params[key] = _parse_value(value_text)
        layers.append(NcnnLayer(type_, name, inputs, outputs, params))
    if len(layers) != layer_count:
        raise ValueError(f"{path}: header says {layer_count} layers, found {len(layers)}")
    return layers


# --- ncnn .bin -----------------------------------------------------------------------------------------

TAG_FLOAT16 = 0x01306B47
TAG_INT8 = 0x000D4B38
TAG_FLOAT32_SCALED = 0x0002C056


class NcnnWeights:
    """Sequential reader of an ncnn .bin, following ncnn's ModelBinFromDataReader::load(w, type)."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = f.read()
        self.offset = 0
        self.float16_arrays = 0

    def _take(self, nbytes):
        if self.offset + nbytes > len(self.data):
            raise ValueError(f".bin truncated: need {nbytes} bytes at offset {self.offset}, file has {len(self.data)}")
        chunk = self.data[self.offset:self.offset + nbytes]
        self.offset += nbytes
        return chunk

    @staticmethod
    def _align4(n):
        return (n + 3) // 4 * 4

    def load(self, count, type_):
        """type 0: a 4-byte storage flag precedes the data; type 1: raw float32, no flag."""
        if type_ == 1:
            return np.frombuffer(self._take(4 * count), dtype="<f4").astype(np.float32)
        if type_ != 0:
            raise ValueError(f"ncnn weight type {type_} not supported")
        flag_bytes = self._take(4)
        tag = struct.unpack("<I", flag_bytes)[0]
        if tag == TAG_FLOAT16:
            self.float16_arrays += 1
            raw = self._take(self._align4(2 * count))
            return np.frombuffer(raw[:2 * count], dtype="<f2").astype(np.float32)
        if tag == TAG_INT8:
            raise ValueError("int8-quantised ncnn weights are not supported by this exporter")
        if tag == TAG_FLOAT32_SCALED:
            return np.frombuffer(self._take(4 * count), dtype="<f4").astype(np.float32)
        if sum(flag_bytes) != 0:
            # 8-bit indices into a 256-entry float32 table.
            table = np.frombuffer(self._take(256 * 4), dtype="<f4")
            indices = np.frombuffer(self._take(self._align4(count)), dtype=np.uint8)[:count]
            return table[indices].astype(np.float32)
        return np.frombuffer(self._take(4 * count), dtype="<f4").astype(np.float32)


# --- the network as torch ops --------------------------------------------------------------------------

def _blob_dim(axis):
    # ncnn blobs are (c, h, w); ours carry a leading batch dimension.
    return axis + 1 if axis >= 0 else axis


class NcnnNet(torch.nn.Module):
    """Runs an ncnn layer list with torch ops. Holds the convolution weights as parameters."""

    SUPPORTED = {"Input", "Convolution", "ConvolutionDepthWise", "Split", "Concat", "ReLU", "Reshape",
                 "Softmax", "Interp", "Crop", "BinaryOp", "Dropout"}

    def __init__(self, param_path, bin_path):
        super().__init__()
        self.layers = parse_param(param_path)
        unsupported = sorted({l.type for l in self.layers} - self.SUPPORTED)
        if unsupported:
            raise ValueError(f"{param_path}: layer types not supported by this exporter: {unsupported}")
        weights = NcnnWeights(bin_path)
        self.weights = torch.nn.ParameterDict()
        for layer in self.layers:
            if layer.type in ("Convolution", "ConvolutionDepthWise"):
                self._load_conv(layer, weights)
        if weights.offset != len(weights.data):
            raise ValueError(f"{bin_path}: {len(weights.data) - weights.offset} bytes left after the last layer")
        self.float16_arrays = weights.float16_arrays
        self.input_names = [l.outputs[0] for l in self.layers if l.type == "Input"]

    @staticmethod
    def _key(layer_name, what):
        return (layer_name + "__" + what).replace(".", "_").replace("/", "_")

    def _load_conv(self, layer, weights):
        num_output = layer.get(0, 0)
        kernel_w = layer.get(1, 0)
        kernel_h = layer.get(11, kernel_w)
        weight_size = layer.get(6, 0)
        group = layer.get(7, 1) if layer.type == "ConvolutionDepthWise" else 1
        if layer.get(8, 0) != 0:
            raise ValueError(f"{layer.name}: int8 convolution not supported")
        in_per_group = weight_size // (num_output * kernel_h * kernel_w)
        if in_per_group * num_output * kernel_h * kernel_w != weight_size:
            raise ValueError(f"{layer.name}: weight_data_size {weight_size} does not fit {num_output}x?x{kernel_h}x{kernel_w}")
        w = weights.load(weight_size, 0).reshape(num_output, in_per_group, kernel_h, kernel_w)
        self.weights[self._key(layer.name, "weight")] = torch.nn.Parameter(torch.from_numpy(w.copy()), requires_grad=False)
        if layer.get(5, 0):
            b = weights.load(num_output, 1)
            self.weights[self._key(layer.name, "bias")] = torch.nn.Parameter(torch.from_numpy(b.copy()), requires_grad=False)
        layer.group = group

    def _conv(self, layer, x):
        kernel_w = layer.get(1, 0)
        dilation_w = layer.get(2, 1)
        dilation_h = layer.get(12, dilation_w)
        stride_w = layer.get(3, 1)
        stride_h = layer.get(13, stride_w)
        pad_left = layer.get(4, 0)
        pad_right = layer.get(15, pad_left)
        pad_top = layer.get(14, pad_left)
        pad_bottom = layer.get(16, pad_top)
        if min(pad_left, pad_right, pad_top, pad_bottom) < 0:
            raise ValueError(f"{layer.name}: ncnn 'same' padding modes (-233/-234) not supported")
        if layer.get(18, 0.0) != 0.0:
            raise ValueError(f"{layer.name}: non-zero pad_value not supported")
        weight = self.weights[self._key(layer.name, "weight")]
        bias_key = self._key(layer.name, "bias")
        bias = self.weights[bias_key] if bias_key in self.weights else None
        if pad_left == pad_right and pad_top == pad_bottom:
            padding = (pad_top, pad_left)
        else:
            x = F.pad(x, (pad_left, pad_right, pad_top, pad_bottom))
            padding = (0, 0)
        y = F.conv2d(x, weight, bias, stride=(stride_h, stride_w), padding=padding,
                     dilation=(dilation_h, dilation_w), groups=layer.group)
        return self._activation(layer, y, layer.get(9, 0), layer.get(10, []))

    @staticmethod
    def _activation(layer, y, kind, params):
        if kind == 0:
            return y
        if kind == 1:
            return F.relu(y)
        if kind == 2:
            return F.leaky_relu(y, params[0])
        if kind == 3:
            return torch.clamp(y, params[0], params[1])
        if kind == 4:
            return torch.sigmoid(y)
        raise ValueError(f"{layer.name}: activation type {kind} not supported")

    def forward(self, *inputs):
        blobs = dict(zip(self.input_names, inputs))
        for layer in self.layers:
            if layer.type == "Input":
                continue
            args = [blobs[name] for name in layer.inputs]
            outs = self._run(layer, args)
            for name, value in zip(layer.outputs, outs):
                blobs[name] = value
        self.blobs = blobs
        return blobs

    def _run(self, layer, args):
        t = layer.type
        x = args[0]
        if t in ("Convolution", "ConvolutionDepthWise"):
            return [self._conv(layer, x)]
        if t in ("Split", "Dropout"):
            return [x] * len(layer.outputs)
        if t == "ReLU":
            slope = layer.get(0, 0.0)
            return [F.relu(x) if slope == 0 else F.leaky_relu(x, slope)]
        if t == "Concat":
            return [torch.cat(args, dim=_blob_dim(layer.get(0, 0)))]
        if t == "Softmax":
            return [torch.softmax(x, dim=_blob_dim(layer.get(0, 0)))]
        if t == "Reshape":
            return [self._reshape(layer, x)]
        if t == "Interp":
            return [self._interp(layer, x)]
        if t == "Crop":
            return [self._crop(layer, args)]
        if t == "BinaryOp":
            return [self._binary(layer, args)]
        raise ValueError(f"{layer.name}: layer type {t} not supported")

    @staticmethod
    def _reshape(layer, x):
        # ncnn Reshape on a (c, h, w) blob: a flat reinterpretation; 0 keeps a dimension, -1 infers it.
        if layer.get(3, 0):
            raise ValueError(f"{layer.name}: Reshape with permute=1 not supported")
        w, h, c = layer.get(0, -233), layer.get(1, -233), layer.get(2, -233)
        if c == -233 or layer.get(11, -233) != -233:
            raise ValueError(f"{layer.name}: only 3-D ncnn Reshape is supported")
        _, in_c, in_h, in_w = (int(d) for d in x.shape)
        total = in_c * in_h * in_w
        w = in_w if w == 0 else w
        h = in_h if h == 0 else h
        c = in_c if c == 0 else c
        if w == -1:
            w = total // (c * h)
        if h == -1:
            h = total // (c * w)
        if c == -1:
            c = total // (h * w)
        if c * h * w != total:
            raise ValueError(f"{layer.name}: cannot reshape {in_c}x{in_h}x{in_w} to {c}x{h}x{w}")
        return x.reshape(1, c, h, w)

    @staticmethod
    def _interp(layer, x):
        resize_type = layer.get(0, 0)
        height_scale, width_scale = layer.get(1, 1.0), layer.get(2, 1.0)
        out_h, out_w = layer.get(3, 0), layer.get(4, 0)
        _, _, in_h, in_w = (int(d) for d in x.shape)
        if out_h == 0 or out_w == 0:
            out_h, out_w = int(in_h * height_scale), int(in_w * width_scale)
        if resize_type != 1:
            raise ValueError(f"{layer.name}: only nearest Interp (0=1) is supported")
        if out_h % in_h == 0 and out_w % in_w == 0:
            # Integer factor: ncnn's nearest (src = floor(dst / factor)) equals torch's nearest.
            return F.interpolate(x, scale_factor=(out_h // in_h, out_w // in_w), mode="nearest")
        raise ValueError(f"{layer.name}: non-integer Interp factors not supported")

    @staticmethod
    def _crop(layer, args):
        x = args[0]
        w_off, h_off, c_off = layer.get(0, 0), layer.get(1, 0), layer.get(2, 0)
        if len(args) == 2:
            _, out_c, out_h, out_w = (int(d) for d in args[1].shape)
        else:
            _, in_c, in_h, in_w = (int(d) for d in x.shape)
            out_w = layer.get(3, 0) or in_w - w_off
            out_h = layer.get(4, 0) or in_h - h_off
            out_c = layer.get(5, 0) or in_c - c_off
        return x[:, c_off:c_off + out_c, h_off:h_off + out_h, w_off:w_off + out_w]

    @staticmethod
    def _binary(layer, args):
        op = layer.get(0, 0)
        if layer.get(1, 0):  # with_scalar
            b = layer.get(2, 0.0)
        else:
            b = args[1]
        a = args[0]
        ops = {0: torch.add, 1: torch.sub, 2: torch.mul, 3: torch.div, 4: torch.maximum, 5: torch.minimum}
        if op not in ops:
            raise ValueError(f"{layer.name}: BinaryOp type {op} not supported")
        if not torch.is_tensor(b):
            b = torch.tensor(b, dtype=a.dtype)
        return ops[op](a, b)


class RetinaFaceOutputs(torch.nn.Module):
    """The network with a fixed output tuple, for export."""

    def __init__(self, net, output_names):
        super().__init__()
        self.net = net
        self.output_names = output_names

    def forward(self, data):
        blobs = self.net(data)
        return tuple(blobs[name] for name in self.output_names)


OUTPUT_NAMES = [f"face_rpn_{kind}_stride{stride}"
                for stride in (32, 16, 8)
                for kind in ("cls_prob_reshape", "bbox_pred", "landmark_pred")]


# --- inputs --------------------------------------------------------------------------------------------

def load_astronaut():
    from skimage import io
    image = io.imread(ASTRONAUT)
    if image.shape != (512, 512, 3) or image.dtype != np.uint8:
        raise ValueError(f"{ASTRONAUT}: expected 512x512 RGB uint8, got {image.shape} {image.dtype}")
    return image


def letterbox_chw(image, size):
    """Scale the longer side to `size` (bilinear), pad the rest with 0 at the bottom/right; float32 CHW, 0..255."""
    h, w, _ = image.shape
    scale = size / max(h, w)
    new_h, new_w = round(h * scale), round(w * scale)
    x = torch.from_numpy(image).permute(2, 0, 1)[None].float()
    x = F.interpolate(x, size=(new_h, new_w), mode="bilinear", align_corners=False)
    x = x.round().clamp(0, 255)
    canvas = torch.zeros(1, 3, size, size)
    canvas[:, :, :new_h, :new_w] = x
    return canvas


# --- main ----------------------------------------------------------------------------------------------

def check_against_golden(net, golden_dir):
    image = load_astronaut()
    x = torch.from_numpy(image).permute(2, 0, 1)[None].float().contiguous()
    with torch.no_grad():
        blobs = net(x)
    worst = 0.0
    for name in OUTPUT_NAMES:
        golden = np.load(os.path.join(golden_dir, name + ".npy"))
        ours = blobs[name][0].numpy()
        if ours.shape != golden.shape:
            raise SystemExit(f"golden check FAILED: {name}: shape {ours.shape}, golden {golden.shape}")
        err = float(np.abs(ours - golden).max())
        span = float(golden.max() - golden.min())
        rel = err / span
        worst = max(worst, rel)
        print(f"  golden {name:36s} {str(golden.shape):14s} max|diff| {err:.3g}  = {rel:.2e} of range")
        if rel > GOLDEN_TOLERANCE:
            raise SystemExit(f"golden check FAILED: {name} differs by {rel:.2e} of its range "
                             f"(limit {GOLDEN_TOLERANCE}): the ncnn reader is wrong")
    print(f"golden check passed: worst {worst:.2e} of range (limit {GOLDEN_TOLERANCE})")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", default=os.environ.get("NINEGRID_CACHE", os.path.join(REPO, ".cache")))
    parser.add_argument("--shared", default=os.environ.get("NINEGRID_SHARED", os.path.join(REPO, "..", "shared")))
    args = parser.parse_args()

    torch.set_grad_enabled(False)
    model_dir = os.path.join(args.shared, "models")
    param_path = os.path.join(model_dir, "mnet.25-opt.param")
    bin_path = os.path.join(model_dir, "mnet.25-opt.bin")
    for path in (param_path, bin_path):
        if not os.path.exists(path):
            raise SystemExit(f"missing {path} (shared/ must sit beside the repository, or pass --shared)")

    net = NcnnNet(param_path, bin_path).eval()
    print(f"read {param_path}: {len(net.layers)} layers, {len(net.weights)} weight arrays "
          f"({net.float16_arrays} stored as float16)")
    check_against_golden(net, os.path.join(model_dir, "mnet.25-golden"))

    out_dir = os.path.join(args.cache, "models")
    os.makedirs(out_dir, exist_ok=True)
    model = RetinaFaceOutputs(net, OUTPUT_NAMES).eval()
    x = letterbox_chw(load_astronaut(), EXPORT_SIZE)
    outputs = model(x)

    onnx_path = os.path.join(out_dir, "retinaface_mnet25.onnx")
    tmp_path = onnx_path + ".tmp"
    with warnings.catch_warnings():
        # The tracer warns that shapes become constants: intended, the export has static shapes.
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (x,), tmp_path, opset_version=13, input_names=["data"],
                          output_names=OUTPUT_NAMES, do_constant_folding=True)
    np.save(os.path.join(out_dir, "retinaface_mnet25.input.npy"), x.numpy().astype(np.float32))
    for name, value in zip(OUTPUT_NAMES, outputs):
        np.save(os.path.join(out_dir, f"retinaface_mnet25.{name}.npy"), value.numpy().astype(np.float32))
    os.replace(tmp_path, onnx_path)  # last, so a present .onnx means a complete export
    print(f"wrote {onnx_path} (input data 1x3x{EXPORT_SIZE}x{EXPORT_SIZE}) and its input/output .npy files")
    for name, value in zip(OUTPUT_NAMES, outputs):
        print(f"  {name:36s} {tuple(value.shape)}")

    # The same network with a 320x320 input, for the benchmarks (ONNX Runtime needs a file per size).
    small_path = os.path.join(out_dir, "retinaface_mnet25_320.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (letterbox_chw(load_astronaut(), 320),), small_path + ".tmp", opset_version=13,
                          input_names=["data"], output_names=OUTPUT_NAMES, do_constant_folding=True)
    os.replace(small_path + ".tmp", small_path)
    print(f"wrote {small_path} (input data 1x3x320x320, for benchmarks)")


if __name__ == "__main__":
    sys.exit(main())
