#include "kernels/qpack_depthwise.h"

namespace ninegrid {

int64_t qdepthwise_packed_bytes(const X86QDepthwiseLayout& layout, int64_t channels, int64_t kernel_h,
                                int64_t kernel_w) {
  const int64_t vectors = (channels + layout.lanes - 1) / layout.lanes;
  const int64_t offsets = kernel_w + layout.taps - 1;
  return vectors * kernel_h * offsets * layout.lanes * layout.taps * layout.weight_bytes;
}

void pack_qdepthwise_weights(const X86QDepthwiseLayout& layout, const int8_t* oihw, int64_t channels,
                             int64_t kernel_h, int64_t kernel_w, void* packed) {
  const int64_t lanes = layout.lanes, taps = layout.taps;
  const int64_t vectors = (channels + lanes - 1) / lanes;
  int8_t* out8 = static_cast<int8_t*>(packed);
  int16_t* out16 = static_cast<int16_t*>(packed);
  int64_t i = 0;
  for (int64_t v = 0; v < vectors; ++v)
    for (int64_t kh = 0; kh < kernel_h; ++kh)
      for (int64_t o = -(taps - 1); o < kernel_w; ++o)
        for (int64_t lane = 0; lane < lanes; ++lane)
          for (int64_t t = 0; t < taps; ++t, ++i) {
            const int64_t c = v * lanes + lane, kw = o + t;
            const int8_t w = c < channels && kw >= 0 && kw < kernel_w ? oihw[(c * kernel_h + kh) * kernel_w + kw] : 0;
            if (layout.weight_bytes == 2) out16[i] = w;
            else out8[i] = w;
          }
}

}  // namespace ninegrid
