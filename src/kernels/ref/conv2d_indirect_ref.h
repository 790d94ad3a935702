// Reference indirect convolution: plain C++ over an indirection buffer (kernels/indirection.h), the twin
// of the x86 indirect kernels (ops/conv_indirect.h). Every output value is one sum over (input channel of
// its group, tap), each input read through the buffer, accumulated in float in that order.
#pragma once

#include <cstdint>

#include "kernels/conv_params.h"
#include "kernels/indirection.h"

namespace ninegrid {

// y = epilogue(conv(x, w) + bias), x in NCHW[in_block]c, y and the residual (may be y itself) in
// NCHW[out_block]c, w OIHW, bias null or out_channels values; `buffer` built for p. Throws Error when a
// block does not divide its channels or the buffer does not match p.
void conv2d_indirect_ref(const Conv2dParams& p, const Epilogue& epilogue, const IndirectionBuffer& buffer,
                         int64_t in_block, int64_t out_block, const float* x, const float* w, const float* bias,
                         float* y);

}  // namespace ninegrid
