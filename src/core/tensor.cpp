// Tensor storage, data-type names and shape helpers.
#include "ninegrid/tensor.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>

#include "core/aligned_memory.h"
#include "core/checked_math.h"
#include "core/tensor_storage.h"

namespace ninegrid {

size_t dtype_size(DataType t) {
  switch (t) {
    case DataType::Float32: return 4;
    case DataType::UInt8: return 1;
    case DataType::Int8: return 1;
    case DataType::UInt16: return 2;
    case DataType::Int16: return 2;
    case DataType::Int32: return 4;
    case DataType::Int64: return 8;
    case DataType::Bool: return 1;
    case DataType::Float16: return 2;
    case DataType::Float64: return 8;
    case DataType::UInt32: return 4;
    case DataType::UInt64: return 8;
    case DataType::BFloat16: return 2;
    default: return 0;
  }
}

const char* dtype_name(DataType t) {
  switch (t) {
    case DataType::Undefined: return "undefined";
    case DataType::Float32: return "float32";
    case DataType::UInt8: return "uint8";
    case DataType::Int8: return "int8";
    case DataType::UInt16: return "uint16";
    case DataType::Int16: return "int16";
    case DataType::Int32: return "int32";
    case DataType::Int64: return "int64";
    case DataType::String: return "string";
    case DataType::Bool: return "bool";
    case DataType::Float16: return "float16";
    case DataType::Float64: return "float64";
    case DataType::UInt32: return "uint32";
    case DataType::UInt64: return "uint64";
    case DataType::BFloat16: return "bfloat16";
  }
  return "unknown";
}

void throw_dtype_mismatch(DataType have, DataType want) {
  throw Error(std::string("tensor holds ") + dtype_name(have) + ", accessed as " + dtype_name(want));
}

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw Error("shape " + shape_str(shape) + " has a negative or unknown dimension");
    int64_t r;
    if (__builtin_mul_overflow(n, d, &r)) throw Error("shape " + shape_str(shape) + " has more elements than can be counted");
    n = r;
  }
  return n;
}

void throw_size_overflow(const char* what) {
  throw Error(std::string(what) + " overflows a 64-bit integer");
}

int64_t tensor_bytes(DataType dtype, const Shape& shape) {
  int64_t bytes;
  if (__builtin_mul_overflow(shape_numel(shape), static_cast<int64_t>(dtype_size(dtype)), &bytes))
    throw Error("a " + std::string(dtype_name(dtype)) + " tensor of shape " + shape_str(shape) +
                " has more bytes than can be counted");
  return bytes;
}

std::string bytes_str(int64_t bytes) {
  static const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  double v = static_cast<double>(bytes);
  int u = -1;
  while (v >= 1024 && u < 5) v /= 1024, ++u;
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", v, units[u]);
  return text;
}

std::string shape_str(const Shape& shape) {
  if (shape.empty()) return "scalar";
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += 'x';
    s += shape[i] < 0 ? std::string("?") : std::to_string(shape[i]);
  }
  return s;
}

Shape parse_shape(const std::string& text) {
  Shape shape;
  std::string tok;
  auto flush = [&] {
    if (tok.empty()) throw Error("bad shape '" + text + "': expected dimensions like 1x3x224x224");
    char* end = nullptr;
    long long v = std::strtoll(tok.c_str(), &end, 10);
    if (*end != '\0' || v < 0) throw Error("bad shape '" + text + "': '" + tok + "' is not a dimension");
    shape.push_back(v);
    tok.clear();
  };
  for (char c : text) {
    if (c == 'x' || c == 'X' || c == ',') flush();
    else tok += c;
  }
  flush();
  return shape;
}

namespace {
// Hard ceiling on one allocation: anything bigger is a corrupt or hostile shape, not a real tensor.
constexpr size_t kMaxTensorBytes = size_t(1) << 40;

std::shared_ptr<void> allocate_aligned(size_t bytes, FirstTouch touch) {
  if (bytes > kMaxTensorBytes) throw Error("tensor of " + std::to_string(bytes) + " bytes is too large");
  void* p = allocate_aligned_memory(bytes, touch);
  if (!p) throw Error("out of memory allocating " + std::to_string(bytes) + " bytes");
  return std::shared_ptr<void>(p, [](void* q) { free_aligned_memory(q); });
}
}  // namespace

Tensor empty_tensor(DataType dtype, const Shape& shape, FirstTouch touch) {
  if (dtype_size(dtype) == 0) throw Error(std::string("cannot allocate a tensor of type ") + dtype_name(dtype));
  const int64_t numel = shape_numel(shape);
  if (static_cast<uint64_t>(numel) > kMaxTensorBytes / dtype_size(dtype))
    throw Error("tensor of shape " + shape_str(shape) + " is too large");
  std::shared_ptr<void> storage = allocate_aligned(static_cast<size_t>(numel) * dtype_size(dtype), touch);
  void* data = storage.get();
  return Tensor::wrap(dtype, shape, std::move(storage), data);
}

Tensor Tensor::empty(DataType dtype, const Shape& shape) { return empty_tensor(dtype, shape, FirstTouch::Later); }

Tensor Tensor::zeros(DataType dtype, const Shape& shape) {
  Tensor t = empty_tensor(dtype, shape, FirstTouch::Now);
  std::memset(t.data_, 0, t.nbytes());
  return t;
}

Tensor Tensor::wrap(DataType dtype, const Shape& shape, void* data) {
  return wrap(dtype, shape, nullptr, data);
}

Tensor Tensor::wrap(DataType dtype, const Shape& shape, std::shared_ptr<void> owner, void* data) {
  if (dtype_size(dtype) == 0) throw Error(std::string("cannot wrap a tensor of type ") + dtype_name(dtype));
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.numel_ = shape_numel(shape);
  if (!data && t.numel_ > 0) throw Error("Tensor::wrap: null data for shape " + shape_str(shape));
  t.storage_ = std::move(owner);
  t.data_ = data;
  return t;
}

Tensor Tensor::clone() const {
  if (!defined()) return Tensor();
  Tensor t = empty_tensor(dtype_, shape_, FirstTouch::Now);
  if (nbytes()) std::memcpy(t.data_, data_, nbytes());
  return t;
}

Tensor Tensor::reshaped(const Shape& shape) const {
  if (shape_numel(shape) != numel_)
    throw Error("cannot reshape " + shape_str(shape_) + " to " + shape_str(shape));
  Tensor t = *this;
  t.shape_ = shape;
  return t;
}

}  // namespace ninegrid
