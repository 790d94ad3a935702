// The Python module: ninegrid.Model wraps a model and one session; arrays cross without copies where the
// layout allows (C-contiguous, aligned, native-byte-order inputs of the model's dtype are read in place;
// outputs are handed over).
//
// Memory safety under misuse:
// - run() binds only arrays it holds a reference to for the whole call (the engine reads them with the GIL
//   released), and it requires every model input in the dict: the session never keeps a Python array
//   bound between calls (the C++ session releases borrowed inputs after each run as well).
// - Every input's dtype and byte order is checked: an array is read in place only when it is exactly what
//   the engine reads; otherwise it is converted once (numpy's "safe" casts, and float64 to float32) or
//   refused with ninegrid.Error naming the input and both dtypes.
// - One mutex per Model serialises every call that touches its session; the GIL is released before the
//   mutex is taken, so other Python threads run meanwhile. The C++ session's own busy check (a second
//   thread inside a call) would surface as ninegrid.Error, but the mutex means it never fires.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <mutex>
#include <new>

#include "arrays.h"
#include "session.h"
#include "ninegrid/detect.h"
#include "ninegrid/ninegrid.h"

namespace py = pybind11;
using namespace pybind11::literals;
using ninegrid::DataType;
using ninegrid::Tensor;

namespace {

using ngpy::dtype_str;
using ngpy::shape_tuple;
using ngpy::to_numpy;

py::list value_infos(const std::vector<ninegrid::ValueInfo>& infos) {
  py::list out;
  for (const auto& v : infos) {
    py::dict d;
    d["name"] = v.name;
    d["dtype"] = ninegrid::dtype_name(v.dtype);
    py::list shape;
    for (int64_t s : v.shape) shape.append(s < 0 ? py::object(py::none()) : py::object(py::int_(s)));
    d["shape"] = shape;
    out.append(d);
  }
  return out;
}

class PyModel {
 public:
  PyModel(const std::string& path, int threads, const py::object& shapes, int opt_level, const std::string& weights,
          const std::string& isa, const std::string& conv_algorithms, int winograd_tile, int spin_microseconds,
          const std::string& tuning_cache, bool use_tuning_cache, const py::object& max_tensor_bytes,
          const py::object& max_arena_bytes, const py::object& max_file_bytes, bool profiling)
      : path_(path), profiling_(profiling) {
    ngpy::OptionArgs args;
    args.threads = threads;
    args.shapes = shapes;
    args.opt_level = opt_level;
    args.weights = weights;
    args.isa = isa;
    args.conv_algorithms = conv_algorithms;
    args.winograd_tile = winograd_tile;
    args.spin_microseconds = spin_microseconds;
    args.tuning_cache = tuning_cache;
    args.use_tuning_cache = use_tuning_cache;
    args.max_tensor_bytes = max_tensor_bytes;
    args.max_arena_bytes = max_arena_bytes;
    args.max_file_bytes = max_file_bytes;
    const ninegrid::Options o = ngpy::make_options(args);
    py::gil_scoped_release release;
    guard("loading", [&] { model_ = ninegrid::Model::load(path, o); });
  }

  py::dict run(const py::object& feeds) {
    if (!py::isinstance<py::dict>(feeds))
      throw ninegrid::Error(path_ + ": run() takes a dict {input name: array}, got " +
                            std::string(py::str(feeds.get_type().attr("__name__"))));
    const py::dict dict = py::reinterpret_borrow<py::dict>(feeds);
    const auto& model_inputs = model_->inputs();
    for (auto item : dict) {
      const std::string name = py::str(item.first);
      bool found = false;
      for (const auto& in : model_inputs) found = found || in.name == name;
      if (!py::isinstance<py::str>(item.first) || !found)
        throw ninegrid::Error(path_ + ": the model has no input named " + std::string(py::repr(item.first)) +
                              " (inputs: " + input_names() + ")");
    }
    // Every input, every call: an input left out is an error rather than a reuse of an earlier call's
    // array, which this call does not keep alive.
    std::string missing;
    for (const auto& in : model_inputs)
      if (!dict.contains(in.name)) missing += (missing.empty() ? "'" : ", '") + in.name + "'";
    if (!missing.empty())
      throw ninegrid::Error(path_ + ": run() needs every input of the model; missing " + missing +
                            " (inputs are not kept from one call to the next)");

    std::vector<py::array> pinned;  // referenced until run returns: the engine reads them in place
    std::map<std::string, Tensor> inputs;
    guard("converting the inputs of", [&] {
      for (const auto& in : model_inputs) {
        const py::object value = dict[py::str(in.name)];
        py::array arr = ngpy::lenient_input_array(in.name, value, in);
        ninegrid::Shape shape(arr.shape(), arr.shape() + arr.ndim());
        inputs[in.name] = Tensor::wrap(in.dtype, shape, const_cast<void*>(arr.data()));
        pinned.push_back(std::move(arr));
      }
    });
    std::map<std::string, Tensor> outputs;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      guard("running", [&] { outputs = session().run(inputs); });
    }
    py::dict result;
    guard("returning the outputs of", [&] {
      for (const auto& o : model_->outputs()) result[py::str(o.name)] = to_numpy(outputs.at(o.name), o.name);
    });
    return result;
  }

