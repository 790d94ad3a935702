// Entry points of the x86 col2im kernels behind the fast transposed convolution (ops/conv_transpose_fast.h),
// one set per instruction set: ninegrid::avx512 and ninegrid::avx2.
//
// The transposed convolution runs as a GEMM then col2im. The GEMM (a 1x1 convolution) has already written,
// for a band of input rows, one "column plane" per (output channel m, kernel tap kh, kw):
//   cols[(m * kernel_h + kh) * kernel_w + kw][(ih - cols_row0) * in_w + iw] = sum_c w[c][m][kh][kw] x[c][ih][iw]
// col2im scatters each of those values to output pixel (ih * stride_h - pad_top + kh * dilation_h,
// iw * stride_w - pad_left + kw * dilation_w), then adds the bias and applies the fused activation, one
// output row at a time so that the row is finished while it is in L1.
//
// Plain data only: the ISA files must not share inline or template code with generic code (CMakeLists.txt).
#pragma once

#include <cstdint>

#include "kernels/x86/conv_kernels_x86.h"

namespace ninegrid {

struct Col2imArgs {
  // Geometry (ConvTransposeParams' height and width axes).
  int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0;

  // The column planes of input rows [cols_row0, cols_row0 + cols_rows), cols_rows * in_w floats each.
  const float* cols = nullptr;
  int64_t cols_row0 = 0, cols_rows = 0;

  const float* bias = nullptr;  // one per output channel, or null
  // Only the activation fields are read; `slope` (PRelu) holds one value per output channel.
  X86ConvArgs epilogue;

  float* y = nullptr;  // one image: [channels][out_h][out_w]
};

#define NINEGRID_X86_COL2IM_KERNELS                                                                          \
  /* Output rows [row_begin, row_end) of channels [channel_begin, channel_end):                             \
       y = activation(bias + every column value scattered there).                                           \
     Every input row whose values land in those rows must be in the cols (the caller's band). Disjoint      \
     (channel, row) ranges write disjoint outputs, so callers may run them on different threads. */        \
  void col2im(const Col2imArgs& a, int64_t channel_begin, int64_t channel_end, int64_t row_begin,           \
              int64_t row_end);

namespace avx512 {
NINEGRID_X86_COL2IM_KERNELS
}  // namespace avx512

namespace avx2 {
NINEGRID_X86_COL2IM_KERNELS
}  // namespace avx2

#undef NINEGRID_X86_COL2IM_KERNELS

}  // namespace ninegrid
