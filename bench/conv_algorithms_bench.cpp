// Microbenchmarks of the alternative conv algorithms against the direct conv (ops/conv_fast.h), one
// thread, blocked in/out as the layout plan gives them:
//   winograd/...  Winograd (ops/conv_winograd.h) F(2x2), F(4x4), F(6x6), the automatic tile and F(2x2),
//                 F(4x4) with each register tile forced (_tile1 tall, _tile2 wide) on the dense
//                 3x3 stride-1 layers of ResNet-18/50, VGG and RetinaFace;
//   indirect/...  indirect convolution (ops/conv_indirect.h) on the general shapes it is meant for;
//   strassen/...  1x1 convs (ops/conv_strassen.h) as one GEMM, with one level of Strassen, and as the
//                 cost model chooses, against the pointwise kernel.
// Counters:
//   GFLOPs : direct-conv-equivalent GFLOP/s, 2 * (multiply-accumulates of the direct conv) per CPU second,
//            so every algorithm is compared on the same work
//   peak   : that rate over this core's measured 512-bit FMA peak (above 1 means faster than any direct
//            conv could be; the target for Winograd is 1.5)
// The peak is measured at start-up in thread CPU time (12 independent FMA chains), as the kernels are, so
// other load on the shared machine affects both alike.
//
//   ninegrid_conv_algorithms_bench [--benchmark_filter=REGEX] [other Google Benchmark flags]
#include <benchmark/benchmark.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "kernels/conv_params.h"
#include "ops/conv_cost_model.h"
#include "ops/conv_fast.h"
#include "ops/conv_select.h"
#include "ops/conv_indirect.h"
#include "ops/conv_strassen.h"
#include "ops/conv_winograd.h"
#include "core/cpu_features.h"
#include "machine_peak.h"

