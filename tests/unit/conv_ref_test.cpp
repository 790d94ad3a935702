// The reference convolution kernels against a naive formulation written straight from the ONNX Conv
// definition (one sum per output value, every tap bounds-checked, accumulated in double), over
// randomised shapes: odd channel counts, strides, asymmetric pads, dilations, groups and depthwise.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/activation.h"
#include "kernels/conv_params.h"
#include "kernels/ref/conv2d_ref.h"
#include "kernels/ref/conv3d_ref.h"
#include "kernels/ref/window.h"

namespace ninegrid {
namespace {

std::vector<float> random_vector(std::mt19937& rng, size_t n) {
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& f : v) f = dist(rng);
  return v;
}

// y[n, oc, oh, ow] = act(bias[oc] + residual + sum_{icg, kh, kw} x[n, g*icpg + icg, ih, iw] * w[oc, icg, kh, kw])
// with ih = oh * stride_h - pad_top + kh * dilation_h (likewise iw), taps outside the input skipped.
// Also returns, per output, the sum of |terms| to bound float rounding.
void naive_conv2d(const Conv2dParams& p, const Epilogue& e, const std::vector<float>& x, const std::vector<float>& w,
                  const float* bias, std::vector<double>& y, std::vector<double>& magnitude) {
  const int64_t icpg = p.in_channels / p.groups, ocpg = p.out_channels / p.groups;
  y.assign(static_cast<size_t>(p.batch * p.out_channels * p.out_h * p.out_w), 0.0);
  magnitude.assign(y.size(), 0.0);
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t oc = 0; oc < p.out_channels; ++oc)
      for (int64_t oh = 0; oh < p.out_h; ++oh)
        for (int64_t ow = 0; ow < p.out_w; ++ow) {
          const int64_t g = oc / ocpg;
          double sum = bias ? bias[oc] : 0.0, mag = std::fabs(sum);
          for (int64_t icg = 0; icg < icpg; ++icg)
            for (int64_t kh = 0; kh < p.kernel_h; ++kh)
              for (int64_t kw = 0; kw < p.kernel_w; ++kw) {
                const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dilation_h;
                const int64_t iw = ow * p.stride_w - p.pad_left + kw * p.dilation_w;
                if (ih < 0 || ih >= p.in_h || iw < 0 || iw >= p.in_w) continue;
                const double term = static_cast<double>(x[((n * p.in_channels + g * icpg + icg) * p.in_h + ih) * p.in_w + iw]) *
                                    w[((oc * icpg + icg) * p.kernel_h + kh) * p.kernel_w + kw];
                sum += term;
                mag += std::fabs(term);
              }
          const size_t o = static_cast<size_t>(((n * p.out_channels + oc) * p.out_h + oh) * p.out_w + ow);
          if (e.residual) {
            sum += e.residual[o];
            mag += std::fabs(e.residual[o]);
          }
          y[o] = apply_activation(e.activation, static_cast<float>(sum), oc);
          magnitude[o] = mag;
        }
}

// A random valid 2-D conv: odd channel counts, optional groups/depthwise, strides, dilations, pads.
Conv2dParams random_conv2d(std::mt19937& rng) {
  auto pick = [&](std::initializer_list<int64_t> v) {
    return *(v.begin() + std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng));
  };
  auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  Conv2dParams p;
  for (;;) {
    p.batch = pick({1, 1, 2});
    const int64_t kind = uniform(0, 3);  // 0, 1: dense; 2: grouped; 3: depthwise
    if (kind <= 1) {
      p.groups = 1;
      p.in_channels = pick({1, 3, 5, 17});
      p.out_channels = pick({1, 3, 5, 17});
    } else if (kind == 2) {
      p.groups = pick({3, 5});
      p.in_channels = p.groups * pick({1, 3});
      p.out_channels = p.groups * pick({1, 2});
    } else {
      p.groups = pick({1, 3, 5, 17});
      p.in_channels = p.groups;
      p.out_channels = p.groups * pick({1, 1, 2});  // depthwise, sometimes with a channel multiplier
    }
    p.kernel_h = pick({1, 2, 3, 5});
    p.kernel_w = pick({1, 2, 3, 5});
    p.stride_h = pick({1, 2, 3});
    p.stride_w = pick({1, 2});
    p.dilation_h = pick({1, 1, 2});
    p.dilation_w = pick({1, 1, 3});
    p.in_h = uniform(1, 12);
    p.in_w = uniform(1, 12);
    p.pad_top = uniform(0, p.kernel_h);
    p.pad_bottom = uniform(0, p.kernel_h);
    p.pad_left = uniform(0, p.kernel_w);
    p.pad_right = uniform(0, p.kernel_w);
    p.out_h = conv_output_size(p.in_h, p.kernel_h, p.stride_h, p.dilation_h, p.pad_top, p.pad_bottom);
    p.out_w = conv_output_size(p.in_w, p.kernel_w, p.stride_w, p.dilation_w, p.pad_left, p.pad_right);
    if (p.out_h > 0 && p.out_w > 0) return p;
  }
}