  void set_profiling(bool on) {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    profiling_ = on;
    if (session_) session_->set_profiling(on);
  }

  bool profiling() {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    return profiling_;
  }

  py::list profile() {
    std::vector<ninegrid::StepProfile> steps;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      if (session_) steps = session_->profile();
    }
    py::list out;
    for (const auto& s : steps) {
      py::list ins, outs;
      for (const auto& sh : s.input_shapes) ins.append(shape_tuple(sh));
      for (const auto& sh : s.output_shapes) outs.append(shape_tuple(sh));
      out.append(py::dict("name"_a = s.name, "op_type"_a = s.op_type, "fused"_a = py::cast(s.fused),
                          "algorithm"_a = s.algorithm, "precision"_a = s.precision, "layout"_a = s.layout,
                          "input_shapes"_a = ins, "output_shapes"_a = outs, "macs"_a = s.macs, "bytes"_a = s.bytes,
                          "time_ms"_a = s.time_ms));
    }
    return out;
  }

  int threads() {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    int n = 0;
    guard("creating a session", [&] { n = session().threads(); });
    return n;
  }

  py::list inputs() const { return value_infos(model_->inputs()); }
  py::list outputs() const { return value_infos(model_->outputs()); }
  std::string format() const { return model_->format(); }
  std::string isa() const { return model_->isa(); }
  std::vector<std::string> warnings() const { return model_->warnings(); }
  const std::string& path() const { return path_; }

 private:
  // The session, created on first use (mutex_ held).
  ninegrid::Session& session() {
    if (!session_) {
      session_ = model_->create_session();
      session_->set_profiling(profiling_);
    }
    return *session_;
  }

  std::string input_names() const {
    std::string names;
    for (const auto& in : model_->inputs()) names += (names.empty() ? "'" : ", '") + in.name + "'";
    return names;
  }

  // Every error names the model's file (the engine's messages name the node or input), and running out
  // of memory is a ninegrid.Error like every other failure, not a bare MemoryError.
  template <class F>
  void guard(const char* doing, F&& f) {
    try {
      f();
    } catch (const ninegrid::Error& e) {
      if (std::string(e.what()).find(path_) != std::string::npos) throw;
      throw ninegrid::Error(path_ + ": " + e.what());
    } catch (const std::bad_alloc&) {
      throw ninegrid::Error(path_ + ": out of memory while " + doing + " the model");
    }
  }

  std::string path_;
  std::shared_ptr<ninegrid::Model> model_;
  std::unique_ptr<ninegrid::Session> session_;
  bool profiling_ = false;
  std::mutex mutex_;
};

// Detectors are cached by model and options, so calling detect() in a loop loads the model once.
std::mutex g_detectors_mutex;
std::map<std::string, std::shared_ptr<std::pair<std::mutex, ninegrid::FaceDetector>>> g_detectors;

