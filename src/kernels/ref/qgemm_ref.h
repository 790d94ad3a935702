// Reference quantised matrix products: the integer oracles of ng.QGemm (fused QDQ Gemm/MatMul) and of
// ONNX MatMulInteger. Plain loops, one exact sum per output value.
#pragma once

#include <cstdint>

#include "kernels/quantized.h"

namespace ninegrid {

// y[i][j] = requantize(sum over k of (x[i][k] - x_zero_point) * w[j][k], j) for i < m, j < n: x uint8
// [m, k] row-major, w int8 [n, k] (one row per output column, the layout of a fully connected layer's
// weights), y uint8 [m, n]. The column j is the requantisation's channel (bias, multiplier).
void qgemm_ref(int64_t m, int64_t n, int64_t k, const uint8_t* x, int32_t x_zero_point, const int8_t* w,
               const Requantization& q, uint8_t* y);

// ONNX MatMulInteger on one matrix pair: y[i][j] = sum over k of (a[i][k] - a_zp[i]) * (b[k][j] - b_zp[j]),
// a [m, k] and b [k, n] row-major, already widened to int32; a_zp has m values (or 1: per tensor) and
// b_zp n values (or 1). Sums wrap modulo 2^32 as int32 arithmetic does in ONNX Runtime.
void matmul_integer_ref(int64_t m, int64_t n, int64_t k, const int32_t* a, const int32_t* a_zp, bool a_zp_per_row,
                        const int32_t* b, const int32_t* b_zp, bool b_zp_per_column, int32_t* y);

}  // namespace ninegrid
