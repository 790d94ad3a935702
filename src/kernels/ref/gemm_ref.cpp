// One row of C at a time: the row of op(A) times op(B), summed in float into a scratch row, then scaled
// and combined with C. With B not transposed the inner loop runs along B's rows (contiguous); with B
// transposed each output is a dot product of two contiguous rows.
#include "kernels/ref/gemm_ref.h"

#include <algorithm>
#include <vector>

namespace ninegrid {

void gemm_ref(const GemmParams& p, const float* a, const float* b, float* c, int64_t row_begin, int64_t row_end) {
  std::vector<float> acc(static_cast<size_t>(p.n));
  for (int64_t i = row_begin; i < row_end; ++i) {
    // Element (i, kk) of op(A).
    auto a_at = [&](int64_t kk) { return p.trans_a ? a[kk * p.lda + i] : a[i * p.lda + kk]; };
    if (!p.trans_b) {
      std::fill(acc.begin(), acc.end(), 0.f);
      for (int64_t kk = 0; kk < p.k; ++kk) {
        const float av = a_at(kk);
        const float* brow = b + kk * p.ldb;
        for (int64_t j = 0; j < p.n; ++j) acc[j] += av * brow[j];
      }
    } else {
      for (int64_t j = 0; j < p.n; ++j) {
        const float* brow = b + j * p.ldb;
        float sum = 0.f;
        for (int64_t kk = 0; kk < p.k; ++kk) sum += a_at(kk) * brow[kk];
        acc[j] = sum;
      }
    }
    float* crow = c + i * p.ldc;
    if (p.beta == 0.f) {
      for (int64_t j = 0; j < p.n; ++j) crow[j] = p.alpha * acc[j];
    } else {
      for (int64_t j = 0; j < p.n; ++j) crow[j] = p.alpha * acc[j] + p.beta * crow[j];
    }
  }
}

}  // namespace ninegrid
