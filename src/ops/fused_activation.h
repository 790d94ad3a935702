// The fused epilogue of an operator, as graph passes record it on the node (these attributes never come
// from an ONNX file):
//   "ng.activation":        "Relu", "Clip", "LeakyRelu", "PRelu", "Sigmoid", "HardSigmoid", "HardSwish" or "Silu"
//   "ng.activation_params": Clip [min, max], LeakyRelu [alpha], HardSigmoid [alpha, beta]; others none
//   "ng.affine_after":      [scale, shift], a scalar affine after the activation (Activation::affine_after)
// PRelu's slopes are a tensor, so the operator takes them as an input (see the op's own comment).
#pragma once

#include "ir/attribute.h"
#include "kernels/activation.h"

namespace ninegrid {

// The activation the node's attributes ask for (kind None when there is none). Activation::slope is
// left null for PRelu: the op points it at its slope input. Throws Error (without the node's name) on an
// unknown activation or a wrong number of parameters (of the activation or of the affine after it).
Activation read_fused_activation(const Attributes& attrs);

}  // namespace ninegrid
