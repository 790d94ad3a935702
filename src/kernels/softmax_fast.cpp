#include "kernels/softmax_fast.h"

#include <algorithm>

#if defined(__x86_64__) || defined(__aarch64__)
#include "kernels/x86/softmax_x86.h"
#endif

namespace ninegrid {

namespace {

// The vector kernel of `isa` on `count` columns at x (axis entries `stride` apart).
void softmax_columns_x86(Isa isa, ref::SoftmaxKind kind, const float* x, float* y, int64_t axis, int64_t count,
                         int64_t stride) {
#if defined(__x86_64__)
  const bool log = kind == ref::SoftmaxKind::LogSoftmax;
  if (isa == Isa::Avx512) avx512::softmax_f32_columns(log, x, y, axis, count, stride);
  else avx2::softmax_f32_columns(log, x, y, axis, count, stride);
#elif defined(__aarch64__)
  neon::softmax_f32_columns(kind == ref::SoftmaxKind::LogSoftmax, x, y, axis, count, stride);
#endif
}

}  // namespace

Isa softmax_f32_isa(ref::SoftmaxKind kind, int64_t inner, Isa isa) {
#if defined(__x86_64__) || defined(__aarch64__)
  if (kind != ref::SoftmaxKind::Hardmax && inner > 1) return runnable_isa(isa);
#endif
  return Isa::Ref;
}

void softmax_f32_fast(Isa isa, ref::SoftmaxKind kind, const float* x, float* y, int64_t axis, int64_t inner,
                      int64_t outer_begin, int64_t outer_end) {
  if (axis <= 0 || inner <= 0) return;
  isa = softmax_f32_isa(kind, inner, isa);
  if (isa == Isa::Ref) return ref::softmax_f32(kind, x, y, axis, inner, outer_begin, outer_end);
  const int64_t slice = axis * inner;
  for (int64_t o = outer_begin; o < outer_end; ++o)
    softmax_columns_x86(isa, kind, x + o * slice, y + o * slice, axis, inner, inner);
}

void softmax_f32_columns_fast(Isa isa, ref::SoftmaxKind kind, const float* x, float* y, int64_t axis,
                              int64_t inner, int64_t outer, int64_t col_begin, int64_t col_end) {
  if (axis <= 0 || inner <= 0 || col_begin >= col_end) return;
  isa = softmax_f32_isa(kind, inner, isa);
  if (isa == Isa::Ref) return ref::softmax_f32_columns(kind, x, y, axis, inner, outer, col_begin, col_end);
  const int64_t offset = outer * axis * inner + col_begin;
  softmax_columns_x86(isa, kind, x + offset, y + offset, axis, col_end - col_begin, inner);
}

}  // namespace ninegrid
