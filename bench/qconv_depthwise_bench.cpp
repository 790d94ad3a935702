// Int8 depthwise kernels (kernels/x86/qconv_kernels_x86.h, qconv2d_depthwise) against the fp32 depthwise
// kernels on the same shapes, one thread: the depthwise layers of RetinaFace-MobileNet0.25 at 640x640 and
// MobileNetV2 at 224x224, each alone and each network's set in sequence (layers repeated as often as the
// network has them). Rates are GOP/s = 2 x multiply-accumulates per second of thread CPU time (as
// conv_kernels_bench.cpp: on a shared machine only CPU-time rates mean anything).
//   int8/<isa>/...           the library's kernel (vnni: AVX-512 VNNI, avx2)
//   int8/<isa>/<variant>/... tile variants of the same template (qconv_depthwise_variants_*.cpp; configure
//                            with -DNINEGRID_BENCH_TILE_VARIANTS=ON)
//   fp32/...                 FastConv2d's depthwise kernel, blocks as the layout pass plans them
//
//   ninegrid_qconv_depthwise_bench [--benchmark_filter=REGEX] [other Google Benchmark flags]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/conv_params.h"
#include "kernels/qpack_depthwise.h"
#include "kernels/x86/conv_kernels_x86.h"
#include "kernels/x86/qconv_kernels_x86.h"
#include "ops/conv_fast.h"
#include "ops/conv_select.h"
#include "qconv_depthwise_bench.h"

namespace ninegrid {
namespace {

struct Layer {
  std::string name;
  int64_t channels, h, w, k, stride;
  int count;  // times the network has this layer
};

const std::vector<Layer>& retina_layers() {
  static const std::vector<Layer> l = {
      {"retina/dw_8_3x3s1_320", 8, 320, 320, 3, 1, 1},    {"retina/dw_16_3x3s2_320", 16, 320, 320, 3, 2, 1},
      {"retina/dw_32_3x3s1_160", 32, 160, 160, 3, 1, 1},  {"retina/dw_32_3x3s2_160", 32, 160, 160, 3, 2, 1},
      {"retina/dw_64_3x3s1_80", 64, 80, 80, 3, 1, 1},     {"retina/dw_64_3x3s2_80", 64, 80, 80, 3, 2, 1},
      {"retina/dw_128_3x3s1_40", 128, 40, 40, 3, 1, 5},   {"retina/dw_128_3x3s2_40", 128, 40, 40, 3, 2, 1},
      {"retina/dw_256_3x3s1_20", 256, 20, 20, 3, 1, 1},
  };
  return l;
}

const std::vector<Layer>& mnv2_layers() {
  static const std::vector<Layer> l = {
      {"mnv2/dw_32_3x3s1_112", 32, 112, 112, 3, 1, 1}, {"mnv2/dw_96_3x3s2_112", 96, 112, 112, 3, 2, 1},
      {"mnv2/dw_144_3x3s1_56", 144, 56, 56, 3, 1, 1},  {"mnv2/dw_144_3x3s2_56", 144, 56, 56, 3, 2, 1},
      {"mnv2/dw_192_3x3s1_28", 192, 28, 28, 3, 1, 2},  {"mnv2/dw_192_3x3s2_28", 192, 28, 28, 3, 2, 1},
      {"mnv2/dw_384_3x3s1_14", 384, 14, 14, 3, 1, 4},  {"mnv2/dw_576_3x3s1_14", 576, 14, 14, 3, 1, 2},
      {"mnv2/dw_576_3x3s2_14", 576, 14, 14, 3, 2, 1},  {"mnv2/dw_960_3x3s1_7", 960, 7, 7, 3, 1, 3},
  };
  return l;
}

// 5x5 shapes (no network of the benchmark set has them; EfficientNet-like).
const std::vector<Layer>& k5_layers() {
  static const std::vector<Layer> l = {
      {"k5/dw_96_5x5s1_56", 96, 56, 56, 5, 1, 1},   {"k5/dw_144_5x5s2_56", 144, 56, 56, 5, 2, 1},
      {"k5/dw_240_5x5s1_28", 240, 28, 28, 5, 1, 1}, {"k5/dw_672_5x5s1_14", 672, 14, 14, 5, 1, 1},
  };
  return l;
}

Conv2dParams params_of(const Layer& l) {
  Conv2dParams p;
  p.in_channels = p.out_channels = p.groups = l.channels;
  p.in_h = l.h, p.in_w = l.w;
  p.kernel_h = p.kernel_w = l.k, p.stride_h = p.stride_w = l.stride;
  p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = l.k / 2;
  p.out_h = conv_output_size(l.h, l.k, l.stride, 1, l.k / 2, l.k / 2);
  p.out_w = conv_output_size(l.w, l.k, l.stride, 1, l.k / 2, l.k / 2);
  return p;
}

// The block the layout pass gives a tensor of `channels` (16 with AVX-512, else 8, else plain); avx2: the
// int8 AVX2 kernels' own, as the plan of a session capped at avx2 gives it (8, else plain).
int64_t block_for(int64_t channels, bool avx2 = false) {
  if (!avx2 && hardware_isa() == Isa::Avx512 && channels % 16 == 0) return 16;
  return channels % 8 == 0 ? 8 : 1;
}

using QKernel = void (*)(const X86QConvArgs&, const X86ConvRange&);
using QLayout = X86QDepthwiseLayout (*)(int64_t);

// One int8 layer, prepared once: random inputs and weights, a ReLU-like clamp.
struct QLayer {
  Conv2dParams p;
  std::vector<uint8_t> x, y;
  std::vector<int8_t> packed;
  std::vector<int32_t> bias;
  std::vector<float> multiplier;
  X86QConvArgs a;
  X86ConvRange r;

