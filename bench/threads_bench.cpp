// The engine's thread pool (core/thread_pool.h) against OpenMP (GCC's libgomp) on the same partitioning
// (DESIGN.md technique 10: "it must beat OpenMP's fork/join overhead on small layers"). OpenMP is used
// here only, never in the engine.
//
//   empty      a parallel region that does nothing: parallel_for over one chunk per thread, against
//              `#pragma omp parallel for schedule(static)` over the same chunks (and a bare
//              `#pragma omp parallel`), back to back; the time per region is the fork/join overhead;
//   layers     the engine's typical small layers (RetinaFace's and MobileNetV2's depthwise and pointwise
//              convs at small planes), each run as the conv driver splits it: the same tasks (output
//              channel blocks x row chunks) given to parallel_for or to an OpenMP static loop, the same
//              AVX-512 (else AVX2) kernels on the same prepacked weights.
//
//   ninegrid_threads_bench [--threads N] [--seconds S] [--json]
//
// Prints microseconds per region / per layer, median of repeated timing windows.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "kernels/pack_weights.h"
#include "kernels/x86/conv_kernels_x86.h"

namespace ninegrid {
namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Microseconds per call of fn: windows of `per_window` calls, median over windows, for about `seconds`.
double time_us(const std::function<void()>& fn, int per_window, double seconds) {
  for (int i = 0; i < per_window; ++i) fn();  // warm up (threads created, caches filled)
  std::vector<double> windows;
  const auto start = Clock::now();
  while (windows.size() < 5 || std::chrono::duration<double>(Clock::now() - start).count() < seconds) {
    const auto t0 = Clock::now();
    for (int i = 0; i < per_window; ++i) fn();
    windows.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / per_window);
    if (windows.size() > 2000) break;
  }
  return median(windows);
}

// One small conv layer with everything prepared for the kernels.
struct Layer {
  const char* name;
  int64_t channels_in, channels_out, hw, kernel, stride;
  bool depthwise;
};

struct Prepared {
  X86ConvArgs args;
  AlignedFloats weights, bias;
  std::vector<float> x, y;
  int64_t blocks = 0;
  void (*kernel)(const X86ConvArgs&, const X86ConvRange&) = nullptr;
};

Prepared prepare(const Layer& l, bool avx512) {
  Prepared p;
  const int64_t lanes = avx512 ? 16 : 8;
  const int64_t out_hw = (l.hw + 2 * (l.kernel / 2) - l.kernel) / l.stride + 1;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  const int64_t in_per_group = l.depthwise ? 1 : l.channels_in;
  std::vector<float> w(static_cast<size_t>(l.channels_out * in_per_group * l.kernel * l.kernel));
  for (float& v : w) v = u(rng);
  p.weights = l.depthwise ? pack_depthwise_weights(w.data(), l.channels_out, l.kernel, l.kernel, lanes)
                          : pack_conv_weights(w.data(), l.channels_out, in_per_group, l.kernel, l.kernel, lanes);
  p.bias = pad_per_channel(nullptr, l.channels_out, lanes);
  p.x.resize(static_cast<size_t>(l.channels_in * l.hw * l.hw));
  for (float& v : p.x) v = u(rng);
  p.y.resize(static_cast<size_t>(l.channels_out * out_hw * out_hw));
  X86ConvArgs& a = p.args;
  a.in_channels = l.channels_in, a.in_h = a.in_w = l.hw;
  a.out_channels = l.channels_out, a.out_h = a.out_w = out_hw;
  a.groups = l.depthwise ? l.channels_in : 1;
  a.in_channels_per_group = in_per_group;
  a.out_channels_per_group = l.depthwise ? 1 : l.channels_out;
  a.kernel_h = a.kernel_w = l.kernel;
  a.stride_h = a.stride_w = l.stride;
  a.pad_top = a.pad_left = l.kernel / 2;
  a.in_block = a.out_block = lanes;
  a.weights = p.weights.data();
  a.bias = p.bias.data();
  a.activation = ActivationKind::Relu;
  a.x = p.x.data();
  a.y = p.y.data();
  p.blocks = l.channels_out / lanes;
  const bool pointwise = l.kernel == 1 && l.stride == 1;
  if (avx512)
    p.kernel = l.depthwise ? avx512::conv2d_depthwise : pointwise ? avx512::conv2d_pointwise : avx512::conv2d_direct;
  else
    p.kernel = l.depthwise ? avx2::conv2d_depthwise : pointwise ? avx2::conv2d_pointwise : avx2::conv2d_direct;
  return p;
}

}  // namespace
}  // namespace ninegrid

