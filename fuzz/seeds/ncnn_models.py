"""Small ncnn models (.param text and .bin weights) covering every layer type ninegrid maps, and the real
RetinaFace and SqueezeNet params.

ncnn_load_fuzzer reads one input as `param text, NUL, bin bytes`; ncnn_models() yields those joined.
Weights use every storage form of the .bin: raw float32 (type 1 blobs), and for type 0 blobs float32
with a zero tag, float16 with its tag, the 256-entry lookup table, and int8 (ncnn2int8's quantised layers,
followed by their weight, input and output scales).
"""
import struct

import numpy as np

TAG_F16 = 0x01306B47
TAG_INT8 = 0x000D4B38


class Net:
    """Builds a .param text and its .bin. Layers must be added in execution order."""

    def __init__(self):
        self.lines, self.blobs, self.bin = [], [], bytearray()

    def layer(self, type_, name, bottoms, tops, params=None, weights=()):
        """params: key -> int, float or list (written as ncnn's array key -23300-key).
        weights: (array, storage) with storage 'raw' (type 1), 'f32', 'f16', 'lut' or 'i8' (type 0)."""
        text = []
        for key, v in (params or {}).items():
            if isinstance(v, (list, tuple)):
                text.append("%d=%d,%s" % (-23300 - key, len(v), ",".join(_num(x) for x in v)))
            else:
                text.append("%d=%s" % (key, _num(v)))
        self.lines.append(" ".join([type_, name, str(len(bottoms)), str(len(tops))] + list(bottoms) + list(tops) + text))
        self.blobs += tops
        for array, storage in weights:
            self.bin += _blob(np.asarray(array, dtype=np.float32).ravel(), storage)
        return tops[0] if tops else None

    def param(self):
        return "7767517\n%d %d\n%s\n" % (len(self.lines), len(set(self.blobs)), "\n".join(self.lines))


def _num(v):
    return repr(float(v)) if isinstance(v, float) else str(int(v))


def _pad4(b):
    return b + b"\0" * (-len(b) % 4)


def _blob(w, storage):
    if storage == "raw":
        return w.astype("<f4").tobytes()
    if storage == "f32":
        return struct.pack("<I", 0) + w.astype("<f4").tobytes()
    if storage == "f16":
        return struct.pack("<I", TAG_F16) + _pad4(w.astype("<f2").tobytes())
    if storage == "i8":
        return struct.pack("<I", TAG_INT8) + _pad4(np.clip(np.round(w * 127), -127, 127).astype(np.int8).tobytes())
    if storage == "lut":
        table = np.linspace(-1, 1, 256, dtype="<f4")
        index = np.clip(np.round((w + 1) * 127.5), 0, 255).astype(np.uint8)
        return bytes([1, 0, 0, 0]) + table.tobytes() + _pad4(index.tobytes())
    raise ValueError(storage)


def _w(*shape):
    return np.random.default_rng(5).standard_normal(shape).astype(np.float32) * 0.1


def _input(net, c=4, h=6, w=6):
    return net.layer("Input", "data", [], ["data"], {0: w, 1: h, 2: c})


def conv_pool_fc():
    n = Net()
    x = _input(n)
    x = n.layer("Convolution", "conv", [x], ["conv"], {0: 8, 1: 3, 4: 1, 5: 1, 6: 8 * 4 * 9, 9: 1},
                [(_w(8, 4, 3, 3), "f16"), (_w(8), "raw")])
    x = n.layer("Pooling", "pool", [x], ["pool"], {0: 0, 1: 2, 2: 2})
    x = n.layer("InnerProduct", "fc", [x], ["fc"], {0: 5, 1: 1, 2: 5 * 8 * 9}, [(_w(5, 72), "f32"), (_w(5), "raw")])
    n.layer("Softmax", "prob", [x], ["prob"], {0: 0})
    return n


