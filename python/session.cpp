// The engine side of ninegrid.InferenceSession, the ONNX Runtime-style API (python/ninegrid/session.py
// holds the Python side: SessionOptions, NodeArg, argument names).
//
// - Loaded from a path (ONNX or ncnn) or from an ONNX model's bytes.
// - run() may be called from several threads at once, as ONNX Runtime allows: each concurrent call takes
//   an engine Session of its own from a pool (created on demand and kept for reuse), so calls never wait
//   for one another; the GIL is released while the engine works.
// - Inputs are checked as ONNX Runtime checks them (every input given, no unknown names, exactly the
//   input's dtype, its rank and fixed dimensions), each error naming the input; an array of the right
//   dtype that is C-contiguous, aligned and in native byte order is read in place (no copy); otherwise
//   it is copied once into that layout.
// - bfloat16, which numpy has no type for, crosses as uint16 arrays holding the raw bits.
#include "session.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "arrays.h"
#include "ninegrid/ninegrid.h"

namespace ngpy {
namespace {

using ninegrid::DataType;
using ninegrid::Tensor;

// ONNX Runtime's names for tensor types, as its NodeArg.type shows them.
std::string ort_type_name(DataType t) {
  switch (t) {
    case DataType::Float32: return "tensor(float)";
    case DataType::Float64: return "tensor(double)";
    case DataType::Float16: return "tensor(float16)";
    case DataType::BFloat16: return "tensor(bfloat16)";
    case DataType::Int64: return "tensor(int64)";
    case DataType::Int32: return "tensor(int32)";
    case DataType::Int16: return "tensor(int16)";
    case DataType::Int8: return "tensor(int8)";
    case DataType::UInt64: return "tensor(uint64)";
    case DataType::UInt32: return "tensor(uint32)";
    case DataType::UInt16: return "tensor(uint16)";
    case DataType::UInt8: return "tensor(uint8)";
    case DataType::Bool: return "tensor(bool)";
    case DataType::String: return "tensor(string)";
    default: return "tensor(undefined)";
  }
}

// The numpy dtype arrays of this type are exchanged as: numpy's own, or uint16 (raw bits) for bfloat16.
py::dtype exchange_dtype(DataType t, const std::string& what) {
  if (t == DataType::BFloat16) return py::dtype::of<uint16_t>();
  return numpy_dtype(t, what);
}

// A shape as ONNX Runtime's NodeArg.shape gives it: ints, the model's name (str) for a named dynamic
// dimension, None for an unnamed one; [] when not even the rank is known.
py::list shape_list(const ninegrid::ValueInfo& v) {
  py::list out;
  if (!v.shape_known) return out;
  for (size_t d = 0; d < v.shape.size(); ++d) {
    if (v.shape[d] >= 0)
      out.append(py::int_(v.shape[d]));
    else if (d < v.dim_names.size() && !v.dim_names[d].empty())
      out.append(py::str(v.dim_names[d]));
    else
      out.append(py::none());
  }
  return out;
}

std::string shape_text(const py::list& shape) { return py::str(py::tuple(shape)); }

std::string quoted_names(const std::vector<ninegrid::ValueInfo>& infos) {
  std::string names;
  for (const auto& v : infos) names += (names.empty() ? "'" : ", '") + v.name + "'";
  return names;
}

class PySession {
 public:
  PySession(const py::object& source, const OptionArgs& args, bool profiling) : profiling_(profiling) {
    const ninegrid::Options o = make_options(args, "input_shapes");
    py::module_ os = py::module_::import("os");
    if (py::isinstance<py::str>(source) || py::hasattr(source, "__fspath__")) {
      const std::string path = py::str(os.attr("fspath")(source));
      source_ = path;
      py::gil_scoped_release release;
      guard("loading", [&] { model_ = ninegrid::Model::load(path, o); });
    } else if (py::isinstance<py::bytes>(source) || py::isinstance<py::bytearray>(source) ||
               py::isinstance<py::memoryview>(source)) {
      // Immutable bytes are parsed in place; a bytearray or memoryview is copied into bytes first (which
      // also makes a strided memoryview contiguous), so another thread changing it cannot change what the
      // parser is reading.
      const py::bytes bytes = py::isinstance<py::bytes>(source) ? py::reinterpret_borrow<py::bytes>(source)
                                                                : py::reinterpret_steal<py::bytes>(PyBytes_FromObject(source.ptr()));
      if (!bytes) throw py::error_already_set();
      char* data = nullptr;
      Py_ssize_t length = 0;
      if (PyBytes_AsStringAndSize(bytes.ptr(), &data, &length) != 0) throw py::error_already_set();
      const size_t size = static_cast<size_t>(length);
      source_ = "<ONNX model from " + std::to_string(size) + " bytes>";
      if (o.max_file_bytes > 0 && size > static_cast<uint64_t>(o.max_file_bytes))
        throw ninegrid::Error(source_ + ": the model is more than the limit of " + std::to_string(o.max_file_bytes) +
                              " bytes (max_file_bytes)");
      py::gil_scoped_release release;
      guard("loading", [&] { model_ = ninegrid::Model::load_onnx(data, size, o); });
    } else {
      throw ninegrid::Error("InferenceSession takes a path (str or os.PathLike) or an ONNX model's bytes, got " +
                            std::string(py::str(source.get_type().attr("__name__"))));
    }
    // One session now, so that an unusable input shape is an error here rather than at the first run.
    py::gil_scoped_release release;
    guard("creating a session for", [&] { idle_.push_back(new_session()); });
  }