namespace ninegrid {
namespace {

double g_peak = 0;

struct Layer {
  const char* name;
  int64_t in_c, out_c, h, w;
  int64_t k = 3, stride = 1, dilation = 1, pad = 1, groups = 1;
};

Conv2dParams params_of(const Layer& l) {
  Conv2dParams p;
  p.in_channels = l.in_c, p.out_channels = l.out_c, p.groups = l.groups;
  p.in_h = l.h, p.in_w = l.w;
  p.kernel_h = p.kernel_w = l.k;
  p.stride_h = p.stride_w = l.stride;
  p.dilation_h = p.dilation_w = l.dilation;
  p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = l.pad;
  p.out_h = conv_output_size(l.h, l.k, l.stride, l.dilation, l.pad, l.pad);
  p.out_w = conv_output_size(l.w, l.k, l.stride, l.dilation, l.pad, l.pad);
  return p;
}

int64_t block_for(int64_t channels, Isa isa) {
  if (isa == Isa::Avx512 && channels % 16 == 0) return 16;
  return channels % 8 == 0 ? 8 : 1;
}

// Which algorithm a benchmark runs.
enum Algorithm {
  kDirect = 0, kWinograd2 = 2, kWinograd4 = 4, kWinograd6 = 6, kWinogradAuto = -1, kIndirect = -2,
  kGemm = -10, kStrassen1 = -11, kStrassenAuto = -12
};

void bench_layer(benchmark::State& state, Layer layer, Isa isa, int algorithm) {
  const Conv2dParams p = params_of(layer);
  const int64_t in_block = block_for(p.in_channels, isa), out_block = block_for(p.out_channels, isa);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  auto random = [&](int64_t n) {
    std::vector<float> v(static_cast<size_t>(n));
    for (float& f : v) f = dist(rng);
    return v;
  };
  const auto x = random(p.in_channels * p.in_h * p.in_w);
  const auto w = random(p.out_channels * p.in_channels_per_group() * p.kernel_h * p.kernel_w);
  const auto bias = random(p.out_channels);
  const auto residual = random(p.out_channels * p.out_h * p.out_w);
  std::vector<float> y(residual.size());
  std::string label;
  if (algorithm == kGemm || algorithm == kStrassen1 || algorithm == kStrassenAuto) {
    if (!StrassenConv1x1::supports(p, in_block, out_block, isa)) return state.SkipWithError("no Strassen kernel");
    const int levels = algorithm == kGemm ? 0 : algorithm == kStrassen1 ? 1 : -1;
    const StrassenConv1x1 conv(p, w.data(), bias.data(), Activation::relu(), strassen_plan(p, in_block, out_block, isa, levels));
    for (auto _ : state) {
      conv.run(x.data(), y.data(), residual.data(), nullptr);
      benchmark::ClobberMemory();
    }
    label = std::string(conv.algorithm()) + "/" + conv.isa();
  } else if (algorithm == kIndirect) {
    if (!IndirectConv2d::supports(p, in_block, out_block, isa)) return state.SkipWithError("no indirect kernel");
    const IndirectConv2d conv(p, w.data(), bias.data(), Activation::relu(), indirect_plan(p, in_block, out_block, isa));
    for (auto _ : state) {
      conv.run(x.data(), y.data(), residual.data(), nullptr);
      benchmark::ClobberMemory();
    }
    label = std::string(conv.algorithm()) + "/" + conv.isa();
  } else if (algorithm == kDirect) {
    const ConvPlan plan = fast_conv_plan(p, in_block, out_block, isa);
    if (plan.kernel == ConvKernel::Ref) return state.SkipWithError("no direct kernel");
    const FastConv2d conv(p, w.data(), bias.data(), Activation::relu(), plan);
    for (auto _ : state) {
      conv.run(x.data(), y.data(), residual.data(), nullptr);
      benchmark::ClobberMemory();
    }
    label = std::string(conv.algorithm()) + "/" + conv.isa();
  } else {
    if (!WinogradConv2d::supports(p, in_block, out_block, isa)) return state.SkipWithError("no Winograd kernel");
    // 10 * m + r: F(m x m) with register tile r forced (1 tall, 2 wide; winograd_group_vectors).
    const int m = algorithm == kWinogradAuto ? 0 : algorithm >= 10 ? algorithm / 10 : algorithm;
    ConvPlan plan = winograd_plan(p, in_block, out_block, isa, m);
    if (algorithm >= 10) plan.oc_tile = algorithm % 10;
    const WinogradConv2d conv(p, w.data(), bias.data(), Activation::relu(), plan);
    for (auto _ : state) {
      conv.run(x.data(), y.data(), residual.data(), nullptr);
      benchmark::ClobberMemory();
    }
    label = std::string(conv.algorithm()) + "/" + conv.isa();
    if (algorithm == kWinogradAuto) {
      char estimate[64];
      std::snprintf(estimate, sizeof estimate, " (model: %.2fx direct)", winograd_estimated_speedup(p, isa, this_winograd_core()));
      label += estimate;
    }
  }
  const double gflop = 2.0 * static_cast<double>(p.macs()) / 1e9;
  state.counters["GFLOPs"] = benchmark::Counter(gflop, benchmark::Counter::kIsIterationInvariantRate);
  if (g_peak > 0)
    state.counters["peak"] = benchmark::Counter(gflop / g_peak, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(label + " " + std::to_string(in_block) + "->" + std::to_string(out_block));
}

// Dense 3x3 stride-1 layers (Winograd's domain).
const std::vector<Layer>& winograd_layers() {
  static const std::vector<Layer> l = {
      {"resnet/3x3_64to64_56", 64, 64, 56, 56},     {"resnet/3x3_128to128_28", 128, 128, 28, 28},
      {"resnet/3x3_256to256_14", 256, 256, 14, 14}, {"resnet/3x3_512to512_7", 512, 512, 7, 7},
      {"3x3_128to128_14", 128, 128, 14, 14},        {"3x3_256to256_7", 256, 256, 7, 7},
      {"vgg/3x3_64to64_112", 64, 64, 112, 112},     {"retina/ssh_3x3_64to32_80", 64, 32, 80, 80},
      {"retina/ssh_3x3_64to32_40", 64, 32, 40, 40},  {"retina/ssh_3x3_64to16_80", 64, 16, 80, 80},
      {"retina/ssh_3x3_16to16_80", 16, 16, 80, 80},  {"retina/ssh_3x3_64to64_80", 64, 64, 80, 80},
  };
  return l;
}

// General shapes (the indirect conv's domain): first layers on plain images, strided, dilated, grouped.
const std::vector<Layer>& indirect_layers() {
  static const std::vector<Layer> l = {
      {"resnet/conv1_7x7s2_3to64_224", 3, 64, 224, 224, 7, 2, 1, 3},
      {"resnet/3x3s2_64to128_56", 64, 128, 56, 56, 3, 2, 1, 1},
      {"resnet/1x1s2_64to128_56", 64, 128, 56, 56, 1, 2, 1, 0},
      {"deeplab/3x3d2_64to64_56", 64, 64, 56, 56, 3, 1, 2, 2},
      {"5x5s2_32to64_112", 32, 64, 112, 112, 5, 2, 1, 2},
      {"resnext/3x3g32_128to128_56", 128, 128, 56, 56, 3, 1, 1, 1, 8},
      {"resnet/3x3_512to512_7", 512, 512, 7, 7},
      {"resnet/3x3s2_256to512_14", 256, 512, 14, 14, 3, 2, 1, 1},
      {"resnet/3x3_256to256_14", 256, 256, 14, 14},
      {"resnet/3x3s2_128to256_28", 128, 256, 28, 28, 3, 2, 1, 1},
      {"resnet50/1x1s2_1024to2048_14", 1024, 2048, 14, 14, 1, 2, 1, 0},
  };
  return l;
}

// Large 1x1 convs (Strassen's domain): ResNet-50's bottleneck expansions and reductions, and square ones.
const std::vector<Layer>& strassen_layers() {
  static const std::vector<Layer> l = {
      {"resnet50/1x1_256to64_56", 256, 64, 56, 56, 1, 1, 1, 0},
      {"resnet50/1x1_512to128_28", 512, 128, 28, 28, 1, 1, 1, 0},
      {"resnet50/1x1_128to512_28", 128, 512, 28, 28, 1, 1, 1, 0},
      {"resnet50/1x1_1024to256_14", 1024, 256, 14, 14, 1, 1, 1, 0},
      {"resnet50/1x1_256to1024_14", 256, 1024, 14, 14, 1, 1, 1, 0},
      {"resnet50/1x1_2048to512_7", 2048, 512, 7, 7, 1, 1, 1, 0},
      {"1x1_512to512_28", 512, 512, 28, 28, 1, 1, 1, 0},
      {"1x1_1024to1024_14", 1024, 1024, 14, 14, 1, 1, 1, 0},
      {"1x1_1024to1024_28", 1024, 1024, 28, 28, 1, 1, 1, 0},
  };
  return l;
}

}  // namespace
}  // namespace ninegrid

int main(int argc, char** argv) {
  using namespace ninegrid;
  benchmark::Initialize(&argc, argv);
  const bool avx512 = hardware_isa() == Isa::Avx512;
  if (avx512) g_peak = measure_fma_peak_gflops("avx512", PeakClock::ThreadCpu);
  std::printf("512-bit FMA peak, one core, per CPU second: %.1f GFLOP/s\n", g_peak);
  std::vector<Isa> isas;
  if (avx512) isas.push_back(Isa::Avx512);
  if (hardware_isa() >= Isa::Avx2) isas.push_back(Isa::Avx2);
  auto add = [](Isa isa, const char* family, const Layer& l, int algorithm) {
    const std::string what = algorithm == kDirect        ? "direct"
                             : algorithm == kIndirect      ? "indirect"
                             : algorithm == kWinogradAuto  ? "winograd_auto"
                             : algorithm == kGemm          ? "gemm"
                             : algorithm == kStrassen1     ? "strassen1"
                             : algorithm == kStrassenAuto  ? "strassen_auto"
                             : algorithm >= 10 ? "winograd" + std::to_string(algorithm / 10) + "3_tile" + std::to_string(algorithm % 10)
                                                           : "winograd" + std::to_string(algorithm) + "3";
    const std::string name = std::string(isa_name(isa)) + "/" + family + "/" + l.name + "/" + what;
    benchmark::RegisterBenchmark(name.c_str(), bench_layer, l, isa, algorithm)->Unit(benchmark::kMicrosecond);
  };
  for (Isa isa : isas) {
    for (const Layer& l : winograd_layers())
      for (int algorithm : {int(kWinograd2), int(kWinograd4), int(kWinograd6), int(kWinogradAuto), int(kDirect), 21, 22, 41, 42})
        add(isa, "winograd", l, algorithm);
    for (const Layer& l : indirect_layers())
      for (int algorithm : {kIndirect, kDirect}) add(isa, "indirect", l, algorithm);
    for (const Layer& l : strassen_layers())
      for (int algorithm : {kGemm, kStrassen1, kStrassenAuto, kDirect}) add(isa, "strassen", l, algorithm);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
