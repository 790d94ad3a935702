// uint8 -> uint8 requantisation by one multiply-add (kernels/ref/qlookup_ref.h: fit_affine_u8,
// affine_u8_ref; kernels/x86/requantize_u8_affine_x86.h) against the table it replaces (requantize_table, the
// float DequantizeLinear -> QuantizeLinear steps), bit for bit: random scales over four decades, zero points
// at both ends, no clamp, a ReLU's and a Clip's; every one of the 256 bytes, then random arrays whose lengths
// are not a multiple of the vector, in place and not. And where a fit must not be found: a table that no
// multiply-add gives, a slope past the bound. The AVX2 kernel on x86-64 (skipped without AVX2), the NEON one
// on AArch64 (kernels/arm/quantize_linear_arm.h, the same template). And the ops that use it: ng.QRequantize
// and ng.QConcat name the multiply-add kernel in their algorithm exactly where a fit exists (the table or the
// float passes otherwise) and give the table's bytes either way.
#if defined(__x86_64__) || defined(__aarch64__)
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "core/cpu_features.h"
#include "ir/quant_attrs.h"
#include "kernels/ref/qlookup_ref.h"
#include "ops/exec_settings.h"
#include "ops/op.h"
#if defined(__x86_64__)
#include "kernels/x86/requantize_u8_affine_x86.h"
#else
#include "kernels/arm/quantize_linear_arm.h"
#endif

