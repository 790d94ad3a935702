// Load-time weight packing for the x86 int8 depthwise kernels (kernels/x86/qconv_kernels_x86.h,
// qconv2d_depthwise), in plain C++.
//
// The kernels multiply `taps` (G) consecutive input pixels of one kernel row by their weights in one
// instruction, one channel per lane. A tile of outputs builds each group of G pixels once and feeds it to
// every output whose window covers it; for an output whose first tap falls at offset o from the group's
// first pixel (-(G-1) <= o < kernel_w), the group meets taps o, o + 1, ..., o + G - 1 of that kernel row,
// zeros where they leave [0, kernel_w). Hence one weight vector per (kernel row, offset):
//   [ceil(channels / lanes)][kernel_h][kernel_w + G - 1 offsets, from o = -(G-1)][lanes][G]
// int8 or int16 (layout.weight_bytes), zeros for the padding channels of the last vector.
#pragma once

#include <cstdint>

#include "kernels/x86/qconv_kernels_x86.h"

namespace ninegrid {

// Bytes of the packed weights.
int64_t qdepthwise_packed_bytes(const X86QDepthwiseLayout& layout, int64_t channels, int64_t kernel_h,
                                int64_t kernel_w);

// OIHW depthwise weights [channels][1][kernel_h][kernel_w] into `packed` (qdepthwise_packed_bytes bytes).
void pack_qdepthwise_weights(const X86QDepthwiseLayout& layout, const int8_t* oihw, int64_t channels,
                             int64_t kernel_h, int64_t kernel_w, void* packed);

}  // namespace ninegrid
