#include "import/ncnn/ncnn_weights.h"

#include <cstring>

#include "ninegrid/tensor.h"

namespace ninegrid {
namespace ncnn {

namespace {

constexpr uint32_t kTagFloat16 = 0x01306B47;
constexpr uint32_t kTagInt8 = 0x000D4B38;
constexpr uint32_t kTagFloat32Scaled = 0x0002C056;

uint64_t align4(uint64_t n) { return (n + 3) / 4 * 4; }

float load_float(const uint8_t* p) {
  float f;
  std::memcpy(&f, p, sizeof f);  // the .bin is little-endian, like every CPU ninegrid targets
  return f;
}

}  // namespace

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  uint32_t bits;
  if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (mant << 13);  // infinity, or NaN with its payload
  } else if (exp != 0) {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {
    // A half subnormal is mant * 2^-24: shift the mantissa up until its leading bit is the implicit one.
    uint32_t e = 127 - 15 + 1;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      --e;
    }
    bits = sign | (e << 23) | ((mant & 0x3FFu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

const uint8_t* WeightReader::take(uint64_t bytes, const std::string& layer) {
  if (bytes > size_ - offset_)
    throw Error("ncnn weights file is truncated at layer '" + layer + "': it needs " + std::to_string(bytes) +
                " more bytes at offset " + std::to_string(offset_) + ", but the file has " +
                std::to_string(size_ - offset_) + " left");
  const uint8_t* p = data_ + offset_;
  offset_ += static_cast<size_t>(bytes);
  return p;
}

std::vector<float> WeightReader::load(int64_t count, int type, const std::string& layer) {
  if (count < 0) throw Error("negative weight count " + std::to_string(count));
  // Bytes needed grow with count; checking against the file size before allocating keeps a garbled
  // weight_data_size from asking for gigabytes.
  const uint64_t n = static_cast<uint64_t>(count);
  if (n > (uint64_t(1) << 40)) take(n, layer);  // certainly beyond any file: report truncation
  if (type == 1) {
    const uint8_t* p = take(n * 4, layer);
    std::vector<float> out(n);
    for (uint64_t i = 0; i < n; ++i) out[i] = load_float(p + 4 * i);
    return out;
  }
  if (type != 0) throw Error("unknown weight type " + std::to_string(type));
  return load_type0(n, layer, /*allow_int8=*/false).floats;
}

WeightReader::Blob WeightReader::load_weights(int64_t count, const std::string& layer) {
  if (count < 0) throw Error("negative weight count " + std::to_string(count));
  const uint64_t n = static_cast<uint64_t>(count);
  if (n > (uint64_t(1) << 40)) take(n, layer);
  return load_type0(n, layer, /*allow_int8=*/true);
}

WeightReader::Blob WeightReader::load_type0(uint64_t n, const std::string& layer, bool allow_int8) {
  Blob blob;
  std::vector<float>& out = blob.floats;
  const uint8_t* tagp = take(4, layer);
  uint32_t tag;
  std::memcpy(&tag, tagp, sizeof tag);
  if (tag == kTagFloat16) {
    const uint8_t* p = take(align4(n * 2), layer);
    out.resize(n);
    for (uint64_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, p + 2 * i, sizeof h);
      out[i] = half_to_float(h);
    }
    return blob;
  }
  if (tag == kTagInt8) {
    if (!allow_int8)
      throw Error("its weights are stored as int8 (tag 0x000D4B38), but it is not a quantised layer (only "
                  "Convolution, ConvolutionDepthWise and InnerProduct with int8_scale_term, param 8, read int8 weights)");
    const uint8_t* p = take(align4(n), layer);
    blob.is_int8 = true;
    blob.int8.resize(n);
    if (n > 0) std::memcpy(blob.int8.data(), p, n);
    return blob;
  }
  if (tag == kTagFloat32Scaled || tag == 0) {
    const uint8_t* p = take(n * 4, layer);
    out.resize(n);
    for (uint64_t i = 0; i < n; ++i) out[i] = load_float(p + 4 * i);
    return blob;
  }
  // ncnn decides on the sum of the tag's bytes: nonzero (always, here) means a 256-entry lookup table.
  const uint8_t* table = take(256 * 4, layer);
  const uint8_t* index = take(align4(n), layer);
  out.resize(n);
  for (uint64_t i = 0; i < n; ++i) out[i] = load_float(table + 4 * index[i]);
  return blob;
}

}  // namespace ncnn
}  // namespace ninegrid
