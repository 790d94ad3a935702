# ninegrid plans every output shape before running, so ONNX node tests that feed Reshape's shape, Slice's
# starts, Tile's repeats ... as run-time graph inputs are skipped as unsupported. This copies those tests
# with the shape-deciding inputs turned into initializers (values from test_data_set_*/input_i.pb), so the
# operators' kernels are still checked against ONNX's expected outputs:
#
#   /usr/bin/python3 tests/shape_ops/freeze_shape_inputs.py /tmp/ng_frozen
#   build/tests/onnx_conformance /tmp/ng_frozen
import os, sys, glob, shutil, onnx
from onnx import numpy_helper
SRC = '/usr/share/libonnx-testdata/data/node'
DST = sys.argv[1] if len(sys.argv) > 1 else '/tmp/ng_frozen'
PLAN_INPUTS = {'Reshape': {1}, 'Slice': {1, 2, 3, 4}, 'Split': {1}, 'Squeeze': {1}, 'Unsqueeze': {1},
               'Expand': {1}, 'Tile': {1}, 'Range': {0, 1, 2}, 'ConstantOfShape': {0}}
shutil.rmtree(DST, ignore_errors=True)
for d in sorted(os.listdir(SRC)):
    m = onnx.load(os.path.join(SRC, d, 'model.onnx'))
    freeze = set()
    for n in m.graph.node:
        for k, name in enumerate(n.input):
            if k in PLAN_INPUTS.get(n.op_type, ()):
                freeze.add(name)
    inputs = [i.name for i in m.graph.input if i.name not in {t.name for t in m.graph.initializer}]
    idx = [k for k, name in enumerate(inputs) if name in freeze]
    if not idx:
        continue
    sets = sorted(glob.glob(os.path.join(SRC, d, 'test_data_set_*')))
    for s_i, s in enumerate(sets):
        mm = onnx.ModelProto(); mm.CopyFrom(m)
        out = os.path.join(DST, d + ('' if len(sets) == 1 else '_set%d' % s_i))
        os.makedirs(os.path.join(out, 'test_data_set_0'))
        keep = []
        for k, name in enumerate(inputs):
            t = onnx.TensorProto(); t.ParseFromString(open(os.path.join(s, 'input_%d.pb' % k), 'rb').read())
            if k in idx:
                t.name = name
                mm.graph.initializer.append(t)
            else:
                keep.append(t)
        newin = [i for i in mm.graph.input if i.name not in [inputs[k] for k in idx]]
        del mm.graph.input[:]
        mm.graph.input.extend(newin)
        onnx.save(mm, os.path.join(out, 'model.onnx'))
        for j, t in enumerate(keep):
            open(os.path.join(out, 'test_data_set_0', 'input_%d.pb' % j), 'wb').write(t.SerializeToString())
        for f in glob.glob(os.path.join(s, 'output_*.pb')):
            shutil.copy(f, os.path.join(out, 'test_data_set_0'))
print(len(os.listdir(DST)))
