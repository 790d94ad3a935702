#include "kernels/unary_f32_fast.h"

#include <algorithm>

#if defined(__x86_64__) || defined(__aarch64__)
#include "kernels/x86/unary_x86.h"
#endif

namespace ninegrid {

namespace {

// The ops kernels/x86/unary_impl.h implements (tests/unit/unary_x86_test.cpp checks that the two agree).
// Sigmoid among them: on the reference's scalar expf EfficientNet-B0's 65 SiLU gates took a large share
// of its time (measured: bench/REPORT.md, "Design decisions and their measurements").
bool has_vector_kernel(ref::UnaryF32 op) {
  using ref::UnaryF32;
  switch (op) {
    case UnaryF32::LeakyRelu:
    case UnaryF32::HardSigmoid:
    case UnaryF32::HardSwish:
    case UnaryF32::Tanh:
    case UnaryF32::Elu:
    case UnaryF32::Selu:
    case UnaryF32::Softplus:
    case UnaryF32::GeluTanh:
    case UnaryF32::Sigmoid:
    case UnaryF32::Silu:
    case UnaryF32::Exp: return true;
    default: return false;
  }
}

}  // namespace

Isa unary_f32_isa(ref::UnaryF32 op, Isa isa) {
#if defined(__x86_64__) || defined(__aarch64__)
  if (has_vector_kernel(op)) return runnable_isa(isa);
#endif
  return Isa::Ref;
}

void unary_f32_fast(Isa isa, ref::UnaryF32 op, const ref::UnaryParams& p, const float* x, float* y, int64_t n) {
  if (n <= 0) return;
#if defined(__x86_64__)
  switch (unary_f32_isa(op, isa)) {
    case Isa::Avx512:
      if (avx512::unary_f32(op, p, x, y, n)) return;
      break;
    case Isa::Avx2:
      if (avx2::unary_f32(op, p, x, y, n)) return;
      break;
    default: break;
  }
#elif defined(__aarch64__)
  if (unary_f32_isa(op, isa) != Isa::Ref && neon::unary_f32(op, p, x, y, n)) return;
#endif
  ref::unary_f32(op, p, x, y, n);
}

}  // namespace ninegrid
