// Reference quantised 2-D convolution: the integer oracle every int8 conv kernel matches bit for bit.
// Written for obviousness, not speed: one sum per output value, every element addressed with
// blocked_offset. The arithmetic is kernels/quantized.h's.
#pragma once

#include <cstdint>

#include "kernels/conv_params.h"
#include "kernels/quantized.h"

namespace ninegrid {

// y = requantize(sum over the taps inside the image of (x - x_zero_point) * w) per output value.
// x is uint8 NCHW[in_block]c, y and q.residual uint8 NCHW[out_block]c (the residual may be y itself), w
// int8 OIHW (kernels/conv_params.h). Each block must divide its tensor's channel count (throws Error).
void qconv2d_ref(const Conv2dParams& p, const Requantization& q, int32_t x_zero_point, int64_t in_block,
                 int64_t out_block, const uint8_t* x, const int8_t* w, uint8_t* y);

// The int32 sums alone (for ConvInteger and for testing kernels' accumulation): acc[n][oc][oh][ow], plain
// NCHW, with the weights' zero point subtracted too (ConvInteger allows one; 0 for ninegrid's weights).
void qconv2d_sums_ref(const Conv2dParams& p, int32_t x_zero_point, int32_t w_zero_point, int64_t in_block,
                      const uint8_t* x, const int8_t* w, int32_t* acc);

}  // namespace ninegrid
