// Load-time weight transform for the x86 int8 Winograd convolution F(2x2, 3x3)
// (kernels/x86/qconv_winograd_x86.h), in plain C++: each 3x3 filter g becomes U = G' g G'^T with
// G' = [2 0 0; 1 1 1; 1 -1 1; 0 0 2] (twice Winograd's G, so U is an integer), as int16, laid out
// [16 positions][out_channels_padded / 16][channels_padded / 2][16 output channels][2 input channels], zeros
// for padding channels.
#pragma once

#include <cstdint>

namespace ninegrid {

// int16 values of the packed weights.
int64_t qwinograd_f2x3_packed_values(int64_t channels_padded, int64_t out_channels_padded);

// OIHW weights [out_channels][in_channels][3][3] into `packed` (qwinograd_f2x3_packed_values values).
void pack_qwinograd_f2x3(const int8_t* oihw, int64_t out_channels, int64_t in_channels, int64_t out_channels_padded,
                         int64_t channels_padded, int16_t* packed);

}  // namespace ninegrid
