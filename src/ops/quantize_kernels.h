// The vector uint8 kernels for an ISA, chosen in one place for the ops that run them: quantize and dequantize
// (QuantizeLinear, DequantizeLinear, ng.QConcat's requantising inputs), uint8 -> uint8 requantisation by
// multiply-add (ng.QConcat, ng.QRequantize).
#pragma once

#include <cstdint>

#include "core/cpu_features.h"
#include "kernels/ref/qlookup_ref.h"

#if defined(__x86_64__)
#include "kernels/x86/qconv_kernels_x86.h"
#include "kernels/x86/requantize_u8_affine_x86.h"
#elif defined(__aarch64__)
#include "kernels/arm/quantize_linear_arm.h"
#endif

namespace ninegrid {

struct QuantizeKernels {
  void (*quantize)(const float* x, float scale, int32_t zero_point, uint8_t* q, int64_t n) = nullptr;
  void (*dequantize)(const uint8_t* q, float scale, int32_t zero_point, float* x, int64_t n) = nullptr;
  // y[i] = affine_u8_ref(m, x[i]): a requantisation table that fit_affine_u8 fitted (kernels/ref/qlookup_ref.h).
  void (*requantize_affine)(const AffineU8& m, const uint8_t* x, uint8_t* y, int64_t n) = nullptr;
  const char* algorithm = "";  // "" when none
};

// x86-64: VNNI's where the ISA is AVX-512 and the CPU has VNNI, else AVX2's; AArch64: NEON's for the neon and
// dotprod ISAs; none (null kernels: the reference runs) for Isa::Ref and other targets.
inline QuantizeKernels choose_quantize_kernels(Isa requested) {
  QuantizeKernels k;
#if defined(__x86_64__)
  const Isa isa = runnable_isa(requested);
  if (isa == Isa::Ref || is_arm_isa(isa)) return k;
  const bool vnni = isa >= Isa::Avx512 && cpu_features().avx512vnni;
  k.quantize = vnni ? vnni::quantize_u8 : avx2::quantize_u8;
  k.dequantize = vnni ? vnni::dequantize_u8 : avx2::dequantize_u8;
  k.requantize_affine = avx2::requantize_u8_affine;  // (AVX2's under VNNI too: memory-bound at 256 bits)
  k.algorithm = vnni ? "int8-vnni" : "int8-avx2";
#elif defined(__aarch64__)
  if (!is_arm_isa(runnable_isa(requested))) return k;
  k.quantize = neon::quantize_u8;
  k.dequantize = neon::dequantize_u8;
  k.requantize_affine = neon::requantize_u8_affine;
  k.algorithm = "int8-neon";
#else
  (void)requested;
#endif
  return k;
}

}  // namespace ninegrid
