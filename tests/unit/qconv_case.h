// Random int8 convolutions for the tests of the int8 conv kernels and their policy (qconv_x86_test.cpp,
// qconv_select_test.cpp): shapes, data at the extremes, requantisation with and without a fused residual,
// the AVX2 vpmaddubsw kernels' bound on weight pairs stated independently of the engine's code, and the
// comparison of a fast conv with the integer reference.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/conv_params.h"
#include "kernels/quantized.h"
#include "kernels/ref/qconv2d_ref.h"
#include "ops/qconv_fast.h"

namespace ninegrid {
namespace qconv_test {

class Rng {
 public:
  explicit Rng(uint32_t seed) : gen_(seed) {}
  int64_t operator()(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(gen_); }
  template <class T>
  T pick(const std::vector<T>& v) { return v[static_cast<size_t>((*this)(0, static_cast<int64_t>(v.size()) - 1))]; }

 private:
  std::mt19937 gen_;
};

// One convolution's data, random within the shape.
struct Case {
  Conv2dParams p;
  int64_t in_block = 1, out_block = 1;
  int32_t x_zero_point = 0;
  std::vector<uint8_t> x, residual;
  std::vector<int8_t> w;
  std::vector<int32_t> bias;
  std::vector<float> multiplier;
  Requantization q;
  bool with_residual = false;

