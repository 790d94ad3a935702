// ncnn's float -> int8 conversion (float2int8 in its int8 layers and its Quantize layer), shared by the
// ncnn importer (float weights of a quantised layer are quantised as ncnn's load_model does) and the
// QuantizeLinear kernel of ncnn-imported models (kernels/ref/quantize_linear_ref.h).
//
// Round half away from zero and saturate to [-127, 127], so -128 never occurs and int8 values are
// symmetric; ONNX's QuantizeLinear rounds half to even and saturates to [-128, 127]. A NaN gives -127, as
// ncnn's x86 build does (its int cast of NaN is INT_MIN, then saturated). ncnn's SIMD variants add +-0.5
// and truncate, which differs from round() only for inputs one float step below k + 0.5.
#pragma once

#include <cmath>
#include <cstdint>

namespace ninegrid {

inline int32_t ncnn_float2int8(float v) {
  const float r = std::fmin(std::fmax(std::round(v), -127.f), 127.f);  // fmax(NaN, -127) is -127
  return static_cast<int32_t>(r);
}

}  // namespace ninegrid