def depthwise_bn_scale_prelu():
    n = Net()
    x = _input(n)
    x = n.layer("ConvolutionDepthWise", "dw", [x], ["dw"], {0: 4, 1: 3, 3: 2, 4: 1, 6: 36, 7: 4}, [(_w(4, 1, 3, 3), "lut")])
    x = n.layer("BatchNorm", "bn", [x], ["bn"], {0: 4, 1: 1e-5},
                [(_w(4) + 1, "raw"), (_w(4), "raw"), (np.abs(_w(4)) + 1, "raw"), (_w(4), "raw")])
    x = n.layer("Scale", "scale", [x], ["scale"], {0: 4, 1: 1}, [(_w(4), "raw"), (_w(4), "raw")])
    n.layer("PReLU", "prelu", [x], ["prelu"], {0: 4}, [(_w(4), "raw")])
    return n


def split_eltwise_concat():
    n = Net()
    x = _input(n)
    n.layer("Split", "split", [x], ["s0", "s1", "s2"])
    a = n.layer("Convolution", "ca", ["s0"], ["ca"], {0: 4, 1: 1, 6: 16}, [(_w(4, 4), "f32")])
    b = n.layer("Convolution", "cb", ["s1"], ["cb"], {0: 4, 1: 1, 6: 16, 9: 2, 10: [0.1]}, [(_w(4, 4), "f16")])
    e = n.layer("Eltwise", "sum", [a, b], ["sum"], {0: 1, 1: [0.5, 2.0]})
    c = n.layer("Concat", "cat", [e, "s2"], ["cat"], {0: 0})
    n.layer("BinaryOp", "mul", [c], ["mul"], {0: 2, 1: 1, 2: 0.5})
    return n


def deconv_crop_interp():
    n = Net()
    x = _input(n)
    x = n.layer("Deconvolution", "up", [x], ["up"], {0: 2, 1: 3, 3: 2, 4: 1, 5: 1, 6: 2 * 4 * 9},
                [(_w(4, 2, 3, 3), "f16"), (_w(2), "raw")])
    x = n.layer("Crop", "crop", [x], ["crop"], {0: 1, 1: 1, 3: 8, 4: 8})
    x = n.layer("Interp", "interp", [x], ["interp"], {0: 2, 1: 2.0, 2: 2.0})
    n.layer("Sigmoid", "sig", [x], ["sig"])
    return n


def deconv_depthwise_same():
    n = Net()
    x = _input(n)
    x = n.layer("DeconvolutionDepthWise", "dwup", [x], ["dwup"], {0: 4, 1: 2, 3: 2, 6: 16, 7: 4}, [(_w(4, 1, 2, 2), "f32")])
    x = n.layer("Convolution", "same", [x], ["same"], {0: 4, 1: 3, 3: 2, 4: -233, 6: 144, 9: 3, 10: [-1.0, 1.0]},
                [(_w(4, 4, 3, 3), "f32")])
    n.layer("Convolution", "padval", [x], ["padval"], {0: 2, 1: 3, 4: 1, 18: 0.5, 6: 72, 9: 6, 10: [0.2, 0.5]},
            [(_w(2, 4, 3, 3), "f16")])
    return n


def shape_layers():
    n = Net()
    x = _input(n)
    x = n.layer("Padding", "pad", [x], ["pad"], {0: 1, 1: 1, 2: 2, 3: 0, 4: 0, 5: 0.25})
    x = n.layer("Clip", "clip", [x], ["clip"], {0: -0.5, 1: 0.5})
    x = n.layer("HardSigmoid", "hsig", [x], ["hsig"], {0: 0.2, 1: 0.5})
    x = n.layer("HardSwish", "hswish", [x], ["hswish"], {0: 0.2, 1: 0.5})
    x = n.layer("TanH", "tanh", [x], ["tanh"])
    x = n.layer("AbsVal", "abs", [x], ["abs"])
    x = n.layer("Dropout", "drop", [x], ["drop"], {0: 1.0})
    x = n.layer("Permute", "perm", [x], ["perm"], {0: 3})
    x = n.layer("Reshape", "reshape", [x], ["reshape"], {0: -1, 1: 4})
    x = n.layer("ReLU", "leaky", [x], ["leaky"], {0: 0.1})
    n.layer("Flatten", "flat", [x], ["flat"])
    return n


