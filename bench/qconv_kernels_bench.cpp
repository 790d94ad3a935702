// Microbenchmarks of the x86 int8 direct and pointwise kernels (ops/qconv_fast.h) on the layers of
// conv_kernels_bench.cpp's models, one thread, blocked in and out as the int8 layout plan makes them (16
// channels under VNNI, 8 under AVX2; plain NCHW for a 3-channel image), beside the fp32 kernel on the same
// layer. Each reports GOP/s (2 x multiply-accumulates per second) and, for int8, the fraction of this core's
// vpdpbusd peak, both in thread CPU time (measured at start-up, as conv_kernels_bench.cpp does for fp32).
//
// Each int8 layer runs three ways: int8-ISA/LAYER (the kernel FastQConv2d chooses), int8-ISA/direct/LAYER and
// int8-ISA/indirect/LAYER (each family forced; direct includes pointwise); the first layers also
// int8-ISA/first-layer/LAYER, the 3x3 stride-1 ones int8-ISA/winograd/LAYER (the AVX2 kernel under both).
//
//   ninegrid_qconv_bench [--benchmark_filter=REGEX] [other Google Benchmark flags]
#include <benchmark/benchmark.h>

#include <cstdio>
#include <random>
#include <utility>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/conv_params.h"
#include "machine_peak.h"
#include "ops/conv_fast.h"
#include "ops/conv_select.h"
#include "ops/qconv_fast.h"

