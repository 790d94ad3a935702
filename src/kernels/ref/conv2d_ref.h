// Reference 2-D convolution: plain C++, the oracle every fast 2-D conv kernel is tested against.
#pragma once

#include <cstdint>

#include "kernels/conv_params.h"

namespace ninegrid {

// y = epilogue(conv(x, w) + bias) for the layouts described in kernels/conv_params.h. `bias` may be null
// (no bias). `epilogue.residual`, if set, has y's shape and may be y itself.
void conv2d_ref(const Conv2dParams& p, const Epilogue& epilogue, const float* x, const float* w, const float* bias,
                float* y);

// The same for output planes [plane_begin, plane_end) of the batch * out_channels planes only (plane
// n * out_channels + oc), so a caller can split the work across threads.
void conv2d_ref_planes(const Conv2dParams& p, const Epilogue& epilogue, const float* x, const float* w,
                       const float* bias, float* y, int64_t plane_begin, int64_t plane_end);

}  // namespace ninegrid
