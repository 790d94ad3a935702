// ng.QAdd's element-wise quantised addition on AArch64: the x86 template (kernels/x86/qadd_impl.h) instantiated
// for NEON's 4-lane int8 policy (simd_int8_neon.h), bit for bit kernels/quantized.h's QuantizedAdd. Every
// AArch64 core has NEON.
#pragma once

#include <cstdint>

#include "kernels/x86/qconv_kernels_x86.h"  // X86QuantizedAdd: plain data shared by both architectures

namespace ninegrid {
namespace neon {

// y[i] = QuantizedAdd(a[i], b[i]) for i in [0, n); y may be a or b.
void quantized_add(const X86QuantizedAdd& q, const uint8_t* a, const uint8_t* b, uint8_t* y, int64_t n);

}  // namespace neon
}  // namespace ninegrid
