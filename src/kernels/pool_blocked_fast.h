// MaxPool and AveragePool on channel-blocked tensors NCHW[B]c (as kernels/ref/pool_blocked_ref.h) on the
// fastest kernel available: the AVX-512, AVX2 or NEON kernels (kernels/x86/pool_impl.h) when the block is
// the vector's lane count (16, 8 or 4; an AVX-512 CPU runs block 8 on the AVX2 kernel), the reference for
// other blocks and on CPUs (or under NINEGRID_ISA=ref) without those instruction sets.
#pragma once

#include <cstdint>

#include "kernels/ref/pool_blocked_ref.h"
#include "core/cpu_features.h"

namespace ninegrid {

// The instruction set the functions below run for this block when asked for `isa`.
Isa pool_blocked_isa(int64_t block, Isa isa);

// As max_pool_blocked_ref and average_pool_blocked_ref, on the kernel pool_blocked_isa(block, isa) names:
// bit-identical results (the same operations in the same order per output), NaN and signed zeros included.
void max_pool_blocked_fast(Isa isa, const PoolParams& p, int64_t block, const float* x, float* y, int64_t row_begin,
                           int64_t row_end);
// The MaxPool on uint8 / int8 tensors: the same kernels' byte twins (the ISA's int8 block is its float block).
void max_pool_blocked_fast(Isa isa, const PoolParams& p, int64_t block, const uint8_t* x, uint8_t* y,
                           int64_t row_begin, int64_t row_end);
void max_pool_blocked_fast(Isa isa, const PoolParams& p, int64_t block, const int8_t* x, int8_t* y, int64_t row_begin,
                           int64_t row_end);
void average_pool_blocked_fast(Isa isa, const PoolParams& p, bool count_include_pad, int64_t block, const float* x,
                               float* y, int64_t row_begin, int64_t row_end);
// As global_average_pool_blocked_ref, bit for bit, for block planes [begin, end).
void global_average_pool_blocked_fast(Isa isa, int64_t plane_size, int64_t block, const float* x, float* y,
                                      int64_t begin, int64_t end);

}  // namespace ninegrid
