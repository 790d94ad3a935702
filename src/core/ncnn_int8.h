// ncnn's float -> int8 conversion (float2int8 in its int8 layers and its Quantize layer), shared by the
// ncnn importer (float weights of a quantised layer are quantised as ncnn's load_model does) and the
// QuantizeLinear kernel of ncnn-imported models (kernels/ref/quantize_linear_ref.h).
//
// Round half away from zero and saturate to [-127, 127], so -128 never occurs and int8 values are
// symmetric; ONNX's QuantizeLinear rounds half to even and saturates to [-128, 127]. Computed as ncnn's x86
// SIMD code does (its float2int8_sse/avx/avx512, which convert the bulk of every tensor): v + copysign(0.5, v)
// in float, then truncated. Its scalar tail uses round(), which differs only where adding 0.5 rounds the
// float up: v = +-(0.5 - 2^-25) gives +-1 here and 0 there. A NaN gives -127 (ncnn's x86 conversion of NaN
// is INT_MIN, then saturated). Written so that the compiler can vectorise loops over it.
#pragma once

#include <cmath>
#include <cstdint>

namespace ninegrid {

inline int32_t ncnn_float2int8(float v) {
  float r = v + std::copysign(0.5f, v);
  r = r >= -127.f ? r : -127.f;  // NaN fails the comparison: -127
  r = r <= 127.f ? r : 127.f;
  return static_cast<int32_t>(r);  // truncation toward zero
}

}  // namespace ninegrid
