// TensorProto decoding. Element data comes either as raw little-endian bytes (raw_data) or in one of the
// typed repeated fields; which typed field holds which element type is fixed by onnx.proto:
//   float_data: float32          int32_data: int8/16/32, uint8/16, bool, float16/bfloat16 (as bits)
//   int64_data: int64            uint64_data: uint32, uint64          double_data: float64
// Every count is checked against the dims before a byte is copied, so no input can make us read or
// allocate beyond what the file itself holds.
#include "import/onnx/tensor_proto.h"

#include <climits>
#include <cstdint>
#include <cstring>
#include <limits>

#include "core/tensor_storage.h"
#include "ninegrid_onnx/onnx.pb.h"

namespace ninegrid {
namespace {

static_assert(static_cast<int>(DataType::BFloat16) == onnx::TensorProto::BFLOAT16,
              "DataType mirrors TensorProto.DataType");

// The element types we can hold; anything else (strings, complex, unknown numbers) is refused.
bool is_numeric_dtype(int t) {
  switch (t) {
    case onnx::TensorProto::FLOAT: case onnx::TensorProto::UINT8: case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT16: case onnx::TensorProto::INT16: case onnx::TensorProto::INT32:
    case onnx::TensorProto::INT64: case onnx::TensorProto::BOOL: case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::DOUBLE: case onnx::TensorProto::UINT32: case onnx::TensorProto::UINT64:
    case onnx::TensorProto::BFLOAT16:
      return true;
    default:
      return false;
  }
}

const char* onnx_type_name(int t) {
  switch (t) {
    case onnx::TensorProto::UNDEFINED: return "undefined";
    case onnx::TensorProto::STRING: return "string";
    case onnx::TensorProto::COMPLEX64: return "complex64";
    case onnx::TensorProto::COMPLEX128: return "complex128";
    default: return is_numeric_dtype(t) ? dtype_name(static_cast<DataType>(t)) : "unknown";
  }
}

// Copies a typed repeated field into `out`, converting each element to Dst (narrowing for the small
// integer types that ONNX stores widened in int32_data).
template <class Dst, class Field>
void copy_converted(const Field& field, void* out) {
  Dst* dst = static_cast<Dst*>(out);
  for (int i = 0; i < field.size(); ++i) dst[i] = static_cast<Dst>(field.Get(i));
}

// The typed field that holds this element type, and its length.
int typed_count(const onnx::TensorProto& p, DataType t) {
  switch (t) {
    case DataType::Float32: return p.float_data_size();
    case DataType::Int64: return p.int64_data_size();
    case DataType::UInt32: case DataType::UInt64: return p.uint64_data_size();
    case DataType::Float64: return p.double_data_size();
    default: return p.int32_data_size();
  }
}

void copy_typed(const onnx::TensorProto& p, DataType t, void* out) {
  switch (t) {
    case DataType::Float32: copy_converted<float>(p.float_data(), out); break;
    case DataType::Float64: copy_converted<double>(p.double_data(), out); break;
    case DataType::Int64: copy_converted<int64_t>(p.int64_data(), out); break;
    case DataType::UInt32: copy_converted<uint32_t>(p.uint64_data(), out); break;
    case DataType::UInt64: copy_converted<uint64_t>(p.uint64_data(), out); break;
    case DataType::Int32: copy_converted<int32_t>(p.int32_data(), out); break;
    case DataType::Int16: copy_converted<int16_t>(p.int32_data(), out); break;
    case DataType::UInt16: case DataType::Float16: case DataType::BFloat16:
      copy_converted<uint16_t>(p.int32_data(), out);
      break;
    case DataType::Int8: copy_converted<int8_t>(p.int32_data(), out); break;
    case DataType::UInt8: copy_converted<uint8_t>(p.int32_data(), out); break;
    case DataType::Bool: {
      uint8_t* dst = static_cast<uint8_t*>(out);
      for (int i = 0; i < p.int32_data_size(); ++i) dst[i] = p.int32_data(i) != 0;
      break;
    }
    default: break;
  }
}

}  // namespace

Tensor tensor_from_proto(const onnx::TensorProto& p, const std::string& what, const RawBytes* external_raw) {
  if (p.data_location() == onnx::TensorProto::EXTERNAL || p.external_data_size() > 0)
    throw Error(what + ": external data not supported (the tensor's bytes are in a separate file)");
  if (p.has_segment()) throw Error(what + ": segmented tensors are not supported");
  const int type = p.data_type();
  if (!is_numeric_dtype(type))
    throw Error(what + ": unsupported element type " + onnx_type_name(type) + " (" + std::to_string(type) + ")");
  const DataType dtype = static_cast<DataType>(type);

  Shape shape(p.dims().begin(), p.dims().end());
  for (int64_t d : shape)
    if (d < 0) throw Error(what + ": dimension " + std::to_string(d) + " is negative");
  int64_t numel = 0;
  try {
    numel = shape_numel(shape);
  } catch (const Error& e) {
    throw Error(what + ": " + e.what());
  }
  const size_t elem = dtype_size(dtype);
  if (static_cast<uint64_t>(numel) > std::numeric_limits<size_t>::max() / elem)
    throw Error(what + ": shape " + shape_str(shape) + " holds more bytes than can be addressed");
  const size_t want_bytes = static_cast<size_t>(numel) * elem;

  RawBytes raw;
  if (external_raw) {
    raw = *external_raw;
  } else if (p.has_raw_data()) {
    raw.data = reinterpret_cast<const uint8_t*>(p.raw_data().data());
    raw.size = p.raw_data().size();
  }
  if (raw.data) {
    if (raw.size != want_bytes)
      throw Error(what + ": raw_data holds " + std::to_string(raw.size) + " bytes, but shape " + shape_str(shape) +
                  " of " + dtype_name(dtype) + " needs " + std::to_string(want_bytes));
    Tensor t = empty_tensor(dtype, shape, FirstTouch::Now);
    if (want_bytes) std::memcpy(t.data(), raw.data, want_bytes);
    // Bytes other than 0 and 1 are not valid bools; normalise so later reads are well defined.
    if (dtype == DataType::Bool) {
      uint8_t* b = static_cast<uint8_t*>(t.data());
      for (size_t i = 0; i < want_bytes; ++i) b[i] = b[i] != 0;
    }
    return t;
  }

  const int have = typed_count(p, dtype);
  if (static_cast<int64_t>(have) != numel)
    throw Error(what + ": holds " + std::to_string(have) + " " + dtype_name(dtype) + " values, but shape " +
                shape_str(shape) + " needs " + std::to_string(numel));
  Tensor t = empty_tensor(dtype, shape, FirstTouch::Now);
  copy_typed(p, dtype, t.data());
  return t;
}

Tensor parse_tensor_proto(const void* data, size_t size) {
  if (size > static_cast<size_t>(INT_MAX)) throw Error("tensor file larger than 2 GB is not supported");
  onnx::TensorProto proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size)))
    throw Error("not a valid ONNX TensorProto: the protobuf encoding is malformed or truncated");
  return tensor_from_proto(proto, "tensor '" + proto.name() + "'");
}

}  // namespace ninegrid