int main(int argc, char** argv) {
  using namespace ninegrid;
  int threads = 2;
  double seconds = 0.5;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--json")) json = true;
    else {
      std::fprintf(stderr, "usage: %s [--threads N] [--seconds S] [--json]\n", argv[0]);
      return 2;
    }
  }
  if (threads < 2) threads = 2;
  omp_set_num_threads(threads);
  ThreadPool pool(threads);
  const bool avx512 = hardware_isa() == Isa::Avx512;
  if (hardware_isa() != Isa::Avx512 && hardware_isa() != Isa::Avx2) {
    std::fprintf(stderr, "needs AVX2 or AVX-512\n");
    return 1;
  }

  // ---- Empty parallel regions ----
  volatile int64_t sink = 0;
  const int64_t chunks = threads;
  const double ours_empty = time_us([&] { pool.parallel_for(chunks, [&](int64_t b, int64_t e) { sink = sink + (e - b); }); },
                                    2000, seconds);
  const double omp_for_empty = time_us(
      [&] {
#pragma omp parallel for schedule(static)
        for (int64_t t = 0; t < chunks; ++t) sink = sink + 1;
      },
      2000, seconds);
  const double omp_region_empty = time_us(
      [&] {
#pragma omp parallel
        { sink = sink + 1; }
      },
      2000, seconds);
  const double serial_empty = time_us([&] { sink = sink + 1; }, 2000, seconds / 4);

  // ---- Small layers, the driver's split: tasks of (output block pair, chunk of rows) ----
  const Layer layers[] = {
      {"retinaface dw3x3 s1 256@20x20", 256, 256, 20, 3, 1, true},
      {"retinaface dw3x3 s2 128@40x40", 128, 128, 40, 3, 2, true},
      {"retinaface pw 64->128 @40x40", 64, 128, 40, 1, 1, false},
      {"retinaface pw 256->256 @20x20", 256, 256, 20, 1, 1, false},
      {"mobilenetv2 pw 96->32 @56x56", 96, 32, 56, 1, 1, false},
      {"mobilenetv2 dw3x3 s1 576@14x14", 576, 576, 14, 3, 1, true},
      {"mobilenetv2 pw 960->320 @7x7", 960, 320, 7, 1, 1, false},
      {"resnet 3x3 64->64 @14x14", 64, 64, 14, 3, 1, false},
  };
  struct Row {
    std::string name;
    double serial, ours, omp;
    int64_t tasks;
  };
  std::vector<Row> rows;
  for (const Layer& l : layers) {
    Prepared p = prepare(l, avx512);
    const int64_t tile = l.depthwise ? 1 : 2;  // the kernels' output blocks per register tile
    const int64_t groups = (p.blocks + tile - 1) / tile;
    const int64_t wanted = 4 * static_cast<int64_t>(threads);
    const int64_t out_h = p.args.out_h;
    const int64_t row_chunks = std::min<int64_t>(out_h, std::max<int64_t>(1, (wanted + groups - 1) / groups));
    const int64_t tasks = groups * row_chunks;
    auto task = [&](int64_t t) {
      X86ConvRange r;
      const int64_t group = t % groups, chunk = t / groups;
      r.oc_block_begin = group * tile;
      r.oc_block_end = std::min(p.blocks, r.oc_block_begin + tile);
      r.row_begin = out_h * chunk / row_chunks;
      r.row_end = out_h * (chunk + 1) / row_chunks;
      p.kernel(p.args, r);
    };
    Row row;
    row.name = l.name;
    row.tasks = tasks;
    row.serial = time_us([&] { p.kernel(p.args, X86ConvRange{0, p.blocks, 0, out_h}); }, 20, seconds);
    row.ours = time_us(
        [&] {
          pool.parallel_for(tasks, [&](int64_t b, int64_t e) {
            for (int64_t t = b; t < e; ++t) task(t);
          });
        },
        20, seconds);
    row.omp = time_us(
        [&] {
#pragma omp parallel for schedule(static)
          for (int64_t t = 0; t < tasks; ++t) task(t);
        },
        20, seconds);
    rows.push_back(row);
  }

  if (json) {
    std::printf("{\"threads\": %d, \"isa\": \"%s\", \"empty_us\": {\"ours\": %.3f, \"omp_for\": %.3f, \"omp_parallel\": %.3f, "
                "\"serial_call\": %.4f}, \"layers\": [",
                threads, isa_name(hardware_isa()), ours_empty, omp_for_empty, omp_region_empty, serial_empty);
    for (size_t i = 0; i < rows.size(); ++i)
      std::printf("%s{\"layer\": \"%s\", \"tasks\": %lld, \"serial_us\": %.2f, \"ours_us\": %.2f, \"omp_us\": %.2f}",
                  i ? ", " : "", rows[i].name.c_str(), static_cast<long long>(rows[i].tasks), rows[i].serial,
                  rows[i].ours, rows[i].omp);
    std::printf("]}\n");
    return 0;
  }
  std::printf("threads %d, %s kernels\n\n", threads, isa_name(hardware_isa()));
  std::printf("empty parallel region (us):  ours %.3f   omp parallel for %.3f   omp parallel %.3f   (plain call %.4f)\n\n",
              ours_empty, omp_for_empty, omp_region_empty, serial_empty);
  std::printf("%-34s %6s %11s %11s %11s %9s\n", "layer (same tasks both ways)", "tasks", "1 thread us", "ours us",
              "OpenMP us", "omp/ours");
  for (const Row& r : rows)
    std::printf("%-34s %6lld %11.2f %11.2f %11.2f %9.2f\n", r.name.c_str(), static_cast<long long>(r.tasks), r.serial,
                r.ours, r.omp, r.omp / r.ours);
  return 0;
}
