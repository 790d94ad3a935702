// The fast x86 2-D transposed convolution behind the ConvTranspose op: a GEMM, then col2im.
//
// The GEMM is a 1x1 convolution from the C input channels to M * kernel_h * kernel_w "column" channels,
//   cols[(m, kh, kw)][ih, iw] = sum_c w[c][m][kh][kw] * x[c][ih][iw],
// run by FastConv2d on weights transposed to OIHW and prepacked once, at construction; it reads the input
// restaged into 8-channel blocks (when the channels allow), writes the columns channel-blocked, and a
// reorder pass makes them plain planes again. col2im (kernels/x86/col2im_x86.h) then scatters each column
// value to its output pixel, adds the bias and applies the fused activation while the output row is in
// cache.
//
// The output is made in bands of rows: a band's input rows go through the GEMM into a per-thread scratch
// of a few hundred KB (it stays in L2 for the GEMM, the reorder and col2im), so the columns never take the
// memory of a whole image. With overlapping taps (kernel > stride) neighbouring bands share a few input
// rows, computed in both.
//
//   if (FastConvTranspose2d::supports(p, preferred_isa())) {
//     FastConvTranspose2d deconv(p, w, b, act, preferred_isa());   // at load time
//     deconv.run(x, y, pool);                                        // per inference
//   }
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/activation.h"
#include "kernels/conv_params.h"
#include "kernels/x86/col2im_x86.h"
#include "ops/conv_fast.h"
#include "core/cpu_features.h"

namespace ninegrid {

class ThreadPool;

class FastConvTranspose2d {
 public:
  // Whether this runs `p` with kernels of at most `isa`: 2-D (depth 1, which includes 1-D), one group,
  // AVX2 or better on this CPU. Otherwise the caller runs the reference kernel.
  static bool supports(const ConvTransposeParams& p, Isa isa);

  // Transposes and prepacks `weights` (ONNX's [C][M][kernel_h][kernel_w]); copies `bias` (M values, or
  // null) and a PRelu activation's slopes (M values). Throws Error when !supports(p, isa).
  FastConvTranspose2d(const ConvTransposeParams& p, const float* weights, const float* bias,
                      const Activation& activation, Isa isa);

  // y = activation(conv_transpose(x) + bias) for the whole batch, plain NCHW out; x plain NCHW
  // (x_block 1) or channel-blocked NCHW[x_block]c with x_block 8 or 16 (accepts_input_block), whose rows
  // the band's restaging copies as they are. `pool` may be null (one thread).
  void run(const float* x, float* y, ThreadPool* pool, int64_t x_block = 1) const;
  // Whether run() takes x in channel blocks of `block`: 8 or 16 dividing the input channels (the GEMM then
  // reads restaged NCHW8c rows anyway).
  bool accepts_input_block(int64_t block) const {
    return in_block_ == 8 && (block == 8 || block == 16) && p_.in_channels % block == 0;
  }

  // "gemm-col2im/avx512" or "gemm-col2im/avx2".
  std::string name() const;
  // The output row bands one image is made in (tests use it to cover the one- and many-band paths).
  int64_t bands() const { return static_cast<int64_t>(bands_.size()); }
  // The GEMM's input block: 8 (restaged per band) or 1 (read in place); tests cover both.
  int64_t gemm_input_block() const { return in_block_; }

 private:
  // Output rows [out_begin, out_end), made from the GEMM over input rows [gemm_row0, gemm_row0 + gemm_rows_);
  // `has_input` false when no input row lands there (output_padding rows): only the bias is written.
  struct Band {
    int64_t out_begin = 0, out_end = 0;
    int64_t gemm_row0 = 0;
    bool has_input = false;
  };

  void plan_bands();
  int64_t scratch_floats_per_row() const;
  // One image's band; the GEMM and col2im split over `pool` when it is given.
  void run_band(const float* x_image, int64_t x_block, float* y_image, const Band& band, float* scratch,
                ThreadPool* pool) const;

  ConvTransposeParams p_;
  Isa isa_ = Isa::Ref;
  int64_t gemm_rows_ = 0;  // input rows per GEMM call (all bands the same, so one prepacked FastConv2d)
  int64_t lanes_ = 8;          // the GEMM's output block
  int64_t in_block_ = 1;       // the GEMM's input block: 8 (restaged per band) or 1 (the plain image)
  int64_t cols_channels_ = 0;  // M * kernel_h * kernel_w rounded up to whole blocks
  std::vector<Band> bands_;
  std::unique_ptr<FastConv2d> gemm_;
  std::vector<float> bias_, slope_;
  Col2imArgs col2im_args_;  // everything but the cols, their first row and y
  void (*col2im_)(const Col2imArgs&, int64_t, int64_t, int64_t, int64_t) = nullptr;
  void (*unblock_)(const float*, float*, int64_t, int64_t, int64_t, int64_t) = nullptr;  // NCHW[lanes]c -> NCHW
};

}  // namespace ninegrid
