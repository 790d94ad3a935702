// ninegrid public API: tensors, data types and the error type.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace ninegrid {

// Every failure (bad model file, unsupported operator, wrong input shape) is reported as an Error whose
// message says what went wrong and, where there is one, which model node.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Element types. The numeric values are ONNX's TensorProto.DataType, so importers can cast directly.
enum class DataType : int {
  Undefined = 0,
  Float32 = 1,
  UInt8 = 2,
  Int8 = 3,
  UInt16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Float64 = 11,
  UInt32 = 12,
  UInt64 = 13,
  BFloat16 = 16,
};

// Bytes per element; 0 for Undefined and String.
size_t dtype_size(DataType t);
// "float32", "int64", ...
const char* dtype_name(DataType t);

// Dimensions, outermost first. -1 marks a dimension not known until inputs are bound.
using Shape = std::vector<int64_t>;

// Number of elements; throws Error if a dimension is negative or the product overflows.
int64_t shape_numel(const Shape& shape);
// "1x3x224x224" (and "scalar" for rank 0).
std::string shape_str(const Shape& shape);
// Parses "1x3x224x224" (or "1,3,224,224"); throws Error on anything else.
Shape parse_shape(const std::string& text);

// A dense, row-major tensor. Copying a Tensor shares its storage (like a shared_ptr); clone() copies data.
// A tensor made by wrap() borrows memory that the caller keeps alive.
class Tensor {
 public:
  Tensor() = default;

  // New storage, 64-byte aligned. empty() leaves the contents undefined, zeros() clears them.
  static Tensor empty(DataType dtype, const Shape& shape);
  static Tensor zeros(DataType dtype, const Shape& shape);
  // Borrows `data` (no copy). The caller keeps it alive while the tensor is in use.
  static Tensor wrap(DataType dtype, const Shape& shape, void* data);
  // Shares ownership of `owner`, whose memory holds the elements at `data`.
  static Tensor wrap(DataType dtype, const Shape& shape, std::shared_ptr<void> owner, void* data);

  template <class T>
  static Tensor from_vector(DataType dtype, const Shape& shape, const std::vector<T>& values);

  bool defined() const { return dtype_ != DataType::Undefined; }
  // Whether the elements are memory this tensor does not keep alive (made by wrap() without an owner).
  bool borrowed() const { return data_ != nullptr && !storage_; }
  // How many tensors hold this one's storage, this one included (copies and views share it); 0 for an
  // undefined or borrowed tensor.
  long use_count() const { return storage_.use_count(); }
  DataType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t dim(int i) const { return shape_.at(static_cast<size_t>(i < 0 ? i + rank() : i)); }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * dtype_size(dtype_); }

  void* data() { return data_; }
  const void* data() const { return data_; }
  // Typed access; throws Error if T does not match dtype().
  template <class T>
  T* data_as();
  template <class T>
  const T* data_as() const;

  // Deep copy into new storage.
  Tensor clone() const;
  // Same storage, new shape with the same element count (throws Error otherwise).
  Tensor reshaped(const Shape& shape) const;

 private:
  DataType dtype_ = DataType::Undefined;
  Shape shape_;
  int64_t numel_ = 0;
  std::shared_ptr<void> storage_;
  void* data_ = nullptr;
};

// Maps C++ element types to DataType (for data_as<T>()).
template <class T>
struct DataTypeOf;
template <> struct DataTypeOf<float> { static constexpr DataType value = DataType::Float32; };
template <> struct DataTypeOf<double> { static constexpr DataType value = DataType::Float64; };
template <> struct DataTypeOf<int64_t> { static constexpr DataType value = DataType::Int64; };
template <> struct DataTypeOf<int32_t> { static constexpr DataType value = DataType::Int32; };
template <> struct DataTypeOf<int16_t> { static constexpr DataType value = DataType::Int16; };
template <> struct DataTypeOf<int8_t> { static constexpr DataType value = DataType::Int8; };
template <> struct DataTypeOf<uint8_t> { static constexpr DataType value = DataType::UInt8; };
template <> struct DataTypeOf<uint16_t> { static constexpr DataType value = DataType::UInt16; };
template <> struct DataTypeOf<uint32_t> { static constexpr DataType value = DataType::UInt32; };
template <> struct DataTypeOf<uint64_t> { static constexpr DataType value = DataType::UInt64; };
template <> struct DataTypeOf<bool> { static constexpr DataType value = DataType::Bool; };

void throw_dtype_mismatch(DataType have, DataType want);

template <class T>
T* Tensor::data_as() {
  if (dtype_ != DataTypeOf<T>::value) throw_dtype_mismatch(dtype_, DataTypeOf<T>::value);
  return static_cast<T*>(data_);
}
template <class T>
const T* Tensor::data_as() const {
  if (dtype_ != DataTypeOf<T>::value) throw_dtype_mismatch(dtype_, DataTypeOf<T>::value);
  return static_cast<const T*>(data_);
}
template <class T>
Tensor Tensor::from_vector(DataType dtype, const Shape& shape, const std::vector<T>& values) {
  Tensor t = empty(dtype, shape);
  if (static_cast<size_t>(t.numel()) != values.size() || dtype_size(dtype) != sizeof(T))
    throw Error("Tensor::from_vector: " + std::to_string(values.size()) + " values do not fill shape " +
                shape_str(shape) + " of " + dtype_name(dtype));
  if (!values.empty()) std::copy(values.begin(), values.end(), static_cast<T*>(t.data()));
  return t;
}

}  // namespace ninegrid