def head_like_retinaface():
    """The pattern of RetinaFace's score heads: conv, reshape to 2 channels, softmax, reshape back."""
    n = Net()
    x = _input(n, 4, 4, 4)
    x = n.layer("Convolution", "cls", [x], ["cls"], {0: 4, 1: 1, 5: 1, 6: 16}, [(_w(4, 4), "f16"), (_w(4), "raw")])
    x = n.layer("Reshape", "r1", [x], ["r1"], {0: 0, 1: -1, 2: 2})
    x = n.layer("Softmax", "sm", [x], ["sm"], {0: 0, 1: 1})
    n.layer("Reshape", "r2", [x], ["r2"], {0: 4, 1: 4, 2: -1})
    return n


def two_inputs_binary_crop():
    n = Net()
    a = n.layer("Input", "a", [], ["a"], {0: 6, 1: 6, 2: 4})
    b = n.layer("Input", "b", [], ["b"], {0: 1, 1: 1, 2: 4})
    s = n.layer("BinaryOp", "add", [a, b], ["add"], {0: 0})
    m = n.layer("BinaryOp", "max", [s, a], ["max"], {0: 4})
    n.layer("Crop", "crop", [m, b], ["crop"])
    return n


def dynamic_input_conv():
    """An Input without a size: shapes are only known when a session binds one."""
    n = Net()
    x = n.layer("Input", "data", [], ["data"])
    n.layer("Convolution", "conv", [x], ["conv"], {0: 2, 1: 3, 2: 2, 6: 54}, [(_w(2, 3, 3, 3), "f32")])
    return n


def int8_layers():
    """ncnn2int8's output: int8 weights and scales; a requantising chain (int8_scale_term 102, 101), a
    depthwise layer with per-group scales, float-stored weights quantised at load, an InnerProduct."""
    n = Net()
    x = _input(n)
    x = n.layer("Convolution", "c0", [x], ["c0"], {0: 8, 1: 3, 4: 1, 5: 1, 6: 8 * 4 * 9, 8: 102, 9: 1},
                [(_w(8, 4, 3, 3) * 9, "i8"), (_w(8), "raw"), (np.full(8, 120.0), "raw"), ([60.0], "raw"), ([30.0], "raw")])
    x = n.layer("ConvolutionDepthWise", "dw", [x], ["dw"], {0: 8, 1: 3, 4: 1, 5: 1, 6: 72, 7: 8, 8: 101, 9: 1},
                [(_w(8, 1, 3, 3) * 9, "i8"), (_w(8), "raw"), (np.full(8, 90.0), "raw"), ([30.0], "raw"), ([20.0], "raw")])
    x = n.layer("Convolution", "c2", [x], ["c2"], {0: 4, 1: 1, 5: 0, 6: 32, 8: 2},
                [(_w(4, 8), "f32"), (np.full(4, 500.0), "raw"), ([20.0], "raw")])
    n.layer("InnerProduct", "fc", [x], ["fc"], {0: 3, 1: 1, 2: 3 * 4 * 36, 8: 2},
            [(_w(3, 144) * 9, "i8"), (_w(3), "raw"), (np.full(3, 100.0), "raw"), ([10.0], "raw")])
    return n


GENERATED = [conv_pool_fc, depthwise_bn_scale_prelu, split_eltwise_concat, deconv_crop_interp,
             deconv_depthwise_same, shape_layers, head_like_retinaface, two_inputs_binary_crop, dynamic_input_conv,
             int8_layers]


def generated_models():
    """(name, param text, bin bytes) of the small generated models."""
    for make in GENERATED:
        net = make()
        yield make.__name__, net.param(), bytes(net.bin)


def joined(param, weights):
    """One ncnn_load_fuzzer input: the param text, a NUL, the weights."""
    return param.encode() + b"\0" + weights