namespace ninegrid {
namespace {

double g_vnni_peak = 0, g_fp32_peak = 0;  // GOP/s per CPU second

struct Layer {
  std::string name;
  int64_t in_c, out_c, h, w, k, stride, pad;
  bool residual = false;
  bool plain_out = false;  // output in plain NCHW (the layout plan's choice for a detection head)
};

Conv2dParams params_of(const Layer& l) {
  Conv2dParams p;
  p.in_channels = l.in_c, p.out_channels = l.out_c;
  p.in_h = l.h, p.in_w = l.w;
  p.kernel_h = p.kernel_w = l.k, p.stride_h = p.stride_w = l.stride;
  p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = l.pad;
  p.out_h = conv_output_size(l.h, l.k, l.stride, 1, l.pad, l.pad);
  p.out_w = conv_output_size(l.w, l.k, l.stride, 1, l.pad, l.pad);
  return p;
}

// The int8 layout plan's block for a channel count (graph/passes: the vector's lanes, else 8, else 4).
int64_t block_for(int64_t channels, int64_t lanes) {
  if (channels % lanes == 0) return lanes;
  if (channels % 8 == 0) return 8;
  if (channels % 4 == 0) return 4;
  return 1;
}

// weight_max: weights uniform in [-weight_max - 1, weight_max] (127: any int8; 63: 7-bit weights, which the
// AVX2 vpmaddubsw kernels take).
void bench_int8(benchmark::State& state, Layer layer, Isa isa, QConvKernel kernel, int weight_max) {
  const Conv2dParams p = params_of(layer);
  const int64_t lanes = isa == Isa::Avx512 ? 16 : 8;
  const int64_t in_block = block_for(p.in_channels, lanes);
  const int64_t out_block = layer.plain_out ? 1 : block_for(p.out_channels, lanes);
  if (!FastQConv2d::supports(p, in_block, out_block, isa, kernel)) {
    state.SkipWithError("no int8 kernel for this layer");
    return;
  }
  std::mt19937 rng(1);
  auto bytes = [&](int64_t n, int lo, int hi) {
    std::vector<uint8_t> v(static_cast<size_t>(n));
    std::uniform_int_distribution<int> d(lo, hi);
    for (uint8_t& b : v) b = static_cast<uint8_t>(d(rng));
    return v;
  };
  const auto x = bytes(p.in_channels * p.in_h * p.in_w, 0, 255);
  std::vector<int8_t> w(static_cast<size_t>(p.out_channels * p.in_channels_per_group() * p.kernel_h * p.kernel_w));
  std::uniform_int_distribution<int> weight(-weight_max - 1, weight_max);
  for (int8_t& v : w) v = static_cast<int8_t>(weight(rng));
  std::vector<int32_t> bias(static_cast<size_t>(p.out_channels), 1000);
  std::vector<float> multiplier(static_cast<size_t>(p.out_channels), 1.f / 4096);
  std::vector<uint8_t> y(static_cast<size_t>(p.out_channels * p.out_h * p.out_w));
  const auto residual = bytes(layer.residual ? static_cast<int64_t>(y.size()) : 0, 0, 255);
  Requantization q;
  q.bias = bias.data();
  q.multiplier = multiplier.data();
  q.out_zero_point = 3, q.qmin = 3, q.qmax = 255;  // a fused ReLU
  if (layer.residual) q.residual_zero_point = 128, q.residual_multiplier = 0.5f;  // (only with one, as ng.QConv)
  const FastQConv2d conv(p, w.data(), q, 128, isa, in_block, out_block, kernel);
  for (auto _ : state) {
    conv.run(x.data(), y.data(), layer.residual ? residual.data() : nullptr, nullptr);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  const double gop = 2.0 * static_cast<double>(p.macs()) / 1e9;
  state.counters["GOPs"] = benchmark::Counter(gop, benchmark::Counter::kIsIterationInvariantRate);
  if (g_vnni_peak > 0)
    state.counters["vnni_peak"] = benchmark::Counter(gop / g_vnni_peak, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(std::string(conv.algorithm()) + " " + std::to_string(in_block) + "->" + std::to_string(out_block) +
                 (conv.stages_input() ? " staged" : ""));
}

void bench_fp32(benchmark::State& state, Layer layer) {
  const Conv2dParams p = params_of(layer);
  const Isa isa = hardware_isa();
  const int64_t lanes = isa == Isa::Avx512 ? 16 : 8;
  const int64_t in_block = block_for(p.in_channels, lanes), out_block = block_for(p.out_channels, lanes);
  const ConvPlan plan = fast_conv_plan(p, in_block, out_block, isa);  // the direct family's kernel by shape
  if (plan.kernel == ConvKernel::Ref) {
    state.SkipWithError("no fp32 kernel for this layer");
    return;
  }
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
  std::vector<float> y(static_cast<size_t>(p.out_channels * p.out_h * p.out_w));
  const auto residual = random(layer.residual ? static_cast<int64_t>(y.size()) : 0);
  const FastConv2d conv(p, w.data(), bias.data(), Activation::relu(), plan);
  for (auto _ : state) {
    conv.run(x.data(), y.data(), layer.residual ? residual.data() : nullptr, nullptr);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  const double gop = 2.0 * static_cast<double>(p.macs()) / 1e9;
  state.counters["GOPs"] = benchmark::Counter(gop, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["fp32_peak"] = benchmark::Counter(gop / g_fp32_peak, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(std::string(conv.algorithm()) + "/" + conv.isa());
}

const std::vector<Layer>& layers() {
  static const std::vector<Layer> l = {
      // First layers (a plain RGB image, staged into 4-channel blocks).
      {"first/retina_3to8_3x3s2_640", 3, 8, 640, 640, 3, 2, 1},
      {"first/mnv2_3to32_3x3s2_224", 3, 32, 224, 224, 3, 2, 1},
      {"first/resnet_3to64_7x7s2_224", 3, 64, 224, 224, 7, 2, 3},
      // RetinaFace-MobileNet0.25 at 640x640.
      {"retina/pw_8to16_320", 8, 16, 320, 320, 1, 1, 0},
      {"retina/pw_32to64_80", 32, 64, 80, 80, 1, 1, 0},
      {"retina/pw_64to64_80", 64, 64, 80, 80, 1, 1, 0},
      {"retina/pw_128to128_40", 128, 128, 40, 40, 1, 1, 0},
      {"retina/pw_256to256_20", 256, 256, 20, 20, 1, 1, 0},
      // RetinaFace's detection heads at the 80x80 level (landmarks, boxes, scores: 2 anchors x 10, 4, 2),
      // written in plain NCHW as the layout plan makes them (a DequantizeLinear and a Reshape read them).
      {"retina/head_64to20_80", 64, 20, 80, 80, 1, 1, 0, false, true},
      {"retina/head_64to8_80", 64, 8, 80, 80, 1, 1, 0, false, true},
      {"retina/head_64to4_80", 64, 4, 80, 80, 1, 1, 0, false, true},
      // RetinaFace's 3x3 convs at the 80x80 level (the FPN merge 64->64, the SSH module's 64->32, 64->16 and
      // 16->16): most of the int8 model's multiply-adds.
      {"retina/3x3_64to64_80", 64, 64, 80, 80, 3, 1, 1},
      {"retina/3x3_64to32_80", 64, 32, 80, 80, 3, 1, 1},
      {"retina/3x3_64to16_80", 64, 16, 80, 80, 3, 1, 1},
      {"retina/3x3_16to16_80", 16, 16, 80, 80, 3, 1, 1},
      // ResNet-18/50.
      {"resnet/3x3_64to64_56", 64, 64, 56, 56, 3, 1, 1},
      {"resnet/3x3_128to128_28", 128, 128, 28, 28, 3, 1, 1},
      {"resnet/3x3_256to256_14", 256, 256, 14, 14, 3, 1, 1},
      {"resnet/3x3_512to512_7", 512, 512, 7, 7, 3, 1, 1},
      // Small planes, where the Winograd kernel's transformed weights are read for few tiles (Auto's bound).
      {"small/3x3_64to64_7", 64, 64, 7, 7, 3, 1, 1},
      {"small/3x3_128to128_10", 128, 128, 10, 10, 3, 1, 1},
      {"small/3x3_256to256_10", 256, 256, 10, 10, 3, 1, 1},
      {"small/3x3_128to128_12", 128, 128, 12, 12, 3, 1, 1},
      {"small/3x3_512to512_14", 512, 512, 14, 14, 3, 1, 1},
      {"resnet/3x3s2_64to128_56", 64, 128, 56, 56, 3, 2, 1},
      {"resnet/1x1_64to256_56", 64, 256, 56, 56, 1, 1, 0},
      {"resnet/1x1_256to64_56", 256, 64, 56, 56, 1, 1, 0},
      {"resnet/1x1s2_256to512_56", 256, 512, 56, 56, 1, 2, 0},
      {"resnet/1x1_128to512_28_add", 128, 512, 28, 28, 1, 1, 0, true},
      {"resnet/1x1_512to2048_7_add", 512, 2048, 7, 7, 1, 1, 0, true},
      // MobileNetV2.
      {"mnv2/pw_16to96_112", 16, 96, 112, 112, 1, 1, 0},
      {"mnv2/pw_24to144_56", 24, 144, 56, 56, 1, 1, 0},
      {"mnv2/pw_144to24_56", 144, 24, 56, 56, 1, 1, 0},
      {"mnv2/pw_384to64_14", 384, 64, 14, 14, 1, 1, 0},
      {"mnv2/pw_64to384_14", 64, 384, 14, 14, 1, 1, 0},
      {"mnv2/pw_960to160_7", 960, 160, 7, 7, 1, 1, 0},
      {"mnv2/pw_160to960_7", 160, 960, 7, 7, 1, 1, 0},
  };
  return l;
}

}  // namespace
}  // namespace ninegrid

int main(int argc, char** argv) {
  using namespace ninegrid;
  benchmark::Initialize(&argc, argv);
  g_vnni_peak = measure_vnni_peak_gops(PeakClock::ThreadCpu);
  g_fp32_peak = measure_fma_peak_gflops(hardware_isa() == Isa::Avx512 ? "avx512" : "avx2", PeakClock::ThreadCpu);
  std::printf("one core, per CPU second: vpdpbusd peak %.1f GOP/s, fp32 FMA peak %.1f GFLOP/s\n", g_vnni_peak,
              g_fp32_peak);
  // Per ISA: the kernel FastQConv2d chooses (Auto), and each family forced (direct covers pointwise).
  const std::pair<const char*, QConvKernel> kernels[] = {{"", QConvKernel::Auto},
                                                         {"direct/", QConvKernel::Direct},
                                                         {"indirect/", QConvKernel::Indirect},
                                                         {"first-layer/", QConvKernel::FirstLayer},
                                                         {"winograd/", QConvKernel::Winograd}};
  for (const Layer& l : layers()) {
    for (const auto& [tag, kernel] : kernels) {
      if (kernel == QConvKernel::FirstLayer && l.name.rfind("first/", 0) != 0) continue;  // images only
      if (kernel == QConvKernel::Winograd && !FastQConv2d::supports(params_of(l), 8, 8, Isa::Avx2, kernel)) continue;
      if (cpu_features().avx512vnni)
        benchmark::RegisterBenchmark(("int8-vnni/" + std::string(tag) + l.name).c_str(), bench_int8, l, Isa::Avx512,
                                     kernel, 127)
            ->Unit(benchmark::kMicrosecond);
      if (cpu_features().avx2) {
        benchmark::RegisterBenchmark(("int8-avx2/" + std::string(tag) + l.name).c_str(), bench_int8, l, Isa::Avx2,
                                     kernel, 127)
            ->Unit(benchmark::kMicrosecond);
        // 7-bit weights: the vpmaddubsw kernels where Auto picks direct, and the direct family forced.
        if (kernel == QConvKernel::Auto || kernel == QConvKernel::Direct)
          benchmark::RegisterBenchmark(("int8-avx2-w7/" + std::string(tag) + l.name).c_str(), bench_int8, l, Isa::Avx2,
                                       kernel, 63)
              ->Unit(benchmark::kMicrosecond);
      }
    }
    benchmark::RegisterBenchmark(("fp32/" + l.name).c_str(), bench_fp32, l)->Unit(benchmark::kMicrosecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
