// Entry points of the vector Softmax / LogSoftmax kernels along a strided axis
// (kernels/x86/softmax_impl.h), one per instruction set: ninegrid::avx512 (16 columns per vector) and
// ninegrid::avx2 (8). Call an ISA's function only when the CPU has it; kernels/softmax_fast.h chooses.
#pragma once

#include <cstdint>

namespace ninegrid {

#define NINEGRID_X86_SOFTMAX_KERNELS                                                                       \
  /* Softmax (log: LogSoftmax) of `count` neighbouring columns starting at x, each over `axis` elements   \
     `stride` floats apart (stride >= count); y has the same layout. */                                   \
  void softmax_f32_columns(bool log, const float* x, float* y, int64_t axis, int64_t count, int64_t stride);

namespace avx512 {
NINEGRID_X86_SOFTMAX_KERNELS
}  // namespace avx512

namespace avx2 {
NINEGRID_X86_SOFTMAX_KERNELS
}  // namespace avx2

namespace neon {  // AArch64 (src/kernels/arm/neon/), 4 lanes
NINEGRID_X86_SOFTMAX_KERNELS
}  // namespace neon

#undef NINEGRID_X86_SOFTMAX_KERNELS

}  // namespace ninegrid