  py::list inputs() const { return node_args(model_->inputs()); }
  py::list outputs() const { return node_args(model_->outputs()); }

  py::list run(const py::object& output_names, const py::object& feeds) {
    const auto& ins = model_->inputs();
    const auto& outs = model_->outputs();
    const std::vector<size_t> wanted = requested_outputs(output_names, outs);
    if (!py::isinstance<py::dict>(feeds))
      throw ninegrid::Error(source_ + ": run() takes the inputs as a dict {input name: array}, got " +
                            std::string(py::str(feeds.get_type().attr("__name__"))));
    const py::dict dict = py::reinterpret_borrow<py::dict>(feeds);
    for (auto item : dict) {
      bool found = false;
      if (py::isinstance<py::str>(item.first)) {
        const std::string name = py::str(item.first);
        for (const auto& in : ins) found = found || in.name == name;
      }
      if (!found)
        throw ninegrid::Error(source_ + ": run(): " + std::string(py::repr(item.first)) +
                              " is not an input of the model (its inputs: " + quoted_names(ins) + ")");
    }
    std::string missing;
    for (const auto& in : ins)
      if (!dict.contains(in.name)) missing += (missing.empty() ? "'" : ", '") + in.name + "'";
    if (!missing.empty())
      throw ninegrid::Error(source_ + ": run(): input " + missing + " missing from the feeds (every input of the " +
                            "model must be given; its inputs: " + quoted_names(ins) + ")");

    std::vector<py::array> pinned;  // referenced until the engine is done reading them in place
    std::vector<Tensor> tensors;
    for (const auto& in : ins) {
      const std::string what = source_ + ": input '" + in.name + "'";
      py::array arr = exact_input_array(in.name, dict[py::str(in.name)], exchange_dtype(in.dtype, what),
                                        ort_type_name(in.dtype));
      check_shape(in, arr);
      ninegrid::Shape shape(arr.shape(), arr.shape() + arr.ndim());
      tensors.push_back(Tensor::wrap(in.dtype, shape, const_cast<void*>(arr.data())));
      pinned.push_back(std::move(arr));
    }

    std::vector<Tensor> results;
    {
      py::gil_scoped_release release;
      guard("running", [&] {
        Lease lease(*this);
        ninegrid::Session& s = *lease.session;
        for (size_t i = 0; i < ins.size(); ++i) s.set_input(ins[i].name, tensors[i]);
        s.run();
        for (size_t o : wanted) results.push_back(s.output(outs[o].name));
        if (profiling_) {
          std::vector<ninegrid::StepProfile> steps = s.profile();
          std::lock_guard<std::mutex> lock(mutex_);
          last_profile_ = std::move(steps);
        }
      });
    }
    py::list out;
    for (size_t i = 0; i < wanted.size(); ++i) {
      const auto& info = outs[wanted[i]];
      out.append(to_numpy(results[i], info.name, exchange_dtype(results[i].dtype(), "output '" + info.name + "'")));
    }
    return out;
  }

  // Takes effect from the next run() (runs already in flight keep their setting).
  void set_profiling(bool on) { profiling_ = on; }
  bool profiling() const { return profiling_; }