std::string describe(const Conv2dParams& p) {
  return "batch " + std::to_string(p.batch) + ", channels " + std::to_string(p.in_channels) + "->" +
         std::to_string(p.out_channels) + ", groups " + std::to_string(p.groups) + ", in " + std::to_string(p.in_h) +
         "x" + std::to_string(p.in_w) + ", kernel " + std::to_string(p.kernel_h) + "x" + std::to_string(p.kernel_w) +
         ", stride " + std::to_string(p.stride_h) + "x" + std::to_string(p.stride_w) + ", dilation " +
         std::to_string(p.dilation_h) + "x" + std::to_string(p.dilation_w) + ", pads " + std::to_string(p.pad_top) +
         "," + std::to_string(p.pad_left) + "," + std::to_string(p.pad_bottom) + "," + std::to_string(p.pad_right);
}

// Float accumulation of m terms errs by at most ~m * 2^-24 of their magnitude; 1e-5 covers the ~500
// terms of the largest random case with margin, and stays far below any real indexing mistake.
void expect_close(const std::vector<float>& got, const std::vector<double>& want, const std::vector<double>& mag,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-5 * mag[i] + 1e-6) << what << " at output " << i;
}

TEST(Conv2dRef, MatchesNaiveConvolutionOnRandomShapes) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 300; ++trial) {
    const Conv2dParams p = random_conv2d(rng);
    const auto x = random_vector(rng, static_cast<size_t>(p.batch * p.in_channels * p.in_h * p.in_w));
    const auto w = random_vector(rng, static_cast<size_t>(p.out_channels * p.in_channels_per_group() * p.kernel_h *
                                                          p.kernel_w));
    const auto bias = random_vector(rng, static_cast<size_t>(p.out_channels));
    const bool with_bias = trial % 3 != 0;
    std::vector<float> y(static_cast<size_t>(p.batch * p.out_channels * p.out_h * p.out_w), -777.f);
    conv2d_ref(p, Epilogue{}, x.data(), w.data(), with_bias ? bias.data() : nullptr, y.data());
    std::vector<double> want, mag;
    naive_conv2d(p, Epilogue{}, x, w, with_bias ? bias.data() : nullptr, want, mag);
    expect_close(y, want, mag, describe(p));
  }
}

TEST(Conv2dRef, KnownSmallCase) {
  // 1x1x3x3 input 1..9, 2x2 kernel of ones, stride 1, pad 1 on top/left only: out 3x3 sums of 2x2
  // windows whose top-left corner sits at (oh - 1, ow - 1). Hand-computed.
  Conv2dParams p;
  p.in_h = p.in_w = 3;
  p.kernel_h = p.kernel_w = 2;
  p.pad_top = p.pad_left = 1;
  p.out_h = p.out_w = 3;
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w = {1, 1, 1, 1};
  const float bias = 0.5f;
  std::vector<float> y(9);
  conv2d_ref(p, Epilogue{}, x.data(), w.data(), &bias, y.data());
  const std::vector<float> want = {1.5f, 3.5f, 5.5f, 5.5f, 12.5f, 16.5f, 11.5f, 24.5f, 28.5f};
  for (size_t i = 0; i < 9; ++i) EXPECT_FLOAT_EQ(y[i], want[i]) << i;
}

