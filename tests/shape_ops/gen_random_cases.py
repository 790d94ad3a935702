# Random cases for the data-movement operators (Slice, Transpose, Expand, Tile, Gather, GatherElements,
# Concat, Split, DepthToSpace, SpaceToDepth, Cast) with NumPy as the independent reference, written as ONNX
# backend-test directories (model.onnx + test_data_set_0) for the conformance runner:
#
#   /usr/bin/python3 tests/shape_ops/gen_random_cases.py /tmp/ng_random
#   build/tests/onnx_conformance /tmp/ng_random
#
# Slice follows the ONNX spec's clamping, which differs from Python's for a start below -dim with a
# negative step (ONNX clamps it to 0 and takes element 0; Python takes nothing).
import os, shutil, sys, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto
OUT = sys.argv[1] if len(sys.argv) > 1 else '/tmp/ng_random_cases'
shutil.rmtree(OUT, ignore_errors=True)
rng = np.random.default_rng(1234)
np.seterr(over="ignore")  # the Cast cases overflow float16 on purpose (to inf)
I64MAX, I64MIN = np.iinfo(np.int64).max, np.iinfo(np.int64).min
count = 0

def emit(name, op, inputs, consts, outputs, attrs=None):
    """inputs: list of (name, array) graph inputs; consts: list of (name, array) initializers."""
    global count
    d = os.path.join(OUT, 'test_%s_%03d' % (name, count)); count += 1
    os.makedirs(os.path.join(d, 'test_data_set_0'))
    ins = [n for n, _ in inputs] + [n for n, _ in consts]
    node = helper.make_node(op, [x if x else '' for x in ins], [n for n, _ in outputs], **(attrs or {}))
    def vi(n, a):
        return helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype) if hasattr(helper, 'np_dtype_to_tensor_dtype') else onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype], a.shape)
    g = helper.make_graph([node], name, [vi(n, a) for n, a in inputs], [vi(n, a) for n, a in outputs],
                          [numpy_helper.from_array(a, n) for n, a in consts])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 18 if op == 'Split' else 17)])
    onnx.save(m, os.path.join(d, 'model.onnx'))
    for i, (n, a) in enumerate(inputs):
        open(os.path.join(d, 'test_data_set_0', 'input_%d.pb' % i), 'wb').write(numpy_helper.from_array(a, n).SerializeToString())
    for i, (n, a) in enumerate(outputs):
        open(os.path.join(d, 'test_data_set_0', 'output_%d.pb' % i), 'wb').write(numpy_helper.from_array(a, n).SerializeToString())

def rshape(rank, lo=1, hi=5):
    return tuple(int(x) for x in rng.integers(lo, hi, size=rank))

def rdata(shape, dtype=np.float32):
    if dtype in (np.float32, np.float16, np.float64): return np.asarray(rng.standard_normal(shape)).astype(dtype)
    return np.asarray(rng.integers(-100, 100, size=shape)).astype(dtype)

dtypes = [np.float32, np.int64, np.int32, np.uint8, np.int8, np.float16, np.int16, np.float64]
# Slice
for _ in range(60):
    r = int(rng.integers(1, 5)); shape = rshape(r, 0, 6); x = rdata(shape, dtypes[_ % len(dtypes)])
    k = int(rng.integers(1, r + 1)); axes = rng.permutation(r)[:k]
    choices = lambda: int(rng.choice([rng.integers(-8, 9), I64MAX, I64MIN]))
    starts = np.array([choices() for _ in range(k)], np.int64); ends = np.array([choices() for _ in range(k)], np.int64)
    steps = np.array([int(rng.choice([1, 2, 3, -1, -2, -3, I64MAX, I64MIN + 1])) for _ in range(k)], np.int64)
    # The ONNX spec's clamping (which differs from Python's for starts below -dim with negative steps),
    # then Python's range over the clamped bounds picks the indices.
    y = x
    for a, s, e, st in zip(axes, starts, ends, steps):
        dim = x.shape[a]; s, e, st = int(s), int(e), int(st)
        if s < 0: s += dim
        if e < 0: e += dim
        if st > 0: s = min(max(s, 0), dim); e = min(max(e, 0), dim)
        else: s = min(max(s, 0), dim - 1); e = min(max(e, -1), dim - 1)
        idx = list(range(s, e, st)) if dim > 0 else []
        y = np.take(y, np.array(idx, np.int64), axis=a)
    neg_axes = np.array([a - r if rng.random() < 0.5 else a for a in axes], np.int64)
    emit('slice', 'Slice', [('x', x)], [('starts', starts), ('ends', ends), ('axes', neg_axes), ('steps', steps)], [('y', y)])
