// Converts a 4-D float tensor [N, C, H, W] between channel-blocked layouts: NCHW[from]c -> NCHW[to]c, where
// block 1 is plain NCHW and a block must divide C. Element (n, c, p) with p = h * W + w lives at
//   ((n * C / B + c / B) * H * W + p) * B + c % B   for block B.
#pragma once

#include <cstdint>

namespace ninegrid {

inline int64_t blocked_offset(int64_t n, int64_t c, int64_t p, int64_t channels, int64_t plane, int64_t block) {
  return ((n * (channels / block) + c / block) * plane + p) * block + c % block;
}

void reorder_blocks_ref(const float* src, float* dst, int64_t batch, int64_t channels, int64_t plane,
                        int64_t from_block, int64_t to_block);

// The same for one-byte elements (the uint8 and int8 tensors of quantised models), for the (image,
// channel) pairs [pair_begin, pair_end) of batch * channels, so that threads can share one image.
void reorder_blocks_u8_ref(const uint8_t* src, uint8_t* dst, int64_t channels, int64_t plane, int64_t from_block,
                           int64_t to_block, int64_t pair_begin, int64_t pair_end);

}  // namespace ninegrid
