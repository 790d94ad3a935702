"""Small ONNX models for the InferenceSession tests, written with the onnx package: one per element type of
the engine, with named and unnamed dynamic dimensions, and a pair of models for the concurrency tests."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper

# numpy dtype (None: bfloat16, which crosses as uint16 raw bits) and ONNX type of every engine DataType.
DTYPES = {
    "float32": (np.float32, TensorProto.FLOAT), "float64": (np.float64, TensorProto.DOUBLE),
    "float16": (np.float16, TensorProto.FLOAT16), "bfloat16": (None, TensorProto.BFLOAT16),
    "int8": (np.int8, TensorProto.INT8), "int16": (np.int16, TensorProto.INT16), "int32": (np.int32, TensorProto.INT32),
    "int64": (np.int64, TensorProto.INT64), "uint8": (np.uint8, TensorProto.UINT8),
    "uint16": (np.uint16, TensorProto.UINT16), "uint32": (np.uint32, TensorProto.UINT32),
    "uint64": (np.uint64, TensorProto.UINT64), "bool": (np.bool_, TensorProto.BOOL),
}
# ONNX Runtime's type strings, as its NodeArg.type gives them.
ORT_TYPES = {"float32": "tensor(float)", "float64": "tensor(double)", **{
    k: f"tensor({k})" for k in DTYPES if k not in ("float32", "float64")}}


def _save(graph, path, opset=13):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return path


def every_dtype(directory, name):
    """For element type `name`: input x ['batch', 3]; outputs t = Transpose(x) declared [3, 'batch'] and
    c = Concat(x, x) along axis 0 declared with an unnamed dynamic first dimension."""
    elem = DTYPES[name][1]
    c_shape = helper.make_tensor_type_proto(elem, None)
    dims = c_shape.tensor_type.shape.dim
    dims.add()  # neither dim_value nor dim_param: dynamic and unnamed
    dims.add().dim_value = 3
    graph = helper.make_graph(
        [helper.make_node("Transpose", ["x"], ["t"], name="transpose", perm=[1, 0]),
         helper.make_node("Concat", ["x", "x"], ["c"], name="concat", axis=0)],
        f"every_dtype_{name}",
        [helper.make_tensor_value_info("x", elem, ["batch", 3])],
        [helper.make_tensor_value_info("t", elem, [3, "batch"]), helper.make_value_info("c", c_shape)])
    return _save(graph, os.path.join(directory, f"every_dtype_{name}.onnx"))


def sample(name, shape, seed):
    """Seeded values of element type `name` covering its range (for bfloat16: uint16 bits of finite floats)."""
    rng = np.random.default_rng(seed)
    np_type = DTYPES[name][0]
    if name == "bfloat16":
        floats = rng.standard_normal(shape).astype(np.float32) * 100
        return (floats.view(np.uint32) >> 16).astype(np.uint16)
    if name == "bool":
        return rng.integers(0, 2, shape).astype(np.bool_)
    if np.issubdtype(np_type, np.integer):
        info = np.iinfo(np_type)
        return rng.integers(info.min, info.max, shape, dtype=np_type, endpoint=True)
    return (rng.standard_normal(shape) * 1000).astype(np_type)


def conv_chain(directory, channels=32, size=96, layers=6):
    """x [1, channels, size, size] through `layers` seeded 3x3 convolutions with Relu: a model whose run takes
    long enough (milliseconds) for another thread to do several small runs meanwhile."""
    rng = np.random.default_rng(11)
    nodes, inits, cur = [], [], "x"
    for i in range(layers):
        w = (rng.standard_normal((channels, channels, 3, 3)) / (3 * channels ** 0.5)).astype(np.float32)
        inits.append(onnx.numpy_helper.from_array(w, f"w{i}"))
        nodes.append(helper.make_node("Conv", [cur, f"w{i}"], [f"c{i}"], name=f"conv{i}", pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node("Relu", [f"c{i}"], [f"r{i}"], name=f"relu{i}"))
        cur = f"r{i}"
    shape = [1, channels, size, size]
    graph = helper.make_graph(nodes, "conv_chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info(cur, TensorProto.FLOAT, shape)], inits)
    return _save(graph, os.path.join(directory, "conv_chain.onnx"))


def scaled_relu(directory):
    """y = Relu(x) * 2 for x float32 [1, 16]: a run of a few microseconds."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"], name="relu"), helper.make_node("Add", ["r", "r"], ["y"], name="twice")],
        "scaled_relu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])])
    return _save(graph, os.path.join(directory, "scaled_relu.onnx"))
