// Reads weight blobs from an ncnn .bin file the way ncnn's ModelBinFromDataReader::load does: layers
// read their blobs in layer order from one stream, each blob either "type 0" (a 4-byte storage tag then
// the data) or "type 1" (raw float32, no tag; biases and most small blobs).
//
// Type 0 tags (as the little-endian uint32 of the first four bytes):
//   0x01306B47  float16: count half floats, the stream then padded to a multiple of 4 bytes
//   0x000D4B38  int8 quantized: refused (ninegrid runs these models in float32)
//   0x0002C056  float32 raw (written by older converters that also stored scales elsewhere)
//   0          float32 raw
//   otherwise   the sum of the tag's bytes is nonzero: a uint8-indexed lookup table follows, 256 float32
//               values then count uint8 indices, padded to a multiple of 4 bytes
// Every read is bounds-checked: reading past the end throws "ncnn weights file is truncated at layer 'X'".
// Bytes left over at the end are allowed (ncnn ignores them too).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ninegrid {
namespace ncnn {

class WeightReader {
 public:
  WeightReader(const void* data, size_t size) : data_(static_cast<const uint8_t*>(data)), size_(data ? size : 0) {}

  // Reads `count` values for `layer` (used in error messages). type 0 or 1 as above.
  std::vector<float> load(int64_t count, int type, const std::string& layer);

  size_t offset() const { return offset_; }
  size_t size() const { return size_; }

 private:
  // Returns a pointer to the next `bytes` bytes and advances; throws if the file is too short.
  const uint8_t* take(uint64_t bytes, const std::string& layer);

  const uint8_t* data_;
  size_t size_;
  size_t offset_ = 0;
};

// IEEE 754 binary16 to binary32, exact for every input (subnormals, infinities and NaNs included).
float half_to_float(uint16_t h);

}  // namespace ncnn
}  // namespace ninegrid
