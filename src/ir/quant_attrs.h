// The quantisation attributes of the fused int8 ops (ng.QConv, ng.QAdd, ...): what graph/passes/fuse_qdq.cpp
// writes and the ops read, in one place. Real values are scale * (q - zero_point) with uint8 q
// (kernels/quantized.h).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/attribute.h"

namespace ninegrid {

// On a QuantizeLinear node (the ncnn importer writes it): ncnn's own activation scale s (127 / threshold).
// The node then computes ncnn's q = float2int8(x * s) + zero_point (core/ncnn_int8.h: round half away
// from zero, saturate to [-127, 127]) instead of ONNX's division by its scale input, which holds 1 / s for
// the DequantizeLinear readers and the QDQ fusion. Per tensor only; int8 zero point 0 or uint8 128. A fused
// op that absorbs such a node clamps its output to [zero_point - 127, zero_point + 127] (qdq_match.cpp).
constexpr const char* kNcnnScale = "ng.ncnn_scale";

struct QConvAttrs {
  float x_scale = 1.f;
  int32_t x_zero_point = 0;
  std::vector<float> w_scale;  // 1 value (per tensor) or one per output channel; weights' zero point is 0
  float y_scale = 1.f;
  int32_t y_zero_point = 0;
  int32_t qmin = 0, qmax = 255;  // output clamp in quantised units (a fused ReLU: qmin = y_zero_point)
  bool has_residual = false;     // r_scale and r_zero_point given
  float r_scale = 1.f;
  int32_t r_zero_point = 0;
};

// Reads and checks them: scales positive and finite, zero points and the clamp in [0, 255], qmin <= qmax.
// Throws Error (without the node's name) on a missing or bad value.
QConvAttrs read_qconv_attrs(const Attributes& attrs);
void write_qconv_attrs(const QConvAttrs& q, Attributes& attrs);

// A scale and zero point of one uint8 tensor, checked the same way (attribute names: <prefix>_scale,
// <prefix>_zero_point).
struct TensorQuant {
  float scale = 1.f;
  int32_t zero_point = 0;
};
TensorQuant read_tensor_quant(const Attributes& attrs, const std::string& prefix);
void write_tensor_quant(const TensorQuant& q, const std::string& prefix, Attributes& attrs);

// The output clamp of a fused int8 op in quantised units (qmin, qmax; default the whole [0, 255]).
struct QClamp {
  int32_t qmin = 0, qmax = 255;
};
QClamp read_qclamp(const Attributes& attrs);
void write_qclamp(const QClamp& c, Attributes& attrs);

}  // namespace ninegrid
