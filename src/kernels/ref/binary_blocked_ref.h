// A two-input element-wise operation between a channel-blocked float tensor X, NCHW[B]c (memory order
// [N][C/B][H][W][B], see reorder_ref.h), and an operand V holding at most one value per (batch, channel)
// pair: V's shape is [N or 1, C or 1, 1, 1] (or fewer leading axes), so its element for (n, c) sits at
// n * v_batch_step + c * v_channel_step in every layout. This is the squeeze-and-excitation Mul(x, s) and
// the per-channel Add/Sub/Div of a blocked feature map, run without reordering X.
//
// Each output element is f applied to the same two floats as in the plain broadcast, so the result is
// bit-identical to it. Work is split in rows: row r is row r % h of block plane r / h, a block plane
// being one (batch, channel block) pair.
#pragma once

#include <cstdint>

#include "kernels/ref/blocked_lanes.h"

namespace ninegrid {
namespace ref {

struct ChannelOperand {
  const float* v = nullptr;
  int64_t batch_step = 0;    // 0 when V has one batch
  int64_t channel_step = 0;  // 0 when V has one channel
};

namespace detail {

// kVFirst: y = f(v, x) (V is input 0), else y = f(x, v). kLanes: the block if fixed at compile time,
// so the loop over one pixel's lanes is a few vector instructions; 0 = the run-time `block`.
template <int kLanes, bool kVFirst, class F>
void channel_broadcast_rows(const float* x, const ChannelOperand& v, float* y, int64_t channels, int64_t h,
                            int64_t w, int64_t block, int64_t row_begin, int64_t row_end, F f) {
  const int64_t B = kLanes > 0 ? kLanes : block;
  const int64_t blocks_per_batch = channels / B;
  const int64_t row_len = w * B;
  float lanes[kMaxBlockLanes] = {};  // loaded at the first row; zeroed so the compiler sees it set
  int64_t loaded_plane = -1;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t plane = r / h;
    if (plane != loaded_plane) {
      const int64_t n = plane / blocks_per_batch, c0 = (plane % blocks_per_batch) * B;
      for (int64_t l = 0; l < B; ++l) lanes[l] = v.v[n * v.batch_step + (c0 + l) * v.channel_step];
      loaded_plane = plane;
    }
    const float* xr = x + r * row_len;
    float* yr = y + r * row_len;
    for (int64_t p = 0; p < w; ++p)
      for (int64_t l = 0; l < B; ++l)
        yr[p * B + l] = kVFirst ? f(lanes[l], xr[p * B + l]) : f(xr[p * B + l], lanes[l]);
  }
}

template <int kLanes, class F>
void channel_broadcast_dispatch(bool v_first, const float* x, const ChannelOperand& v, float* y, int64_t channels,
                                int64_t h, int64_t w, int64_t block, int64_t row_begin, int64_t row_end, F f) {
  if (v_first)
    channel_broadcast_rows<kLanes, true>(x, v, y, channels, h, w, block, row_begin, row_end, f);
  else
    channel_broadcast_rows<kLanes, false>(x, v, y, channels, h, w, block, row_begin, row_end, f);
}

}  // namespace detail

// Rows [row_begin, row_end) of Y = f(X, V) (or f(V, X) when v_first) for X and Y of shape [n, channels,
// h, w] stored NCHW[block]c; block divides channels and is at most kMaxBlockLanes. Rows run from 0 to
// n * (channels / block) * h.
template <class F>
void channel_broadcast_blocked_ref(bool v_first, const float* x, const ChannelOperand& v, float* y, int64_t channels,
                                   int64_t h, int64_t w, int64_t block, int64_t row_begin, int64_t row_end, F f) {
  NINEGRID_DISPATCH_LANES(block, detail::channel_broadcast_dispatch, v_first, x, v, y, channels, h, w, block,
                          row_begin, row_end, f);
}

}  // namespace ref
}  // namespace ninegrid
