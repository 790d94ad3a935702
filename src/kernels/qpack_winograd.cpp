#include "kernels/qpack_winograd.h"

#include <algorithm>

#include "kernels/x86/qconv_winograd_x86.h"  // (plain data)

namespace ninegrid {

namespace {
constexpr int64_t kOcBlock = kQWinogradOcBlock;
constexpr int kG[4][3] = {{2, 0, 0}, {1, 1, 1}, {1, -1, 1}, {0, 0, 2}};
}  // namespace

int64_t qwinograd_f2x3_packed_values(int64_t channels_padded, int64_t out_channels_padded) {
  return 16 * out_channels_padded * channels_padded;
}

void pack_qwinograd_f2x3(const int8_t* oihw, int64_t out_channels, int64_t in_channels, int64_t out_channels_padded,
                         int64_t channels_padded, int16_t* packed) {
  std::fill_n(packed, qwinograd_f2x3_packed_values(channels_padded, out_channels_padded), int16_t(0));
  const int64_t blocks = out_channels_padded / kOcBlock, pairs = channels_padded / 2;
  for (int64_t o = 0; o < out_channels; ++o)
    for (int64_t c = 0; c < in_channels; ++c) {
      const int8_t* g = oihw + (o * in_channels + c) * 9;
      int t[4][3];  // G' g
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 3; ++j) t[i][j] = kG[i][0] * g[j] + kG[i][1] * g[3 + j] + kG[i][2] * g[6 + j];
      for (int i = 0; i < 4; ++i)
        for (int k = 0; k < 4; ++k) {
          const int u = t[i][0] * kG[k][0] + t[i][1] * kG[k][1] + t[i][2] * kG[k][2];  // (G' g) G'^T
          const int64_t position = 4 * i + k;
          packed[(((position * blocks + o / kOcBlock) * pairs + c / 2) * kOcBlock + o % kOcBlock) * 2 + c % 2] =
              static_cast<int16_t>(u);
        }
    }
}

}  // namespace ninegrid
