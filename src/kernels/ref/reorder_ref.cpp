#include "kernels/ref/reorder_ref.h"

namespace ninegrid {

void reorder_blocks_ref(const float* src, float* dst, int64_t batch, int64_t channels, int64_t plane,
                        int64_t from_block, int64_t to_block) {
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t p = 0; p < plane; ++p)
        dst[blocked_offset(n, c, p, channels, plane, to_block)] =
            src[blocked_offset(n, c, p, channels, plane, from_block)];
}

void reorder_blocks_u8_ref(const uint8_t* src, uint8_t* dst, int64_t channels, int64_t plane, int64_t from_block,
                           int64_t to_block, int64_t pair_begin, int64_t pair_end) {
  for (int64_t pair = pair_begin; pair < pair_end; ++pair) {
    const int64_t n = pair / channels, c = pair % channels;
    const uint8_t* s = src + blocked_offset(n, c, 0, channels, plane, from_block);
    uint8_t* d = dst + blocked_offset(n, c, 0, channels, plane, to_block);
    for (int64_t p = 0; p < plane; ++p) d[p * to_block] = s[p * from_block];
  }
}

}  // namespace ninegrid
