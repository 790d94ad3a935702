#include "kernels/ref/quantize_linear_ref.h"

#include <cmath>
#include <limits>

#include "core/ncnn_int8.h"

namespace ninegrid {

namespace {

template <class Q>
void quantize(const float* x, const float* scale, const Q* zp, Q* q, QuantAxis a, int64_t begin, int64_t end) {
  // In double past the float rounding, so int32's bounds and zero points are exact.
  constexpr double lo = std::numeric_limits<Q>::min(), hi = std::numeric_limits<Q>::max();
  for (int64_t i = begin; i < end; ++i) {
    const int64_t c = (i / a.inner) % a.channels;
    double v = static_cast<double>(std::nearbyint(x[i] / scale[c])) + static_cast<double>(zp ? zp[c] : 0);
    v = std::fmin(std::fmax(v, lo), hi);  // a NaN input saturates to lo (fmax returns the number)
    q[i] = static_cast<Q>(v);
  }
}

template <class Q>
void dequantize(const Q* q, const float* scale, const Q* zp, float* x, QuantAxis a, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    const int64_t c = (i / a.inner) % a.channels;
    x[i] = static_cast<float>(static_cast<int64_t>(q[i]) - (zp ? zp[c] : 0)) * scale[c];
  }
}

}  // namespace

void quantize_linear_ref(const float* x, const float* scale, const void* zp, DataType t, void* q, QuantAxis a,
                         int64_t begin, int64_t end) {
  switch (t) {
    case DataType::UInt8:
      quantize(x, scale, static_cast<const uint8_t*>(zp), static_cast<uint8_t*>(q), a, begin, end);
      break;
    case DataType::Int8:
      quantize(x, scale, static_cast<const int8_t*>(zp), static_cast<int8_t*>(q), a, begin, end);
      break;
    case DataType::Int32:
      quantize(x, scale, static_cast<const int32_t*>(zp), static_cast<int32_t*>(q), a, begin, end);
      break;
    default: throw Error(std::string("quantize_linear_ref: unsupported type ") + dtype_name(t));
  }
}

void quantize_ncnn_ref(const float* x, float ncnn_scale, int32_t zero_point, DataType t, void* q, int64_t begin,
                       int64_t end) {
  if (t == DataType::Int8 && zero_point == 0) {
    int8_t* out = static_cast<int8_t*>(q);
    for (int64_t i = begin; i < end; ++i) out[i] = static_cast<int8_t>(ncnn_float2int8(x[i] * ncnn_scale));
  } else if (t == DataType::UInt8 && zero_point == 128) {
    uint8_t* out = static_cast<uint8_t*>(q);
    for (int64_t i = begin; i < end; ++i) out[i] = static_cast<uint8_t>(ncnn_float2int8(x[i] * ncnn_scale) + 128);
  } else {
    throw Error(std::string("quantize_ncnn_ref: needs int8 with zero point 0 or uint8 with 128, got ") + dtype_name(t) +
                " with " + std::to_string(zero_point));
  }
}

void dequantize_linear_ref(const void* q, DataType t, const float* scale, const void* zp, float* x, QuantAxis a,
                           int64_t begin, int64_t end) {
  switch (t) {
    case DataType::UInt8:
      dequantize(static_cast<const uint8_t*>(q), scale, static_cast<const uint8_t*>(zp), x, a, begin, end);
      break;
    case DataType::Int8:
      dequantize(static_cast<const int8_t*>(q), scale, static_cast<const int8_t*>(zp), x, a, begin, end);
      break;
    case DataType::Int32:
      dequantize(static_cast<const int32_t*>(q), scale, static_cast<const int32_t*>(zp), x, a, begin, end);
      break;
    default: throw Error(std::string("dequantize_linear_ref: unsupported type ") + dtype_name(t));
  }
}

}  // namespace ninegrid
