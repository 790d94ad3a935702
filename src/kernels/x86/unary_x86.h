// Entry points of the vector kernels for float element-wise activations and math functions
// (kernels/x86/unary_impl.h), one per instruction set: ninegrid::avx512 (16 lanes) and ninegrid::avx2
// (8 lanes). Call an ISA's function only when the CPU has it; kernels/unary_f32_fast.h chooses.
#pragma once

#include <cstdint>

#include "kernels/ref/unary_f32.h"

namespace ninegrid {

#define NINEGRID_X86_UNARY_KERNELS                                                                         \
  /* y[k] = op(x[k]) for k < n (x and y may be the same array). Returns false, touching nothing, for an  \
     op without a vector kernel. */                                                                        \
  bool unary_f32(ref::UnaryF32 op, const ref::UnaryParams& p, const float* x, float* y, int64_t n);

namespace avx512 {
NINEGRID_X86_UNARY_KERNELS
}  // namespace avx512

namespace avx2 {
NINEGRID_X86_UNARY_KERNELS
}  // namespace avx2

namespace neon {  // AArch64 (src/kernels/arm/neon/), 4 lanes
NINEGRID_X86_UNARY_KERNELS
}  // namespace neon

#undef NINEGRID_X86_UNARY_KERNELS

}  // namespace ninegrid
