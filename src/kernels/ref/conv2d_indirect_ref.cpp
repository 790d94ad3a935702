#include "kernels/ref/conv2d_indirect_ref.h"

#include <string>

#include "kernels/ref/reorder_ref.h"
#include "ninegrid/tensor.h"

namespace ninegrid {

void conv2d_indirect_ref(const Conv2dParams& p, const Epilogue& epilogue, const IndirectionBuffer& buffer,
                         int64_t in_block, int64_t out_block, const float* x, const float* w, const float* bias,
                         float* y) {
  if (in_block < 1 || p.in_channels % in_block != 0 || out_block < 1 || p.out_channels % out_block != 0)
    throw Error("conv2d_indirect_ref: blocks " + std::to_string(in_block) + "/" + std::to_string(out_block) +
                " do not divide the channels");
  const int64_t out_plane = p.out_h * p.out_w, in_plane = p.in_h * p.in_w;
  if (buffer.taps != p.kernel_h * p.kernel_w || buffer.tiles * buffer.pixel_tile < out_plane)
    throw Error("conv2d_indirect_ref: indirection buffer built for another shape");
  const int64_t icpg = p.in_channels_per_group(), ocpg = p.out_channels_per_group();
  // Each output value is computed and written before the next is read, so an in-place residual is fine.
  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t pixel = 0; pixel < out_plane; ++pixel) {
      const int32_t* tile = buffer.tile(pixel / buffer.pixel_tile);
      const int64_t r = pixel % buffer.pixel_tile;
      for (int64_t oc = 0; oc < p.out_channels; ++oc) {
        const int64_t ic0 = (oc / ocpg) * icpg;
        float sum = 0.f;
        for (int64_t icg = 0; icg < icpg; ++icg)
          for (int64_t tap = 0; tap < buffer.taps; ++tap) {
            const int64_t in_pixel = tile[tap * buffer.pixel_tile + r];
            if (in_pixel == IndirectionBuffer::kZero) continue;
            const float xv = x[blocked_offset(n, ic0 + icg, in_pixel, p.in_channels, in_plane, in_block)];
            sum += xv * w[(oc * icpg + icg) * buffer.taps + tap];
          }
        const int64_t at = blocked_offset(n, oc, pixel, p.out_channels, out_plane, out_block);
        float v = sum + (bias ? bias[oc] : 0.f);
        if (epilogue.residual) v += epilogue.residual[at];
        y[at] = apply_activation(epilogue.activation, v, oc);
      }
    }
  }
}

}  // namespace ninegrid
