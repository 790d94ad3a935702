// A tiny protobuf encoder for building ONNX ModelProtos in tests, written from the wire format
// (varints, fixed32, length-delimited fields) and the field numbers of onnx.proto. The test binary does
// not link the generated ONNX code (libninegrid does), so this keeps the two from clashing, and it
// can write the malformed messages that a generated API would refuse to build.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace ninegrid {
namespace onnx_pb {

class Writer {
 public:
  Writer& varint(int field, uint64_t v) {
    tag(field, 0);
    put_varint(v);
    return *this;
  }
  Writer& int64(int field, int64_t v) { return varint(field, static_cast<uint64_t>(v)); }
  Writer& float32(int field, float v) {
    tag(field, 5);
    char b[4];
    std::memcpy(b, &v, 4);
    buf_.append(b, 4);
    return *this;
  }
  Writer& bytes(int field, const std::string& s) {
    tag(field, 2);
    put_varint(s.size());
    buf_ += s;
    return *this;
  }
  Writer& message(int field, const Writer& m) { return bytes(field, m.str()); }
  const std::string& str() const { return buf_; }

 private:
  void tag(int field, int wire_type) { put_varint((static_cast<uint64_t>(field) << 3) | wire_type); }
  void put_varint(uint64_t v) {
    while (v >= 0x80) {
      buf_ += static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    buf_ += static_cast<char>(v);
  }
  std::string buf_;
};

// TensorProto.DataType values.
enum ElemType { FLOAT = 1, UINT8 = 2, INT8 = 3, UINT16 = 4, INT16 = 5, INT32 = 6, INT64 = 7, STRING = 8,
                BOOL = 9, FLOAT16 = 10, DOUBLE = 11, UINT32 = 12, UINT64 = 13 };

// TensorProto with dims and data type; add data with raw() or the typed-field writers.
inline Writer tensor(const std::string& name, int elem_type, const std::vector<int64_t>& dims) {
  Writer t;
  for (int64_t d : dims) t.int64(1, d);
  t.int64(2, elem_type);
  t.bytes(8, name);
  return t;
}
template <class T>
std::string raw_bytes(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}
inline Writer raw(Writer t, const std::string& bytes) {
  t.bytes(9, bytes);
  return t;
}

// ValueInfoProto of a tensor; a dimension of -1 is written as the symbolic dim_param "N".
inline Writer value_info(const std::string& name, int elem_type, const std::vector<int64_t>& dims) {
  Writer shape;
  for (int64_t d : dims) {
    Writer dim;
    if (d < 0) dim.bytes(2, "N");
    else dim.int64(1, d);
    shape.message(1, dim);
  }
  Writer tensor_type;
  tensor_type.int64(1, elem_type).message(2, shape);
  Writer type;
  type.message(1, tensor_type);
  Writer vi;
  vi.bytes(1, name).message(2, type);
  return vi;
}

// AttributeProto of each kind (type numbers from AttributeProto.AttributeType).
inline Writer attr_int(const std::string& name, int64_t v) { Writer a; a.bytes(1, name).int64(20, 2).int64(3, v); return a; }
inline Writer attr_float(const std::string& name, float v) { Writer a; a.bytes(1, name).int64(20, 1).float32(2, v); return a; }
inline Writer attr_string(const std::string& name, const std::string& v) {
  Writer a; a.bytes(1, name).int64(20, 3).bytes(4, v); return a;
}
inline Writer attr_ints(const std::string& name, const std::vector<int64_t>& v) {
  Writer a;
  a.bytes(1, name).int64(20, 7);
  for (int64_t x : v) a.int64(8, x);
  return a;
}
inline Writer attr_floats(const std::string& name, const std::vector<float>& v) {
  Writer a;
  a.bytes(1, name).int64(20, 6);
  for (float x : v) a.float32(7, x);
  return a;
}
inline Writer attr_tensor(const std::string& name, const Writer& t) { Writer a; a.bytes(1, name).int64(20, 4).message(5, t); return a; }
inline Writer attr_graph(const std::string& name, const Writer& g) { Writer a; a.bytes(1, name).int64(20, 5).message(6, g); return a; }

inline Writer node(const std::string& op_type, const std::vector<std::string>& inputs,
                   const std::vector<std::string>& outputs, const std::string& name = "",
                   const std::vector<Writer>& attrs = {}, const std::string& domain = "") {
  Writer n;
  for (const auto& i : inputs) n.bytes(1, i);
  for (const auto& o : outputs) n.bytes(2, o);
  if (!name.empty()) n.bytes(3, name);
  n.bytes(4, op_type);
  for (const auto& a : attrs) n.message(5, a);
  if (!domain.empty()) n.bytes(7, domain);
  return n;
}

inline Writer graph(const std::vector<Writer>& nodes, const std::vector<Writer>& inputs,
                    const std::vector<Writer>& outputs, const std::vector<Writer>& initializers = {}) {
  Writer g;
  for (const auto& n : nodes) g.message(1, n);
  g.bytes(2, "test_graph");
  for (const auto& t : initializers) g.message(5, t);
  for (const auto& i : inputs) g.message(11, i);
  for (const auto& o : outputs) g.message(12, o);
  return g;
}

// ModelProto (IR version 8) importing `opset` of the default domain (none if opset <= 0).
inline std::string model(const Writer& g, int64_t opset = 13) {
  Writer m;
  m.int64(1, 8);
  m.message(7, g);
  if (opset > 0) {
    Writer id;
    id.bytes(1, "").int64(2, opset);
    m.message(8, id);
  }
  return m.str();
}

}  // namespace onnx_pb
}  // namespace ninegrid
