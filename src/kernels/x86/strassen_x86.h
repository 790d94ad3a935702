// Entry points of the x86 kernels behind Strassen's algorithm for large 1x1 convolutions
// (ops/conv_strassen.h; the MNN article in ../shared/seeds): a register-blocked GEMM on blocked tensors
// whose tile can update two destinations (C += / -= / = the product), fusing the conv's epilogue into
// the last update of an output, and the element-wise sums of input sub-matrices. One set per ISA:
// ninegrid::avx512 (L = 16 channels per zmm) and ninegrid::avx2 (L = 8 per ymm).
//
// Matrices are views of NCHW[B]c tensors: element (channel k, pixel n) of a view at `base` with block B
// and block stride S (floats between channel blocks) is base[(k / B) * S + n * B + k % B]. The GEMM
// computes C[oc][n] = sum_k W[oc][k] X[k][n] for L-channel vectors of oc, with W packed
// [oc group][k][group lanes] (groups of kStrassenOcVectors * L channels, the last maybe narrower).
// Plain data only: the ISA files must not share inline or template code with generic code (CMakeLists.txt).
#pragma once

#include <cstdint>

#include "kernels/x86/conv_kernels_x86.h"

namespace ninegrid {

// One destination of a product P = W X: dst = (accumulate ? dst : 0) + sign * P, in NCHW[L]c.
struct StrassenTarget {
  float* base = nullptr;  // null: unused
  int64_t block_stride = 0;
  float sign = 1.f;
  bool accumulate = false;
  // The last update of these outputs: add bias and the residual, apply the activation (epilogue below).
  bool final = false;
  const float* residual = nullptr;  // the residual's view at the same place (final only), or null
  int64_t first_channel = 0;        // the output channel of the view's channel 0 (bias, PRelu slope)
};

struct StrassenGemmArgs {
  int64_t k_count = 0;       // K, a multiple of x_block
  int64_t x_block = 16;      // B: 8 or 16
  int64_t x_block_stride = 0;
  const float* x = nullptr;  // the X view
  int64_t pixels = 0;        // N
  int64_t oc_vectors = 0;    // M / L
  const float* w = nullptr;  // packed W
  StrassenTarget target[2];
  const float* bias = nullptr;  // per output channel of the whole conv (final targets)
  X86ConvArgs epilogue;         // activation fields and slope, as the direct kernels read them
};

#define NINEGRID_X86_STRASSEN_KERNELS                                                                        \
  /* Work items [item_begin, item_end) of ceil(oc_vectors / kStrassenOcVectors) * ceil(pixels /             \
     kStrassenPixels), item = group * pixel_tiles + tile: consecutive items share weights. */              \
  void strassen_gemm(const StrassenGemmArgs& a, int64_t item_begin, int64_t item_end);                     \
  /* dst = a + sign * b over views of `blocks` channel blocks of B channels x `pixels` pixels, blocks       \
     [block_begin, block_end) only; strides as in the views above. */                                       \
  void strassen_combine(float* dst, int64_t dst_stride, const float* a, int64_t a_stride, const float* b,    \
                        int64_t b_stride, float sign, int64_t block, int64_t pixels, int64_t block_begin,    \
                        int64_t block_end);

namespace avx512 {
constexpr int kStrassenPixels = 12;
constexpr int kStrassenOcVectors = 2;
NINEGRID_X86_STRASSEN_KERNELS
}  // namespace avx512

namespace avx2 {
constexpr int kStrassenPixels = 6;
constexpr int kStrassenOcVectors = 2;
NINEGRID_X86_STRASSEN_KERNELS
}  // namespace avx2

#undef NINEGRID_X86_STRASSEN_KERNELS

}  // namespace ninegrid
