"""ONNX Runtime as an exact int8 oracle on x86-64 CPUs without VNNI.

On such a CPU (AVX2 only, or AVX-512 without VNNI: Zen 3, Skylake-X) ONNX Runtime 1.30 runs uint8 x int8
products with `vpmaddubsw`, which adds two 16-bit products with saturation, so its convolutions are not
exact there; ORT's quantisation guide and OpenVINO's "saturation issue" page describe the same limit. With
int8 activations its QDQ transformer first turns them into uint8 (`session.qdqisint8allowed` is off on x86),
which lands on the same kernel. Measured on a Zen 3 core: the torchvision MobileNetV2 QDQ file scored a cosine
of 0.805 against ORT's own unfused float run of it, while ninegrid, its `--isa ref` reference and ORT on the
re-encoding below all gave the same output.

The re-encoding: every int8 tensor of the model (weights, zero points, constant inputs) becomes uint8 with
128 added, value and zero point alike, so every real value, every rounding and every integer sum is the
same; ORT then takes its uint8 x uint8 kernels, which widen to 16 bits and cannot saturate. On a CPU with
VNNI the model is left as it is: ORT's int8 kernels are exact there.
"""
import os
import platform

import numpy as np


def cpu_has_vnni():
    """Whether this x86-64 CPU has VNNI (AVX-512 VNNI or AVX-VNNI); True on any other architecture."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return True
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return True
    return "avx512_vnni" in flags or "avx_vnni" in flags


def _shift_int8(tensor_proto):
    from onnx import numpy_helper
    a = numpy_helper.to_array(tensor_proto)
    if a.dtype != np.int8:
        return False
    tensor_proto.CopyFrom(numpy_helper.from_array((a.astype(np.int16) + 128).astype(np.uint8), tensor_proto.name))
    return True


def uint8_reencoding(model):
    """Re-encodes every int8 initializer and Constant of `model` (an onnx ModelProto, changed in place) as
    uint8 (+128); returns how many tensors changed. Graph inputs and outputs must not be int8 (the tests'
    models take and give floats)."""
    import onnx
    for v in list(model.graph.input) + list(model.graph.output):
        assert v.type.tensor_type.elem_type != onnx.TensorProto.INT8, f"int8 graph input/output {v.name}"
    changed = sum(_shift_int8(t) for t in model.graph.initializer)
    for n in model.graph.node:
        if n.op_type == "Constant":
            changed += sum(_shift_int8(a.t) for a in n.attribute if a.name == "value")
    return changed


def model_for_ort(path, work_dir):
    """The model ORT should run to compute exactly what `path` specifies: `path` itself on a CPU with VNNI or
    when it holds no int8 tensor (a float model), otherwise its uint8 re-encoding, written into `work_dir`."""
    if cpu_has_vnni():
        return path
    import onnx
    m = onnx.load(path)
    if uint8_reencoding(m) == 0:
        return path
    out = os.path.join(work_dir, "u8_" + os.path.basename(path))
    onnx.save(m, out)
    return out
