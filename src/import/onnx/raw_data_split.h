// A serialized ModelProto split into its skeleton and its weights' bytes, so that protobuf parses only
// the skeleton (a few KB for a CNN) and every initializer's raw_data is decoded once, straight from the
// model's bytes into its tensor: protobuf would first copy each raw_data into a string of fresh memory
// (ResNet-50: 100 MB, a fifth of its load time), which the decoding then copies again.
//
// The skeleton is the model with the raw_data field (9) of every initializer (GraphProto field 5 of
// ModelProto field 7) left out, the enclosing lengths re-encoded; every other byte is kept as it was, so
// protobuf gives the skeleton the meaning it gives the model, merges of repeated occurrences included.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ninegrid {

struct RawBytes {
  const uint8_t* data = nullptr;  // null: the initializer has no raw_data
  size_t size = 0;
};

struct SplitModel {
  std::string skeleton;
  // Per initializer, in the order protobuf lists them (the graph's initializer field in file order): the
  // raw_data bytes that were left out, pointing into the model's bytes.
  std::vector<RawBytes> raw;
};

// False when the bytes are not well-formed wire format where the split looks (a truncated length, a
// group, a bad tag): the caller then parses the whole model with protobuf, which reports the error.
bool split_raw_data(const uint8_t* data, size_t size, SplitModel* out);

}  // namespace ninegrid