TEST(Conv2dRef, PlaneRangesCoverTheWholeOutput) {
  std::mt19937 rng(99);
  Conv2dParams p;
  p.batch = 2, p.in_channels = 6, p.out_channels = 9, p.groups = 3;
  p.in_h = 7, p.in_w = 6, p.kernel_h = p.kernel_w = 3, p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = 1;
  p.out_h = 7, p.out_w = 6;
  const auto x = random_vector(rng, 2 * 6 * 7 * 6), w = random_vector(rng, 9 * 2 * 9);
  std::vector<float> whole(2 * 9 * 7 * 6), parts(whole.size(), -1.f);
  conv2d_ref(p, Epilogue{}, x.data(), w.data(), nullptr, whole.data());
  // Uneven split, as a thread pool may make.
  conv2d_ref_planes(p, Epilogue{}, x.data(), w.data(), nullptr, parts.data(), 0, 5);
  conv2d_ref_planes(p, Epilogue{}, x.data(), w.data(), nullptr, parts.data(), 5, 6);
  conv2d_ref_planes(p, Epilogue{}, x.data(), w.data(), nullptr, parts.data(), 6, 18);
  EXPECT_EQ(whole, parts);
}

TEST(Conv2dRef, EpilogueAppliesResidualThenActivation) {
  std::mt19937 rng(7);
  Conv2dParams p;
  p.batch = 1, p.in_channels = 3, p.out_channels = 5;
  p.in_h = 5, p.in_w = 4, p.kernel_h = p.kernel_w = 3, p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = 1;
  p.out_h = 5, p.out_w = 4;
  const auto x = random_vector(rng, 3 * 5 * 4), w = random_vector(rng, 5 * 3 * 9), bias = random_vector(rng, 5);
  const auto residual = random_vector(rng, 5 * 5 * 4);
  const std::vector<float> slopes = {0.1f, -0.2f, 0.3f, 0.5f, 2.f};
  const std::vector<Activation> acts = {Activation::none(),       Activation::relu(),
                                        Activation::relu6(),      Activation::clip(-0.5f, 0.25f),
                                        Activation::leaky_relu(0.1f), Activation::prelu(slopes.data()),
                                        Activation::sigmoid(),    Activation::hard_sigmoid(0.2f, 0.5f),
                                        Activation::hard_swish()};
  for (const Activation& act : acts) {
    for (int use_residual = 0; use_residual < 2; ++use_residual) {
      Epilogue e;
      e.activation = act;
      e.residual = use_residual ? residual.data() : nullptr;
      std::vector<float> y(5 * 5 * 4);
      conv2d_ref(p, e, x.data(), w.data(), bias.data(), y.data());
      std::vector<double> want, mag;
      naive_conv2d(p, e, x, w, bias.data(), want, mag);
      expect_close(y, want, mag, std::string(activation_name(act.kind)) + (use_residual ? " + residual" : ""));
    }
  }
}

TEST(Conv2dRef, ResidualMayBeTheOutputBuffer) {
  std::mt19937 rng(8);
  Conv2dParams p;
  p.batch = 2, p.in_channels = 3, p.out_channels = 4;
  p.in_h = 6, p.in_w = 5, p.kernel_h = p.kernel_w = 3, p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = 1;
  p.out_h = 6, p.out_w = 5;
  const auto x = random_vector(rng, 2 * 3 * 6 * 5), w = random_vector(rng, 4 * 3 * 9);
  const auto residual = random_vector(rng, 2 * 4 * 6 * 5);
  Epilogue separate;
  separate.activation = Activation::relu();
  separate.residual = residual.data();
  std::vector<float> want(residual.size());
  conv2d_ref(p, separate, x.data(), w.data(), nullptr, want.data());
  std::vector<float> inplace = residual;
  Epilogue aliased = separate;
  aliased.residual = inplace.data();
  conv2d_ref(p, aliased, x.data(), w.data(), nullptr, inplace.data());
  EXPECT_EQ(inplace, want);
}

