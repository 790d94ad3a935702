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
//              AVX-512 (else AVX2) kernels on the same prepacked weights;
//   handoff    the same layers on the engine's pool, the input freshly written before each run as a layer
//              before it would leave it: each band of input rows by the thread that then reads it (its own
//              caches) or by another thread (the lines move between cores). Where two cores share no
//              cache level the second costs what a read from memory does;
//   bandwidth  the raw rate of that handoff: one thread pinned to one CPU reads a buffer just written by a
//              thread pinned to another CPU, against the same buffer written by the reader itself, at sizes
//              from L2 to beyond it (GB/s, the best of several passes).
//
//   ninegrid_threads_bench [--threads N] [--seconds S] [--json]
//
// Prints microseconds per region / per layer, median of repeated timing windows.
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "kernels/pack_weights.h"
#include "kernels/x86/conv_kernels_x86.h"
#include "cpu_pinning.h"

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

// Microseconds of run() alone, median over calls each preceded by setup() (untimed), for about `seconds`.
double time_after_us(const std::function<void()>& setup, const std::function<void()>& run, double seconds) {
  std::vector<double> calls;
  const auto start = Clock::now();
  while (calls.size() < 20 || std::chrono::duration<double>(Clock::now() - start).count() < seconds) {
    setup();
    const auto t0 = Clock::now();
    run();
    calls.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    if (calls.size() > 20000) break;
  }
  return median(calls);
}

// Sums 64-bit words with four independent 256-bit sums, so that loads are the limit (the AVX2 kernels' reach).
__attribute__((target("avx2"))) uint64_t sum_words_avx2(const uint64_t* p, size_t n) {
  __m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    s0 = _mm256_add_epi64(s0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)));
    s1 = _mm256_add_epi64(s1, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 4)));
    s2 = _mm256_add_epi64(s2, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 8)));
    s3 = _mm256_add_epi64(s3, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 12)));
  }
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), _mm256_add_epi64(_mm256_add_epi64(s0, s1), _mm256_add_epi64(s2, s3)));
  uint64_t sum = lanes[0] + lanes[1] + lanes[2] + lanes[3];
  for (; i < n; ++i) sum += p[i];
  return sum;
}

volatile uint64_t g_sum_sink;

