#include "kernels/ref/qgemm_ref.h"

namespace ninegrid {

void qgemm_ref(int64_t m, int64_t n, int64_t k, const uint8_t* x, int32_t x_zero_point, const int8_t* w,
               const Requantization& q, uint8_t* y) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int64_t sum = 0;
      for (int64_t t = 0; t < k; ++t)
        sum += static_cast<int64_t>(static_cast<int32_t>(x[i * k + t]) - x_zero_point) * w[j * k + t];
      // int32 like every int8 kernel's accumulator: ng.QGemm refuses a k that could overflow it.
      y[i * n + j] = requantize(static_cast<int32_t>(sum), j, q, 0);
    }
}

void matmul_integer_ref(int64_t m, int64_t n, int64_t k, const int32_t* a, const int32_t* a_zp, bool a_zp_per_row,
                        const int32_t* b, const int32_t* b_zp, bool b_zp_per_column, int32_t* y) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      uint32_t sum = 0;  // unsigned: wraps instead of overflowing
      const int32_t za = a_zp[a_zp_per_row ? i : 0], zb = b_zp[b_zp_per_column ? j : 0];
      for (int64_t t = 0; t < k; ++t)
        sum += static_cast<uint32_t>((a[i * k + t] - za) * (b[t * n + j] - zb));
      y[i * n + j] = static_cast<int32_t>(sum);
    }
}

}  // namespace ninegrid
