#include "machine_peak.h"

#include <time.h>
#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace ninegrid {

namespace {

constexpr long kIters = 4'000'000;

double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double now_seconds(PeakClock clock) {
  if (clock == PeakClock::ThreadCpu) return thread_cpu_seconds();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

template <class F>
double best_seconds(F&& f, PeakClock clock = PeakClock::Wall) {
  const int reps = clock == PeakClock::ThreadCpu ? 9 : 3;
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const double t0 = now_seconds(clock);
    f();
    const double s = now_seconds(clock) - t0;
    if (s < best) best = s;
  }
  return best;
}

#define NG_CHAINS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) float fma_loop_256() {
  __m256 a = _mm256_set1_ps(0.999f), b = _mm256_set1_ps(1e-7f);
#define NG_DECL(i) __m256 c##i = _mm256_set1_ps(float(i));
  NG_CHAINS(NG_DECL)
#undef NG_DECL
  for (long i = 0; i < kIters; ++i) {
#define NG_STEP(i) c##i = _mm256_fmadd_ps(c##i, a, b);
    NG_CHAINS(NG_STEP)
#undef NG_STEP
  }
  __m256 s = _mm256_setzero_ps();
#define NG_SUM(i) s = _mm256_add_ps(s, c##i);
  NG_CHAINS(NG_SUM)
#undef NG_SUM
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0];
}

__attribute__((target("avx512f"))) float fma_loop_512() {
  __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(1e-7f);
#define NG_DECL(i) __m512 c##i = _mm512_set1_ps(float(i));
  NG_CHAINS(NG_DECL)
#undef NG_DECL
  for (long i = 0; i < kIters; ++i) {
#define NG_STEP(i) c##i = _mm512_fmadd_ps(c##i, a, b);
    NG_CHAINS(NG_STEP)
#undef NG_STEP
  }
  __m512 s = _mm512_setzero_ps();
#define NG_SUM(i) s = _mm512_add_ps(s, c##i);
  NG_CHAINS(NG_SUM)
#undef NG_SUM
  // The lanes summed through memory: GCC 12's _mm512_reduce_add_ps warns of its own uninitialised temporary.
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, s);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}

__attribute__((target("avx512f,avx512vnni"))) int vnni_loop_512() {
  __m512i a = _mm512_set1_epi8(1), b = _mm512_set1_epi8(2);
#define NG_DECL(i) __m512i c##i = _mm512_set1_epi32(i);
  NG_CHAINS(NG_DECL)
#undef NG_DECL
  for (long i = 0; i < kIters; ++i) {
#define NG_STEP(i) c##i = _mm512_dpbusd_epi32(c##i, a, b);
    NG_CHAINS(NG_STEP)
#undef NG_STEP
  }
  __m512i s = _mm512_setzero_si512();
#define NG_SUM(i) s = _mm512_add_epi32(s, c##i);
  NG_CHAINS(NG_SUM)
#undef NG_SUM
  alignas(64) int32_t lanes[16];  // (as in fma_loop_512)
  _mm512_store_si512(lanes, s);
  int total = 0;
  for (int32_t v : lanes) total += v;
  return total;
}
#endif

#if defined(__aarch64__)
// 128-bit FMLA, the same 12 chains (Cortex-A72: two FP pipes of latency 7 would need 14 to be full; the
// A76 and later, latency 4, 8).
float fma_loop_128() {
  const float32x4_t a = vdupq_n_f32(0.999f), b = vdupq_n_f32(1e-7f);
#define NG_DECL(i) float32x4_t c##i = vdupq_n_f32(float(i));
  NG_CHAINS(NG_DECL)
#undef NG_DECL
  for (long i = 0; i < kIters; ++i) {
#define NG_STEP(i) c##i = vfmaq_f32(b, c##i, a);
    NG_CHAINS(NG_STEP)
#undef NG_STEP
  }
  float32x4_t s = vdupq_n_f32(0.f);
#define NG_SUM(i) s = vaddq_f32(s, c##i);
  NG_CHAINS(NG_SUM)
#undef NG_SUM
  return vaddvq_f32(s);
}
#endif

float scalar_loop() {
  volatile float a = 0.999f, b = 1e-7f;
  float x = a, y = b;
#define NG_DECL(i) float c##i = float(i);
  NG_CHAINS(NG_DECL)
#undef NG_DECL
  for (long i = 0; i < kIters / 8; ++i) {
#define NG_STEP(i) c##i = c##i * x + y;
    NG_CHAINS(NG_STEP)
#undef NG_STEP
  }
  return c0 + c1 + c2 + c3 + c4 + c5 + c6 + c7 + c8 + c9 + c10 + c11;
}

#undef NG_CHAINS

}  // namespace

double measure_fma_peak_gflops(const std::string& isa, PeakClock clock) {
  volatile float sink = 0;
#if defined(__aarch64__)
  // Advanced SIMD is part of every AArch64 core.
  if (isa == "neon" || isa == "dotprod")
    return 12.0 * 4 * 2 * kIters / best_seconds([&] { sink = sink + fma_loop_128(); }, clock) / 1e9;
#endif
#if defined(__x86_64__)
  if (isa == "avx512") {
    if (!__builtin_cpu_supports("avx512f")) throw std::invalid_argument("this CPU has no AVX-512");
    return 12.0 * 16 * 2 * kIters / best_seconds([&] { sink = sink + fma_loop_512(); }, clock) / 1e9;
  }
  if (isa == "avx2") {
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) throw std::invalid_argument("this CPU has no AVX2");
    return 12.0 * 8 * 2 * kIters / best_seconds([&] { sink = sink + fma_loop_256(); }, clock) / 1e9;
  }
#endif
  return 12.0 * 2 * (kIters / 8) / best_seconds([&] { sink = sink + scalar_loop(); }, clock) / 1e9;
}

double measure_vnni_peak_gops(PeakClock clock) {
#if defined(__x86_64__)
  if (!__builtin_cpu_supports("avx512vnni")) return 0;
  volatile int sink = 0;
  return 12.0 * 64 * 2 * kIters / best_seconds([&] { sink = sink + vnni_loop_512(); }, clock) / 1e9;
#else
  return 0;
#endif
}

double measure_memory_bandwidth_gbs() {
  const size_t n = size_t(64) << 20 >> 2;  // 64 MiB of floats per buffer: far beyond the caches
  std::vector<float> src(n, 1.f), dst(n, 0.f);
  double s = best_seconds([&] { std::memcpy(dst.data(), src.data(), n * sizeof(float)); });
  volatile float sink = dst[n / 2];
  (void)sink;
  return 2.0 * n * sizeof(float) / s / 1e9;
}

}  // namespace ninegrid
