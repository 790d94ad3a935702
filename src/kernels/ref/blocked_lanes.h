// Shared by the reference kernels on channel-blocked tensors NCHW[B]c (pool_blocked_ref, resize_blocked_ref,
// spatial_blocked_ref): the widest block they accept, and a dispatcher that compiles the common blocks
// with a fixed lane count, so the loop over one pixel's lanes becomes a few vector instructions.
#pragma once

#include <cstdint>

namespace ninegrid {

// Blocks wider than this are refused by the ops (real blocks are 4, 8 or 16 lanes).
constexpr int64_t kMaxBlockLanes = 64;

// Calls fn<16>, fn<8> or fn<4>(args...) for those blocks, else fn<0>(args...), where 0 means "the block
// is a run-time argument". Kernels write `const int64_t B = kLanes > 0 ? kLanes : block;`.
#define NINEGRID_DISPATCH_LANES(block, fn, ...) \
  switch (block) {                              \
    case 16: fn<16>(__VA_ARGS__); break;        \
    case 8: fn<8>(__VA_ARGS__); break;          \
    case 4: fn<4>(__VA_ARGS__); break;          \
    default: fn<0>(__VA_ARGS__); break;         \
  }

}  // namespace ninegrid
