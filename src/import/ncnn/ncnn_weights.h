// Reads weight blobs from an ncnn .bin file the way ncnn's ModelBinFromDataReader::load does: layers
// read their blobs in layer order from one stream, each blob either "type 0" (a 4-byte storage tag then
// the data) or "type 1" (raw float32, no tag; biases and most small blobs).
//
// Type 0 tags (as the little-endian uint32 of the first four bytes):
//   0x01306B47  float16: count half floats, the stream then padded to a multiple of 4 bytes
//   0x000D4B38  int8: count signed bytes, the stream then padded to a multiple of 4 bytes (the weights of
//               ncnn2int8's quantised layers; only load_weights() accepts them)
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

  // Reads `count` values for `layer` (used in error messages). type 0 or 1 as above. int8 data is refused:
  // only the quantised layers read it, through load_weights().
  std::vector<float> load(int64_t count, int type, const std::string& layer);

  // A type 0 blob that may hold int8 data (a quantised layer's weights): exactly one of the vectors is filled.
  struct Blob {
    bool is_int8 = false;
    std::vector<int8_t> int8;
    std::vector<float> floats;
  };
  Blob load_weights(int64_t count, const std::string& layer);

  size_t offset() const { return offset_; }
  size_t size() const { return size_; }

 private:
  // Returns a pointer to the next `bytes` bytes and advances; throws if the file is too short.
  const uint8_t* take(uint64_t bytes, const std::string& layer);
  Blob load_type0(uint64_t count, const std::string& layer, bool allow_int8);

  const uint8_t* data_;
  size_t size_;
  size_t offset_ = 0;
};

// IEEE 754 binary16 to binary32, exact for every input (subnormals, infinities and NaNs included).
float half_to_float(uint16_t h);

}  // namespace ncnn
}  // namespace ninegrid