  QLayer(const Layer& l, QLayout layout_of, bool avx2) : p(params_of(l)) {
    std::mt19937 rng(1);
    auto byte = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const int64_t C = l.channels, block = block_for(C, avx2);
    x.resize(static_cast<size_t>(C * p.in_h * p.in_w));
    for (uint8_t& v : x) v = static_cast<uint8_t>(byte(0, 255));
    y.resize(static_cast<size_t>(C * p.out_h * p.out_w));
    std::vector<int8_t> w(static_cast<size_t>(C * l.k * l.k));
    for (int8_t& v : w) v = static_cast<int8_t>(byte(-128, 127));
    const X86QDepthwiseLayout layout = layout_of(block);
    packed.resize(static_cast<size_t>(qdepthwise_packed_bytes(layout, C, l.k, l.k)));
    pack_qdepthwise_weights(layout, w.data(), C, l.k, l.k, packed.data());
    const int64_t vectors = (C + layout.lanes - 1) / layout.lanes;
    bias.assign(static_cast<size_t>(vectors * layout.lanes), -100);
    multiplier.assign(bias.size(), 1.f / 4096);
    a.in_channels = a.out_channels = a.groups = C;
    a.in_channels_per_group = a.out_channels_per_group = 1;
    a.in_h = p.in_h, a.in_w = p.in_w, a.out_h = p.out_h, a.out_w = p.out_w;
    a.kernel_h = a.kernel_w = l.k, a.stride_h = a.stride_w = l.stride, a.pad_top = a.pad_left = l.k / 2;
    a.in_block = a.out_block = block;
    a.weights = packed.data();
    a.bias = bias.data();
    a.x_zero_point = 3;
    a.requantize.multiplier = multiplier.data();
    a.requantize.out_zero_point = 5;
    a.requantize.qmin = 5;
    a.x = x.data();
    a.y = y.data();
    r.oc_block_begin = 0, r.oc_block_end = vectors, r.row_begin = 0, r.row_end = p.out_h;
  }
};

struct FLayer {
  Conv2dParams p;
  std::vector<float> x, y;
  std::unique_ptr<FastConv2d> conv;

