// Reference 2-D convolution on channel-blocked tensors: the oracle for the fast x86 kernels, which read
// NCHW[in_block]c and write NCHW[out_block]c (block 1 = plain NCHW; see kernels/ref/reorder_ref.h for the
// layout). Written for obviousness, not speed: one sum per output value, every element addressed with
// blocked_offset, accumulated in double.
#pragma once

#include <cstdint>

#include "kernels/conv_params.h"

namespace ninegrid {

// y = epilogue(conv(x, w) + bias) where x is NCHW[in_block]c, y and epilogue.residual are NCHW[out_block]c,
// w is plain OIHW (kernels/conv_params.h) and bias (may be null) has out_channels values. Each block must
// divide its tensor's channel count (throws Error otherwise). The residual may be y itself.
void conv2d_blocked_ref(const Conv2dParams& p, const Epilogue& epilogue, int64_t in_block, int64_t out_block,
                        const float* x, const float* w, const float* bias, float* y);

}  // namespace ninegrid
