// ONNX QuantizeLinear and DequantizeLinear on plain tensors, per tensor or per axis (the reference the
// fused int8 graph is checked against, and the kernels of unfused Q/DQ nodes).
//   quantize:   q = saturate(round_half_even(x / scale) + zero_point)     (kernels/quantized.h)
//   dequantize: x = (q - zero_point) * scale
// Element i uses scale[(i / inner) % channels] and zero_point likewise: channels = 1 is per tensor.
#pragma once

#include <cstdint>

#include "ninegrid/tensor.h"

namespace ninegrid {

struct QuantAxis {
  int64_t channels = 1;  // scales (and zero points): 1, or the size of the quantised axis
  int64_t inner = 1;     // elements after that axis
};

// `q` is uint8, int8 or int32 (saturated to its range); zero_point has the same type or is null (0).
void quantize_linear_ref(const float* x, const float* scale, const void* zero_point, DataType q_type, void* q,
                         QuantAxis axis, int64_t begin, int64_t end);
// ncnn's quantisation of one tensor, per tensor: q = ncnn_float2int8(x * ncnn_scale) + zero_point (ncnn
// multiplies by its scale, 127 / threshold, rather than dividing by ONNX's; core/ncnn_int8.h). `q` is
// int8 with zero point 0 or uint8 with zero point 128 (the same values shifted, as kernels/quantized.h explains).
void quantize_ncnn_ref(const float* x, float ncnn_scale, int32_t zero_point, DataType q_type, void* q, int64_t begin,
                       int64_t end);
// `q` is uint8, int8 or int32.
void dequantize_linear_ref(const void* q, DataType q_type, const float* scale, const void* zero_point, float* x,
                           QuantAxis axis, int64_t begin, int64_t end);

}  // namespace ninegrid