  explicit FLayer(const Layer& l) : p(params_of(l)) {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    x.resize(static_cast<size_t>(l.channels * p.in_h * p.in_w));
    for (float& v : x) v = dist(rng);
    y.resize(static_cast<size_t>(l.channels * p.out_h * p.out_w));
    std::vector<float> w(static_cast<size_t>(l.channels * l.k * l.k)), b(static_cast<size_t>(l.channels));
    for (float& v : w) v = dist(rng);
    for (float& v : b) v = dist(rng);
    const int64_t block = block_for(l.channels);
    conv = std::make_unique<FastConv2d>(p, w.data(), b.data(), Activation::relu(),
                                        fast_conv_plan(p, block, block, preferred_isa(), ConvAlgorithm::Depthwise));
  }
  void run() { conv->run(x.data(), y.data(), nullptr, nullptr); }
};

double gop(const std::vector<Layer>& layers) {
  double macs = 0;
  for (const Layer& l : layers) macs += static_cast<double>(params_of(l).macs()) * l.count;
  return 2 * macs / 1e9;
}

void set_rate(benchmark::State& state, double gops) {
  state.counters["GOPs"] = benchmark::Counter(gops, benchmark::Counter::kIsIterationInvariantRate);
}

// The layers in sequence, each `count` times (one layer: a set of one).
void bench_int8(benchmark::State& state, std::vector<Layer> layers, QKernel kernel, QLayout layout, bool avx2) {
  std::vector<std::unique_ptr<QLayer>> q;
  for (const Layer& l : layers) q.push_back(std::make_unique<QLayer>(l, layout, avx2));
  for (auto _ : state) {
    for (size_t i = 0; i < q.size(); ++i)
      for (int n = 0; n < layers[i].count; ++n) kernel(q[i]->a, q[i]->r);
    benchmark::ClobberMemory();
  }
  set_rate(state, gop(layers));
  if (layers.size() == 1) state.SetLabel("block " + std::to_string(q[0]->a.in_block));
}

void bench_fp32(benchmark::State& state, std::vector<Layer> layers) {
  std::vector<std::unique_ptr<FLayer>> f;
  for (const Layer& l : layers) f.push_back(std::make_unique<FLayer>(l));
  for (auto _ : state) {
    for (size_t i = 0; i < f.size(); ++i)
      for (int n = 0; n < layers[i].count; ++n) f[i]->run();
    benchmark::ClobberMemory();
  }
  set_rate(state, gop(layers));
  if (layers.size() == 1) state.SetLabel(std::string(f[0]->conv->algorithm()) + "/" + f[0]->conv->isa());
}

}  // namespace
}  // namespace ninegrid

int main(int argc, char** argv) {
  using namespace ninegrid;
  benchmark::Initialize(&argc, argv);
  const CpuFeatures& f = cpu_features();
  struct Int8 {
    std::string isa;
    QKernel kernel;
    QLayout layout;
    std::vector<QDepthwiseVariant> variants;
  };
  std::vector<Int8> int8;
  if (f.avx512f && f.avx512bw && f.avx512vl && f.avx512vnni)
    int8.push_back({"vnni", vnni::qconv2d_depthwise, vnni::qconv2d_depthwise_layout, qdepthwise_variants_vnni()});
  if (f.avx2 && f.fma)
    int8.push_back({"avx2", avx2::qconv2d_depthwise, avx2::qconv2d_depthwise_layout, qdepthwise_variants_avx2()});

  // With --benchmark_repetitions, "min" and "max" aggregates: on a machine shared with other work the
  // fastest repetition (min time, max rate) is the steadiest figure of a compute-bound kernel.
  auto stats = [](benchmark::internal::Benchmark* b) {
    b->Unit(benchmark::kMicrosecond)
        ->MeasureProcessCPUTime()
        ->ComputeStatistics("min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); })
        ->ComputeStatistics("max", [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); });
  };
  auto add = [&](const std::string& name, std::vector<Layer> layers) {
    for (const Int8& i : int8) {
      const bool avx2 = i.isa == "avx2";
      stats(benchmark::RegisterBenchmark(("int8/" + i.isa + "/" + name).c_str(), bench_int8, layers, i.kernel,
                                         i.layout, avx2));
      for (const QDepthwiseVariant& v : i.variants)
        stats(benchmark::RegisterBenchmark(("int8/" + i.isa + "/" + v.name + "/" + name).c_str(), bench_int8, layers,
                                           v.run, i.layout, avx2));
    }
    stats(benchmark::RegisterBenchmark(("fp32/" + name).c_str(), bench_fp32, layers));
  };
  for (const auto* set : {&retina_layers(), &mnv2_layers(), &k5_layers()})
    for (const Layer& l : *set) {
      Layer one = l;
      one.count = 1;
      add(l.name, {one});
    }
  add("retina/all_depthwise", retina_layers());
  add("mnv2/all_depthwise", mnv2_layers());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
