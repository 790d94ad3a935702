// Float element-wise activations and math functions on the fastest kernel available: the AVX-512 or AVX2
// vector kernels (kernels/x86/unary_impl.h) for the ops CNNs use, the reference ref::unary_f32 for the
// rest and on CPUs (or under NINEGRID_ISA=ref) without those instruction sets.
#pragma once

#include <cstdint>

#include "kernels/ref/unary_f32.h"
#include "core/cpu_features.h"

namespace ninegrid {

// The instruction set unary_f32_fast(isa, op, ...) runs: `isa` capped by the CPU, or Isa::Ref when op has
// no vector kernel.
Isa unary_f32_isa(ref::UnaryF32 op, Isa isa);

// y[k] = op(x[k]) for k < n, as ref::unary_f32, on the kernel unary_f32_isa(op, isa) names. The vector
// kernels are not bit-identical to the reference (their exp, expm1 and log1p are their own), but within a
// few ulp of it (tests/unit/unary_x86_test.cpp states the bounds).
void unary_f32_fast(Isa isa, ref::UnaryF32 op, const ref::UnaryParams& p, const float* x, float* y, int64_t n);

}  // namespace ninegrid
