// Load-time weight packing for the channel-blocked conv kernels (kernels/x86/conv_kernels_x86.h), in
// plain C++. A kernel computing P output channels at once wants, for each (input channel, tap), the P
// weights of its output channels side by side, so one vector load fetches them.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>

#include "core/aligned_memory.h"
#include "core/cpu_features.h"

namespace ninegrid {

// Whether the vector conv kernels read and write this channel block: 1 (plain NCHW), 4 (NEON's), 8 or 16,
// dividing the channel count (each kernel family narrows this further: ops/conv_fast.h).
bool is_kernel_channel_block(int64_t block, int64_t channels);
// Whether the kernels of `isa` take this block at all: NCHW4c only NEON's (an x86 vector holds 8 or 16
// channels, and their kernels read a block narrower than that as plain NCHW).
inline bool isa_takes_block(Isa isa, int64_t block) { return block != 4 || is_arm_isa(isa); }

// Output channels rounded up to a whole number of blocks.
inline int64_t round_up_to_block(int64_t channels, int64_t block) { return (channels + block - 1) / block * block; }

// OIHW weights [out_channels][in_channels_per_group][kernel_h][kernel_w] (any groups: O counts all
// output channels, I those of one group) to [ceil(out_channels / block)][in_channels_per_group][kernel_h]
// [kernel_w][block]. Output channels past out_channels (the last block's padding) get zero weights.
AlignedFloats pack_conv_weights(const float* oihw, int64_t out_channels, int64_t in_channels_per_group,
                                int64_t kernel_h, int64_t kernel_w, int64_t block);

// Depthwise OIHW weights [channels][1][kernel_h][kernel_w] to [channels / block][kernel_h][kernel_w][block]
// (channels % block == 0).
AlignedFloats pack_depthwise_weights(const float* oihw, int64_t channels, int64_t kernel_h, int64_t kernel_w,
                                     int64_t block);

// Per-channel values (bias, PRelu slopes) padded with zeros to round_up_to_block(channels, block);
// a null `values` gives all zeros.
AlignedFloats pad_per_channel(const float* values, int64_t channels, int64_t block);

}  // namespace ninegrid
