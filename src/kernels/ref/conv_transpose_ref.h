// Reference transposed convolution (ONNX ConvTranspose), 1-D to 3-D: the oracle for fast versions.
#pragma once

#include <cstdint>

#include "kernels/conv_params.h"

namespace ninegrid {

// y = conv_transpose(x, w) + bias for the layouts described at ConvTransposeParams. `bias` may be null.
void conv_transpose_ref(const ConvTransposeParams& p, const float* x, const float* w, const float* bias, float* y);

// Only output planes [plane_begin, plane_end) of the batch * out_channels planes (plane n * out_channels
// + oc), so a caller can split the work across threads.
void conv_transpose_ref_planes(const ConvTransposeParams& p, const float* x, const float* w, const float* bias,
                               float* y, int64_t plane_begin, int64_t plane_end);

}  // namespace ninegrid
