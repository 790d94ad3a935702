// numpy <-> engine conversions and keyword parsing shared by ninegrid.Model (module.cpp) and
// ninegrid.InferenceSession (session.cpp).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <map>
#include <string>

#include "ninegrid/ninegrid.h"

namespace ngpy {

namespace py = pybind11;

// The numpy dtype (native byte order) of an engine type, or None if numpy has none.
py::object numpy_dtype_or_none(ninegrid::DataType t);
// The same, or ninegrid::Error naming `what` when numpy has none.
py::dtype numpy_dtype(ninegrid::DataType t, const std::string& what);
std::string dtype_str(const py::handle& d);

// Hands the tensor's storage to numpy (no copy): the array keeps a Tensor sharing the storage alive.
// `as` is the numpy dtype to present it as (the tensor's own when None).
py::array to_numpy(const ninegrid::Tensor& t, const std::string& name, const py::object& as = py::none());

py::tuple shape_tuple(const ninegrid::Shape& s);

// `shapes=` as the engine takes it: {input name: sequence of non-negative ints}. `keyword` names the
// argument in errors.
std::map<std::string, ninegrid::Shape> parse_shapes(const py::object& shapes, const char* keyword = "shapes");
// A byte budget: None keeps `fallback`, else a non-negative int.
int64_t parse_budget(const py::object& value, const char* name, int64_t fallback);

// Every keyword the engine's Options has, as the Python classes take them.
struct OptionArgs {
  int threads = 0;
  py::object shapes = py::none();
  int opt_level = 2;
  std::string weights;
  std::string isa;
  std::string conv_algorithms;
  int winograd_tile = 0;
  int spin_microseconds = -1;
  std::string tuning_cache;
  bool use_tuning_cache = true;
  py::object max_tensor_bytes = py::none(), max_arena_bytes = py::none(), max_file_bytes = py::none();
};
ninegrid::Options make_options(const OptionArgs& a, const char* shapes_keyword = "shapes");

// ninegrid.Model's input conversion: the array the engine reads for one input, exactly the model's dtype
// in native byte order, C-contiguous and aligned; used in place when it already is, else converted once
// when the conversion keeps every value (numpy's "safe" casting) or is float64 to float32; any other
// dtype raises ninegrid::Error naming the input and both dtypes.
py::array lenient_input_array(const std::string& name, const py::handle& value, const ninegrid::ValueInfo& info);

// The same as ONNX Runtime does it (InferenceSession): the dtype must be the input's (`want`; byte order
// aside), or ninegrid::Error names the input and both types. Only layout and byte order are fixed, by
// one copy; an array that needs neither is returned as is and read in place.
py::array exact_input_array(const std::string& name, const py::handle& value, const py::dtype& want,
                            const std::string& want_type_name);

}  // namespace ngpy
