#include "import/onnx/raw_data_split.h"

#include <climits>

namespace ninegrid {
namespace {

// onnx.proto's field numbers on the path to the weights' bytes.
constexpr uint64_t kModelGraph = 7;          // ModelProto.graph
constexpr uint64_t kGraphInitializer = 5;    // GraphProto.initializer
constexpr uint64_t kTensorRawData = 9;       // TensorProto.raw_data
constexpr int kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5;

bool read_varint(const uint8_t*& p, const uint8_t* end, uint64_t* value) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p == end) return false;
    const uint8_t b = *p++;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *value = v;
      return true;
    }
  }
  return false;
}

void write_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

// One field of a message: its number, wire type, where it starts (the tag), where its value or
// length-delimited payload starts, and where it ends.
struct Field {
  uint64_t number = 0;
  int wire_type = 0;
  const uint8_t* start = nullptr;
  const uint8_t* payload = nullptr;
  const uint8_t* end = nullptr;
};

// Reads the field at p and advances past it; false on anything protobuf might read differently from a
// plain walk (groups, field number 0 or beyond 2^29 - 1, lengths past the message or past 2 GB).
bool next_field(const uint8_t*& p, const uint8_t* end, Field* f) {
  f->start = p;
  uint64_t tag;
  if (!read_varint(p, end, &tag) || tag > UINT32_MAX) return false;
  f->number = tag >> 3;
  f->wire_type = static_cast<int>(tag & 7);
  if (f->number == 0 || f->number > (uint64_t(1) << 29) - 1) return false;
  f->payload = p;
  size_t skip = 0;
  switch (f->wire_type) {
    case kVarint: {
      uint64_t ignored;
      if (!read_varint(p, end, &ignored)) return false;
      f->end = p;
      return true;
    }
    case kFixed64: skip = 8; break;
    case kFixed32: skip = 4; break;
    case kLengthDelimited: {
      uint64_t length;
      if (!read_varint(p, end, &length) || length > INT_MAX) return false;
      f->payload = p;
      skip = static_cast<size_t>(length);
      break;
    }
    default: return false;  // groups (3, 4) and the undefined wire types
  }
  if (static_cast<size_t>(end - p) < skip) return false;
  p += skip;
  f->end = p;
  return true;
}

// Appends a length-delimited field with its original tag and a new payload.
void append_rewritten(std::string& out, const Field& f, const std::string& payload) {
  const uint8_t* tag_end = f.start;
  uint64_t ignored;
  read_varint(tag_end, f.payload, &ignored);  // the tag's bytes, as the file wrote them
  out.append(reinterpret_cast<const char*>(f.start), static_cast<size_t>(tag_end - f.start));
  write_varint(out, payload.size());
  out += payload;
}

bool split_tensor(const uint8_t* p, const uint8_t* end, std::string& out, RawBytes* raw) {
  *raw = RawBytes();
  Field f;
  while (p < end) {
    if (!next_field(p, end, &f)) return false;
    if (f.number == kTensorRawData) {
      if (f.wire_type != kLengthDelimited) return false;
      raw->data = f.payload;  // the last occurrence wins, as in protobuf
      raw->size = static_cast<size_t>(f.end - f.payload);
      continue;
    }
    out.append(reinterpret_cast<const char*>(f.start), static_cast<size_t>(f.end - f.start));
  }
  return true;
}

bool split_graph(const uint8_t* p, const uint8_t* end, std::string& out, std::vector<RawBytes>& raw) {
  Field f;
  std::string tensor;
  while (p < end) {
    if (!next_field(p, end, &f)) return false;
    if (f.number == kGraphInitializer) {
      if (f.wire_type != kLengthDelimited) return false;
      tensor.clear();
      raw.emplace_back();
      if (!split_tensor(f.payload, f.end, tensor, &raw.back())) return false;
      append_rewritten(out, f, tensor);
      continue;
    }
    out.append(reinterpret_cast<const char*>(f.start), static_cast<size_t>(f.end - f.start));
  }
  return true;
}

}  // namespace

bool split_raw_data(const uint8_t* data, size_t size, SplitModel* out) {
  out->skeleton.clear();
  out->raw.clear();
  const uint8_t* p = data;
  const uint8_t* end = data + size;
  Field f;
  std::string graph;
  while (p < end) {
    if (!next_field(p, end, &f)) return false;
    if (f.number == kModelGraph) {
      if (f.wire_type != kLengthDelimited) return false;
      graph.clear();
      if (!split_graph(f.payload, f.end, graph, out->raw)) return false;
      append_rewritten(out->skeleton, f, graph);
      continue;
    }
    out->skeleton.append(reinterpret_cast<const char*>(f.start), static_cast<size_t>(f.end - f.start));
  }
  return true;
}

}  // namespace ninegrid
