// Reference single-precision matrix multiply: the oracle for fast GEMM kernels and the engine of the
// Gemm and MatMul operators until those exist.
#pragma once

#include <cstdint>

namespace ninegrid {

// C = alpha * op(A) * op(B) + beta * C, with op(A) of m x k and op(B) of k x n, all row-major:
//   A is [m, k] with row stride lda, or [k, m] when trans_a;
//   B is [k, n] with row stride ldb, or [n, k] when trans_b;
//   C is [m, n] with row stride ldc. With beta == 0, C is only written (garbage in C does not leak).
struct GemmParams {
  int64_t m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
  int64_t lda = 0, ldb = 0, ldc = 0;
  float alpha = 1.f, beta = 0.f;
};

// Computes rows [row_begin, row_end) of C, so callers can split the rows across threads.
void gemm_ref(const GemmParams& p, const float* a, const float* b, float* c, int64_t row_begin, int64_t row_end);

inline void gemm_ref(const GemmParams& p, const float* a, const float* b, float* c) { gemm_ref(p, a, b, c, 0, p.m); }

}  // namespace ninegrid
