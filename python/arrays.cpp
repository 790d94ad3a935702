// numpy <-> engine conversions shared by the Python classes; see arrays.h.
#include "arrays.h"

#include <vector>

namespace ngpy {

using namespace pybind11::literals;
using ninegrid::DataType;
using ninegrid::Tensor;

py::object numpy_dtype_or_none(DataType t) {
  switch (t) {
    case DataType::Float32: return py::dtype::of<float>();
    case DataType::Float64: return py::dtype::of<double>();
    case DataType::Float16: return py::dtype("float16");
    case DataType::Int64: return py::dtype::of<int64_t>();
    case DataType::Int32: return py::dtype::of<int32_t>();
    case DataType::Int16: return py::dtype::of<int16_t>();
    case DataType::Int8: return py::dtype::of<int8_t>();
    case DataType::UInt64: return py::dtype::of<uint64_t>();
    case DataType::UInt32: return py::dtype::of<uint32_t>();
    case DataType::UInt16: return py::dtype::of<uint16_t>();
    case DataType::UInt8: return py::dtype::of<uint8_t>();
    case DataType::Bool: return py::dtype::of<bool>();
    default: return py::none();
  }
}

py::dtype numpy_dtype(DataType t, const std::string& what) {
  py::object d = numpy_dtype_or_none(t);
  if (d.is_none()) throw ninegrid::Error(what + " is " + ninegrid::dtype_name(t) + ", which numpy has no type for");
  return py::reinterpret_borrow<py::dtype>(d);
}

std::string dtype_str(const py::handle& d) { return py::str(d); }

py::array to_numpy(const Tensor& t, const std::string& name, const py::object& as) {
  py::dtype dt = as.is_none() ? numpy_dtype(t.dtype(), "output '" + name + "'") : py::reinterpret_borrow<py::dtype>(as);
  auto* keep = new Tensor(t);
  py::capsule owner(keep, [](void* p) { delete static_cast<Tensor*>(p); });
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  return py::array(dt, shape, keep->data(), owner);
}

py::tuple shape_tuple(const ninegrid::Shape& s) {
  py::tuple t(s.size());
  for (size_t i = 0; i < s.size(); ++i) t[i] = py::int_(s[i]);
  return t;
}

// Errors name the input and the keyword (never a command-line flag).
std::map<std::string, ninegrid::Shape> parse_shapes(const py::object& shapes, const char* keyword) {
  std::map<std::string, ninegrid::Shape> out;
  if (shapes.is_none()) return out;
  const std::string kw = keyword;
  if (!py::isinstance<py::dict>(shapes))
    throw ninegrid::Error(kw + "= must be a dict {input name: shape}, got " + std::string(py::str(shapes.get_type().attr("__name__"))));
  py::object index = py::module_::import("operator").attr("index");
  for (auto item : py::reinterpret_borrow<py::dict>(shapes)) {
    if (!py::isinstance<py::str>(item.first))
      throw ninegrid::Error(kw + "= keys must be input names (str), got " + std::string(py::repr(item.first)));
    const std::string name = py::str(item.first);
    ninegrid::Shape shape;
    try {
      for (auto d : py::iter(item.second)) shape.push_back(py::int_(index(d)).cast<int64_t>());
    } catch (py::error_already_set&) {
      throw ninegrid::Error(kw + "['" + name + "'] must be a sequence of ints, got " + std::string(py::repr(item.second)));
    } catch (py::cast_error&) {
      throw ninegrid::Error(kw + "['" + name + "'] = " + std::string(py::repr(item.second)) + " is out of range");
    }
    for (int64_t d : shape)
      if (d < 0) throw ninegrid::Error(kw + "['" + name + "'] = " + std::string(py::repr(item.second)) + " has a negative dimension");
    out[name] = shape;
  }
  return out;
}

int64_t parse_budget(const py::object& value, const char* name, int64_t fallback) {
  if (value.is_none()) return fallback;
  int64_t v;
  try {
    v = py::int_(py::module_::import("operator").attr("index")(value)).cast<int64_t>();
  } catch (py::error_already_set&) {
    throw ninegrid::Error(std::string(name) + "= must be an int (bytes; 0 for no limit), got " + std::string(py::repr(value)));
  } catch (py::cast_error&) {
    throw ninegrid::Error(std::string(name) + "= is out of range: " + std::string(py::repr(value)));
  }
  if (v < 0) throw ninegrid::Error(std::string(name) + "= must be 0 (no limit) or a positive number of bytes, got " + std::to_string(v));
  return v;
}

ninegrid::Options make_options(const OptionArgs& a, const char* shapes_keyword) {
  ninegrid::Options o;
  o.threads = a.threads;
  o.opt_level = a.opt_level;
  o.weights_path = a.weights;
  o.input_shapes = parse_shapes(a.shapes, shapes_keyword);
  o.isa = a.isa;
  o.conv_algorithms = a.conv_algorithms;
  o.winograd_tile = a.winograd_tile;
  o.spin_microseconds = a.spin_microseconds;
  o.tuning_cache = a.tuning_cache;
  o.use_tuning_cache = a.use_tuning_cache;
  o.max_tensor_bytes = parse_budget(a.max_tensor_bytes, "max_tensor_bytes", o.max_tensor_bytes);
  o.max_arena_bytes = parse_budget(a.max_arena_bytes, "max_arena_bytes", o.max_arena_bytes);
  o.max_file_bytes = parse_budget(a.max_file_bytes, "max_file_bytes", o.max_file_bytes);
  return o;
}

namespace {

py::array as_array(const std::string& name, const py::handle& value) {
  if (py::isinstance<py::array>(value)) return py::reinterpret_borrow<py::array>(value);
  try {
    return py::module_::import("numpy").attr("asarray")(value);
  } catch (py::error_already_set& e) {
    throw ninegrid::Error("input '" + name + "' cannot be made a numpy array: " + e.what());
  }
}

// np.require converts at most once (dtype, byte order, order and alignment in one copy) and returns the
// array itself when nothing needs to change. What the engine will read in place is checked, not assumed.
py::array require_native(const std::string& name, py::array arr, const py::dtype& want) {
  const py::dtype have = arr.dtype();
  try {
    arr = py::module_::import("numpy").attr("require")(arr, want, py::make_tuple("C_CONTIGUOUS", "ALIGNED"));
  } catch (py::error_already_set& e) {
    throw ninegrid::Error("input '" + name + "': converting " + dtype_str(have) + " to " + dtype_str(want) +
                          " failed: " + e.what());
  }
  const py::dtype got = arr.dtype();
  const int flags = arr.flags();
  if (!got.attr("isnative").cast<bool>() || got.num() != want.num() || got.itemsize() != want.itemsize() ||
      !(flags & py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_) || !(flags & py::detail::npy_api::NPY_ARRAY_ALIGNED_))
    throw ninegrid::Error("input '" + name + "': could not make a C-contiguous, aligned " + dtype_str(want) +
                          " array from a " + dtype_str(have) + " array");
  return arr;
}

}  // namespace

py::array lenient_input_array(const std::string& name, const py::handle& value, const ninegrid::ValueInfo& info) {
  const py::dtype want = numpy_dtype(info.dtype, "input '" + name + "'");
  py::array arr = as_array(name, value);
  const py::dtype have = arr.dtype();
  const bool safe = py::module_::import("numpy").attr("can_cast")(have, want, "casting"_a = "safe").cast<bool>();
  const bool f64_to_f32 = info.dtype == DataType::Float32 && have.kind() == 'f' && have.itemsize() == 8;
  if (!safe && !f64_to_f32)
    throw ninegrid::Error("input '" + name + "' has dtype " + dtype_str(have) + ", but the model expects " +
                          dtype_str(want) + ": ninegrid converts only casts that keep every value (numpy's 'safe' "
                          "casting) and float64 to float32; convert it yourself if that is what you want");
  return require_native(name, arr, want);
}

py::array exact_input_array(const std::string& name, const py::handle& value, const py::dtype& want,
                            const std::string& want_type_name) {
  py::array arr = as_array(name, value);
  const py::dtype have = arr.dtype();
  // Same kind and size, any byte order (a byte-swapped array is the same values).
  if (have.kind() != want.kind() || have.itemsize() != want.itemsize() || have.attr("fields").ptr() != Py_None)
    throw ninegrid::Error("input '" + name + "' has dtype " + dtype_str(have) + ", but the model expects " +
                          dtype_str(want) + " (" + want_type_name + "); convert it with .astype(numpy." +
                          dtype_str(want) + ")");
  return require_native(name, arr, want);
}

}  // namespace ngpy