py::list detect(const py::object& image, const std::string& model, float score, float nms, int size, int threads,
                const std::string& arch) {
  // uint8 pixels only (or what converts to them exactly): a float image in [0, 1] must not silently become
  // black, nor a float image in [0, 255] be rounded without the caller knowing.
  py::module_ np = py::module_::import("numpy");
  py::array arr = py::isinstance<py::array>(image) ? py::reinterpret_borrow<py::array>(image)
                                                    : py::array(np.attr("asarray")(image));
  if (!np.attr("can_cast")(arr.dtype(), py::dtype::of<uint8_t>(), "casting"_a = "safe").cast<bool>())
    throw ninegrid::Error("image must be an HxWx3 uint8 RGB array, got a " + dtype_str(arr.dtype()) +
                          " array (convert it with e.g. np.clip(img, 0, 255).astype(np.uint8))");
  py::array_t<uint8_t, py::array::c_style | py::array::forcecast> rgb(arr);
  if (rgb.ndim() != 3 || rgb.shape(2) != 3)
    throw ninegrid::Error("image must be an HxWx3 RGB array, got shape " +
                          ninegrid::shape_str(ninegrid::Shape(rgb.shape(), rgb.shape() + rgb.ndim())));
  ninegrid::Image img(static_cast<int>(rgb.shape(1)), static_cast<int>(rgb.shape(0)));
  std::copy(rgb.data(), rgb.data() + rgb.size(), img.rgb.begin());
  ninegrid::FaceDetectorOptions o;
  o.score_threshold = score;
  o.nms_threshold = nms;
  o.input_size = size;
  o.threads = threads;
  o.arch = ninegrid::parse_face_arch(arch);
  std::string key = model + "|" + std::to_string(score) + "|" + std::to_string(nms) + "|" + std::to_string(size) + "|" +
                    std::to_string(threads) + "|" + arch;
  std::vector<ninegrid::Face> faces;
  {
    py::gil_scoped_release release;
    std::shared_ptr<std::pair<std::mutex, ninegrid::FaceDetector>> det;
    {
      std::lock_guard<std::mutex> lock(g_detectors_mutex);
      auto it = g_detectors.find(key);
      if (it == g_detectors.end())
        it = g_detectors
                 .emplace(key, std::make_shared<std::pair<std::mutex, ninegrid::FaceDetector>>(
                                   std::piecewise_construct, std::forward_as_tuple(), std::forward_as_tuple(model, o)))
                 .first;
      det = it->second;
    }
    std::lock_guard<std::mutex> lock(det->first);
    faces = det->second.detect(img);
  }
  py::list out;
  for (const auto& f : faces) {
    py::dict d;
    d["x1"] = f.x1;
    d["y1"] = f.y1;
    d["x2"] = f.x2;
    d["y2"] = f.y2;
    d["score"] = f.score;
    py::list lm;
    for (const auto& p : f.landmarks) lm.append(py::make_tuple(p[0], p[1]));
    d["landmarks"] = lm;
    out.append(d);
  }
  return out;
}

const char* const kModelDoc = R"(A loaded model with one session; run() may be called repeatedly, from any thread.

Model(path, threads=0, shapes=None, opt_level=2, weights="", *, isa="", conv_algorithms="",
      winograd_tile=0, spin_microseconds=-1, tuning_cache="", use_tuning_cache=True,
      max_tensor_bytes=None, max_arena_bytes=None, max_file_bytes=None, profiling=False)

path: an ONNX file or an ncnn .param (with its .bin beside it, or `weights`).
threads: worker threads, the calling thread included; 0 for one per core.
shapes: {input name: shape} for inputs whose dimensions the model leaves dynamic (or to fix them at load
    time, which lets the optimiser plan layouts).
opt_level: 0 no graph optimisation, 1 fusion and constant folding, 2 also layout planning.
isa: cap on the kernels' instruction set: "" (the best this CPU has), "ref", "avx2" or "avx512" (x86-64),
"neon" or "dotprod" (AArch64).
conv_algorithms: "" for all, or a comma-separated subset of "winograd,strassen,direct,indirect".
winograd_tile: 0 chooses per layer; 2, 4 or 6 forces Winograd's output tile.
spin_microseconds: how long an idle worker thread may spin before it sleeps: -1 lets the engine choose, 0
    never spins (no idle CPU burned, slower small layers), at most 1000000. Threads spin only while the
    process has cores to spare.
