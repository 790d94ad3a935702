// Direct 3-D convolution: conv2d_ref's algorithm (kernels/ref/conv2d_ref.cpp) with a depth axis. For each
// (input channel, kernel tap) the weight is a scalar and the taps that read inside the input form a box
// of output voxels; accumulate over that box, then apply the epilogue once per output value.
#include "kernels/ref/conv3d_ref.h"

#include <vector>

#include "kernels/ref/window.h"

namespace ninegrid {

void conv3d_ref_planes(const Conv3dParams& p, const Epilogue& epilogue, const float* x, const float* w,
                       const float* bias, float* y, int64_t plane_begin, int64_t plane_end) {
  const int64_t icpg = p.in_channels_per_group();
  const int64_t ocpg = p.out_channels_per_group();
  const int64_t in_plane = p.in_d * p.in_h * p.in_w;
  const int64_t out_plane = p.out_d * p.out_h * p.out_w;
  const int64_t taps = p.kernel_d * p.kernel_h * p.kernel_w;
  std::vector<float> acc(static_cast<size_t>(out_plane));

  for (int64_t plane = plane_begin; plane < plane_end; ++plane) {
    const int64_t n = plane / p.out_channels;
    const int64_t oc = plane % p.out_channels;
    const int64_t group = oc / ocpg;
    std::fill(acc.begin(), acc.end(), 0.f);

    for (int64_t icg = 0; icg < icpg; ++icg) {
      const int64_t ic = group * icpg + icg;
      const float* xc = x + (n * p.in_channels + ic) * in_plane;
      const float* wc = w + (oc * icpg + icg) * taps;
      for (int64_t kd = 0; kd < p.kernel_d; ++kd) {
        const int64_t dep_offset = kd * p.dilation_d - p.pad_front;
        int64_t od_begin, od_end;
        valid_output_range(dep_offset, p.stride_d, p.in_d, p.out_d, &od_begin, &od_end);
        for (int64_t kh = 0; kh < p.kernel_h; ++kh) {
          const int64_t row_offset = kh * p.dilation_h - p.pad_top;
          int64_t oh_begin, oh_end;
          valid_output_range(row_offset, p.stride_h, p.in_h, p.out_h, &oh_begin, &oh_end);
          for (int64_t kw = 0; kw < p.kernel_w; ++kw) {
            const float wv = wc[(kd * p.kernel_h + kh) * p.kernel_w + kw];
            const int64_t col_offset = kw * p.dilation_w - p.pad_left;
            int64_t ow_begin, ow_end;
            valid_output_range(col_offset, p.stride_w, p.in_w, p.out_w, &ow_begin, &ow_end);
            for (int64_t od = od_begin; od < od_end; ++od) {
              const float* xd = xc + (od * p.stride_d + dep_offset) * p.in_h * p.in_w;
              for (int64_t oh = oh_begin; oh < oh_end; ++oh) {
                const float* xrow = xd + (oh * p.stride_h + row_offset) * p.in_w;
                float* arow = acc.data() + (od * p.out_h + oh) * p.out_w;
                for (int64_t ow = ow_begin; ow < ow_end; ++ow) arow[ow] += wv * xrow[ow * p.stride_w + col_offset];
              }
            }
          }
        }
      }
    }

    const float b = bias ? bias[oc] : 0.f;
    const float* res = epilogue.residual ? epilogue.residual + plane * out_plane : nullptr;
    float* yp = y + plane * out_plane;
    for (int64_t i = 0; i < out_plane; ++i) {
      float v = acc[i] + b;
      if (res) v += res[i];
      yp[i] = apply_activation(epilogue.activation, v, oc);
    }
  }
}

void conv3d_ref(const Conv3dParams& p, const Epilogue& epilogue, const float* x, const float* w, const float* bias,
                float* y) {
  conv3d_ref_planes(p, epilogue, x, w, bias, y, 0, p.batch * p.out_channels);
}

}  // namespace ninegrid