  std::string describe() const {
    return "in " + std::to_string(p.batch) + "x" + std::to_string(p.in_channels) + "x" + std::to_string(p.in_h) + "x" +
           std::to_string(p.in_w) + " out " + std::to_string(p.out_channels) + " groups " + std::to_string(p.groups) +
           " k " + std::to_string(p.kernel_h) + "x" + std::to_string(p.kernel_w) + " s " + std::to_string(p.stride_h) +
           "," + std::to_string(p.stride_w) + " d " + std::to_string(p.dilation_h) + "," + std::to_string(p.dilation_w) +
           " pad " + std::to_string(p.pad_top) + "," + std::to_string(p.pad_left) + " blocks " +
           std::to_string(in_block) + "/" + std::to_string(out_block) + " zp " + std::to_string(x_zero_point) +
           " residual " + std::to_string(with_residual) + (q.residual_add ? " (added after)" : "");
  }
};

inline int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe) {
  const int64_t span = in + pb + pe - d * (k - 1) - 1;
  return span < 0 ? 0 : span / s + 1;
}

// The geometry the tests list: a k x k kernel, the same stride, dilation and padding on both
// axes, an h x w input plane.
inline Conv2dParams square_conv(int64_t in_c, int64_t out_c, int64_t groups, int64_t h, int64_t w, int64_t k,
                                int64_t stride, int64_t dilation, int64_t pad) {
  Conv2dParams p;
  p.in_channels = in_c, p.out_channels = out_c, p.groups = groups;
  p.in_h = h, p.in_w = w;
  p.kernel_h = p.kernel_w = k;
  p.stride_h = p.stride_w = stride;
  p.dilation_h = p.dilation_w = dilation;
  p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = pad;
  p.out_h = out_size(h, k, stride, dilation, pad, pad);
  p.out_w = out_size(w, k, stride, dilation, pad, pad);
  return p;
}

// Takes away a residual fill() may have drawn (for kernels that fuse none). Only x86-64's tests need it.
[[maybe_unused]] inline void drop_residual(Case& c) {
  c.with_residual = false;
  c.q.residual_add = false, c.q.residual_multiplier = 0.f, c.q.residual_zero_point = 0;
}

// Fills data, bias, multipliers and the requantisation for c.p's shape.
inline void fill(Case& c, Rng& rng) {
  const Conv2dParams& p = c.p;
  const int zp_kind = static_cast<int>(rng(0, 3));
  c.x_zero_point = zp_kind == 0 ? 0 : zp_kind == 1 ? 255 : static_cast<int32_t>(rng(1, 254));
  c.x.resize(static_cast<size_t>(p.batch * p.in_channels * p.in_h * p.in_w));
  // Inputs at the extremes as often as between (the widest products: 255 x -128).
  for (uint8_t& v : c.x) v = static_cast<uint8_t>(rng(0, 3) == 0 ? rng.pick<int64_t>({0, 255}) : rng(0, 255));
  c.w.resize(static_cast<size_t>(p.out_channels * p.in_channels_per_group() * p.kernel_h * p.kernel_w));
  for (int8_t& v : c.w) v = static_cast<int8_t>(rng(0, 3) == 0 ? rng.pick<int64_t>({-128, 127}) : rng(-128, 127));
  c.bias.resize(static_cast<size_t>(p.out_channels));
  for (int32_t& b : c.bias) b = static_cast<int32_t>(rng(-200000, 200000));
  c.multiplier.resize(static_cast<size_t>(p.out_channels));
  // Sums reach about taps x 255 x 128; multipliers from "most outputs saturate" to "about a unit per 100".
  const bool saturating = rng(0, 3) == 0;
  for (float& m : c.multiplier)
    m = saturating ? std::ldexp(static_cast<float>(rng(1, 1000)), -8)
                   : std::ldexp(static_cast<float>(rng(1, 1 << 12)), -24 - static_cast<int>(rng(0, 4)));
  c.q = Requantization();
  c.q.bias = rng(0, 4) == 0 ? nullptr : c.bias.data();
  c.q.multiplier = c.multiplier.data();
  c.q.out_zero_point = static_cast<int32_t>(rng.pick<int64_t>({0, 128, 255, rng(0, 255)}));
  c.q.qmin = rng(0, 1) ? 0 : c.q.out_zero_point;  // a fused ReLU
  c.q.qmax = rng(0, 2) ? 255 : static_cast<int32_t>(rng(c.q.qmin, 255));
  c.with_residual = rng(0, 2) == 0;
  if (c.with_residual) {
    c.residual.resize(static_cast<size_t>(p.batch * p.out_channels * p.out_h * p.out_w));
    for (uint8_t& v : c.residual) v = static_cast<uint8_t>(rng(0, 255));
    c.q.residual_zero_point = static_cast<int32_t>(rng(0, 255));
    c.q.residual_multiplier = std::ldexp(static_cast<float>(rng(1, 1 << 10)), -10);
    // Half of them a fused quantised addition after the requantisation (ng.QConv + ng.QAdd), the conv's
    // output either operand; multipliers from a fraction of a unit to several (saturating) units.
    c.q.residual_add = rng(0, 1) == 1;
    if (c.q.residual_add) {
      QuantizedAdd& add = c.q.add;
      c.q.conv_is_first = rng(0, 1) == 1;
      add.a_zero_point = static_cast<int32_t>(rng.pick<int64_t>({0, 255, rng(0, 255)}));
      add.b_zero_point = static_cast<int32_t>(rng.pick<int64_t>({0, 255, rng(0, 255)}));
      add.out_zero_point = static_cast<int32_t>(rng(0, 255));
      add.a_multiplier = std::ldexp(static_cast<float>(rng(1, 1 << 12)), -12 + static_cast<int>(rng(-2, 2)));
      add.b_multiplier = std::ldexp(static_cast<float>(rng(1, 1 << 12)), -12 + static_cast<int>(rng(-2, 2)));
      add.qmin = rng(0, 1) ? 0 : add.out_zero_point;  // a fused ReLU after the addition
      add.qmax = rng(0, 2) ? 255 : static_cast<int32_t>(rng(add.qmin, 255));
    }
  }
}

// A block from `choices` that divides `channels`, else 1.
inline int64_t block_for(Rng& rng, const std::vector<int64_t>& choices, int64_t channels) {
  const int64_t b = rng.pick(choices);
  return channels % b == 0 ? b : 1;
}

// The AVX2 vpmaddubsw kernels' bound, stated here on its own: they multiply input channels (ic, ic + 1) of a
// group (ic even) at one tap t as a pair whose sum must fit int16 for inputs up to 255, so no such pair of
// weights may have the same sign and magnitudes summing past 128.
inline bool pair_beyond_w7(const Case& c, int64_t oc, int64_t ic, int64_t t) {
  const int64_t icpg = c.p.in_channels_per_group(), taps = c.p.kernel_h * c.p.kernel_w;
  const int64_t w0 = c.w[static_cast<size_t>((oc * icpg + ic) * taps + t)];
  const int64_t w1 = c.w[static_cast<size_t>((oc * icpg + ic + 1) * taps + t)];
  return w0 * w1 > 0 && std::abs(w0 + w1) > 128;
}

// The weight vectors of the AVX2 vpmaddubsw kernels (8 output channels of a block x input channels
// [4 s, 4 s + 4) of their group at one tap) with a pair beyond the bound above, and all of them.
struct W7Vectors {
  int64_t beyond = 0, all = 0;
};
inline W7Vectors w7_vectors(const Case& c) {
  const Conv2dParams& p = c.p;
  const int64_t icpg = p.in_channels_per_group(), taps = p.kernel_h * p.kernel_w;
  const int64_t blocks = (p.out_channels + 7) / 8, steps = (icpg + 3) / 4;
  W7Vectors v;
  v.all = blocks * steps * taps;
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t s = 0; s < steps; ++s)
      for (int64_t t = 0; t < taps; ++t) {
        bool beyond = false;
        for (int64_t oc = b * 8; oc < std::min(p.out_channels, b * 8 + 8); ++oc)
          for (int64_t ic = 4 * s; ic + 1 < std::min(icpg, 4 * s + 4); ic += 2)
            beyond = beyond || pair_beyond_w7(c, oc, ic, t);
        v.beyond += beyond;
      }
  return v;
}

// Whether every pair of c's weights fits the bound (the vectors cover every pair (ic, ic + 1), ic even).
inline bool pairs_fit_w7(const Case& c) { return w7_vectors(c).beyond == 0; }

// Runs `conv` (built for c) on c's data with `threads` threads and the integer reference qconv2d_ref;
// returns the output bytes that differ.
inline int64_t reference_mismatches(const Case& c, const FastQConv2d& conv, int threads) {
  std::vector<uint8_t> expected(static_cast<size_t>(c.p.batch * c.p.out_channels * c.p.out_h * c.p.out_w));
  std::vector<uint8_t> got(expected.size(), 0xA5);
  Requantization q = c.q;
  q.residual = c.with_residual ? c.residual.data() : nullptr;
  qconv2d_ref(c.p, q, c.x_zero_point, c.in_block, c.out_block, c.x.data(), c.w.data(), expected.data());
  ThreadPool pool(threads);
  conv.run(c.x.data(), got.data(), q.residual, &pool);
  int64_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) bad += got[i] != expected[i];
  return bad;
}

}  // namespace qconv_test
}  // namespace ninegrid
