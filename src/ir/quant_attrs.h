// The quantisation attributes of the fused int8 ops (ng.QConv, ng.QAdd, ...): what graph/passes/fuse_qdq.cpp
// writes and the ops read, in one place. Real values are scale * (q - zero_point) with uint8 q
// (kernels/quantized.h).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/attribute.h"

namespace ninegrid {

// A scale and zero point of one uint8 tensor (attribute names: <prefix>_scale, <prefix>_zero_point).
struct TensorQuant {
  float scale = 1.f;
  int32_t zero_point = 0;
};
// The output clamp of a fused int8 op in quantised units (qmin, qmax; default the whole [0, 255]).
struct QClamp {
  int32_t qmin = 0, qmax = 255;
};

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
  // A fused ng.QAdd after the requantisation (graph/passes/fuse_qadd.cpp; exclusive with r_*): the node's
  // output is QAdd(conv, residual) (add_conv_input 0) or QAdd(residual, conv) (1), the conv's own output in
  // y_scale, y_zero_point, [qmin, qmax], the addition's operands in add_a_* and add_b_*, its output in
  // add_y_* and its clamp [add_qmin, add_qmax]. Attributes add_a_scale, add_a_zero_point, ..., add_qmin,
  // add_qmax, add_conv_input.
  bool has_add = false;
  TensorQuant add_a, add_b, add_y;
  QClamp add_clamp;
  int add_conv_input = 0;
};

// Reads and checks them: scales positive and finite, zero points and the clamp in [0, 255], qmin <= qmax.
// Throws Error (without the node's name) on a missing or bad value.
QConvAttrs read_qconv_attrs(const Attributes& attrs);
void write_qconv_attrs(const QConvAttrs& q, Attributes& attrs);

// A TensorQuant read and checked as read_qconv_attrs does.
TensorQuant read_tensor_quant(const Attributes& attrs, const std::string& prefix);
void write_tensor_quant(const TensorQuant& q, const std::string& prefix, Attributes& attrs);

// The clamp from attributes qmin and qmax, checked.
QClamp read_qclamp(const Attributes& attrs);
void write_qclamp(const QClamp& c, Attributes& attrs);

}  // namespace ninegrid
