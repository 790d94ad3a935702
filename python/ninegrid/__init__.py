"""ninegrid: a CNN inference engine for CPUs (ONNX and ncnn models).

    sess = ninegrid.InferenceSession("model.onnx", threads=2)   # as ONNX Runtime's (see ninegrid.session)
    print(sess.get_inputs()[0])          # NodeArg(name='input', type='tensor(float)', shape=['batch', 3, 224, 224])
    logits, = sess.run(None, {"input": x})

    import ninegrid, numpy as np
    model = ninegrid.Model("retinaface.onnx", threads=2, shapes={"data": (1, 3, 640, 640)})
    outputs = model.run({"data": np.zeros((1, 3, 640, 640), np.float32)})   # dict name -> ndarray

    faces = ninegrid.detect(rgb_image)   # HxWx3 uint8 -> [{x1, y1, x2, y2, score, landmarks}]

    model = ninegrid.Model("resnet18.onnx", threads=1, isa="avx2", max_arena_bytes=1 << 30, profiling=True)
    model.run({"input": x})
    for step in model.profile():   # [{name, op_type, fused, algorithm, precision, layout, input_shapes,
        print(step["name"], step["algorithm"], step["time_ms"])   #  output_shapes, macs, bytes, time_ms}]

run() needs every input of the model in its dict, every call: nothing is kept from one call to the next.
Arrays of the input's dtype (C-contiguous, aligned, native byte order) are read in place and referenced until
run() returns; other layouts, byte orders and dtypes that numpy casts "safely" are converted once, and so is
float64 to float32; any other dtype raises ninegrid.Error naming the input and both dtypes. One Model may be
used from several threads: the GIL is released while it runs and the calls run one at a time.

Errors raise ninegrid.Error (a RuntimeError) with the engine's message, naming the file, node or input.
"""
import os

from ._ninegrid import Error, Model, __version__  # noqa: F401
from . import _ninegrid
from .session import GraphOptimizationLevel, InferenceSession, NodeArg, SessionOptions  # noqa: F401

_BLAZEFACE = os.path.join("npm", "blazeface", "package", "ONNX", "face_detection_front_128x128_barracuda.onnx")


def default_face_model():
    """The BlazeFace model: $NINEGRID_BLAZEFACE_MODEL, else $NINEGRID_CACHE/npm/blazeface/..., else the copy
    that `pip install` put in this package (models/blazeface/), else the source tree's .cache (where
    scripts/setup.sh fetches it)."""
    env = os.environ.get("NINEGRID_BLAZEFACE_MODEL")
    if env:
        return env
    cache = os.environ.get("NINEGRID_CACHE")
    if cache:
        return os.path.join(cache, _BLAZEFACE)
    packaged = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models", "blazeface", os.path.basename(_BLAZEFACE))
    if os.path.isfile(packaged):
        return packaged
    return os.path.join(_ninegrid._source_dir, ".cache", _BLAZEFACE)


def detect(image, model=None, score=0.5, nms=0.4, size=640, threads=0, arch="auto"):
    """Faces in an HxWx3 RGB uint8 image, best first: a list of dicts with x1, y1, x2, y2, score and
    landmarks (five (x, y) pairs: eyes, nose tip, mouth corners), in the image's pixel coordinates.

    model: RetinaFace-MobileNet0.25 (ncnn .param or ONNX) or BlazeFace (.onnx); None uses BlazeFace."""
    path = model if model is not None else default_face_model()
    if model is None and not os.path.exists(path):
        raise Error(f"default face model {path} not found: run scripts/setup.sh, set NINEGRID_BLAZEFACE_MODEL, "
                    "or pass model=")
    return _ninegrid._detect(image, path, score, nms, size, threads, arch)