# Transpose
for _ in range(25):
    r = int(rng.integers(0, 6)); shape = rshape(r, 1, 5); x = rdata(shape, dtypes[_ % len(dtypes)])
    perm = rng.permutation(r)
    emit('transpose', 'Transpose', [('x', x)], [], [('y', np.array(np.transpose(x, perm), copy=True, order="C"))], {'perm': [int(p) for p in perm]})
# Expand
for _ in range(20):
    r = int(rng.integers(1, 5)); shape = rshape(r, 1, 4); shape = tuple(1 if rng.random() < 0.5 else d for d in shape)
    x = rdata(shape, dtypes[_ % len(dtypes)])
    lead = rshape(int(rng.integers(0, 3)), 1, 4)
    target = list(lead) + [int(rng.integers(1, 4)) if d == 1 else (d if rng.random() < 0.7 else 1) for d in shape]
    y = np.broadcast_to(x, np.broadcast_shapes(x.shape, tuple(target))).copy()
    emit('expand', 'Expand', [('x', x)], [('shape', np.array(target, np.int64))], [('y', y)])
# Tile
for _ in range(15):
    r = int(rng.integers(1, 4)); x = rdata(rshape(r, 1, 4), dtypes[_ % len(dtypes)])
    reps = rng.integers(0, 4, size=r).astype(np.int64)
    emit('tile', 'Tile', [('x', x)], [('repeats', reps)], [('y', np.tile(x, reps))])
# Gather
for _ in range(20):
    r = int(rng.integers(1, 4)); shape = rshape(r, 1, 5); x = rdata(shape, dtypes[_ % len(dtypes)])
    axis = int(rng.integers(-r, r)); dim = shape[axis]
    ishape = rshape(int(rng.integers(0, 3)), 1, 4)
    idx = rng.integers(-dim, dim, size=ishape).astype(np.int64 if _ % 2 else np.int32)
    emit('gather', 'Gather', [('x', x), ('i', idx)], [], [('y', np.take(x, idx, axis=axis))], {'axis': axis})
# GatherElements
for _ in range(15):
    r = int(rng.integers(1, 4)); shape = rshape(r, 1, 5); x = rdata(shape, dtypes[_ % len(dtypes)])
    axis = int(rng.integers(-r, r)); dim = shape[axis]
    ishape = [int(rng.integers(1, d + 1)) for d in shape]; ishape[axis] = int(rng.integers(1, 5))
    idx = rng.integers(-dim, dim, size=ishape).astype(np.int64)
    # y[p] = x[p with its axis coordinate replaced by idx[p]]
    coords = list(np.indices(idx.shape))
    coords[axis] = np.where(idx < 0, idx + dim, idx)
    y = x[tuple(coords)]
    emit('gatherelements', 'GatherElements', [('x', x), ('i', idx)], [], [('y', y)], {'axis': axis})