namespace ninegrid {
namespace {

#if defined(__x86_64__)
bool kernel_runs() { return cpu_features().avx2 && cpu_features().fma; }
constexpr auto kRequantizeAffine = avx2::requantize_u8_affine;
#else
bool kernel_runs() { return true; }
constexpr auto kRequantizeAffine = neon::requantize_u8_affine;
#endif

TEST(RequantizeU8Affine, FitsTheTableAndTheKernelComputesTheFit) {
  std::mt19937 rng(2026);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto log_uniform = [&](double lo, double hi) {
    return static_cast<float>(std::exp(std::uniform_real_distribution<double>(std::log(lo), std::log(hi))(rng)));
  };
  const bool runs = kernel_runs();
  int cases = 0, fitted = 0;
  for (int iter = 0; iter < 600; ++iter) {
    const float x_scale = log_uniform(1e-3, 1.0), y_scale = x_scale * log_uniform(0.1, 10.0);
    int32_t x_zp = uniform(0, 3) == 0 ? (uniform(0, 1) ? 0 : 255) : uniform(0, 255);
    int32_t y_zp = uniform(0, 3) == 0 ? (uniform(0, 1) ? 0 : 255) : uniform(0, 255);
    if (iter % 5 == 0) x_zp = y_zp = 0;  // an offset of 0, whose float neighbours are all subnormal
    int32_t qmin = 0, qmax = 255;
    switch (uniform(0, 2)) {
      case 1: qmin = y_zp; break;  // a fused ReLU
      case 2: qmin = uniform(0, 128), qmax = uniform(qmin, 255); break;  // a Clip
      default: break;
    }
    const QuantizedTable table = requantize_table(x_scale, x_zp, y_scale, y_zp, qmin, qmax);
    ++cases;
    AffineU8 m;
    if (!fit_affine_u8(table, x_scale, x_zp, y_scale, y_zp, qmin, qmax, &m)) continue;
    ++fitted;
    // Zero or normal, never subnormal (slow on some CPUs, flushed under DAZ).
    EXPECT_TRUE(m.a == 0.f || std::isnormal(m.a)) << m.a;
    EXPECT_TRUE(m.b == 0.f || std::isnormal(m.b)) << m.b;
    for (int x = 0; x < 256; ++x)
      ASSERT_EQ(affine_u8_ref(m, static_cast<uint8_t>(x)), table[x])
          << "x " << x << " x_scale " << x_scale << " y_scale " << y_scale << " zero points " << x_zp << " " << y_zp;
    if (!runs) continue;
    const int n = iter % 3 == 0 ? 256 : uniform(0, 1) ? uniform(1, 100) : uniform(101, 3000);
    std::vector<uint8_t> x(static_cast<size_t>(n)), want(x.size()), got(x.size() + 32, 0xA5);
    for (int i = 0; i < n; ++i) x[static_cast<size_t>(i)] = static_cast<uint8_t>(n == 256 ? i : uniform(0, 255));
    qlookup_ref(table, x.data(), want.data(), n);
    if (iter % 2) {
      std::copy(x.begin(), x.end(), got.begin());
      kRequantizeAffine(m, got.data(), got.data(), n);  // in place
    } else {
      kRequantizeAffine(m, x.data(), got.data(), n);
    }
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(got[static_cast<size_t>(i)], want[static_cast<size_t>(i)]) << "element " << i << " of " << n;
    for (int g = 0; g < 32; ++g) ASSERT_EQ(got[static_cast<size_t>(n + g)], 0xA5) << "wrote past the end";
  }
  // The fit is worth having only if it is found for nearly every table (the rest keep the slower path).
  EXPECT_GE(fitted * 100, cases * 95) << fitted << " of " << cases << " tables fitted";
  if (!runs) GTEST_SKIP() << "the fits checked, the vector kernel not run: this CPU has no AVX2 and FMA";
}

TEST(RequantizeU8Affine, NoFitWhereNoMultiplyAddGivesTheTable) {
  QuantizedTable table = requantize_table(0.02f, 128, 0.05f, 10, 0, 255);
  AffineU8 m;
  ASSERT_TRUE(fit_affine_u8(table, 0.02f, 128, 0.05f, 10, 0, 255, &m));
  table[200] = static_cast<uint8_t>(table[200] + 3);  // one byte off the line
  EXPECT_FALSE(fit_affine_u8(table, 0.02f, 128, 0.05f, 10, 0, 255, &m));
  // A slope past the bound (|a| x 255 + |b| < 2^20): refused whatever the table.
  const QuantizedTable steep = requantize_table(1e4f, 0, 1e-4f, 0, 0, 255);
  EXPECT_FALSE(fit_affine_u8(steep, 1e4f, 0, 1e-4f, 0, 0, 255, &m));
}

TEST(RequantizeU8Affine, TheOpTakesTheFitWhereOneExists) {
  std::mt19937 rng(77);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int fitted = 0, tables = 0;
  // 40000 bytes: several of the op's 16 KiB chunks, the last one partial.
  Tensor x = Tensor::zeros(DataType::UInt8, {1, 40000});
  for (int64_t i = 0; i < x.numel(); ++i) x.data_as<uint8_t>()[i] = static_cast<uint8_t>((i * 37 + i / 256) & 255);
  for (int t = 0; t < 60; ++t) {
    const float x_scale = std::ldexp(static_cast<float>(uniform(1, 4000)), -uniform(10, 16));
    const float y_scale = std::ldexp(static_cast<float>(uniform(1, 4000)), -uniform(10, 16));
    const int x_zp = uniform(0, 3) == 0 ? 0 : uniform(0, 255), y_zp = uniform(0, 3) == 0 ? 0 : uniform(0, 255);
    const int qmin = uniform(0, 1) ? 0 : y_zp, qmax = 255;
    Node node;
    node.name = "rq";
    node.op_type = "ng.QRequantize";
    node.inputs = {0};
    node.outputs = {1};
    write_tensor_quant({x_scale, x_zp}, "x", node.attrs);
    write_tensor_quant({y_scale, y_zp}, "y", node.attrs);
    write_qclamp({qmin, qmax}, node.attrs);
    std::unique_ptr<Op> op = OpRegistry::instance().create(node);
    std::vector<TensorDesc> in = {{DataType::UInt8, x.shape(), nullptr, true}}, out(1);
    op->infer(in, out);
    ExecSettings settings;
    settings.isa = hardware_isa();
    op->prepare(in, settings);
    const QuantizedTable table = requantize_table(x_scale, x_zp, y_scale, y_zp, qmin, qmax);
    AffineU8 fit;
    const bool has_fit = fit_affine_u8(table, x_scale, x_zp, y_scale, y_zp, qmin, qmax, &fit);
    ++tables;
    fitted += has_fit;
    const std::string algorithm = op->algorithm();
    const bool affine = algorithm.size() > 7 && algorithm.compare(algorithm.size() - 7, 7, "-affine") == 0;
    EXPECT_EQ(affine, has_fit && kernel_runs()) << algorithm;
    if (!has_fit || !kernel_runs()) EXPECT_EQ(algorithm, "int8-table");
    Tensor y = Tensor::zeros(DataType::UInt8, x.shape());
    OpContext ctx;
    ctx.inputs = {&x};
    ctx.outputs = {&y};
    op->run(ctx);
    int64_t bad = 0;
    for (int64_t i = 0; i < x.numel(); ++i) bad += y.data_as<uint8_t>()[i] != table[x.data_as<uint8_t>()[i]];
    EXPECT_EQ(bad, 0) << algorithm << ": x " << x_scale << " " << x_zp << ", y " << y_scale << " " << y_zp;
  }
  EXPECT_GT(fitted, tables / 2) << "most tables are one multiply-add";
}

TEST(RequantizeU8Affine, TheConcatTakesTheFitWhereOneExists) {
  std::mt19937 rng(78);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  // Two inputs of 1 x C x 24 x 24 on axis 1: the first with the output's parameters (copied), the second
  // requantised.
  const Shape a_shape = {1, 8, 24, 24}, b_shape = {1, 16, 24, 24};
  Tensor a = Tensor::zeros(DataType::UInt8, a_shape), b = Tensor::zeros(DataType::UInt8, b_shape);
  for (int64_t i = 0; i < a.numel(); ++i) a.data_as<uint8_t>()[i] = static_cast<uint8_t>(i * 13);
  for (int64_t i = 0; i < b.numel(); ++i) b.data_as<uint8_t>()[i] = static_cast<uint8_t>(i * 7 + i / 256);
  int fitted = 0;
  for (int t = 0; t < 40; ++t) {
    const float y_scale = std::ldexp(static_cast<float>(uniform(1, 4000)), -uniform(10, 16));
    const float x_scale = std::ldexp(static_cast<float>(uniform(1, 4000)), -uniform(10, 16));
    const int y_zp = uniform(0, 255), x_zp = uniform(0, 255);
    Node node;
    node.name = "cat";
    node.op_type = "ng.QConcat";
    node.inputs = {0, 1};
    node.outputs = {2};
    node.attrs.set("axis", Attribute::of_int(1));
    node.attrs.set("x_scales", Attribute::of_floats({y_scale, x_scale}));
    node.attrs.set("x_zero_points", Attribute::of_ints({y_zp, x_zp}));
    write_tensor_quant({y_scale, y_zp}, "y", node.attrs);
    write_qclamp({0, 255}, node.attrs);
    std::unique_ptr<Op> op = OpRegistry::instance().create(node);
    std::vector<TensorDesc> in = {{DataType::UInt8, a_shape, nullptr, true}, {DataType::UInt8, b_shape, nullptr, true}};
    std::vector<TensorDesc> out(1);
    op->infer(in, out);
    ExecSettings settings;
    settings.isa = hardware_isa();
    op->prepare(in, settings);
    const QuantizedTable table = requantize_table(x_scale, x_zp, y_scale, y_zp, 0, 255);
    AffineU8 fit;
    const bool has_fit = !table_is_clamp(table, 0, 255) && fit_affine_u8(table, x_scale, x_zp, y_scale, y_zp, 0, 255, &fit);
    fitted += has_fit;
    const std::string algorithm = op->algorithm();
    const bool affine = algorithm.size() > 7 && algorithm.compare(algorithm.size() - 7, 7, "-affine") == 0;
    EXPECT_EQ(affine, has_fit && kernel_runs()) << algorithm;
    Tensor y = Tensor::zeros(DataType::UInt8, out[0].shape);
    OpContext ctx;
    ctx.inputs = {&a, &b};
    ctx.outputs = {&y};
    op->run(ctx);
    const uint8_t* yv = y.data_as<uint8_t>();
    EXPECT_EQ(std::memcmp(yv, a.data(), static_cast<size_t>(a.numel())), 0) << "the first input is copied";
    int64_t bad = 0;
    for (int64_t i = 0; i < b.numel(); ++i) bad += yv[a.numel() + i] != table[b.data_as<uint8_t>()[i]];
    EXPECT_EQ(bad, 0) << algorithm;
  }
  EXPECT_GT(fitted, 20) << "most tables are one multiply-add";
}

}  // namespace
}  // namespace ninegrid
#endif
