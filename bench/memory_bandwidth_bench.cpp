// How much memory bandwidth one core has and how much two (or more) have together: each thread, pinned to
// its own CPU, reads or writes its own buffer of a given size again and again, all threads at once. The
// sizes run from what one core's L2 holds to far beyond the last-level cache, so the table shows where
// a layer that streams its tensors stops scaling with threads: a second core only helps a memory-bound
// layer as far as the total here grows with it.
//
//   ninegrid_memory_bandwidth_bench [--threads 1,2] [--sizes-kib 512,4096,16384,262144] [--reps 7]
//
// Per row: the fastest of `reps` passes for each thread (passes start together at a barrier), in GB/s,
// and their sum. Linux only (threads are pinned with sched affinity).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "cpu_pinning.h"

namespace {

// 64 bytes of floats: GCC lowers this to whatever vectors the target has (AVX-512, AVX2, NEON).
typedef float Vec64 __attribute__((vector_size(64)));

struct Buffer {
  Vec64* data = nullptr;
  size_t vectors = 0;
};

// x86-64: a clone per vector width, chosen at load time, so that the caches' rates are not capped by
// 128-bit loads (the baseline the project compiles for).
#if defined(__x86_64__)
#define NG_WIDEST_VECTORS __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define NG_WIDEST_VECTORS
#endif

// Eight independent sums, so the loads are not serialised behind the adds' latency.
NG_WIDEST_VECTORS float read_all(const Buffer& b) {
  Vec64 s0 = {}, s1 = {}, s2 = {}, s3 = {}, s4 = {}, s5 = {}, s6 = {}, s7 = {};
  for (size_t i = 0; i + 8 <= b.vectors; i += 8) {
    s0 += b.data[i];
    s1 += b.data[i + 1];
    s2 += b.data[i + 2];
    s3 += b.data[i + 3];
    s4 += b.data[i + 4];
    s5 += b.data[i + 5];
    s6 += b.data[i + 6];
    s7 += b.data[i + 7];
  }
  const Vec64 s = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
  float total = 0;
  for (int i = 0; i < 16; ++i) total += s[i];
  return total;
}

NG_WIDEST_VECTORS void write_all(const Buffer& b, float value) {
  Vec64 v;
  for (int i = 0; i < 16; ++i) v[i] = value;
  for (size_t i = 0; i < b.vectors; ++i) b.data[i] = v;
}

// A reusable spin barrier: the passes of all threads start together.
class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void wait() {
    const int gen = generation_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == n_) {
      arrived_.store(0, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_acq_rel);
      return;
    }
    while (generation_.load(std::memory_order_acquire) == gen) std::this_thread::yield();
  }

 private:
  const int n_;
  std::atomic<int> arrived_{0};
  std::atomic<int> generation_{0};
};

std::vector<long> parse_list(const char* s) {
  std::vector<long> out;
  for (const char* p = s; *p;) {
    char* end = nullptr;
    const long v = std::strtol(p, &end, 10);
    if (end == p || v <= 0) {
      std::fprintf(stderr, "memory_bandwidth_bench: bad list '%s'\n", s);
      std::exit(2);
    }
    out.push_back(v);
    p = *end == ',' ? end + 1 : end;
  }
  return out;
}

// GB/s of each thread, the fastest of `reps` passes.
std::vector<double> run(int threads, size_t bytes, bool write, int reps, const std::vector<int>& cpus) {
  std::vector<double> best(static_cast<size_t>(threads), 0.0);
  Barrier barrier(threads);
  std::atomic<float> sink{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      ninegrid::bench::pin_to_cpu(cpus[static_cast<size_t>(t) % cpus.size()]);
      Buffer b;
      b.vectors = bytes / sizeof(Vec64);
      b.data = static_cast<Vec64*>(std::aligned_alloc(64, b.vectors * sizeof(Vec64)));
      write_all(b, 1.f);  // touched by the thread that uses it (first-touch placement)
      float local = 0;
      for (int r = 0; r < reps; ++r) {
        barrier.wait();
        const auto t0 = std::chrono::steady_clock::now();
        if (write)
          write_all(b, float(r));
        else
          local += read_all(b);
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        best[static_cast<size_t>(t)] = std::max(best[static_cast<size_t>(t)], double(bytes) / s / 1e9);
      }
      sink.store(local + b.data[0][0], std::memory_order_relaxed);
      std::free(b.data);
    });
  }
  for (auto& th : pool) th.join();
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<long> threads = {1, 2}, sizes_kib = {512, 4096, 16384, 262144};
  long reps = 7;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc)
      threads = parse_list(argv[++i]);
    else if (a == "--sizes-kib" && i + 1 < argc)
      sizes_kib = parse_list(argv[++i]);
    else if (a == "--reps" && i + 1 < argc)
      reps = parse_list(argv[++i]).front();
    else {
      std::fprintf(stderr, "usage: ninegrid_memory_bandwidth_bench [--threads 1,2] [--sizes-kib 512,4096,...] [--reps 7]\n");
      return a == "-h" || a == "--help" ? 0 : 2;
    }
  }
  const std::vector<int> cpus = ninegrid::bench::allowed_cpus();
  if (cpus.empty()) {
    std::fprintf(stderr, "memory_bandwidth_bench: no CPU in this process's affinity mask\n");
    return 1;
  }
  std::printf("| buffer per thread | threads | op | GB/s per thread | total GB/s |\n| ---: | ---: | --- | --- | ---: |\n");
  for (long kib : sizes_kib) {
    for (bool write : {false, true}) {
      for (long t : threads) {
        if (t > static_cast<long>(cpus.size())) continue;
        const std::vector<double> gbs = run(static_cast<int>(t), size_t(kib) << 10, write, static_cast<int>(reps), cpus);
        std::string each;
        double total = 0;
        for (double g : gbs) {
          char s[32];
          std::snprintf(s, sizeof(s), "%s%.1f", each.empty() ? "" : ", ", g);
          each += s;
          total += g;
        }
        std::printf("| %ld KiB | %ld | %s | %s | %.1f |\n", kib, t, write ? "write" : "read", each.c_str(), total);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