TEST(Activation, HandComputedValues) {
  const float slopes[] = {0.25f, -3.f};
  EXPECT_EQ(apply_activation(Activation::none(), -2.5f, 0), -2.5f);
  EXPECT_EQ(apply_activation(Activation::relu(), -1.f, 0), 0.f);
  EXPECT_EQ(apply_activation(Activation::relu(), 3.f, 0), 3.f);
  EXPECT_EQ(apply_activation(Activation::relu6(), 7.f, 0), 6.f);
  EXPECT_EQ(apply_activation(Activation::relu6(), -7.f, 0), 0.f);
  EXPECT_EQ(apply_activation(Activation::relu6(), 2.5f, 0), 2.5f);
  EXPECT_FLOAT_EQ(apply_activation(Activation::leaky_relu(0.1f), -2.f, 0), -0.2f);
  EXPECT_EQ(apply_activation(Activation::leaky_relu(0.1f), 2.f, 0), 2.f);
  EXPECT_EQ(apply_activation(Activation::prelu(slopes), -2.f, 0), -0.5f);
  EXPECT_EQ(apply_activation(Activation::prelu(slopes), -2.f, 1), 6.f);
  EXPECT_EQ(apply_activation(Activation::prelu(slopes), 2.f, 1), 2.f);
  EXPECT_FLOAT_EQ(apply_activation(Activation::sigmoid(), 0.f, 0), 0.5f);
  EXPECT_NEAR(apply_activation(Activation::sigmoid(), 2.f, 0), 0.8807970779778823, 1e-7);
  EXPECT_FLOAT_EQ(apply_activation(Activation::hard_sigmoid(0.2f, 0.5f), 1.f, 0), 0.7f);
  EXPECT_EQ(apply_activation(Activation::hard_sigmoid(0.2f, 0.5f), 10.f, 0), 1.f);
  EXPECT_EQ(apply_activation(Activation::hard_sigmoid(0.2f, 0.5f), -10.f, 0), 0.f);
  EXPECT_FLOAT_EQ(apply_activation(Activation::hard_swish(), 1.f, 0), 1.f * (1.f / 6.f + 0.5f));
  EXPECT_EQ(apply_activation(Activation::hard_swish(), -4.f, 0), 0.f);
  EXPECT_EQ(apply_activation(Activation::hard_swish(), 4.f, 0), 4.f);
  EXPECT_TRUE(std::isnan(apply_activation(Activation::relu(), NAN, 0)));
}

TEST(ValidOutputRange, MatchesBruteForce) {
  for (int64_t offset = -9; offset <= 9; ++offset)
    for (int64_t stride = 1; stride <= 4; ++stride)
      for (int64_t in_len = 0; in_len <= 7; ++in_len)
        for (int64_t out_len = 0; out_len <= 7; ++out_len) {
          int64_t b, e;
          valid_output_range(offset, stride, in_len, out_len, &b, &e);
          for (int64_t o = 0; o < out_len; ++o) {
            const int64_t i = o * stride + offset;
            const bool inside = i >= 0 && i < in_len;
            EXPECT_EQ(inside, o >= b && o < e) << "offset " << offset << " stride " << stride << " in " << in_len
                                               << " out " << out_len << " o " << o;
          }
          EXPECT_LE(b, e);
        }
}

// The 3-D naive formulation, as naive_conv2d with a depth axis.
void naive_conv3d(const Conv3dParams& p, const std::vector<float>& x, const std::vector<float>& w, const float* bias,
                  std::vector<double>& y, std::vector<double>& magnitude) {
  const int64_t icpg = p.in_channels / p.groups, ocpg = p.out_channels / p.groups;
  y.assign(static_cast<size_t>(p.batch * p.out_channels * p.out_d * p.out_h * p.out_w), 0.0);
  magnitude.assign(y.size(), 0.0);
  size_t o = 0;
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t oc = 0; oc < p.out_channels; ++oc)
      for (int64_t od = 0; od < p.out_d; ++od)
        for (int64_t oh = 0; oh < p.out_h; ++oh)
          for (int64_t ow = 0; ow < p.out_w; ++ow, ++o) {
            const int64_t g = oc / ocpg;
            double sum = bias ? bias[oc] : 0.0, mag = std::fabs(sum);
            for (int64_t icg = 0; icg < icpg; ++icg)
              for (int64_t kd = 0; kd < p.kernel_d; ++kd)
                for (int64_t kh = 0; kh < p.kernel_h; ++kh)
                  for (int64_t kw = 0; kw < p.kernel_w; ++kw) {
                    const int64_t id = od * p.stride_d - p.pad_front + kd * p.dilation_d;
                    const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dilation_h;
                    const int64_t iw = ow * p.stride_w - p.pad_left + kw * p.dilation_w;
                    if (id < 0 || id >= p.in_d || ih < 0 || ih >= p.in_h || iw < 0 || iw >= p.in_w) continue;
                    const int64_t ic = g * icpg + icg;
                    const double term =
                        static_cast<double>(x[(((n * p.in_channels + ic) * p.in_d + id) * p.in_h + ih) * p.in_w + iw]) *
                        w[(((oc * icpg + icg) * p.kernel_d + kd) * p.kernel_h + kh) * p.kernel_w + kw];
                    sum += term;
                    mag += std::fabs(term);
                  }
            y[o] = sum;
            magnitude[o] = mag;
          }
}

