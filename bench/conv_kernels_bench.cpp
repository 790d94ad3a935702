// Microbenchmarks of the fast x86 conv kernels (ops/conv_fast.h) on representative layers, one thread:
// RetinaFace-MobileNet0.25 at 640x640 (first conv, depthwise and pointwise layers) and ResNet-18/50 layers
// at 56x56 and 28x28. Each reports GFLOP/s (2 x multiply-accumulates per second) and the fraction of this
// core's FMA peak, measured at start-up in this binary (see below):
//   peak         : fraction of the core's best fp32 peak (512-bit FMA where the CPU has AVX-512)
//   peak_isa     : fraction of the peak at the kernel's own vector width (256-bit for the AVX2 kernels)
//
//   ninegrid_kernel_bench [--benchmark_filter=REGEX] [other Google Benchmark flags]
#include <cstdlib>
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/conv_params.h"
#include "kernels/pool_blocked_fast.h"
#include "kernels/x86/conv_kernels_x86.h"
#include "ops/conv_fast.h"
#include "ops/conv_select.h"
#include "core/cpu_features.h"
#include "machine_peak.h"

namespace ninegrid {
namespace {

// ---- The core's FMA peak (runtime/machine_peak.h), timed in thread CPU time like Google Benchmark's rate
// counters below: on a shared machine whose cores are time-sliced between processes, wall-clock peaks and
// rates are both meaningless, while the ratio of CPU-time rates still says how close a kernel runs to
// the FMA units' limit. ----

struct Peak {
  double avx2 = 0, avx512 = 0;  // GFLOP/s
  double best() const { return avx512 > avx2 ? avx512 : avx2; }
  double of(Isa isa) const { return isa == Isa::Avx512 ? avx512 : avx2; }
};

Peak measure_peak() {
  Peak p;
  if (hardware_isa() >= Isa::Avx2) p.avx2 = measure_fma_peak_gflops("avx2", PeakClock::ThreadCpu);
  if (hardware_isa() == Isa::Avx512) p.avx512 = measure_fma_peak_gflops("avx512", PeakClock::ThreadCpu);
  return p;
}

Peak g_peak;

// ---- Layers ----

struct Layer {
  std::string name;
  int64_t in_c, out_c, groups, h, w, k, stride, pad;
  ConvAlgorithm algorithm = ConvAlgorithm::Auto;  // forced, to compare kernels on one layer
  bool residual = false;                          // a fused residual Add (ResNet's block outputs)
};

Conv2dParams params_of(const Layer& l) {
  Conv2dParams p;
  p.in_channels = l.in_c, p.out_channels = l.out_c, p.groups = l.groups;
  p.in_h = l.h, p.in_w = l.w;
  p.kernel_h = p.kernel_w = l.k, p.stride_h = p.stride_w = l.stride;
  p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = l.pad;
  p.out_h = conv_output_size(l.h, l.k, l.stride, 1, l.pad, l.pad);
  p.out_w = conv_output_size(l.w, l.k, l.stride, 1, l.pad, l.pad);
  return p;
}

// The block a tensor of `channels` gets under the layout plan for `isa` (16, else 8, else plain).
int64_t block_for(int64_t channels, Isa isa) {
  if (isa == Isa::Avx512 && channels % 16 == 0) return 16;
  if (channels % 8 == 0) return 8;
  return 1;
}

void bench_conv(benchmark::State& state, Layer layer, Isa isa) {
  const Conv2dParams p = params_of(layer);
  const int64_t in_block = block_for(p.in_channels, isa), out_block = block_for(p.out_channels, isa);
  const ConvPlan plan = fast_conv_plan(p, in_block, out_block, isa, layer.algorithm);
  if (plan.kernel == ConvKernel::Ref) {
    state.SkipWithError("no fast kernel for this layer");
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
  // NINEGRID_BENCH_COLD=1: evict the caches before each run (as inside a model, where other layers' data
  // and weights pass through in between), so the layer's input and output come from memory.
  static const bool cold = std::getenv("NINEGRID_BENCH_COLD") && std::string(std::getenv("NINEGRID_BENCH_COLD")) == "1";
  std::vector<float> flush(cold ? 64 << 20 >> 2 : 0);
  for (auto _ : state) {
    if (cold) {
      state.PauseTiming();
      for (size_t i = 0; i < flush.size(); i += 16) flush[i] += 1.f;
      benchmark::ClobberMemory();
      state.ResumeTiming();
    }
    conv.run(x.data(), y.data(), layer.residual ? residual.data() : nullptr, nullptr);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  const double gflop = 2.0 * static_cast<double>(p.macs()) / 1e9;
  const Isa kernel_isa = std::string(conv.isa()) == "avx512" ? Isa::Avx512 : Isa::Avx2;
  state.counters["GFLOPs"] = benchmark::Counter(gflop, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["peak"] = benchmark::Counter(gflop / g_peak.best(), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["peak_isa"] =
      benchmark::Counter(gflop / g_peak.of(kernel_isa), benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(std::string(conv.algorithm()) + "/" + conv.isa() + " " + std::to_string(in_block) + "->" +
                 std::to_string(out_block));
}

void bench_reorder(benchmark::State& state, int64_t channels, int64_t plane, Isa isa, bool to_blocked) {
  std::vector<float> src(static_cast<size_t>(channels * plane), 1.f), dst(src.size());
  const int lanes = isa == Isa::Avx512 ? avx512::kLanes : avx2::kLanes;
  auto fn = to_blocked ? (isa == Isa::Avx512 ? avx512::reorder_nchw_to_blocked : avx2::reorder_nchw_to_blocked)
                       : (isa == Isa::Avx512 ? avx512::reorder_blocked_to_nchw : avx2::reorder_blocked_to_nchw);
  for (auto _ : state) {
    fn(src.data(), dst.data(), channels, plane, 0, channels / lanes);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * channels * plane * 8);
}

// ResNet-18/50's stem MaxPool, 3x3 stride 2 pad 1 over 64x112x112 blocked at `block` channels, on the
// kernel of `isa` (Isa::Ref: max_pool_blocked_ref). Bytes: the input read and the output written once.
void bench_maxpool(benchmark::State& state, Isa isa, int64_t block) {
  PoolParams p;
  p.planes = 64;
  p.in[1] = p.in[2] = 112;
  p.out[1] = p.out[2] = 56;
  p.kernel[1] = p.kernel[2] = 3;
  p.stride[1] = p.stride[2] = 2;
  p.pad_begin[1] = p.pad_begin[2] = p.pad_end[1] = p.pad_end[2] = 1;
  // 64-byte aligned as the engine's tensors: every pixel's 16 lanes then sit in one cache line.
  const size_t in_size = static_cast<size_t>(p.planes * p.in_plane());
  const size_t out_size = static_cast<size_t>(p.planes * p.out_plane());
  std::unique_ptr<float, decltype(&std::free)> x(static_cast<float*>(std::aligned_alloc(64, in_size * 4)), std::free);
  std::unique_ptr<float, decltype(&std::free)> y(static_cast<float*>(std::aligned_alloc(64, out_size * 4)), std::free);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (size_t i = 0; i < in_size; ++i) x.get()[i] = dist(rng);
  const int64_t rows = p.planes / block * p.out[1];
  for (auto _ : state) {
    if (isa == Isa::Ref) max_pool_blocked_ref(p, block, x.get(), y.get(), 0, rows);
    else max_pool_blocked_fast(isa, p, block, x.get(), y.get(), 0, rows);
    benchmark::DoNotOptimize(y.get());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(in_size + out_size) * 4);
}

const std::vector<Layer>& layers() {
  static const std::vector<Layer> l = {
      // RetinaFace-MobileNet0.25, 640x640 input.
      {"retina/conv1_3x3s2_3to8_640", 3, 8, 1, 640, 640, 3, 2, 1},
      {"retina/dw_8_3x3s1_320", 8, 8, 8, 320, 320, 3, 1, 1},
      {"retina/pw_8to16_320", 8, 16, 1, 320, 320, 1, 1, 0},
      {"retina/dw_16_3x3s2_320", 16, 16, 16, 320, 320, 3, 2, 1},
      {"retina/dw_32_3x3s1_160", 32, 32, 32, 160, 160, 3, 1, 1},
      {"retina/pw_32to64_80", 32, 64, 1, 80, 80, 1, 1, 0},
      {"retina/dw_64_3x3s1_80", 64, 64, 64, 80, 80, 3, 1, 1},
      {"retina/pw_64to64_80", 64, 64, 1, 80, 80, 1, 1, 0},
      {"retina/dw_128_3x3s1_40", 128, 128, 128, 40, 40, 3, 1, 1},
      {"retina/pw_128to128_40", 128, 128, 1, 40, 40, 1, 1, 0},
      {"retina/dw_256_3x3s1_20", 256, 256, 256, 20, 20, 3, 1, 1},
      {"retina/pw_256to256_20", 256, 256, 1, 20, 20, 1, 1, 0},
      // First layers (plain RGB input) on the first-layer kernel and on the direct kernel.
      {"first/retina_3to8_3x3s2_640", 3, 8, 1, 640, 640, 3, 2, 1, ConvAlgorithm::FirstLayer},
      {"first/retina_3to8_3x3s2_640_direct", 3, 8, 1, 640, 640, 3, 2, 1, ConvAlgorithm::Direct},
      {"first/3to8_3x3s1_320", 3, 8, 1, 320, 320, 3, 1, 1, ConvAlgorithm::FirstLayer},
      {"first/3to8_3x3s1_320_direct", 3, 8, 1, 320, 320, 3, 1, 1, ConvAlgorithm::Direct},
      {"first/ppocr_3to16_3x3s2_640", 3, 16, 1, 640, 640, 3, 2, 1, ConvAlgorithm::FirstLayer},
      {"first/ppocr_3to16_3x3s2_640_direct", 3, 16, 1, 640, 640, 3, 2, 1, ConvAlgorithm::Direct},
      {"first/blazeface_3to24_5x5s2_128", 3, 24, 1, 128, 128, 5, 2, 2, ConvAlgorithm::FirstLayer},
      {"first/blazeface_3to24_5x5s2_128_direct", 3, 24, 1, 128, 128, 5, 2, 2, ConvAlgorithm::Direct},
      {"first/mnv2_3to32_3x3s2_224", 3, 32, 1, 224, 224, 3, 2, 1, ConvAlgorithm::FirstLayer},
      {"first/mnv2_3to32_3x3s2_224_direct", 3, 32, 1, 224, 224, 3, 2, 1, ConvAlgorithm::Direct},
      {"first/resnet_3to64_7x7s2_224", 3, 64, 1, 224, 224, 7, 2, 3, ConvAlgorithm::FirstLayer},
      {"first/resnet_3to64_7x7s2_224_direct", 3, 64, 1, 224, 224, 7, 2, 3, ConvAlgorithm::Direct},
      // ResNet-18/50.
      {"resnet/conv1_7x7s2_3to64_224", 3, 64, 1, 224, 224, 7, 2, 3},
      {"resnet/3x3_64to64_56", 64, 64, 1, 56, 56, 3, 1, 1},
      {"resnet/3x3_128to128_28", 128, 128, 1, 28, 28, 3, 1, 1},
      {"resnet/3x3s2_64to128_56", 64, 128, 1, 56, 56, 3, 2, 1},
      {"resnet/1x1_64to256_56", 64, 256, 1, 56, 56, 1, 1, 0},
      {"resnet/1x1_256to64_56", 256, 64, 1, 56, 56, 1, 1, 0},
      {"resnet/1x1_128to128_56", 128, 128, 1, 56, 56, 1, 1, 0},
      {"resnet/1x1_256to128_28", 256, 128, 1, 28, 28, 1, 1, 0},
      {"resnet/1x1_64to256_56_add", 64, 256, 1, 56, 56, 1, 1, 0, ConvAlgorithm::Auto, true},
      {"resnet/1x1_128to512_28_add", 128, 512, 1, 28, 28, 1, 1, 0, ConvAlgorithm::Auto, true},
      // MobileNetV2 (224x224): few-channel pointwise layers on large planes, wide ones on small planes.
      {"mnv2/pw_16to96_112", 16, 96, 1, 112, 112, 1, 1, 0},
      {"mnv2/pw_16to96_28", 16, 96, 1, 28, 28, 1, 1, 0},
      {"mnv2/pw_16to96_56", 16, 96, 1, 56, 56, 1, 1, 0},
      {"mnv2/pw_24to144_56", 24, 144, 1, 56, 56, 1, 1, 0},
      {"mnv2/pw_144to24_56", 144, 24, 1, 56, 56, 1, 1, 0},
      {"mnv2/pw_384to64_14", 384, 64, 1, 14, 14, 1, 1, 0},
      {"mnv2/pw_64to384_14", 64, 384, 1, 14, 14, 1, 1, 0},
      {"mnv2/pw_960to160_7", 960, 160, 1, 7, 7, 1, 1, 0},
      {"mnv2/pw_160to960_7", 160, 960, 1, 7, 7, 1, 1, 0},
      // BlazeFace: 28-channel tensors stay plain NCHW (28 is no multiple of 8).
      {"blazeface/pw_24to28_64_plain_add", 24, 28, 1, 64, 64, 1, 1, 0, ConvAlgorithm::Auto, true},
      {"blazeface/pw_28to32_32", 28, 32, 1, 32, 32, 1, 1, 0},
      // ... and widened to 32 channels (graph/passes/widen_channels.cpp), blocked.
      {"blazeface/pw_24to32_64_add", 24, 32, 1, 64, 64, 1, 1, 0, ConvAlgorithm::Auto, true},
      {"blazeface/dw_32_3x3s2_64", 32, 32, 32, 64, 64, 3, 2, 1},
      {"blazeface/dw_32_3x3s1_32", 32, 32, 32, 32, 32, 3, 1, 1},
      {"mnv2/dw_144_3x3s1_56", 144, 144, 144, 56, 56, 3, 1, 1},
      {"mnv2/dw_96_3x3s2_112", 96, 96, 96, 112, 112, 3, 2, 1},
      // Small planes, where most tiles touch the padding.
      {"mnv2/dw_192_3x3s1_28", 192, 192, 192, 28, 28, 3, 1, 1},
      {"mnv2/dw_384_3x3s1_14", 384, 384, 384, 14, 14, 3, 1, 1},
      {"mnv2/dw_576_3x3s2_14", 576, 576, 576, 14, 14, 3, 2, 1},
      {"mnv2/dw_960_3x3s1_7", 960, 960, 960, 7, 7, 3, 1, 1},
      // 5x5 depthwise (EfficientNet-, MnasNet-style blocks).
      {"dw5x5/96_5x5s1_56", 96, 96, 96, 56, 56, 5, 1, 2},
      {"dw5x5/96_5x5s2_56", 96, 96, 96, 56, 56, 5, 2, 2},
  };
  return l;
}

}  // namespace
}  // namespace ninegrid

int main(int argc, char** argv) {
  using namespace ninegrid;
  benchmark::Initialize(&argc, argv);
  g_peak = measure_peak();
  std::printf("FMA peak, one core, per CPU second: %.1f GFLOP/s at 256 bits, %.1f at 512 bits\n", g_peak.avx2, g_peak.avx512);
  std::vector<Isa> isas;
  if (hardware_isa() == Isa::Avx512) isas.push_back(Isa::Avx512);
  if (hardware_isa() >= Isa::Avx2) isas.push_back(Isa::Avx2);
  for (Isa isa : isas) {
    for (const Layer& l : layers())
      benchmark::RegisterBenchmark((std::string(isa_name(isa)) + "/" + l.name).c_str(), bench_conv, l, isa)
          ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark((std::string(isa_name(isa)) + "/reorder_to_blocked_64x56x56").c_str(),
                                 bench_reorder, 64, 56 * 56, isa, true)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark((std::string(isa_name(isa)) + "/reorder_to_nchw_64x56x56").c_str(), bench_reorder,
                                 64, 56 * 56, isa, false)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark((std::string(isa_name(isa)) + "/maxpool_64x112x112_3x3s2").c_str(), bench_maxpool,
                                 isa, static_cast<int64_t>(isa_block(isa)))
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark((std::string(isa_name(isa)) + "/maxpool_64x112x112_3x3s2_ref").c_str(),
                                 bench_maxpool, Isa::Ref, static_cast<int64_t>(isa_block(isa)))
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