  // The steps of the last run made with profiling on (any thread's), as ninegrid.Model.profile() gives them.
  py::list profile() {
    std::vector<ninegrid::StepProfile> steps;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      steps = last_profile_;
    }
    py::list out;
    for (const auto& s : steps) {
      py::list ins, outs;
      for (const auto& sh : s.input_shapes) ins.append(shape_tuple(sh));
      for (const auto& sh : s.output_shapes) outs.append(shape_tuple(sh));
      py::dict d;
      d["name"] = s.name;
      d["op_type"] = s.op_type;
      d["fused"] = py::cast(s.fused);
      d["algorithm"] = s.algorithm;
      d["precision"] = s.precision;
      d["layout"] = s.layout;
      d["input_shapes"] = ins;
      d["output_shapes"] = outs;
      d["macs"] = s.macs;
      d["bytes"] = s.bytes;
      d["time_ms"] = s.time_ms;
      out.append(d);
    }
    return out;
  }

  int threads() {
    py::gil_scoped_release release;
    int n = 0;
    guard("creating a session for", [&] {
      Lease lease(*this);
      n = lease.session->threads();
    });
    return n;
  }

  // Engine sessions made so far: at most the number of run() calls that were ever in flight at once.
  size_t sessions() {
    std::lock_guard<std::mutex> lock(mutex_);
    return created_;
  }

  std::string format() const { return model_->format(); }
  std::string isa() const { return model_->isa(); }
  std::vector<std::string> warnings() const { return model_->warnings(); }
  const std::string& source() const { return source_; }

 private:
  // An engine session for one call: an idle one, or a new one when every session is busy. It goes back
  // to the pool when the call ends, whether it succeeded or not (a failed run leaves a session usable).
  struct Lease {
    explicit Lease(PySession& p) : owner(p) {
      {
        std::lock_guard<std::mutex> lock(p.mutex_);
        if (!p.idle_.empty()) {
          session = std::move(p.idle_.back());
          p.idle_.pop_back();
        }
      }
      if (!session) session = p.new_session();
      session->set_profiling(p.profiling_);
    }
    ~Lease() {
      std::lock_guard<std::mutex> lock(owner.mutex_);
      owner.idle_.push_back(std::move(session));
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    PySession& owner;
    std::unique_ptr<ninegrid::Session> session;
  };

  std::unique_ptr<ninegrid::Session> new_session() {
    std::unique_ptr<ninegrid::Session> s = model_->create_session();
    std::lock_guard<std::mutex> lock(mutex_);
    ++created_;
    return s;
  }

  py::list node_args(const std::vector<ninegrid::ValueInfo>& infos) const {
    py::list out;
    for (const auto& v : infos) {
      py::object dtype = v.dtype == DataType::BFloat16 ? py::object(py::dtype::of<uint16_t>()) : numpy_dtype_or_none(v.dtype);
      out.append(py::make_tuple(v.name, ort_type_name(v.dtype), shape_list(v), dtype));
    }
    return out;
  }

  // Indices of the outputs to return: all, in the model's order, for None or an empty list.
  std::vector<size_t> requested_outputs(const py::object& names, const std::vector<ninegrid::ValueInfo>& outs) const {
    std::vector<size_t> wanted;
    if (names.is_none() || (py::isinstance<py::sequence>(names) && !py::isinstance<py::str>(names) && py::len(names) == 0)) {
      for (size_t i = 0; i < outs.size(); ++i) wanted.push_back(i);
      return wanted;
    }
    if (py::isinstance<py::str>(names) || py::isinstance<py::bytes>(names) || !py::isinstance<py::sequence>(names))
      throw ninegrid::Error(source_ + ": run(): output_names must be a list of output names or None, got " +
                            std::string(py::repr(names)));
    for (auto n : names) {
      size_t found = outs.size();
      if (py::isinstance<py::str>(n)) {
        const std::string name = py::str(n);
        for (size_t i = 0; i < outs.size() && found == outs.size(); ++i)
          if (outs[i].name == name) found = i;
      }
      if (found == outs.size())
        throw ninegrid::Error(source_ + ": run(): " + std::string(py::repr(n)) +
                              " is not an output of the model (its outputs: " + quoted_names(outs) + ")");
      wanted.push_back(found);
    }
    return wanted;
  }