TEST(Conv3dRef, MatchesNaiveConvolutionOnRandomShapes) {
  std::mt19937 rng(4321);
  auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int trial = 0; trial < 60; ++trial) {
    Conv3dParams p;
    p.batch = uniform(1, 2);
    p.groups = trial % 4 == 0 ? 3 : 1;
    p.in_channels = p.groups * uniform(1, 3);
    p.out_channels = p.groups * uniform(1, 3);
    p.kernel_d = uniform(1, 3), p.kernel_h = uniform(1, 3), p.kernel_w = uniform(1, 3);
    p.stride_d = uniform(1, 2), p.stride_h = uniform(1, 2), p.stride_w = uniform(1, 2);
    p.dilation_d = uniform(1, 2), p.dilation_h = uniform(1, 2), p.dilation_w = uniform(1, 2);
    p.in_d = uniform(1, 6), p.in_h = uniform(1, 6), p.in_w = uniform(1, 6);
    p.pad_front = uniform(0, 2), p.pad_top = uniform(0, 2), p.pad_left = uniform(0, 2);
    const int64_t pad_back = uniform(0, 2), pad_bottom = uniform(0, 2), pad_right = uniform(0, 2);
    p.out_d = conv_output_size(p.in_d, p.kernel_d, p.stride_d, p.dilation_d, p.pad_front, pad_back);
    p.out_h = conv_output_size(p.in_h, p.kernel_h, p.stride_h, p.dilation_h, p.pad_top, pad_bottom);
    p.out_w = conv_output_size(p.in_w, p.kernel_w, p.stride_w, p.dilation_w, p.pad_left, pad_right);
    if (p.out_d <= 0 || p.out_h <= 0 || p.out_w <= 0) continue;
    const auto x = random_vector(rng, static_cast<size_t>(p.batch * p.in_channels * p.in_d * p.in_h * p.in_w));
    const auto w = random_vector(rng, static_cast<size_t>(p.out_channels * p.in_channels_per_group() * p.kernel_d *
                                                          p.kernel_h * p.kernel_w));
    const auto bias = random_vector(rng, static_cast<size_t>(p.out_channels));
    std::vector<float> y(static_cast<size_t>(p.batch * p.out_channels * p.out_d * p.out_h * p.out_w));
    conv3d_ref(p, Epilogue{}, x.data(), w.data(), bias.data(), y.data());
    std::vector<double> want, mag;
    naive_conv3d(p, x, w, bias.data(), want, mag);
    expect_close(y, want, mag, "3-D trial " + std::to_string(trial));
  }
}

TEST(ConvParams, OutputSizeAndMacs) {
  EXPECT_EQ(conv_output_size(224, 3, 2, 1, 1, 1), 112);
  EXPECT_EQ(conv_output_size(5, 3, 1, 2, 0, 0), 1);   // dilated kernel spans 5
  EXPECT_EQ(conv_output_size(4, 3, 1, 2, 0, 0), 0);   // does not fit
  EXPECT_EQ(conv_output_size(7, 3, 3, 1, 1, 0), 2);   // floor((7 + 1 - 3) / 3) + 1
  Conv2dParams p;
  p.batch = 2, p.in_channels = 8, p.out_channels = 6, p.groups = 2;
  p.out_h = 5, p.out_w = 7, p.kernel_h = 3, p.kernel_w = 3;
  EXPECT_EQ(p.macs(), 2 * 6 * 5 * 7 * 4 * 9);
}

}  // namespace
}  // namespace ninegrid
