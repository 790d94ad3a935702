// Writing the QuantizeLinear/DequantizeLinear (QDQ) form of a planned model, as ONNX Runtime's
// quantiser also writes it and as ninegrid's QDQ fusion (src/graph/passes/fuse_qdq.cpp) turns into
// integer ops.
//
// The written model:
//   - activations: uint8, asymmetric, one scale and zero point per tensor. The producer's output is
//     renamed T_float and followed by QuantizeLinear -> T_quantized -> DequantizeLinear -> T, so every
//     reader (and a graph output) keeps reading the tensor by its original name, now quantised. A graph
//     input X gets X_dequantized, which its readers read instead.
//   - weights of Conv, Gemm and MatMul: int8 symmetric (zero point 0, range [-weight_max, weight_max]: 127,
//     or 63 for 7-bit weights), per output
//     channel (DequantizeLinear axis 0 for Conv and transposed Gemm weights, 1 for MatMul and plain Gemm)
//     or per tensor.
//   - biases: int32 with scale x_scale * w_scale, through DequantizeLinear (axis 0 when per channel).
//   - constant inputs of Add and Concat: uint8 with their own min/max range.
//   - opset >= 13 (the model's own when it is 13 or more; raised to 13 only when every node means the
//     same there), IR version >= 7.
#pragma once

#include <map>
#include <string>

#include "ninegrid_onnx/onnx.pb.h"
#include "quant_calibration.h"
#include "quant_plan.h"

namespace ninegrid::quant {

// Rewrites `model` (prepared and planned) into QDQ form with these activation parameters (one per plan
// tensor that shares no other's). With `input_means` (per-channel means of the Conv and Gemm layers'
// inputs, by tensor name), those layers' biases are corrected for the shift of their output means
// (quant_calibration.h; a layer without a bias gets one), counted in *bias_corrected. Returns, per plan
// tensor, the name of its dequantised value in the written model (the tensor's own name, or
// X_dequantized for a graph input X). Initializers no longer read by any node are removed.
std::map<std::string, std::string> insert_qdq(onnx::ModelProto& model, const QuantPlan& plan,
                                              const std::map<std::string, ActivationParams>& params,
                                              bool per_channel,
                                              const std::map<std::string, ChannelMeans>* input_means = nullptr,
                                              int* bias_corrected = nullptr, int weight_max = 127);

}  // namespace ninegrid::quant
