#include "kernels/ref/qconv2d_ref.h"

#include <string>

#include "kernels/ref/reorder_ref.h"
#include "ninegrid/tensor.h"

namespace ninegrid {

namespace {

void check_block(int64_t block, int64_t channels, const char* what) {
  if (block < 1 || channels % block != 0)
    throw Error(std::string("qconv2d_ref: ") + what + " block " + std::to_string(block) + " does not divide its " +
                std::to_string(channels) + " channels");
}

// The exact sum of one output value.
int32_t sum_at(const Conv2dParams& p, int32_t x_zero_point, int32_t w_zero_point, int64_t in_block, const uint8_t* x,
               const int8_t* w, int64_t n, int64_t oc, int64_t oh, int64_t ow) {
  const int64_t icpg = p.in_channels_per_group(), group = oc / p.out_channels_per_group();
  const int64_t in_plane = p.in_h * p.in_w;
  int64_t sum = 0;
  for (int64_t icg = 0; icg < icpg; ++icg) {
    const int64_t ic = group * icpg + icg;
    for (int64_t kh = 0; kh < p.kernel_h; ++kh) {
      const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dilation_h;
      if (ih < 0 || ih >= p.in_h) continue;
      for (int64_t kw = 0; kw < p.kernel_w; ++kw) {
        const int64_t iw = ow * p.stride_w - p.pad_left + kw * p.dilation_w;
        if (iw < 0 || iw >= p.in_w) continue;
        const int32_t xv = x[blocked_offset(n, ic, ih * p.in_w + iw, p.in_channels, in_plane, in_block)];
        const int32_t wv = w[((oc * icpg + icg) * p.kernel_h + kh) * p.kernel_w + kw];
        sum += static_cast<int64_t>(xv - x_zero_point) * (wv - w_zero_point);
      }
    }
  }
  return static_cast<int32_t>(sum);  // kernels accumulate in int32: a layer that overflows it is refused upstream
}

}  // namespace

void qconv2d_ref(const Conv2dParams& p, const Requantization& q, int32_t x_zero_point, int64_t in_block,
                 int64_t out_block, const uint8_t* x, const int8_t* w, uint8_t* y) {
  check_block(in_block, p.in_channels, "input");
  check_block(out_block, p.out_channels, "output");
  const int64_t out_plane = p.out_h * p.out_w;
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t oc = 0; oc < p.out_channels; ++oc)
      for (int64_t oh = 0; oh < p.out_h; ++oh)
        for (int64_t ow = 0; ow < p.out_w; ++ow) {
          const int64_t o = blocked_offset(n, oc, oh * p.out_w + ow, p.out_channels, out_plane, out_block);
          const int32_t acc = sum_at(p, x_zero_point, 0, in_block, x, w, n, oc, oh, ow);
          y[o] = requantize(acc, oc, q, q.residual ? q.residual[o] : 0);
        }
}

void qconv2d_sums_ref(const Conv2dParams& p, int32_t x_zero_point, int32_t w_zero_point, int64_t in_block,
                      const uint8_t* x, const int8_t* w, int32_t* acc) {
  check_block(in_block, p.in_channels, "input");
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t oc = 0; oc < p.out_channels; ++oc)
      for (int64_t oh = 0; oh < p.out_h; ++oh)
        for (int64_t ow = 0; ow < p.out_w; ++ow)
          acc[((n * p.out_channels + oc) * p.out_h + oh) * p.out_w + ow] =
              sum_at(p, x_zero_point, w_zero_point, in_block, x, w, n, oc, oh, ow);
}

}  // namespace ninegrid
