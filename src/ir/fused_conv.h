// The contract between the graph passes that fuse work into convolutions (graph/passes) and the ops that
// run them (ops/conv.cpp, ops/conv_transpose.cpp), in one place: the extra inputs' positions and the
// attribute names the passes write. ops/fused_activation.h says what the activation attributes hold.
#pragma once

#include <cstddef>

#include "ir/graph.h"

namespace ninegrid::fused {

// Conv / ConvTranspose inputs after X, W and B:
constexpr size_t kResidualInput = 3;  // Conv only: a tensor of Y's shape added before the activation
constexpr size_t kSlopeInput = 4;     // with activation PRelu: one slope per output channel, or one for all

// The activation in the epilogue: "Relu", "Clip", "LeakyRelu", "PRelu", "Sigmoid", ... (absent: none).
constexpr const char* kActivation = "ng.activation";
// Its parameters (Clip [min, max], LeakyRelu [alpha], HardSigmoid [alpha, beta]).
constexpr const char* kActivationParams = "ng.activation_params";
// A scalar affine after the activation, [scale, shift]: y = activation(...) * scale + shift (absent: none).
constexpr const char* kAffineAfter = "ng.affine_after";
// The index of an input of Y's shape that the op adds after its own arithmetic, y = op(...) + x, taking in
// the Add that read x and op's result. Absent: none. On Add, Sub, Mul and Div (ops/layout_tolerant_binary_op.h)
// 0 or 1 (the residual of a squeeze-and-excitation block, x + x * gate: fuse_gate_residual); on a nearest
// Resize (ops/resize.cpp) kResizeAddendInput, an input the ONNX op does not have (an FPN's lateral + upsampled
// top: fuse_upsample_add).
constexpr const char* kAddOperand = "ng.add_operand";
constexpr size_t kResizeAddendInput = 4;  // after X, roi, scales and sizes
// On such a Resize, an optional gate of the addend, one value per (batch, channel): the value added is then
// addend * gate + addend (the lateral is a squeeze-and-excitation residual that fuse_gate_residual made one
// Mul; fuse_upsample_add takes that Mul in too).
constexpr size_t kResizeGateInput = 5;
// Channel blocks the layout pass chose for a node's input 0 and output 0 (1 or absent: plain NCHW).
constexpr const char* kInBlock = "ng.in_block";
constexpr const char* kOutBlock = "ng.out_block";

inline bool has_residual(const Node& n) { return n.inputs.size() > kResidualInput && n.inputs[kResidualInput] >= 0; }
inline bool has_activation(const Node& n) { return n.attrs.has(kActivation); }

}  // namespace ninegrid::fused
