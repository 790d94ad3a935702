"""ninegrid: a CNN inference engine for CPUs (ONNX and ncnn models).

    import ninegrid, numpy as np
    model = ninegrid.Model("retinaface.onnx", threads=2, shapes={"data": (1, 3, 640, 640)})
    outputs = model.run({"data": np.zeros((1, 3, 640, 640), np.float32)})   # dict name -> ndarray

Errors raise ninegrid.Error with the engine's message.
"""
from ._ninegrid import Error, Model, __version__  # noqa: F401

try:  # face detection is optional in builds without it
    from ._ninegrid import detect  # noqa: F401
except ImportError:  # pragma: no cover
    pass