# Concat / Split
for _ in range(15):
    r = int(rng.integers(1, 4)); shape = list(rshape(r, 1, 4)); axis = int(rng.integers(-r, r))
    parts = []
    for k in range(int(rng.integers(1, 4))):
        s = list(shape); s[axis] = int(rng.integers(0, 4)); parts.append(rdata(tuple(s), dtypes[_ % len(dtypes)]))
    emit('concat', 'Concat', [('x%d' % i, p) for i, p in enumerate(parts)], [], [('y', np.concatenate(parts, axis=axis))], {'axis': axis})
    x = np.concatenate(parts, axis=axis)
    sizes = np.array([p.shape[axis] for p in parts], np.int64)
    outs = np.split(x, np.cumsum(sizes)[:-1], axis=axis)
    emit('split', 'Split', [('x', x)], [('split', sizes)], [('y%d' % i, np.ascontiguousarray(o)) for i, o in enumerate(outs)], {'axis': axis})
# DepthToSpace / SpaceToDepth (reference formulas from the ONNX operator documentation)
for _ in range(12):
    b = int(rng.integers(1, 4)); n, c, h, w = int(rng.integers(1, 3)), int(rng.integers(1, 3)) * b * b, int(rng.integers(1, 4)), int(rng.integers(1, 4))
    x = rdata((n, c, h, w), dtypes[_ % len(dtypes)])
    dcr = np.reshape(np.transpose(np.reshape(x, [n, b, b, c // (b * b), h, w]), [0, 3, 4, 1, 5, 2]), [n, c // (b * b), h * b, w * b])
    crd = np.reshape(np.transpose(np.reshape(x, [n, c // (b * b), b, b, h, w]), [0, 1, 4, 2, 5, 3]), [n, c // (b * b), h * b, w * b])
    emit('d2s_dcr', 'DepthToSpace', [('x', x)], [], [('y', dcr)], {'blocksize': b, 'mode': 'DCR'})
    emit('d2s_crd', 'DepthToSpace', [('x', x)], [], [('y', crd)], {'blocksize': b, 'mode': 'CRD'})
    x2 = rdata((n, c, h * b, w * b), dtypes[_ % len(dtypes)])
    s2d = np.reshape(np.transpose(np.reshape(x2, [n, c, h, b, w, b]), [0, 3, 5, 1, 2, 4]), [n, c * b * b, h, w])
    emit('s2d', 'SpaceToDepth', [('x', x2)], [], [('y', s2d)], {'blocksize': b})
# Cast: float/double -> float16 (NumPy rounds directly, to nearest even), float16 -> float, ints <-> floats
for _ in range(6):
    f = (rng.standard_normal(200) * 10.0 ** rng.integers(-8, 6, size=200)).astype(np.float64)
    f[:6] = [65504.0, 65520.0, 65519.99, 2.0 ** -25, 3 * 2.0 ** -26, -0.0]
    emit('cast_d2h', 'Cast', [('x', f)], [], [('y', f.astype(np.float16))], {'to': TensorProto.FLOAT16})
    f32 = f.astype(np.float32)
    emit('cast_f2h', 'Cast', [('x', f32)], [], [('y', f32.astype(np.float16))], {'to': TensorProto.FLOAT16})
    h = rng.integers(0, 0x7C00, size=200).astype(np.uint16).view(np.float16)
    emit('cast_h2f', 'Cast', [('x', h)], [], [('y', h.astype(np.float32))], {'to': TensorProto.FLOAT})
    i = rng.integers(-2 ** 62, 2 ** 62, size=200, dtype=np.int64)
    emit('cast_i2f', 'Cast', [('x', i)], [], [('y', i.astype(np.float32))], {'to': TensorProto.FLOAT})
    emit('cast_i2d', 'Cast', [('x', i)], [], [('y', i.astype(np.float64))], {'to': TensorProto.DOUBLE})
    small = (rng.standard_normal(200) * 100).astype(np.float32)
    for t, npt in [(TensorProto.INT32, np.int32), (TensorProto.INT8, np.int8), (TensorProto.INT64, np.int64), (TensorProto.UINT16, np.uint16)]:
        src = np.abs(small) if npt == np.uint16 else np.clip(small, -127, 127)
        emit('cast_f2i', 'Cast', [('x', src)], [], [('y', src.astype(npt))], {'to': t})
print(count)
