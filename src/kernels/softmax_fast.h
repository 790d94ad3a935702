// Softmax, LogSoftmax and Hardmax (as kernels/ref/softmax.h) on the fastest kernel available: the AVX-512
// or AVX2 column kernels (kernels/x86/softmax_impl.h) for Softmax and LogSoftmax along a strided axis
// (inner > 1); the reference for Hardmax, for contiguous rows (inner == 1), and on CPUs (or under
// NINEGRID_ISA=ref) without those instruction sets.
#pragma once

#include <cstdint>

#include "kernels/ref/softmax.h"
#include "core/cpu_features.h"

namespace ninegrid {

// The instruction set the functions below run for this kind and inner size when asked for `isa`.
Isa softmax_f32_isa(ref::SoftmaxKind kind, int64_t inner, Isa isa);

// As ref::softmax_f32 and ref::softmax_f32_columns, on the kernel softmax_f32_isa(kind, inner, isa)
// names. The vector kernels are not bit-identical to the reference (their exp is their own and they sum
// in float), but within a few ulp of it (tests/unit/unary_x86_test.cpp states the bounds).
void softmax_f32_fast(Isa isa, ref::SoftmaxKind kind, const float* x, float* y, int64_t axis, int64_t inner,
                      int64_t outer_begin, int64_t outer_end);
void softmax_f32_columns_fast(Isa isa, ref::SoftmaxKind kind, const float* x, float* y, int64_t axis,
                              int64_t inner, int64_t outer, int64_t col_begin, int64_t col_end);

}  // namespace ninegrid
