"""Seeds cut from real ONNX models: short runs of consecutive nodes ("windows") saved as models of their own.

A whole real model is megabytes, far beyond what libFuzzer mutates at a useful speed, but its operators,
attribute forms and patterns (Conv+BN+activation, squeeze-excitation gates, channel shuffles, Resize
pyramids, shape arithmetic) are exactly what a hostile file would imitate. A window keeps those: its
outside inputs become graph inputs with the shapes ONNX shape inference gives them, small initializers are
kept, and large float ones are replaced by a ConstantOfShape node of the same shape, so the seed stays a
few KB while the engine still sees constant weights of the real sizes.
"""
import numpy as np
import onnx
from onnx import helper, numpy_helper, shape_inference

MAX_INIT_BYTES = 4096       # larger float initializers become ConstantOfShape
MAX_SEED_BYTES = 48 * 1024  # windows that serialise larger are dropped
WINDOW_LENGTHS = (1, 2, 3, 5, 8)
# Windows meant to be run (onnx_run_fuzzer): image inputs cut to at most SMALL_SIDE x SMALL_SIDE, and at
# most SMALL_WEIGHTS weight elements, so that one run takes milliseconds, not seconds, under ASan.
SMALL_SIDE = 8
SMALL_WEIGHTS = 32 * 1024


def _static_types(model):
    """Tensor name -> TypeProto for every value with a fully known shape (inputs, outputs, value_info)."""
    try:
        inferred = shape_inference.infer_shapes(model)
    except Exception:  # shape inference rejects some exports; windows then only use declared inputs
        inferred = model
    g = inferred.graph
    types = {}
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        t = vi.type.tensor_type
        if vi.type.HasField("tensor_type") and t.HasField("shape") and \
                all(d.HasField("dim_value") for d in t.shape.dim):
            types[vi.name] = vi.type
    return types


def _constant_of_shape(name, array):
    """A node that makes a float tensor of `array`'s shape: a constant of the right size, not its values."""
    value = helper.make_tensor(name + "_fill", onnx.TensorProto.FLOAT, [1], [float(np.mean(array))])
    shape = numpy_helper.from_array(np.array(array.shape, dtype=np.int64), name + "_shape")
    node = helper.make_node("ConstantOfShape", [name + "_shape"], [name], value=value)
    return node, shape


def _small_input(name, type_proto):
    """The input with its spatial dimensions (beyond N, C of a rank-3+ tensor) cut to SMALL_SIDE."""
    t = onnx.TypeProto()
    t.CopyFrom(type_proto)
    dims = t.tensor_type.shape.dim
    for d in dims[2:] if len(dims) >= 3 else []:
        d.dim_value = min(d.dim_value, SMALL_SIDE)
    return helper.make_value_info(name, t)


def _window(model, nodes, inits, constants, types, small):
    """A model of `nodes`, or None if an outside input has no known static shape (or, when `small`, the
    window has too many weights to run quickly)."""
    produced = {o for n in nodes for o in n.output if o}
    consumed = [i for n in nodes for i in n.input if i]
    extra_nodes, new_inits, inputs, seen = [], [], [], set()
    weights = 0
    for name in consumed:
        if name in produced or name in seen:
            continue
        seen.add(name)
        if name in inits:
            array = numpy_helper.to_array(inits[name])
            weights += array.size
            if array.dtype == np.float32 and array.nbytes > MAX_INIT_BYTES:
                node, shape = _constant_of_shape(name, array)
                extra_nodes.append(node)
                new_inits.append(shape)
            else:
                new_inits.append(inits[name])
        elif name in constants:
            extra_nodes.append(constants[name])
        elif name in types:
            inputs.append(_small_input(name, types[name]) if small else helper.make_value_info(name, types[name]))
        else:
            return None
    if small and weights > SMALL_WEIGHTS:
        return None
    used_later = set(consumed)
    outputs = []
    for n in nodes:
        for o in n.output:
            if o and o not in used_later:
                # Small windows keep only the element type: their shapes differ from the model's.
                if o in types and not small:
                    outputs.append(helper.make_value_info(o, types[o]))
                elif o in types:
                    outputs.append(helper.make_tensor_value_info(o, types[o].tensor_type.elem_type, None))
                else:
                    outputs.append(helper.make_empty_tensor_value_info(o))
    if not outputs:
        return None
    graph = helper.make_graph(extra_nodes + list(nodes), "window", inputs, outputs, new_inits)
    return helper.make_model(graph, opset_imports=model.opset_import, ir_version=model.ir_version,
                             producer_name="ninegrid-fuzz-seeds")


def _signature(nodes, types):
    """What makes two windows the same seed: op types, attributes and input shapes."""
    parts = []
    for n in nodes:
        attrs = tuple(sorted((a.name, str(helper.get_attribute_value(a))[:64]) for a in n.attribute))
        shapes = tuple(str(types[i].tensor_type.shape).replace("\n", "") if i in types else "" for i in n.input)
        parts.append((n.op_type, attrs, shapes))
    return tuple(parts)


def windows(path, limit=40, small=False):
    """Up to `limit` distinct windows of the model at `path`, as (name, ModelProto); `small`: windows
    cheap enough to run (see SMALL_SIDE)."""
    model = onnx.load(path)
    types = _static_types(model)
    g = model.graph
    inits = {i.name: i for i in g.initializer}
    constants = {n.output[0]: n for n in g.node if n.op_type == "Constant" and n.output}
    body = [n for n in g.node if n.op_type != "Constant"]
    seen, count = set(), 0
    for length in WINDOW_LENGTHS:
        # Spread each length's windows over the whole model, not only its first layers.
        step = max(1, len(body) // max(1, limit // len(WINDOW_LENGTHS)))
        for start in range(0, max(1, len(body) - length + 1), step):
            nodes = body[start:start + length]
            sig = _signature(nodes, types)
            if sig in seen:
                continue
            seen.add(sig)
            w = _window(model, nodes, inits, constants, types, small)
            if w is None or w.ByteSize() > MAX_SEED_BYTES:
                continue
            count += 1
            yield "%s_%d_%d" % (nodes[0].op_type.lower(), start, length), w
            if count >= limit:
                return
