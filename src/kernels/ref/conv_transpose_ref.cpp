// Transposed convolution as a gather per output plane: output plane (n, oc) receives, from every input
// channel of its group and every kernel tap k, the input pixels i whose scatter target
// o = i * stride - pad_begin + k * dilation falls inside the output. For a fixed tap those i form a box
// (valid_output_range with the roles of input and output swapped), so the inner loop is a strided axpy.
// Each thread owns whole output planes: no two threads write the same value.
#include "kernels/ref/conv_transpose_ref.h"

#include <vector>

#include "kernels/ref/window.h"

namespace ninegrid {

void conv_transpose_ref_planes(const ConvTransposeParams& p, const float* x, const float* w, const float* bias,
                               float* y, int64_t plane_begin, int64_t plane_end) {
  const int64_t icpg = p.in_channels_per_group();
  const int64_t ocpg = p.out_channels_per_group();
  const int64_t in_plane = p.in[0] * p.in[1] * p.in[2];
  const int64_t out_plane = p.out[0] * p.out[1] * p.out[2];
  const int64_t taps = p.kernel[0] * p.kernel[1] * p.kernel[2];

  for (int64_t plane = plane_begin; plane < plane_end; ++plane) {
    const int64_t n = plane / p.out_channels;
    const int64_t oc = plane % p.out_channels;
    const int64_t group = oc / ocpg;
    const int64_t ocg = oc % ocpg;
    float* yp = y + plane * out_plane;
    const float b = bias ? bias[oc] : 0.f;
    for (int64_t i = 0; i < out_plane; ++i) yp[i] = b;

    for (int64_t icg = 0; icg < icpg; ++icg) {
      const int64_t ic = group * icpg + icg;
      const float* xc = x + (n * p.in_channels + ic) * in_plane;
      const float* wc = w + (ic * ocpg + ocg) * taps;
      for (int64_t kd = 0; kd < p.kernel[0]; ++kd) {
        // Output coordinate of input coordinate i along an axis: i * stride + offset.
        const int64_t off_d = kd * p.dilation[0] - p.pad_begin[0];
        int64_t id_begin, id_end;
        valid_output_range(off_d, p.stride[0], p.out[0], p.in[0], &id_begin, &id_end);
        for (int64_t kh = 0; kh < p.kernel[1]; ++kh) {
          const int64_t off_h = kh * p.dilation[1] - p.pad_begin[1];
          int64_t ih_begin, ih_end;
          valid_output_range(off_h, p.stride[1], p.out[1], p.in[1], &ih_begin, &ih_end);
          for (int64_t kw = 0; kw < p.kernel[2]; ++kw) {
            const int64_t off_w = kw * p.dilation[2] - p.pad_begin[2];
            int64_t iw_begin, iw_end;
            valid_output_range(off_w, p.stride[2], p.out[2], p.in[2], &iw_begin, &iw_end);
            const float wv = wc[(kd * p.kernel[1] + kh) * p.kernel[2] + kw];
            for (int64_t id = id_begin; id < id_end; ++id) {
              const int64_t od = id * p.stride[0] + off_d;
              for (int64_t ih = ih_begin; ih < ih_end; ++ih) {
                const int64_t oh = ih * p.stride[1] + off_h;
                const float* xrow = xc + (id * p.in[1] + ih) * p.in[2];
                float* yrow = yp + (od * p.out[1] + oh) * p.out[2];
                for (int64_t iw = iw_begin; iw < iw_end; ++iw) yrow[iw * p.stride[2] + off_w] += wv * xrow[iw];
              }
            }
          }
        }
      }
    }
  }
}

void conv_transpose_ref(const ConvTransposeParams& p, const float* x, const float* w, const float* bias, float* y) {
  conv_transpose_ref_planes(p, x, w, bias, y, 0, p.batch * p.out_channels);
}

}  // namespace ninegrid