tuning_cache: the tuning cache `ninegrid tune` writes (conv plans measured on this CPU, used instead of
    the rules' where it holds entries); "" for the default, $XDG_CACHE_HOME/ninegrid/tuning.cache. A file
    that is not a valid cache is ignored with a warning (see warnings).
use_tuning_cache: False reads no tuning cache (every conv runs the rules' plan).
max_tensor_bytes, max_arena_bytes, max_file_bytes: the resource budget (any one tensor, the session's
    working memory, a model or weights file); None keeps the engine's defaults (far above real models),
    0 removes a limit. A model or input shape that needs more is refused with ninegrid.Error naming the
    node and the size, before anything is allocated.
profiling: time every step of each run (as ONNX Runtime's SessionOptions.enable_profiling); read the
    times with profile(). set_profiling() switches it later.

All failures raise ninegrid.Error with a message naming the file, node or input.)";

const char* const kRunDoc = R"(Runs the model: inputs is a dict {input name: array} with every input of the
model (as ONNX Runtime requires); returns {output name: ndarray}.

Inputs are not kept from one call to the next. Each array is read in place, without a copy, when it is
C-contiguous, aligned, in native byte order and of the input's dtype; the call holds a reference to it
until it returns. Anything else is converted once: other memory orders and byte orders, and dtypes that
numpy casts "safely" (every value kept: float16 or ints to float32 where exact, int32 to int64, bool to
numbers ...), plus float64 to float32 (rounded to nearest, as astype does). Any other dtype (object,
strings, complex, float to int, int64 to float32 ...) raises ninegrid.Error naming the input and both
dtypes. Lists and scalars go through numpy.asarray first.

The returned arrays belong to the caller; the next run does not overwrite them. The GIL is released
while the model runs; calls from several threads on one Model run one at a time.)";

const char* const kProfileDoc = R"(The steps of the session's current plan, in execution order, as a list of dicts:
name, op_type, fused (ops merged into this step, e.g. ["Add", "Relu"]), algorithm (kernel and instruction
set, e.g. "winograd43/avx512"), precision ("fp32" ...), layout ("NCHW16c" ...), input_shapes and
output_shapes (tuples; weights included), macs, bytes (of its inputs and outputs) and time_ms (wall time
in the last run made with profiling on; 0 before one). Empty before the first run.)";

}  // namespace

PYBIND11_MODULE(_ninegrid, m) {
  m.doc() = "ninegrid: a CNN inference engine for CPUs";
  m.attr("__version__") = ninegrid::version();  // one number for C++, C, Python and the CLI
  static py::exception<ninegrid::Error> error(m, "Error", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ninegrid::Error& e) {
      error(e.what());
    }
  });
  py::class_<PyModel>(m, "Model", kModelDoc)
      .def(py::init<const std::string&, int, const py::object&, int, const std::string&, const std::string&,
                    const std::string&, int, int, const std::string&, bool, const py::object&, const py::object&,
                    const py::object&, bool>(),
           py::arg("path"), py::arg("threads") = 0, py::arg("shapes") = py::none(), py::arg("opt_level") = 2,
           py::arg("weights") = "", py::kw_only(), py::arg("isa") = "", py::arg("conv_algorithms") = "",
           py::arg("winograd_tile") = 0, py::arg("spin_microseconds") = -1, py::arg("tuning_cache") = "",
           py::arg("use_tuning_cache") = true, py::arg("max_tensor_bytes") = py::none(),
           py::arg("max_arena_bytes") = py::none(), py::arg("max_file_bytes") = py::none(),
           py::arg("profiling") = false)
      .def("run", &PyModel::run, py::arg("inputs"), kRunDoc)
      .def("profile", &PyModel::profile, kProfileDoc)
      .def("set_profiling", &PyModel::set_profiling, py::arg("on"),
           "Switches per-step timing on or off for the following runs (see profile()).")
      .def_property_readonly("profiling", &PyModel::profiling, "Whether runs time their steps.")
      .def_property_readonly("threads", &PyModel::threads, "Worker threads of the session, the calling thread included.")
      .def_property_readonly("inputs", &PyModel::inputs, "[{name, dtype, shape}] (None for dynamic dims)")
      .def_property_readonly("outputs", &PyModel::outputs, "[{name, dtype, shape}]")
      .def_property_readonly("format", &PyModel::format, "\"onnx\" or \"ncnn\"")
      .def_property_readonly("isa", &PyModel::isa,
                             "The kernels' instruction set (\"avx512\", \"avx2\", \"neon\", \"dotprod\", \"ref\"): the best this CPU has, "
                             "capped by isa=")
      .def_property_readonly("path", &PyModel::path, "The file the model was loaded from.")
      .def_property_readonly("warnings", &PyModel::warnings,
                             "What loading noticed but worked around (an ignored tuning cache and why), one str each.");
  ngpy::bind_inference_session(m);
  m.def("_detect", &detect, py::arg("image"), py::arg("model"), py::arg("score") = 0.5f, py::arg("nms") = 0.4f,
        py::arg("size") = 640, py::arg("threads") = 0, py::arg("arch") = "auto");
  m.attr("_source_dir") = NINEGRID_SOURCE_DIR;
}
