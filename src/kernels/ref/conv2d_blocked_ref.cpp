#include "kernels/ref/conv2d_blocked_ref.h"

#include <string>

#include "kernels/ref/reorder_ref.h"
#include "ninegrid/tensor.h"

namespace ninegrid {

namespace {

void check_block(int64_t block, int64_t channels, const char* what) {
  if (block < 1 || channels % block != 0)
    throw Error(std::string("conv2d_blocked_ref: ") + what + " block " + std::to_string(block) +
                " does not divide its " + std::to_string(channels) + " channels");
}

}  // namespace

void conv2d_blocked_ref(const Conv2dParams& p, const Epilogue& epilogue, int64_t in_block, int64_t out_block,
                        const float* x, const float* w, const float* bias, float* y) {
  check_block(in_block, p.in_channels, "input");
  check_block(out_block, p.out_channels, "output");
  const int64_t icpg = p.in_channels_per_group();
  const int64_t ocpg = p.out_channels_per_group();
  const int64_t in_plane = p.in_h * p.in_w;
  const int64_t out_plane = p.out_h * p.out_w;

  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t oc = 0; oc < p.out_channels; ++oc) {
      const int64_t group = oc / ocpg;
      for (int64_t oh = 0; oh < p.out_h; ++oh)
        for (int64_t ow = 0; ow < p.out_w; ++ow) {
          double sum = bias ? bias[oc] : 0.0;
          for (int64_t icg = 0; icg < icpg; ++icg) {
            const int64_t ic = group * icpg + icg;
            for (int64_t kh = 0; kh < p.kernel_h; ++kh) {
              const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dilation_h;
              if (ih < 0 || ih >= p.in_h) continue;
              for (int64_t kw = 0; kw < p.kernel_w; ++kw) {
                const int64_t iw = ow * p.stride_w - p.pad_left + kw * p.dilation_w;
                if (iw < 0 || iw >= p.in_w) continue;
                const float xv = x[blocked_offset(n, ic, ih * p.in_w + iw, p.in_channels, in_plane, in_block)];
                const float wv = w[((oc * icpg + icg) * p.kernel_h + kh) * p.kernel_w + kw];
                sum += static_cast<double>(xv) * wv;
              }
            }
          }
          const int64_t o = blocked_offset(n, oc, oh * p.out_w + ow, p.out_channels, out_plane, out_block);
          if (epilogue.residual) sum += epilogue.residual[o];
          y[o] = apply_activation(epilogue.activation, static_cast<float>(sum), oc);
        }
    }
}

}  // namespace ninegrid
