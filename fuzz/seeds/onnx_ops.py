"""Small ONNX models of one operator (or a short pattern the graph passes rewrite), a few KB each.

They are seeds for onnx_load_fuzzer and onnx_run_fuzzer: valid models the fuzzer mutates from, one per
operator family and attribute form, so that mutations start inside each op's shape inference and kernel
rather than at the protobuf parser. Shapes are tiny (1x4x6x6) so one run costs microseconds.
"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64
X = (1, 4, 6, 6)  # the usual input: N, C, H, W


def _rng():
    return np.random.default_rng(17)


def _model(nodes, inputs, outputs, inits=(), opset=13):
    """inputs/outputs: (name, elem_type, shape or None); inits: name -> numpy array."""
    graph = helper.make_graph(
        nodes, "seed",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
        [numpy_helper.from_array(np.asarray(a), n) for n, a in dict(inits).items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             producer_name="ninegrid-fuzz-seeds")


def _unary(op, opset=13, **attrs):
    return _model([helper.make_node(op, ["x"], ["y"], **attrs)], [("x", F, X)], [("y", F, None)], opset=opset)


def _w(*shape):
    return (_rng().standard_normal(shape) * 0.1).astype(np.float32)


def _i(*values):
    return np.array(values, dtype=np.int64)


def conv_models():
    yield "conv3x3_pad", _model([helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
                                [("x", F, X)], [("y", F, None)], {"w": _w(8, 4, 3, 3), "b": _w(8)})
    yield "conv_stride_dilation", _model(
        [helper.make_node("Conv", ["x", "w"], ["y"], strides=[2, 2], dilations=[2, 2], pads=[2, 1, 2, 1])],
        [("x", F, X)], [("y", F, None)], {"w": _w(4, 4, 3, 3)})
    yield "conv_depthwise", _model([helper.make_node("Conv", ["x", "w"], ["y"], group=4, pads=[1, 1, 1, 1])],
                                   [("x", F, X)], [("y", F, None)], {"w": _w(4, 1, 3, 3)})
    yield "conv_auto_pad", _model([helper.make_node("Conv", ["x", "w"], ["y"], auto_pad="SAME_UPPER", strides=[2, 2])],
                                  [("x", F, X)], [("y", F, None)], {"w": _w(8, 4, 5, 5)})
    yield "conv_1x1", _model([helper.make_node("Conv", ["x", "w", "b"], ["y"])],
                             [("x", F, X)], [("y", F, None)], {"w": _w(16, 4, 1, 1), "b": _w(16)})
    yield "conv1d", _model([helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1])],
                           [("x", F, (1, 4, 10))], [("y", F, None)], {"w": _w(3, 4, 3)})
    yield "conv_transpose", _model(
        [helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], strides=[2, 2], pads=[1, 1, 1, 1],
                          output_padding=[1, 1])],
        [("x", F, X)], [("y", F, None)], {"w": _w(4, 2, 3, 3), "b": _w(2)})
    # Conv + BatchNorm + Relu + residual Add: what the folding and fusion passes rewrite.
    yield "conv_bn_relu_add", _model(
        [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
         helper.make_node("BatchNormalization", ["c", "s", "bb", "m", "v"], ["n"]),
         helper.make_node("Relu", ["n"], ["r"]),
         helper.make_node("Add", ["r", "x"], ["y"])],
        [("x", F, X)], [("y", F, None)],
        {"w": _w(4, 4, 3, 3), "s": _w(4) + 1, "bb": _w(4), "m": _w(4), "v": np.abs(_w(4)) + 0.5})
    # Squeeze-and-excitation gate: GlobalAveragePool, two 1x1 convs, HardSigmoid, Mul.
    yield "se_block", _model(
        [helper.make_node("GlobalAveragePool", ["x"], ["g"]),
         helper.make_node("Conv", ["g", "w1"], ["h"]), helper.make_node("Relu", ["h"], ["hr"]),
         helper.make_node("Conv", ["hr", "w2"], ["s"]), helper.make_node("HardSigmoid", ["s"], ["sg"]),
         helper.make_node("Mul", ["x", "sg"], ["y"])],
        [("x", F, X)], [("y", F, None)], {"w1": _w(2, 4, 1, 1), "w2": _w(4, 2, 1, 1)})


def pool_models():
    yield "maxpool", _unary("MaxPool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    yield "maxpool_ceil", _unary("MaxPool", kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)
    yield "avgpool_pad", _unary("AveragePool", kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1)
    yield "avgpool_same", _unary("AveragePool", kernel_shape=[2, 2], auto_pad="SAME_LOWER")
    yield "lppool", _unary("LpPool", kernel_shape=[2, 2], p=2)
    yield "global_avg", _unary("GlobalAveragePool")
    yield "global_max", _unary("GlobalMaxPool")


def shape_models():
    yield "reshape", _model([helper.make_node("Reshape", ["x", "s"], ["y"])],
                            [("x", F, X)], [("y", F, None)], {"s": _i(0, -1, 3)})
    yield "flatten", _unary("Flatten", axis=2)
    yield "transpose", _unary("Transpose", perm=[0, 2, 3, 1])
    yield "concat", _model([helper.make_node("Concat", ["x", "x2"], ["y"], axis=1)],
                           [("x", F, X), ("x2", F, (1, 2, 6, 6))], [("y", F, None)])
    yield "split", _model([helper.make_node("Split", ["x", "s"], ["a", "b"], axis=1)],
                          [("x", F, X)], [("a", F, None), ("b", F, None)], {"s": _i(1, 3)})
    yield "split_opset11", _model([helper.make_node("Split", ["x"], ["a", "b"], axis=2, split=[2, 4])],
                                  [("x", F, X)], [("a", F, None), ("b", F, None)], opset=11)
    yield "slice", _model([helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"])],
                          [("x", F, X)], [("y", F, None)],
                          {"st": _i(1, -1), "en": _i(3, -7), "ax": _i(1, 3), "sp": _i(1, -2)})
    yield "slice_opset9", _unary("Slice", opset=9, starts=[0, 1], ends=[2, 5], axes=[1, 2])
    yield "squeeze_unsqueeze", _model(
        [helper.make_node("Unsqueeze", ["x", "a"], ["u"]), helper.make_node("Squeeze", ["u", "a"], ["y"])],
        [("x", F, X)], [("y", F, None)], {"a": _i(0)})
    yield "unsqueeze_opset11", _unary("Unsqueeze", opset=11, axes=[0, 5])
    yield "pad_reflect", _model([helper.make_node("Pad", ["x", "p"], ["y"], mode="reflect")],
                                [("x", F, X)], [("y", F, None)], {"p": _i(0, 0, 1, 2, 0, 0, 2, 1)})
    yield "pad_constant_opset9", _unary("Pad", opset=9, pads=[0, 1, 1, 1, 0, 1, 1, 1], value=0.5)
    yield "expand", _model([helper.make_node("Expand", ["x", "s"], ["y"])],
                           [("x", F, (1, 4, 1, 6))], [("y", F, None)], {"s": _i(2, 1, 3, 1)})
    yield "tile", _model([helper.make_node("Tile", ["x", "r"], ["y"])],
                         [("x", F, X)], [("y", F, None)], {"r": _i(1, 2, 1, 2)})
    yield "depth_to_space", _unary("DepthToSpace", blocksize=2, mode="CRD")
    yield "space_to_depth", _unary("SpaceToDepth", blocksize=2)
    yield "gather", _model([helper.make_node("Gather", ["x", "i"], ["y"], axis=1)],
                           [("x", F, X)], [("y", F, None)], {"i": _i(3, 0, -1)})
    yield "gather_elements", _model([helper.make_node("GatherElements", ["x", "i"], ["y"], axis=0)],
                                    [("x", F, (3, 3))], [("y", F, None)], {"i": np.array([[1, 2, 0], [2, 0, 0]])})
    # Shape arithmetic as exporters write it: Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
    yield "shape_chain", _model(
        [helper.make_node("Shape", ["x"], ["sh"]),
         helper.make_node("Gather", ["sh", "zero"], ["n"], axis=0),
         helper.make_node("Unsqueeze", ["n", "zeros"], ["n1"]),
         helper.make_node("Concat", ["n1", "minus1"], ["target"], axis=0),
         helper.make_node("Reshape", ["x", "target"], ["y"])],
        [("x", F, X)], [("y", F, None)],
        {"zero": np.array(0, dtype=np.int64), "zeros": _i(0), "minus1": _i(-1)})
    yield "constant_of_shape", _model(
        [helper.make_node("ConstantOfShape", ["s"], ["c"], value=helper.make_tensor("v", F, [1], [2.0])),
         helper.make_node("Add", ["x", "c"], ["y"])],
        [("x", F, X)], [("y", F, None)], {"s": _i(1, 4, 1, 6)})
    yield "range_cast", _model(
        [helper.make_node("Range", ["a", "b", "d"], ["r"]), helper.make_node("Cast", ["r"], ["y"], to=F)],
        [], [("y", F, None)], {"a": np.array(1, np.int64), "b": np.array(9, np.int64), "d": np.array(3, np.int64)})
    yield "constant_node", _model(
        [helper.make_node("Constant", [], ["c"], value_floats=[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
         helper.make_node("Mul", ["x", "c"], ["y"])],
        [("x", F, X)], [("y", F, None)])


def resize_models():
    yield "resize_scales_nearest", _model(
        [helper.make_node("Resize", ["x", "", "s"], ["y"], mode="nearest", nearest_mode="floor")],
        [("x", F, X)], [("y", F, None)], {"s": np.array([1, 1, 2, 2], dtype=np.float32)})
    yield "resize_sizes_linear", _model(
        [helper.make_node("Resize", ["x", "", "", "sz"], ["y"], mode="linear",
                          coordinate_transformation_mode="align_corners")],
        [("x", F, X)], [("y", F, None)], {"sz": _i(1, 4, 9, 4)})
    yield "resize_opset11", _model(
        [helper.make_node("Resize", ["x", "roi", "s"], ["y"], mode="linear",
                          coordinate_transformation_mode="half_pixel")],
        [("x", F, X)], [("y", F, None)],
        {"roi": np.zeros(0, np.float32), "s": np.array([1, 1, 1.5, 0.5], dtype=np.float32)}, opset=11)
    yield "upsample_opset9", _model([helper.make_node("Upsample", ["x", "s"], ["y"], mode="nearest")],
                                    [("x", F, X)], [("y", F, None)],
                                    {"s": np.array([1, 1, 2, 3], dtype=np.float32)}, opset=9)


def runtime_shape_models():
    """Shape arguments given as model inputs: the session plans by the contents the harness binds."""
    yield "tile_repeats_input", _model([helper.make_node("Tile", ["x", "r"], ["y"])],
                                       [("x", F, X), ("r", I64, (4,))], [("y", F, None)])
    yield "constant_of_shape_input", _model([helper.make_node("ConstantOfShape", ["s"], ["y"])],
                                            [("s", I64, (3,))], [("y", F, None)])
    yield "reshape_target_input", _model([helper.make_node("Reshape", ["x", "t"], ["y"])],
                                         [("x", F, X), ("t", I64, (4,))], [("y", F, None)])


def math_models():
    for op in ["Relu", "Sigmoid", "Tanh", "Exp", "Abs", "Neg", "Sqrt", "Softplus", "HardSwish", "Erf", "Floor"]:
        yield op.lower(), _unary(op, opset=14 if op == "HardSwish" else 13)
    yield "leaky_relu", _unary("LeakyRelu", alpha=0.2)
    yield "elu", _unary("Elu", alpha=0.7)
    yield "hard_sigmoid", _unary("HardSigmoid", alpha=0.3, beta=0.4)
    yield "clip", _model([helper.make_node("Clip", ["x", "lo", "hi"], ["y"])],
                         [("x", F, X)], [("y", F, None)],
                         {"lo": np.array(-0.5, np.float32), "hi": np.array(0.5, np.float32)})
    yield "clip_opset6", _unary("Clip", opset=6, min=-1.0, max=1.0)
    yield "prelu", _model([helper.make_node("PRelu", ["x", "s"], ["y"])],
                          [("x", F, X)], [("y", F, None)], {"s": _w(4, 1, 1)})
    yield "softmax", _unary("Softmax", axis=1)
    yield "softmax_opset11", _unary("Softmax", opset=11, axis=2)
    yield "log_softmax", _unary("LogSoftmax", axis=-1)
    yield "hardmax", _unary("Hardmax", axis=3)
    yield "reduce_mean", _unary("ReduceMean", axes=[2, 3], keepdims=1)
    yield "reduce_sum", _model([helper.make_node("ReduceSum", ["x", "a"], ["y"], keepdims=0)],
                               [("x", F, X)], [("y", F, None)], {"a": _i(1)})
    yield "argmax", _unary("ArgMax", axis=1, keepdims=0)
    yield "broadcast_add", _model([helper.make_node("Add", ["x", "b"], ["y"])],
                                  [("x", F, X)], [("y", F, None)], {"b": _w(4, 1, 1)})
    yield "div_pow", _model([helper.make_node("Div", ["x", "d"], ["q"]), helper.make_node("Pow", ["q", "e"], ["y"])],
                            [("x", F, X)], [("y", F, None)],
                            {"d": np.array(2.0, np.float32), "e": np.array(2.0, np.float32)})
    yield "where_compare", _model(
        [helper.make_node("Greater", ["x", "z"], ["c"]), helper.make_node("Where", ["c", "x", "z"], ["y"])],
        [("x", F, X)], [("y", F, None)], {"z": np.array(0.0, np.float32)})
    yield "gemm", _model([helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1, alpha=0.5)],
                         [("x", F, (2, 8))], [("y", F, None)], {"w": _w(5, 8), "b": _w(5)})
    yield "matmul_batched", _model([helper.make_node("MatMul", ["x", "w"], ["y"])],
                                   [("x", F, (2, 3, 4))], [("y", F, None)], {"w": _w(4, 5)})
    yield "batchnorm", _model([helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"])],
                              [("x", F, X)], [("y", F, None)],
                              {"s": _w(4), "b": _w(4), "m": _w(4), "v": np.abs(_w(4)) + 0.1})
    yield "instance_norm", _model([helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"])],
                                  [("x", F, X)], [("y", F, None)], {"s": _w(4), "b": _w(4)})
    yield "lrn", _unary("LRN", size=3)
    yield "identity_dropout", _model(
        [helper.make_node("Identity", ["x"], ["i"]), helper.make_node("Dropout", ["i"], ["y"])],
        [("x", F, X)], [("y", F, None)])
    yield "mixed_types", _model(
        [helper.make_node("Cast", ["x"], ["xi"], to=TensorProto.INT32),
         helper.make_node("Add", ["xi", "one"], ["s"]), helper.make_node("Cast", ["s"], ["y"], to=TensorProto.DOUBLE)],
        [("x", F, X)], [("y", TensorProto.DOUBLE, None)], {"one": np.array(1, np.int32)})


def all_models():
    """(name, ModelProto) for every seed."""
    for family in (conv_models, pool_models, shape_models, resize_models, runtime_shape_models, math_models):
        yield from family()
