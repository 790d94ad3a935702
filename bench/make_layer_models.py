#!/usr/bin/env python3
"""Writes single-layer ONNX models (Conv + Relu) for per-layer comparisons with ONNX Runtime.

Issue 5 asks that depthwise layers beat ONNX Runtime's time for the same layer. A whole-model profile
cannot show ORT's time per layer, so each layer of interest becomes its own model, and bench/compare.py
times ninegrid and ORT on it like any other model:

  /usr/bin/python3 bench/make_layer_models.py            # writes $NINEGRID_CACHE/bench_layers/*.onnx
  /usr/bin/python3 bench/compare.py --threads 1 --models layers:dw

The layers are the depthwise convs of MobileNetV2 (224x224), RetinaFace-MobileNet0.25 (640x640) and
EfficientNet-B0's 5x5 ones, with fixed random weights (seed 0).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.environ.get("NINEGRID_CACHE", os.path.join(ROOT, ".cache"))
OUT_DIR = os.path.join(CACHE, "bench_layers")

# (name, channels, input size, kernel, stride): depthwise, padding kernel // 2.
DEPTHWISE = [
    ("dw_mnv2_32x112_k3s1", 32, 112, 3, 1),
    ("dw_mnv2_96x112_k3s2", 96, 112, 3, 2),
    ("dw_mnv2_144x56_k3s1", 144, 56, 3, 1),
    ("dw_mnv2_144x56_k3s2", 144, 56, 3, 2),
    ("dw_mnv2_192x28_k3s1", 192, 28, 3, 1),
    ("dw_mnv2_384x14_k3s1", 384, 14, 3, 1),
    ("dw_mnv2_576x14_k3s2", 576, 14, 3, 2),
    ("dw_mnv2_960x7_k3s1", 960, 7, 3, 1),
    ("dw_retina_16x320_k3s2", 16, 320, 3, 2),
    ("dw_retina_32x160_k3s1", 32, 160, 3, 1),
    ("dw_retina_64x80_k3s1", 64, 80, 3, 1),
    ("dw_retina_128x40_k3s1", 128, 40, 3, 1),
    ("dw_retina_256x20_k3s1", 256, 20, 3, 1),
    ("dw_effnet_144x56_k5s2", 144, 56, 5, 2),
    ("dw_effnet_240x28_k5s1", 240, 28, 5, 1),
    ("dw_effnet_672x14_k5s1", 672, 14, 5, 1),
]


def depthwise_model(channels, size, kernel, stride, rng):
    w = rng.uniform(-1, 1, size=(channels, 1, kernel, kernel)).astype(np.float32)
    b = rng.uniform(-1, 1, size=(channels,)).astype(np.float32)
    pad = kernel // 2
    conv = helper.make_node("Conv", ["x", "w", "b"], ["c"], group=channels, kernel_shape=[kernel, kernel],
                            pads=[pad] * 4, strides=[stride, stride])
    relu = helper.make_node("Relu", ["c"], ["y"])
    out = (size + 2 * pad - kernel) // stride + 1
    graph = helper.make_graph(
        [conv, relu], "layer",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, channels, out, out])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7  # readable by every ONNX Runtime of the last years
    onnx.checker.check_model(model)
    return model


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    rng = np.random.default_rng(0)
    for name, channels, size, kernel, stride in DEPTHWISE:
        path = os.path.join(OUT_DIR, name + ".onnx")
        onnx.save(depthwise_model(channels, size, kernel, stride, rng), path)
    print(f"wrote {len(DEPTHWISE)} layer models to {OUT_DIR}", file=sys.stderr)


if __name__ == "__main__":
    main()
