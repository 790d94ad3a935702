// The Python module: ninegrid.Model wraps a model and one session; arrays cross without copies where the
// layout allows (C-contiguous inputs of the model's dtype are read in place; outputs are handed over).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <mutex>

#include "ninegrid/detect.h"
#include "ninegrid/ninegrid.h"

namespace py = pybind11;
using ninegrid::DataType;
using ninegrid::Tensor;

namespace {

bool same_dtype(const py::dtype& a, const py::dtype& b) {
  return a.attr("num").cast<int>() == b.attr("num").cast<int>();
}

py::dtype numpy_dtype(DataType t) {
  switch (t) {
    case DataType::Float32: return py::dtype::of<float>();
    case DataType::Float64: return py::dtype::of<double>();
    case DataType::Int64: return py::dtype::of<int64_t>();
    case DataType::Int32: return py::dtype::of<int32_t>();
    case DataType::UInt8: return py::dtype::of<uint8_t>();
    case DataType::Int8: return py::dtype::of<int8_t>();
    case DataType::Bool: return py::dtype::of<bool>();
    default: throw ninegrid::Error(std::string("cannot return a ") + ninegrid::dtype_name(t) + " tensor to numpy");
  }
}

// Hands the tensor's storage to numpy: the capsule keeps a Tensor (sharing the storage) alive.
py::array to_numpy(const Tensor& t) {
  auto* keep = new Tensor(t);
  py::capsule owner(keep, [](void* p) { delete static_cast<Tensor*>(p); });
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  return py::array(numpy_dtype(t.dtype()), shape, keep->data(), owner);
}

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
  PyModel(const std::string& path, int threads, const std::map<std::string, std::vector<int64_t>>& shapes,
          int opt_level, const std::string& weights) {
    ninegrid::Options o;
    o.threads = threads;
    o.opt_level = opt_level;
    o.weights_path = weights;
    for (const auto& kv : shapes) o.input_shapes[kv.first] = kv.second;
    py::gil_scoped_release release;
    model_ = ninegrid::Model::load(path, o);
  }

  py::dict run(const py::dict& feeds) {
    std::vector<py::array> keep_alive;  // arrays (possibly converted copies) read in place during run()
    std::map<std::string, Tensor> inputs;
    for (auto item : feeds) {
      std::string name = py::str(item.first);
      const ninegrid::ValueInfo* info = nullptr;
      for (const auto& in : model_->inputs())
        if (in.name == name) info = &in;
      if (!info) throw ninegrid::Error("model has no input named '" + name + "'");
      // No copy when the array is already C-contiguous with the model's dtype; otherwise one conversion.
      py::array arr = py::array::ensure(item.second, py::array::c_style);
      if (!arr) throw ninegrid::Error("input '" + name + "' is not array-like");
      if (!same_dtype(arr.dtype(), numpy_dtype(info->dtype))) arr = arr.attr("astype")(numpy_dtype(info->dtype), "C");
      ninegrid::Shape shape(arr.shape(), arr.shape() + arr.ndim());
      inputs[name] = Tensor::wrap(info->dtype, shape, const_cast<void*>(arr.data()));
      keep_alive.push_back(arr);
    }
    std::map<std::string, Tensor> outputs;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      if (!session_) session_ = model_->create_session();
      outputs = session_->run(inputs);
    }
    py::dict result;
    for (const auto& o : model_->outputs()) result[py::str(o.name)] = to_numpy(outputs.at(o.name));
    return result;
  }

  py::list inputs() const { return value_infos(model_->inputs()); }
  py::list outputs() const { return value_infos(model_->outputs()); }

 private:
  std::shared_ptr<ninegrid::Model> model_;
  std::unique_ptr<ninegrid::Session> session_;
  std::mutex mutex_;
};

// Detectors are cached by model and options, so calling detect() in a loop loads the model once.
std::mutex g_detectors_mutex;
std::map<std::string, std::shared_ptr<std::pair<std::mutex, ninegrid::FaceDetector>>> g_detectors;

py::list detect(const py::array& image, const std::string& model, float score, float nms, int size, int threads,
                const std::string& arch) {
  py::array_t<uint8_t, py::array::c_style | py::array::forcecast> rgb(image);
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

}  // namespace

PYBIND11_MODULE(_ninegrid, m) {
  m.doc() = "ninegrid: a CNN inference engine for CPUs";
  m.attr("__version__") = "0.1.0";
  static py::exception<ninegrid::Error> error(m, "Error", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ninegrid::Error& e) {
      error(e.what());
    }
  });
  py::class_<PyModel>(m, "Model", "A loaded model with one session; run() may be called repeatedly.")
      .def(py::init<const std::string&, int, const std::map<std::string, std::vector<int64_t>>&, int,
                    const std::string&>(),
           py::arg("path"), py::arg("threads") = 0, py::arg("shapes") = std::map<std::string, std::vector<int64_t>>{},
           py::arg("opt_level") = 2, py::arg("weights") = "",
           "Loads an ONNX file or an ncnn .param (with its .bin beside it, or `weights`).")
      .def("run", &PyModel::run, py::arg("inputs"),
           "Runs the model on a dict {input name: array}; returns {output name: ndarray}.")
      .def_property_readonly("inputs", &PyModel::inputs, "[{name, dtype, shape}] (None for dynamic dims)")
      .def_property_readonly("outputs", &PyModel::outputs, "[{name, dtype, shape}]");
  m.def("_detect", &detect, py::arg("image"), py::arg("model"), py::arg("score") = 0.5f, py::arg("nms") = 0.4f,
        py::arg("size") = 640, py::arg("threads") = 0, py::arg("arch") = "auto");
  m.attr("_source_dir") = NINEGRID_SOURCE_DIR;
}
