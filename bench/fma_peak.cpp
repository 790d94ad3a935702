// Measures one core's peak arithmetic throughput: 12 independent FMA chains (enough to cover the FMA
// latency on every current x86 core), for 256-bit and 512-bit vectors, plus int8 dot products (vpdpbusd)
// where the CPU has AVX-512 VNNI. Kernel efficiency in ninegrid's benchmarks is reported against these.
//
//   ninegrid_fma_peak [--json]
#include <immintrin.h>

#include <chrono>
#include <cstdio>
#include <cstring>

namespace {

constexpr long kIters = 20'000'000;

template <class F>
double best_seconds(F&& f) {
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s < best) best = s;
  }
  return best;
}

#define CHAINS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

__attribute__((target("avx2,fma"))) float fma256() {
  __m256 a = _mm256_set1_ps(0.999f), b = _mm256_set1_ps(1e-7f);
#define DECL(i) __m256 c##i = _mm256_set1_ps(float(i));
  CHAINS(DECL)
#undef DECL
  for (long i = 0; i < kIters; ++i) {
#define STEP(i) c##i = _mm256_fmadd_ps(c##i, a, b);
    CHAINS(STEP)
#undef STEP
  }
  __m256 s = _mm256_setzero_ps();
#define SUM(i) s = _mm256_add_ps(s, c##i);
  CHAINS(SUM)
#undef SUM
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0];
}

__attribute__((target("avx512f"))) float fma512() {
  __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(1e-7f);
#define DECL(i) __m512 c##i = _mm512_set1_ps(float(i));
  CHAINS(DECL)
#undef DECL
  for (long i = 0; i < kIters; ++i) {
#define STEP(i) c##i = _mm512_fmadd_ps(c##i, a, b);
    CHAINS(STEP)
#undef STEP
  }
  __m512 s = _mm512_setzero_ps();
#define SUM(i) s = _mm512_add_ps(s, c##i);
  CHAINS(SUM)
#undef SUM
  return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx512f,avx512vnni"))) int vnni512() {
  __m512i a = _mm512_set1_epi8(1), b = _mm512_set1_epi8(2);
#define DECL(i) __m512i c##i = _mm512_set1_epi32(i);
  CHAINS(DECL)
#undef DECL
  for (long i = 0; i < kIters; ++i) {
#define STEP(i) c##i = _mm512_dpbusd_epi32(c##i, a, b);
    CHAINS(STEP)
#undef STEP
  }
  __m512i s = _mm512_setzero_si512();
#define SUM(i) s = _mm512_add_epi32(s, c##i);
  CHAINS(SUM)
#undef SUM
  return _mm512_reduce_add_epi32(s);
}

}  // namespace

int main(int argc, char** argv) {
  bool json = argc > 1 && std::strcmp(argv[1], "--json") == 0;
  __builtin_cpu_init();
  volatile float sink = 0;
  double g256 = 0, g512 = 0, vnni = 0;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    g256 = 12.0 * 8 * 2 * kIters / best_seconds([&] { sink = sink + fma256(); }) / 1e9;
  if (__builtin_cpu_supports("avx512f"))
    g512 = 12.0 * 16 * 2 * kIters / best_seconds([&] { sink = sink + fma512(); }) / 1e9;
  if (__builtin_cpu_supports("avx512vnni"))
    vnni = 12.0 * 64 * 2 * kIters / best_seconds([&] { sink = sink + float(vnni512()); }) / 1e9;
  double best = g512 > g256 ? g512 : g256;
  const char* isa = g512 > g256 ? "avx512f" : "avx2+fma";
  if (json) {
    std::printf("{\"gflops_fp32\": %.2f, \"isa\": \"%s\", \"avx2_gflops\": %.2f, \"avx512_gflops\": %.2f, "
                "\"vnni_int8_gops\": %.2f}\n", best, isa, g256, g512, vnni);
  } else {
    std::printf("fp32 FMA peak, one core: %.1f GFLOP/s (256-bit %.1f, 512-bit %.1f)\n", best, g256, g512);
    if (vnni > 0) std::printf("int8 vpdpbusd peak, one core: %.1f GOP/s\n", vnni);
  }
  return 0;
}
