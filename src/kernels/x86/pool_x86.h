// Entry points of the vector MaxPool / AveragePool kernels on channel-blocked tensors NCHW[B]c
// (kernels/x86/pool_impl.h), one per instruction set: ninegrid::avx512 (B = 16) and ninegrid::avx2 (B = 8).
// Call an ISA's function only when the CPU has it; kernels/pool_blocked_fast.h chooses.
#pragma once

#include <cstdint>

#include "kernels/ref/pool_ref.h"

namespace ninegrid {

// The windows of a 2-D pool, resolved once per call by the generic front end (the ISA files may not
// build std::vectors, see the ODR note in CMakeLists.txt): one per output row and per output column
// (pool_axis_windows), and the output columns [full_begin, full_end) whose window lies wholly inside the
// input row (k_begin = 0, k_end = kernel width), which take the unrolled path.
struct PoolBlockedWindows {
  const PoolAxisWindow* rows;
  const PoolAxisWindow* cols;
  int64_t full_begin, full_end;
};

#define NINEGRID_X86_POOL_KERNELS                                                                                      \
  /* As max_pool_blocked_ref / average_pool_blocked_ref (kernels/ref/pool_blocked_ref.h) with the block the            \
     ISA's lane count, bit for bit: output rows [row_begin, row_end) of the block planes. */                           \
  void max_pool_blocked(const PoolParams& p, const PoolBlockedWindows& w, const float* x, float* y, int64_t row_begin, \
                        int64_t row_end);                                                                              \
  /* The MaxPool on uint8 / int8 tensors (quantised models), with the same block (the ISA's int8 block is its     \
     float block), bit for bit max_pool_blocked_ref's. */                                                              \
  void max_pool_blocked(const PoolParams& p, const PoolBlockedWindows& w, const uint8_t* x, uint8_t* y,               \
                        int64_t row_begin, int64_t row_end);                                                           \
  void max_pool_blocked(const PoolParams& p, const PoolBlockedWindows& w, const int8_t* x, int8_t* y,                 \
                        int64_t row_begin, int64_t row_end);                                                           \
  void average_pool_blocked(const PoolParams& p, bool count_include_pad, const PoolBlockedWindows& w, const float* x,  \
                            float* y, int64_t row_begin, int64_t row_end);                                             \
  /* As global_average_pool_blocked_ref with the block the ISA's lane count, bit for bit (each lane's sum in          \
     double, pixel after pixel): block planes [begin, end). */                                                         \
  void global_average_pool_blocked(int64_t plane_size, const float* x, float* y, int64_t begin, int64_t end);

namespace avx512 {
NINEGRID_X86_POOL_KERNELS
}  // namespace avx512

namespace avx2 {
NINEGRID_X86_POOL_KERNELS
}  // namespace avx2

namespace neon {  // AArch64 (src/kernels/arm/neon/), 4 lanes
NINEGRID_X86_POOL_KERNELS
}  // namespace neon

#undef NINEGRID_X86_POOL_KERNELS

}  // namespace ninegrid