// Read rate (GB/s, best of `passes`) of `bytes` on CPU `reader` right after they were written on CPU `writer`
// (each by a thread pinned there). 0 if either CPU cannot be used.
double handoff_read_gbs(int writer, int reader, size_t bytes, int passes) {
  std::vector<uint64_t> buf(bytes / sizeof(uint64_t));
  double best = 0;
  bool pinned = true;
  for (int pass = 0; pass < passes && pinned; ++pass) {
    std::thread w([&] {
      pinned = bench::pin_to_cpu(writer) && pinned;
      for (size_t i = 0; i < buf.size(); ++i) buf[i] = i + static_cast<size_t>(pass);
    });
    w.join();
    double seconds = 0;
    uint64_t sum = 0;
    std::thread r([&] {
      pinned = bench::pin_to_cpu(reader) && pinned;
      const auto t0 = Clock::now();
      sum = sum_words_avx2(buf.data(), buf.size());
      seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    });
    r.join();
    g_sum_sink = sum;  // the sum is used, so the reads stay
    best = std::max(best, static_cast<double>(bytes) / seconds * 1e-9);
  }
  return pinned ? best : 0;
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
    double fresh_own = 0, fresh_other = 0;  // the pool's run after the input was written by its reader / by another thread
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
    // The pool gives chunk k of a loop to thread k when all are running, so the kernel's thread k reads
    // about the k-th band of input rows (rows are the tasks' outer index). Write band b by thread
    // (b + shift) % threads: shift 0 is the reader itself, shift 1 another core.
    const int64_t row_floats = l.hw * p.args.in_block;
    const int64_t in_blocks = static_cast<int64_t>(p.x.size()) / (l.hw * row_floats);
    float stamp = 0;
    auto write_input = [&](int shift) {
      stamp += 1e-6f;
      pool.parallel_for(threads, [&](int64_t b, int64_t e) {
        for (int64_t k = b; k < e; ++k) {
          const int64_t band = (k + threads - shift) % threads;
          const int64_t r0 = l.hw * band / threads, r1 = l.hw * (band + 1) / threads;
          for (int64_t cb = 0; cb < in_blocks; ++cb) {
            float* row = p.x.data() + (cb * l.hw + r0) * row_floats;
            for (int64_t i = 0; i < (r1 - r0) * row_floats; ++i) row[i] = stamp;
          }
        }
      });
    };
    auto run_pool = [&] {
      pool.parallel_for(tasks, [&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) task(t);
      });
    };
    row.fresh_own = time_after_us([&] { write_input(0); }, run_pool, seconds);
    row.fresh_other = time_after_us([&] { write_input(1); }, run_pool, seconds);
    rows.push_back(row);
  }

  // ---- Handoff bandwidth between the first two CPUs this process may use ----
  const std::vector<int> cpus = bench::allowed_cpus(2);
  struct Handoff {
    size_t kib;
    double own, other;
  };
  std::vector<Handoff> handoffs;
  if (cpus.size() == 2)
    for (size_t kib : {256, 2048, 8192})
      handoffs.push_back({kib, handoff_read_gbs(cpus[0], cpus[0], kib << 10, 9), handoff_read_gbs(cpus[1], cpus[0], kib << 10, 9)});

  if (json) {
    std::printf("{\"threads\": %d, \"isa\": \"%s\", \"empty_us\": {\"ours\": %.3f, \"omp_for\": %.3f, \"omp_parallel\": %.3f, "
                "\"serial_call\": %.4f}, \"layers\": [",
                threads, isa_name(hardware_isa()), ours_empty, omp_for_empty, omp_region_empty, serial_empty);
    for (size_t i = 0; i < rows.size(); ++i)
      std::printf("%s{\"layer\": \"%s\", \"tasks\": %lld, \"serial_us\": %.2f, \"ours_us\": %.2f, \"omp_us\": %.2f, "
                  "\"fresh_own_us\": %.2f, \"fresh_other_us\": %.2f}",
                  i ? ", " : "", rows[i].name.c_str(), static_cast<long long>(rows[i].tasks), rows[i].serial,
                  rows[i].ours, rows[i].omp, rows[i].fresh_own, rows[i].fresh_other);
    std::printf("], \"handoff_read_gbs\": [");
    for (size_t i = 0; i < handoffs.size(); ++i)
      std::printf("%s{\"kib\": %zu, \"written_by_reader\": %.1f, \"written_by_other_cpu\": %.1f}", i ? ", " : "",
                  handoffs[i].kib, handoffs[i].own, handoffs[i].other);
    std::printf("]}\n");
    return 0;
  }
  std::printf("threads %d, %s kernels\n\n", threads, isa_name(hardware_isa()));
  std::printf("empty parallel region (us):  ours %.3f   omp parallel for %.3f   omp parallel %.3f   (plain call %.4f)\n\n",
              ours_empty, omp_for_empty, omp_region_empty, serial_empty);
  std::printf("%-34s %6s %11s %11s %11s %9s %11s %11s\n", "layer (same tasks both ways)", "tasks", "1 thread us",
              "ours us", "OpenMP us", "omp/ours", "fresh own", "fresh other");
  for (const Row& r : rows)
    std::printf("%-34s %6lld %11.2f %11.2f %11.2f %9.2f %11.2f %11.2f\n", r.name.c_str(), static_cast<long long>(r.tasks),
                r.serial, r.ours, r.omp, r.omp / r.ours, r.fresh_own, r.fresh_other);
  std::printf("\n(fresh own / other: the pool's run right after its input rows were written by the thread that reads\n"
              " them / by another thread, as a previous layer split differently would leave them)\n");
  if (!handoffs.empty()) {
    std::printf("\nreading a buffer on CPU %d (GB/s)   written there   written on CPU %d\n", cpus[0], cpus[1]);
    for (const Handoff& h : handoffs) std::printf("%8zu KiB %30.1f %17.1f\n", h.kib, h.own, h.other);
  }
  return 0;
}
