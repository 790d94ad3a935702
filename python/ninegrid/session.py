"""An ONNX Runtime-style API: InferenceSession, SessionOptions, NodeArg, GraphOptimizationLevel.

    import ninegrid, numpy as np
    sess = ninegrid.InferenceSession("model.onnx")            # or the model's bytes; or an ncnn .param
    x = sess.get_inputs()[0]                                   # NodeArg: name, shape, type, dtype
    print(x.name, x.shape, x.type)                             # 'input' ['batch', 3, 224, 224] 'tensor(float)'
    outputs = sess.run(None, {x.name: np.zeros((1, 3, 224, 224), x.dtype)})   # list of ndarrays

    opts = ninegrid.SessionOptions()
    opts.intra_op_num_threads = 2
    opts.graph_optimization_level = ninegrid.GraphOptimizationLevel.ORT_ENABLE_BASIC
    opts.input_shapes = {"input": (1, 3, 224, 224)}           # fixes dynamic dimensions at load time
    sess = ninegrid.InferenceSession("model.onnx", opts)       # or keywords: InferenceSession(path, threads=2)

What differs from ONNX Runtime: there are no execution providers (providers= is accepted and must list
CPUExecutionProvider if it is given); the engine's own settings are SessionOptions attributes too (isa,
conv_algorithms, winograd_tile, the resource budget, weights_path for ncnn models); bfloat16 tensors cross
as uint16 arrays holding the raw bits; errors raise ninegrid.Error (a RuntimeError).
"""
import enum
import os

from . import _ninegrid


class GraphOptimizationLevel(enum.IntEnum):
    """ONNX Runtime's names for ninegrid's opt_level: DISABLE_ALL is 0 (no graph optimisation), ENABLE_BASIC
    is 1 (fusion and constant folding), ENABLE_EXTENDED and ENABLE_ALL are 2 (also layout planning)."""
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_ALL = 99


def _opt_level(level):
    level = int(level)
    if level == GraphOptimizationLevel.ORT_ENABLE_ALL:
        return 2
    if level not in (0, 1, 2):
        raise _ninegrid.Error(f"graph_optimization_level must be 0, 1, 2 or a GraphOptimizationLevel, got {level}")
    return level


class SessionOptions:
    """Settings for an InferenceSession. ONNX Runtime's names where it has the setting, the engine's own for
    the rest; an attribute that does not exist raises AttributeError rather than being ignored.

    intra_op_num_threads (alias threads): worker threads, the calling thread included; 0 for one per core.
    graph_optimization_level (alias opt_level): a GraphOptimizationLevel, or 0, 1, 2; ENABLE_ALL by default.
    input_shapes: {input name: shape} for inputs whose dimensions the model leaves dynamic (or to fix them at
        load time, which lets the optimiser plan layouts).
    enable_profiling: time every step of each run; InferenceSession.get_profile() reads the last run's steps.
    isa: cap on the kernels' instruction set: "" (the best this CPU has), "ref", "avx2" or "avx512" (x86-64),
        "neon" or "dotprod" (AArch64).
    conv_algorithms: "" for all, or a comma-separated subset of "winograd,strassen,direct,indirect".
    winograd_tile: 0 chooses per layer; 2, 4 or 6 forces Winograd's output tile.
    spin_microseconds: how long an idle worker may spin before it sleeps: -1 the engine's default, 0 never.
    tuning_cache: the tuning cache `ninegrid tune` writes; "" for the default,
        $XDG_CACHE_HOME/ninegrid/tuning.cache. An invalid file is ignored with a warning
        (InferenceSession.warnings).
    use_tuning_cache: False reads no tuning cache (every conv runs the rules' plan).
    max_tensor_bytes, max_arena_bytes, max_file_bytes: the resource budget (one tensor, one session's working
        memory, the model file or bytes); None keeps the engine's defaults, 0 removes a limit.
    weights_path: ncnn models: the .bin file, when it is not the .param's name with .bin.
    """
    __slots__ = ("intra_op_num_threads", "graph_optimization_level", "input_shapes", "enable_profiling", "isa",
                 "conv_algorithms", "winograd_tile", "spin_microseconds", "tuning_cache", "use_tuning_cache",
                 "max_tensor_bytes", "max_arena_bytes", "max_file_bytes", "weights_path")

    def __init__(self, **settings):
        self.intra_op_num_threads = 0
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.input_shapes = None
        self.enable_profiling = False
        self.isa = ""
        self.conv_algorithms = ""
        self.winograd_tile = 0
        self.spin_microseconds = -1
        self.tuning_cache = ""
        self.use_tuning_cache = True
        self.max_tensor_bytes = None
        self.max_arena_bytes = None
        self.max_file_bytes = None
        self.weights_path = ""
        for key, value in settings.items():
            setattr(self, key, value)

    # The engine's names for ONNX Runtime's two settings.
    @property
    def threads(self):
        return self.intra_op_num_threads

    @threads.setter
    def threads(self, value):
        self.intra_op_num_threads = value

    @property
    def opt_level(self):
        return self.graph_optimization_level

    @opt_level.setter
    def opt_level(self, value):
        self.graph_optimization_level = value

    def copy(self):
        return SessionOptions(**{k: getattr(self, k) for k in self.__slots__})

    def __repr__(self):
        return "SessionOptions(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__) + ")"


