#include "ops/conv_cost_model.h"

#include <algorithm>

#include "kernels/pack_weights.h"
#include "kernels/ref/winograd_ref.h"
#include "ops/conv_winograd.h"

namespace ninegrid {

namespace {

// ======== Winograd ========

// ---- Cost model (one image, one thread), for the choice of tile and of Winograd over direct ----
// Only ratios matter for the choices, so the model is good enough if it orders the options right. Its
// constants are measured per kind of core (WinogradCore), because the two kinds it was fitted on order
// the tiles differently: where 512-bit FMAs run at half rate the GEMM weighs more against the streaming
// of the transformed weights, so the larger tile's fewer multiplications pay on smaller planes.
struct CoreCosts {
  double gemm_macs_per_second;        // the register-blocked GEMM, AVX-512
  double near_bandwidth;              // transformed weights of at most near_bytes (cache)
  double far_bandwidth;               // larger ones, from memory in a model run
  int64_t near_bytes;
  // Far weights: true when their streaming overlaps the GEMM (time = the larger of the two), false when
  // only half the GEMM hides it (time = stream + GEMM / 2).
  bool far_overlaps_gemm;
  double input_ns[3], output_ns[3];   // transforms per tile per 16-channel vector, F(2x2), F(4x4), F(6x6)
  double avx2_slowdown;               // AVX2 Winograd time / AVX-512's
  double direct_flops_avx512, direct_flops_avx2;  // the direct 3x3 conv from 14x14 planes up
  double direct_efficiency_7x7;       // its rate on a 7x7 plane relative to that (linear in between)
};

// Fitted on a Xeon core with full-rate 512-bit FMAs and a 2 MiB L2, to per-phase timings
// (bench/winograd_bench.cpp, since renamed conv_algorithms_bench) and to ResNet-18 in a model run (ninegrid
// profile). In a model run the 14x14 and 7x7 layers' transformed weights come from memory, so there F(2x2)'s
// smaller weights beat F(4x4) although F(4x4) is the faster with warm caches; the direct conv's rates are
// shares of the core's FMA peak, lower on 7x7 planes. The timings the constants were fitted to:
// bench/REPORT.md, "Design decisions and their measurements".
constexpr CoreCosts kFullRate512Costs = {75e9, 30e9, 14e9, 4 << 20, false, {29, 79, 240}, {16, 48, 143},
                                         1.6, 0.7 * 225e9, 0.7 * 112e9, 0.4 / 0.7};

// Fitted on a Zen 4 core (512-bit FMAs at half rate, so the same peak at either width; 1 MiB L2, 32 MiB
// L3) to ninegrid_conv_algorithms_bench and to ResNet-18 in a model run (ninegrid profile, alternating the
// two tiles). The GEMM is slow enough there that F(4x4)'s larger weights stream while it runs
// (far_overlaps_gemm), so F(4x4) wins at 256 channels on 14x14; at 512 channels on 7x7 the two tiles ran
// about even, and the model charges F(4x4)'s weights (36 positions against F(2x2)'s 16) at memory speed
// so that F(2x2) keeps the memory. The AVX2 slowdown and the direct conv's rates (in a model, lower on
// 7x7 planes) are measured on the same core. The timings the constants were fitted to: bench/REPORT.md,
// "Design decisions and their measurements".
constexpr CoreCosts kHalfRate512Costs = {48e9, 40e9, 22e9, 4 << 20, true, {29, 79, 240}, {16, 48, 143},
                                         1.25, 100e9, 90e9, 0.85};

const CoreCosts& costs_of(WinogradCore core) {
  return core == WinogradCore::HalfRate512 ? kHalfRate512Costs : kFullRate512Costs;
}

double weight_stream_seconds(const CoreCosts& k, double bytes_per_pass, double passes) {
  return bytes_per_pass * passes / (bytes_per_pass <= k.near_bytes ? k.near_bandwidth : k.far_bandwidth);
}

double winograd_seconds(const CoreCosts& k, const Conv2dParams& p, int m, const WinogradVectors& vectors) {
  const double icp = double(round_up_to_block(p.in_channels, vectors.lanes));
  const double ocp = double(round_up_to_block(p.out_channels, vectors.lanes));
  const double positions = double((m + 2) * (m + 2));
  const WinogradChunks c = winograd_chunks(p, m, vectors);
  // Wide register tiles of fewer than 12 rows issue fewer FMAs per load.
  const int64_t rows_max = vectors.tile_rows;
  const int64_t blocks = (c.chunk_tiles + rows_max - 1) / rows_max;
  const double rows = double(c.chunk_tiles) / double(blocks);
  // (The tall tile issues one broadcast per FMA: its penalty is a measured slowdown, bench/REPORT.md,
  // "Design decisions and their measurements".)
  const double row_penalty = c.chunk_tiles <= vectors.tall_rows
                                 ? 1.15
                                 : 1.0 + 0.5 * (double(rows_max) - rows) / double(rows_max);
  const double gemm = positions * double(c.tiles) * icp * ocp / k.gemm_macs_per_second * row_penalty;
  const double weight_bytes = positions * icp * ocp * sizeof(float);
  const double stream = weight_stream_seconds(k, weight_bytes, double(c.chunks));
  const int which = m == 2 ? 0 : m == 4 ? 1 : 2;
  const double transforms = double(c.tiles) * (icp * k.input_ns[which] + ocp * k.output_ns[which]) / 16 * 1e-9;
  // Weights that fit the caches stream while the GEMM runs; larger ones come from memory in a real model
  // run (the layers in between evict them).
  const bool overlapped = weight_bytes <= k.near_bytes || k.far_overlaps_gemm;
  const double seconds = (overlapped ? std::max(gemm, stream) : stream + 0.5 * gemm) + transforms;
  return vectors.wide ? seconds : seconds * k.avx2_slowdown;
}

double direct_seconds(const CoreCosts& k, const Conv2dParams& p, bool wide) {
  // The direct kernel's rate falls on small planes (short rows, mostly border tiles).
  const double plane = double(p.out_h * p.out_w);
  const double small = k.direct_efficiency_7x7;
  const double efficiency = plane >= 196 ? 1.0 : plane <= 49 ? small : small + (1.0 - small) * (plane - 49) / 147;
  const double flops = 2.0 * double(p.macs()) / double(p.batch) / efficiency;
  const double weights = double(p.out_channels * p.in_channels * 9 * sizeof(float));
  return std::max(flops / (wide ? k.direct_flops_avx512 : k.direct_flops_avx2), weight_stream_seconds(k, weights, 1));
}

// F(4x4) or F(2x2). F(6x6) is left out of the automatic choice. On a core with full-rate 512-bit FMAs
// (the Xeon the model was fitted on) it was never faster than F(4x4) beyond the noise and clearly slower
// on 28x28 and 112x112 planes. On a Zen 4 core, whose 512-bit FMAs run at half rate so that the GEMM
// F(6x6) shrinks weighs more, it is faster on layers of at most 64 channels on planes from 40x40, but it
// rounds worse: ResNet-50 with F(6x6) in its 64-channel 56x56 layers drifts from the unoptimised run past
// the 1e-5 of the output range that the optimiser tests allowed, where F(4x4) stayed within it on x86-64
// (at 0.98 of it; 1.04 under the emulated Cortex-A72, so that test now runs F(2x2): bench/REPORT.md,
// "ResNet-50's optimised graph against the unoptimised one").
// Forcing tile 6 (ExecSettings::winograd_tile) trades that accuracy for the speed. Measured:
// bench/REPORT.md, "Design decisions and their measurements".
int best_tile(const CoreCosts& k, const Conv2dParams& p, const WinogradVectors& vectors, double* seconds) {
  const double four = winograd_seconds(k, p, 4, vectors), two = winograd_seconds(k, p, 2, vectors);
  if (seconds) *seconds = std::min(four, two);
  return two < four ? 2 : 4;
}


// ======== Strassen ========

// ---- Cost model ----
// One level saves a half-size product: (M/2)(K/2)(N/2) multiply-adds. It costs the X-side sums (5 sums
// of (K/2)(N/2): 2 reads and a write each) and 8 more read-modify-writes of output quadrants
// ((M/2)(N/2) each) than a plain GEMM's 4 quadrant writes. With the GEMM's rate per core and the extra
// traffic's streaming rate below (it mostly misses L2 on the layers concerned; where these estimates come
// from: bench/REPORT.md, "Design decisions and their measurements"), recursion pays when the time saved
// exceeds the time added. As in MNN, this favours large channel counts: about ic, oc >= 512 at 14x14,
// >= 256 at 28x28 and above.
constexpr double kGemmMacsPerSecondAvx512 = 80e9, kGemmMacsPerSecondAvx2 = 40e9;
constexpr double kExtraBytesPerSecond = 20e9;

}  // namespace

WinogradCore this_winograd_core() {
  // Every AMD core with AVX-512 so far but Zen 5's desktop parts runs 512-bit FMAs at half rate.
  return cpu_features().amd ? WinogradCore::HalfRate512 : WinogradCore::FullRate512;
}

int winograd_default_tile(const Conv2dParams& p, Isa isa, WinogradCore core) {
  // (Isa::Ref, for which no kernel runs, takes AVX-512's model, as it always has.)
  const Isa e = runnable_isa(isa);
  return best_tile(costs_of(core), p, winograd_vectors(e == Isa::Ref ? Isa::Avx512 : e), nullptr);
}

double winograd_estimated_speedup(const Conv2dParams& p, Isa isa, WinogradCore core) {
  if (!winograd_applicable(p) || runnable_isa(isa) == Isa::Ref) return 0.0;
  const WinogradVectors vectors = winograd_vectors(runnable_isa(isa));
  const CoreCosts& k = costs_of(core);
  double seconds = 0;
  best_tile(k, p, vectors, &seconds);
  return direct_seconds(k, p, vectors.wide) / seconds;
}

double strassen_estimated_saving(const Conv2dParams& p, Isa isa) {
  const double m = double(p.out_channels) / 2, k = double(p.in_channels) / 2, n = double(p.in_h * p.in_w) / 2;
  const double rate = runnable_isa(isa) == Isa::Avx512 ? kGemmMacsPerSecondAvx512 : kGemmMacsPerSecondAvx2;
  const double saved = m * k * n / rate;
  const double added = 4.0 * (15 * k * n + 16 * m * n) / kExtraBytesPerSecond;
  return (saved - added) / (8 * saved);
}

bool strassen_recursion_pays(const Conv2dParams& p, Isa isa) {
  const double m = double(p.out_channels) / 2, k = double(p.in_channels) / 2, n = double(p.in_h * p.in_w) / 2;
  const double rate = runnable_isa(isa) == Isa::Avx512 ? kGemmMacsPerSecondAvx512 : kGemmMacsPerSecondAvx2;
  const double saved = m * k * n / rate;
  const double added = 4.0 * (15 * k * n + 16 * m * n) / kExtraBytesPerSecond;
  return saved > added;
}

}  // namespace ninegrid
