// The blocked reference convolution (kernels/ref/conv2d_blocked_ref) against the plain NCHW reference
// (conv2d_ref) with the blocked reference reorders around it: reorder the input to NCHW, convolve, reorder
// the result to the output block. Independent code paths: only blocked_offset is shared.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "conv_test_util.h"
#include "kernels/ref/conv2d_blocked_ref.h"
#include "kernels/ref/conv2d_ref.h"
#include "kernels/ref/reorder_ref.h"
#include "ninegrid/tensor.h"

namespace ninegrid {
namespace {

using namespace conv_test;

int64_t random_block(std::mt19937& rng, int64_t channels) {
  for (;;) {
    const int64_t b = pick(rng, {1, 8, 16});
    if (channels % b == 0) return b;
  }
}

TEST(Conv2dBlockedRef, MatchesNchwReferenceWithReorders) {
  std::mt19937 rng(4321);
  int tested_blocks[17][17] = {};
  for (int trial = 0; trial < 400; ++trial) {
    Conv2dParams p;
    p.batch = pick(rng, {1, 1, 2});
    const int64_t kind = uniform(rng, 0, 2);  // dense, grouped, depthwise
    if (kind == 0) {
      p.in_channels = pick(rng, {1, 3, 8, 16, 17, 24, 32});
      p.out_channels = pick(rng, {1, 5, 8, 16, 24, 32});
    } else if (kind == 1) {
      p.groups = pick(rng, {2, 4});
      p.in_channels = p.groups * pick(rng, {2, 4, 8});
      p.out_channels = p.groups * pick(rng, {2, 4, 8});
    } else {
      p.groups = p.in_channels = p.out_channels = pick(rng, {3, 8, 16, 32});
    }
    p.kernel_h = pick(rng, {1, 3, 5});
    p.kernel_w = pick(rng, {1, 3, 5});
    p.stride_h = pick(rng, {1, 2});
    p.stride_w = pick(rng, {1, 2});
    p.dilation_h = pick(rng, {1, 2});
    p.dilation_w = pick(rng, {1, 2});
    p.in_h = uniform(rng, 1, 9);
    p.in_w = uniform(rng, 1, 9);
    p.pad_top = uniform(rng, 0, 3);
    p.pad_left = uniform(rng, 0, 3);
    p.pad_bottom = uniform(rng, 0, 3);
    p.pad_right = uniform(rng, 0, 3);
    if (!finish_shape(p)) continue;
    const int64_t in_block = random_block(rng, p.in_channels), out_block = random_block(rng, p.out_channels);
    tested_blocks[in_block][out_block]++;

    const int64_t in_plane = p.in_h * p.in_w, out_plane = p.out_h * p.out_w;
    const size_t out_size = static_cast<size_t>(p.batch * p.out_channels * out_plane);
    const auto x_nchw = random_vector(rng, static_cast<size_t>(p.batch * p.in_channels * in_plane));
    const auto w = random_vector(rng, static_cast<size_t>(p.out_channels * p.in_channels_per_group() * p.kernel_h *
                                                          p.kernel_w));
    const auto bias = random_vector(rng, static_cast<size_t>(p.out_channels));
    const auto res_nchw = random_vector(rng, out_size);
    const auto slopes = random_vector(rng, static_cast<size_t>(p.out_channels));
    const auto acts = all_activations(slopes.data());
    Epilogue e;
    e.activation = acts[static_cast<size_t>(trial) % acts.size()];
    const bool with_residual = trial % 2 == 0;

    // Expected: plain reference on NCHW, then reordered to the output block.
    e.residual = with_residual ? res_nchw.data() : nullptr;
    std::vector<float> y_nchw(out_size), want(out_size);
    conv2d_ref(p, e, x_nchw.data(), w.data(), bias.data(), y_nchw.data());
    reorder_blocks_ref(y_nchw.data(), want.data(), p.batch, p.out_channels, out_plane, 1, out_block);

    // Under test: blocked input and residual straight into the blocked reference.
    std::vector<float> x_blocked(x_nchw.size()), res_blocked(out_size), got(out_size, -777.f);
    reorder_blocks_ref(x_nchw.data(), x_blocked.data(), p.batch, p.in_channels, in_plane, 1, in_block);
    reorder_blocks_ref(res_nchw.data(), res_blocked.data(), p.batch, p.out_channels, out_plane, 1, out_block);
    e.residual = with_residual ? res_blocked.data() : nullptr;
    conv2d_blocked_ref(p, e, in_block, out_block, x_blocked.data(), w.data(), bias.data(), got.data());

    const auto mag = magnitude_bound(p, in_block, out_block, x_blocked, w, bias.data(), e.residual);
    expect_within_bound(got, want, mag,
                        describe(p) + ", blocks " + std::to_string(in_block) + "->" + std::to_string(out_block) +
                            ", " + activation_name(e.activation.kind) + (with_residual ? " + residual" : ""));
  }
  // The random draw did reach the blocked layouts on both sides.
  EXPECT_GT(tested_blocks[16][16] + tested_blocks[8][8] + tested_blocks[8][16] + tested_blocks[16][8], 0);
  EXPECT_GT(tested_blocks[1][16] + tested_blocks[1][8], 0);
}

TEST(Conv2dBlockedRef, HandComputedBlockedCase) {
  // 16 input channels, block 16, one 1x1 output channel of weights 1..16, input value at (c, p) = c + 10 p,
  // 2 pixels: y[p] = sum_c (c + 1) * (c + 10 p) = sum (c^2 + c) + 10 p * 136 = 1360 + 1360 p.
  Conv2dParams p;
  p.in_channels = 16, p.out_channels = 1, p.in_h = 1, p.in_w = 2, p.out_h = 1, p.out_w = 2;
  std::vector<float> x(32), w(16);
  for (int c = 0; c < 16; ++c) {
    w[c] = static_cast<float>(c + 1);
    for (int px = 0; px < 2; ++px) x[px * 16 + c] = static_cast<float>(c + 10 * px);  // NCHW16c
  }
  std::vector<float> y(2);
  conv2d_blocked_ref(p, Epilogue{}, 16, 1, x.data(), w.data(), nullptr, y.data());
  EXPECT_FLOAT_EQ(y[0], 1360.f);
  EXPECT_FLOAT_EQ(y[1], 2720.f);
}

TEST(Conv2dBlockedRef, RejectsBlocksThatDoNotDivideChannels) {
  Conv2dParams p;
  p.in_channels = 12, p.out_channels = 16;
  std::vector<float> x(12), w(16 * 12), y(16);
  EXPECT_THROW(conv2d_blocked_ref(p, Epilogue{}, 8, 16, x.data(), w.data(), nullptr, y.data()), Error);
  EXPECT_THROW(conv2d_blocked_ref(p, Epilogue{}, 1, 32, x.data(), w.data(), nullptr, y.data()), Error);
}

}  // namespace
}  // namespace ninegrid
