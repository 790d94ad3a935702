"""Tiny ONNX models written by the tests themselves (with the onnx package), for cases the shared models do not
have: two inputs, an int64 input."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def _save(graph, path):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return path


def two_inputs(directory):
    """out = Relu(Conv(x, W) + y): x and y float32 1x4x8x8, W a seeded 4x4x3x3 weight."""
    w = np.random.RandomState(7).standard_normal((4, 4, 3, 3)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
         helper.make_node("Add", ["c", "y"], ["s"], name="add"),
         helper.make_node("Relu", ["s"], ["out"], name="relu")],
        "two_inputs",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 4, 8, 8])],
        [numpy_helper.from_array(w, "w")])
    return _save(graph, os.path.join(directory, "two_inputs.onnx")), w


def int64_input(directory):
    """twice = a + a, for an int64 input a of shape [6]."""
    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "a"], ["twice"], name="add")],
        "int64_input",
        [helper.make_tensor_value_info("a", TensorProto.INT64, [6])],
        [helper.make_tensor_value_info("twice", TensorProto.INT64, [6])])
    return _save(graph, os.path.join(directory, "int64_input.onnx"))


def conv_reference(x, w):
    """Conv with 3x3 kernels, stride 1, pad 1, in float64."""
    n, c, h, wd = x.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((n, w.shape[0], h, wd))
    for i in range(3):
        for j in range(3):
            out += np.einsum("nchw,oc->nohw", xp[:, :, i:i + h, j:j + wd], w[:, :, i, j].astype(np.float64))
    return out