class NodeArg:
    """An input or output of a model, as ONNX Runtime's NodeArg: name; shape, a list of ints, the model's
    name (str) for a named dynamic dimension, None for an unnamed one ([] when not even the rank is known
    before a run); type, ONNX Runtime's type string ('tensor(float)', 'tensor(int64)', ...); and dtype, the
    numpy dtype of the arrays that cross (uint16 for bfloat16's raw bits)."""
    __slots__ = ("name", "type", "shape", "dtype")

    def __init__(self, name, type, shape, dtype):
        self.name = name
        self.type = type
        self.shape = shape
        self.dtype = dtype

    def __repr__(self):
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"


class InferenceSession:
    """A loaded model, run as ONNX Runtime's InferenceSession runs one.

    InferenceSession(path_or_bytes, sess_options=None, providers=None, provider_options=None, **settings)

    path_or_bytes: an ONNX file, an ncnn .param (its .bin beside it, or SessionOptions.weights_path), or an
        ONNX model's bytes (bytes, bytearray or memoryview; copied unless bytes).
    sess_options: a SessionOptions; **settings: SessionOptions attributes given directly (they override
        sess_options'), e.g. InferenceSession(path, threads=1, input_shapes={"x": (1, 3, 64, 64)}).

    run() may be called from several threads at once, and the calls run in parallel: each concurrent call
    gets an engine session of its own (made when first needed, then reused). The GIL is released while the
    model runs. Errors raise ninegrid.Error naming the file and the input, output or node concerned.
    """

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None, **settings):
        if sess_options is not None and not isinstance(sess_options, SessionOptions):
            raise TypeError(f"sess_options must be a ninegrid.SessionOptions, got {type(sess_options).__name__}")
        if providers is not None:
            names = [p[0] if isinstance(p, tuple) else p for p in providers]
            if "CPUExecutionProvider" not in names:
                raise _ninegrid.Error(f"ninegrid runs on the CPU only: providers={names!r} must include "
                                      "'CPUExecutionProvider'")
        options = sess_options.copy() if sess_options is not None else SessionOptions()
        for key, value in settings.items():
            setattr(options, key, value)
        if int(options.intra_op_num_threads) < 0:
            raise _ninegrid.Error(f"intra_op_num_threads must be 0 (one per core) or more, got {options.intra_op_num_threads}")
        self._options = options
        self._session = _ninegrid._InferenceSession(
            path_or_bytes, threads=int(options.intra_op_num_threads), input_shapes=options.input_shapes,
            opt_level=_opt_level(options.graph_optimization_level), weights=os.fspath(options.weights_path),
            isa=options.isa, conv_algorithms=options.conv_algorithms, winograd_tile=int(options.winograd_tile),
            spin_microseconds=int(options.spin_microseconds), tuning_cache=os.fspath(options.tuning_cache),
            use_tuning_cache=bool(options.use_tuning_cache), max_tensor_bytes=options.max_tensor_bytes,
            max_arena_bytes=options.max_arena_bytes,
            max_file_bytes=options.max_file_bytes, profiling=bool(options.enable_profiling))
        self._inputs = [NodeArg(*a) for a in self._session.inputs()]
        self._outputs = [NodeArg(*a) for a in self._session.outputs()]

    def get_inputs(self):
        """The model's inputs: a list of NodeArg (name, shape, type, dtype)."""
        return list(self._inputs)

    def get_outputs(self):
        """The model's outputs: a list of NodeArg. Shapes are inferred from the inputs' when those are fixed."""
        return list(self._outputs)

    def run(self, output_names, input_feed, run_options=None):
        """Runs the model. output_names: the outputs to return, in that order (None or [] for all, in the
        model's order); input_feed: {input name: array} with every input of the model. Returns a list of
        numpy arrays, which belong to the caller.

        Each array must have exactly its input's dtype (NodeArg.dtype), its rank and its fixed dimensions;
        an error names the input otherwise. An array that is C-contiguous, aligned and in native byte order
        is read in place without a copy (and must not be changed by another thread meanwhile); any other
        layout is copied once. run_options is accepted for ONNX Runtime compatibility and must be None."""
        if run_options is not None:
            raise _ninegrid.Error("run_options is not supported by ninegrid; pass None")
        return self._session.run(output_names, input_feed)

    def get_providers(self):
        return ["CPUExecutionProvider"]

    def get_session_options(self):
        return self._options.copy()

    def get_profile(self):
        """With enable_profiling: the steps of the last run, as ninegrid.Model.profile() lists them (name,
        op_type, fused, algorithm, precision, layout, shapes, macs, bytes, time_ms). Empty before one."""
        return self._session.profile()

    def set_profiling(self, on):
        """Switches per-step timing on or off from the next run."""
        self._options.enable_profiling = bool(on)
        self._session.set_profiling(bool(on))

    @property
    def format(self):
        """"onnx" or "ncnn"."""
        return self._session.format

    @property
    def isa(self):
        """The kernels' instruction set: the best this CPU has, capped by SessionOptions.isa."""
        return self._session.isa

    @property
    def warnings(self):
        """What loading noticed but worked around (an ignored tuning cache and why), one str each."""
        return list(self._session.warnings)

    @property
    def threads(self):
        """Worker threads of each run, the calling thread included."""
        return self._session.threads
