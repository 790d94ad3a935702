#include "kernels/pack_weights.h"

#include <cstring>
#include <new>

#include "core/aligned_memory.h"

namespace ninegrid {

bool is_kernel_channel_block(int64_t block, int64_t channels) {
  return (block == 1 || block == 4 || block == 8 || block == 16) && channels % block == 0;
}

AlignedFloats pack_conv_weights(const float* oihw, int64_t out_channels, int64_t in_channels_per_group,
                                int64_t kernel_h, int64_t kernel_w, int64_t block) {
  const int64_t taps = kernel_h * kernel_w;
  const int64_t padded = round_up_to_block(out_channels, block);
  AlignedFloats packed(padded * in_channels_per_group * taps);
  float* dst = packed.data();
  for (int64_t oc = 0; oc < out_channels; ++oc) {
    const int64_t ob = oc / block, lane = oc % block;
    for (int64_t ic = 0; ic < in_channels_per_group; ++ic)
      for (int64_t t = 0; t < taps; ++t)
        dst[((ob * in_channels_per_group + ic) * taps + t) * block + lane] =
            oihw[(oc * in_channels_per_group + ic) * taps + t];
  }
  return packed;
}

AlignedFloats pack_depthwise_weights(const float* oihw, int64_t channels, int64_t kernel_h, int64_t kernel_w,
                                     int64_t block) {
  const int64_t taps = kernel_h * kernel_w;
  AlignedFloats packed(round_up_to_block(channels, block) * taps);
  float* dst = packed.data();
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t t = 0; t < taps; ++t) dst[((c / block) * taps + t) * block + c % block] = oihw[c * taps + t];
  return packed;
}

AlignedFloats pad_per_channel(const float* values, int64_t channels, int64_t block) {
  AlignedFloats padded(round_up_to_block(channels, block));
  if (values) std::memcpy(padded.data(), values, static_cast<size_t>(channels) * sizeof(float));
  return padded;
}

}  // namespace ninegrid