  // The rank and every fixed dimension must be the model's, as ONNX Runtime requires.
  void check_shape(const ninegrid::ValueInfo& in, const py::array& arr) const {
    const py::list want = shape_list(in);
    const ninegrid::Shape have(arr.shape(), arr.shape() + arr.ndim());
    const std::string prefix = source_ + ": input '" + in.name + "' has shape " + py::str(shape_tuple(have)).cast<std::string>();
    if (have.size() != in.shape.size())
      throw ninegrid::Error(prefix + " (" + std::to_string(have.size()) + " dimensions), but the model expects " +
                            shape_text(want) + " (" + std::to_string(in.shape.size()) + " dimensions)");
    for (size_t d = 0; d < have.size(); ++d)
      if (in.shape[d] >= 0 && have[d] != in.shape[d])
        throw ninegrid::Error(prefix + ", but the model expects " + shape_text(want) + ": dimension " +
                              std::to_string(d) + " is " + std::to_string(have[d]) + ", not " +
                              std::to_string(in.shape[d]));
  }

  // Every error names the model's file (the engine's messages name the node or input), and running out
  // of memory is a ninegrid.Error like every other failure.
  template <class F>
  void guard(const char* doing, F&& f) const {
    try {
      f();
    } catch (const ninegrid::Error& e) {
      if (std::string(e.what()).find(source_) != std::string::npos) throw;
      throw ninegrid::Error(source_ + ": " + e.what());
    } catch (const std::bad_alloc&) {
      throw ninegrid::Error(source_ + ": out of memory while " + doing + " the model");
    }
  }

  std::string source_;
  std::shared_ptr<ninegrid::Model> model_;
  std::mutex mutex_;  // guards idle_, created_, last_profile_
  std::vector<std::unique_ptr<ninegrid::Session>> idle_;
  size_t created_ = 0;
  std::atomic<bool> profiling_{false};
  std::vector<ninegrid::StepProfile> last_profile_;
};

}  // namespace

void bind_inference_session(py::module_& m) {
  py::class_<PySession>(m, "_InferenceSession")
      .def(py::init([](const py::object& source, int threads, const py::object& input_shapes, int opt_level,
                       const std::string& weights, const std::string& isa, const std::string& conv_algorithms,
                       int winograd_tile, int spin_microseconds, const std::string& tuning_cache,
                       bool use_tuning_cache, const py::object& max_tensor_bytes,
                       const py::object& max_arena_bytes, const py::object& max_file_bytes, bool profiling) {
             OptionArgs a;
             a.threads = threads;
             a.shapes = input_shapes;
             a.opt_level = opt_level;
             a.weights = weights;
             a.isa = isa;
             a.conv_algorithms = conv_algorithms;
             a.winograd_tile = winograd_tile;
             a.spin_microseconds = spin_microseconds;
             a.tuning_cache = tuning_cache;
             a.use_tuning_cache = use_tuning_cache;
             a.max_tensor_bytes = max_tensor_bytes;
             a.max_arena_bytes = max_arena_bytes;
             a.max_file_bytes = max_file_bytes;
             return std::make_unique<PySession>(source, a, profiling);
           }),
           py::arg("source"), py::arg("threads"), py::arg("input_shapes"), py::arg("opt_level"), py::arg("weights"),
           py::arg("isa"), py::arg("conv_algorithms"), py::arg("winograd_tile"), py::arg("spin_microseconds"),
           py::arg("tuning_cache"), py::arg("use_tuning_cache"), py::arg("max_tensor_bytes"),
           py::arg("max_arena_bytes"), py::arg("max_file_bytes"), py::arg("profiling"))
      .def("inputs", &PySession::inputs)
      .def("outputs", &PySession::outputs)
      .def("run", &PySession::run, py::arg("output_names"), py::arg("feeds"))
      .def("profile", &PySession::profile)
      .def("set_profiling", &PySession::set_profiling, py::arg("on"))
      .def_property_readonly("profiling", &PySession::profiling)
      .def_property_readonly("threads", &PySession::threads)
      .def_property_readonly("sessions", &PySession::sessions)
      .def_property_readonly("format", &PySession::format)
      .def_property_readonly("isa", &PySession::isa)
      .def_property_readonly("warnings", &PySession::warnings)
      .def_property_readonly("source", &PySession::source);
}

}  // namespace ngpy
