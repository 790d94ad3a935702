// Prints one core's measured peaks (the roofs kernel efficiency is judged against): fp32 FMA with 256-
// and 512-bit vectors, int8 vpdpbusd where the CPU has AVX-512 VNNI, and streaming memory bandwidth.
//
//   ninegrid_fma_peak [--json]
#include <cstdio>
#include <cstring>

#include "machine_peak.h"

int main(int argc, char** argv) {
  using namespace ninegrid;
  const bool json = argc > 1 && std::strcmp(argv[1], "--json") == 0;
#if defined(__x86_64__)
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const double g256 = avx2 ? measure_fma_peak_gflops("avx2") : 0;
  const double g512 = __builtin_cpu_supports("avx512f") ? measure_fma_peak_gflops("avx512") : 0;
  const double best = g512 > g256 ? g512 : g256;
  const char* isa = g512 > g256 ? "avx512f" : "avx2+fma";
#else
  // AArch64: 128-bit FMLA, reported in the 256-bit column's place.
  const double g256 = measure_fma_peak_gflops("neon"), g512 = 0;
  const double best = g256;
  const char* isa = "neon";
#endif
  const double vnni = measure_vnni_peak_gops();
  const double bw = measure_memory_bandwidth_gbs();
  if (json) {
    std::printf("{\"gflops_fp32\": %.2f, \"isa\": \"%s\", \"avx2_gflops\": %.2f, \"avx512_gflops\": %.2f, "
                "\"vnni_int8_gops\": %.2f, \"bandwidth_gbs\": %.2f}\n", best, isa, g256, g512, vnni, bw);
  } else {
    std::printf("fp32 FMA peak, one core: %.1f GFLOP/s (256-bit %.1f, 512-bit %.1f)\n", best, g256, g512);
    if (vnni > 0) std::printf("int8 vpdpbusd peak, one core: %.1f GOP/s\n", vnni);
    std::printf("memory bandwidth, one core: %.1f GB/s\n", bw);
  }
  return 0;
}
