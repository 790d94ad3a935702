// Reference 3-D convolution (NCDHW), the same algorithm as conv2d_ref with a depth axis.
#pragma once

#include <cstdint>

#include "kernels/conv_params.h"

namespace ninegrid {

void conv3d_ref(const Conv3dParams& p, const Epilogue& epilogue, const float* x, const float* w, const float* bias,
                float* y);
// Output planes [plane_begin, plane_end) of the batch * out_channels planes only.
void conv3d_ref_planes(const Conv3dParams& p, const Epilogue& epilogue, const float* x, const float* w,
                       const float* bias, float* y, int64_t plane_begin, int64_t plane_end);

}  // namespace ninegrid
