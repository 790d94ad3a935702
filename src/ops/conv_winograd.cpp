#include "ops/conv_winograd.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/ref/winograd_ref.h"
#include "kernels/x86/winograd_x86.h"
#include "ninegrid/tensor.h"
#include "core/thread_pool.h"
#include "core/thread_scratch.h"

namespace ninegrid {

namespace {

// Scratch (v and mm of one chunk of tiles) is sized to stay in the core's L2 cache together with the
// weights of one transform position, so the three phases of a chunk hand their data over in cache.
constexpr int64_t kChunkBytes = 1 << 20;
constexpr int64_t kCacheLineFloats = 16;

// The best vector ISA this CPU runs, capped by `isa` (never above the hardware, whatever is asked).
Isa effective_isa(Isa isa) { return runnable_isa(isa); }

// The register tiles of an ISA's kernels (kernels/x86/winograd_x86.h). `wide`: AVX-512's 16 lanes, which
// the cost model's constants below describe; the narrower vectors (AVX2's, NEON's) take its AVX2
// figures (on Arm a guess: no Arm core was measured).
struct WinogradVectors {
  int64_t lanes, tile_rows, tall_rows, oc_vectors;
  bool wide;
};

WinogradVectors vectors_of(Isa isa) {
  if (isa == Isa::Avx512)
    return {16, avx512::kWinogradTileRows, avx512::kWinogradTallRows, avx512::kWinogradOcVectors, true};
  if (is_arm_isa(isa)) return {4, neon::kWinogradTileRows, neon::kWinogradTallRows, neon::kWinogradOcVectors, false};
  return {8, avx2::kWinogradTileRows, avx2::kWinogradTallRows, avx2::kWinogradOcVectors, false};
}


struct ChunkPlan {
  int64_t tiles = 0;        // tiles of one image
  int64_t chunk_tiles = 0;  // tiles per chunk
  int64_t chunks = 0;
};

// The transformed weights stream through once per chunk, the chunk's scratch (v and mm) is best kept in
// L2: chunks get a scratch budget of half the weights' size, clamped to [kChunkBytes, 4 kChunkBytes]
// (large weights: fewer passes over them matter more than a scratch that spills to L3), never fewer
// tiles than a tall register tile, and are split evenly.
ChunkPlan plan_chunks(const Conv2dParams& p, int m, const WinogradVectors& vectors) {
  const int64_t lanes = vectors.lanes;
  const int64_t positions = int64_t(m + 2) * (m + 2);
  const int64_t icp = round_up_to_block(p.in_channels, lanes), ocp = round_up_to_block(p.out_channels, lanes);
  const int64_t per_tile_bytes = positions * (icp + ocp) * int64_t(sizeof(float));
  const int64_t weight_bytes = positions * icp * ocp * int64_t(sizeof(float));
  const int64_t budget = std::min(4 * kChunkBytes, std::max(kChunkBytes, weight_bytes / 2));
  const int64_t tall_rows = vectors.tall_rows;
  ChunkPlan c;
  c.tiles = ((p.out_h + m - 1) / m) * ((p.out_w + m - 1) / m);
  const int64_t most = std::max(tall_rows, budget / per_tile_bytes);
  c.chunks = (c.tiles + most - 1) / most;
  c.chunk_tiles = (c.tiles + c.chunks - 1) / c.chunks;
  return c;
}

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
  const ChunkPlan c = plan_chunks(p, m, vectors);
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
// the 1e-5 of the output range that the optimiser tests allow, where F(4x4) stays within it.
// Forcing tile 6 (ExecSettings::winograd_tile) trades that accuracy for the speed. Measured:
// bench/REPORT.md, "Design decisions and their measurements".
int best_tile(const CoreCosts& k, const Conv2dParams& p, const WinogradVectors& vectors, double* seconds) {
  const double four = winograd_seconds(k, p, 4, vectors), two = winograd_seconds(k, p, 2, vectors);
  if (seconds) *seconds = std::min(four, two);
  return two < four ? 2 : 4;
}

}  // namespace

bool WinogradConv2d::applicable(const Conv2dParams& p) { return winograd_applicable(p); }

bool WinogradConv2d::supports(const Conv2dParams& p) {
  return applicable(p) && p.in_channels >= 16 && p.out_channels >= 16;
}

bool WinogradConv2d::supports(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa) {
  return supports(p) && is_kernel_channel_block(in_block, p.in_channels) && is_kernel_channel_block(out_block, p.out_channels) &&
         effective_isa(isa) != Isa::Ref && isa_takes_block(effective_isa(isa), in_block) &&
         isa_takes_block(effective_isa(isa), out_block);
}

WinogradCore WinogradConv2d::this_core() {
  // Every AMD core with AVX-512 so far but Zen 5's desktop parts runs 512-bit FMAs at half rate.
  return cpu_features().amd ? WinogradCore::HalfRate512 : WinogradCore::FullRate512;
}

int WinogradConv2d::default_tile(const Conv2dParams& p, Isa isa) { return default_tile(p, isa, this_core()); }

int WinogradConv2d::default_tile(const Conv2dParams& p, Isa isa, WinogradCore core) {
  // (Isa::Ref, for which no kernel runs, takes AVX-512's model, as it always has.)
  const Isa e = effective_isa(isa);
  return best_tile(costs_of(core), p, vectors_of(e == Isa::Ref ? Isa::Avx512 : e), nullptr);
}

double WinogradConv2d::estimated_speedup(const Conv2dParams& p, Isa isa) {
  return estimated_speedup(p, isa, this_core());
}

double WinogradConv2d::estimated_speedup(const Conv2dParams& p, Isa isa, WinogradCore core) {
  if (!applicable(p) || effective_isa(isa) == Isa::Ref) return 0.0;
  const WinogradVectors vectors = vectors_of(effective_isa(isa));
  const CoreCosts& k = costs_of(core);
  double seconds = 0;
  best_tile(k, p, vectors, &seconds);
  return direct_seconds(k, p, vectors.wide) / seconds;
}

WinogradConv2d::WinogradConv2d(const Conv2dParams& p, const float* weights, const float* bias,
                               const Activation& activation, Isa isa, int64_t in_block, int64_t out_block, int tile)
    : params_(p), isa_(effective_isa(isa)), in_block_(in_block), out_block_(out_block), activation_(activation) {
  if (!applicable(p)) throw Error("WinogradConv2d: not a 3x3 stride-1 dilation-1 ungrouped convolution");
  if (!is_kernel_channel_block(in_block, p.in_channels) || !is_kernel_channel_block(out_block, p.out_channels) ||
      !isa_takes_block(isa_, in_block) || !isa_takes_block(isa_, out_block))
    throw Error("WinogradConv2d: invalid blocks (in " + std::to_string(in_block) + ", out " +
                std::to_string(out_block) + ")");
  if (isa_ == Isa::Ref)
    throw Error(std::string("WinogradConv2d: needs AVX2, AVX-512 or NEON (asked for ") + isa_name(isa) + ")");
  if (activation.kind == ActivationKind::PRelu && !activation.slope)
    throw Error("WinogradConv2d: PRelu activation without slopes");
  tile_ = tile == 0 ? default_tile(p, isa_) : tile;
  if (tile_ != 2 && tile_ != 4 && tile_ != 6)
    throw Error("WinogradConv2d: tile must be 2, 4 or 6, not " + std::to_string(tile));

  const WinogradVectors vectors = vectors_of(isa_);
  lanes_ = vectors.lanes;
  ic_padded_ = round_up_to_block(p.in_channels, lanes_);
  oc_padded_ = round_up_to_block(p.out_channels, lanes_);
  tiles_h_ = (p.out_h + tile_ - 1) / tile_;
  tiles_w_ = (p.out_w + tile_ - 1) / tile_;
  const int64_t alpha = tile_ + 2, positions = alpha * alpha;

  const ChunkPlan plan = plan_chunks(p, tile_, vectors);
  chunk_tiles_ = plan.chunk_tiles;
  // Small planes (every chunk fits a tall register tile) pack u one vector per group; see winograd_x86.h.
  u_group_vectors_ = chunk_tiles_ <= vectors.tall_rows ? 1 : vectors.oc_vectors;
  const int64_t group_lanes = lanes_ * u_group_vectors_;

  // u[pos][group][ic][lane of the group], zeros for the padding channels. Built a group of output
  // channels and a chunk of input channels at a time: their transforms go to a small buffer already in
  // u's order ([pos][ic - ic0][oc - oc_begin]), then each position gets one contiguous run of chunk x
  // width floats. (Scattering every transform's alpha^2 values straight to their positions, 256 KB-4 MB
  // apart, took most of ResNet-50's Winograd set-up; gathering them from a buffer in the transform's
  // order took a sixth of ResNet-18's load.)
  constexpr int64_t kIcChunk = 16;
  u_ = AlignedFloats(positions * ic_padded_ * oc_padded_);
  std::vector<float> transformed(static_cast<size_t>(group_lanes * kIcChunk * positions));
  for (int64_t group = 0; group * group_lanes < p.out_channels; ++group) {
    const int64_t width = std::min(group_lanes, oc_padded_ - group * group_lanes);  // the last group may be narrower
    const int64_t oc_begin = group * group_lanes, oc_end = std::min(p.out_channels, oc_begin + group_lanes);
    // The padding channels of a narrow last group stay zero in the buffer.
    if (oc_end - oc_begin < width) std::fill(transformed.begin(), transformed.end(), 0.f);
    for (int64_t ic0 = 0; ic0 < p.in_channels; ic0 += kIcChunk) {
      const int64_t count = std::min(kIcChunk, p.in_channels - ic0);
      const int64_t run = count * width;  // floats per position
      for (int64_t oc = oc_begin; oc < oc_end; ++oc)
        winograd_transform_weights(tile_, weights + (oc * p.in_channels + ic0) * 9, count, width, run,
                                   transformed.data() + (oc - oc_begin));
      for (int64_t pos = 0; pos < positions; ++pos)
        std::copy(transformed.data() + pos * run, transformed.data() + (pos + 1) * run,
                  u_.data() + pos * ic_padded_ * oc_padded_ + group * ic_padded_ * group_lanes + ic0 * width);
    }
  }
  bias_ = pad_per_channel(bias, p.out_channels, lanes_);
  if (activation.kind == ActivationKind::PRelu) slope_ = pad_per_channel(activation.slope, p.out_channels, lanes_);
}

void WinogradConv2d::run(const float* x, float* y, const float* residual, ThreadPool* pool) const {
#if defined(__x86_64__) || defined(__aarch64__)
  const Conv2dParams& p = params_;
  const int64_t alpha = tile_ + 2, positions = alpha * alpha;
  const int64_t group_lanes = lanes_ * u_group_vectors_;
  const int64_t items = positions * ((oc_padded_ + group_lanes - 1) / group_lanes);
  const int64_t tiles = tiles_h_ * tiles_w_;
#if defined(__aarch64__)
  auto input = neon::winograd_input_transform;
  auto multiply = neon::winograd_multiply;
  auto output = neon::winograd_output_transform;
#else
  const bool avx512 = isa_ == Isa::Avx512;
  auto input = avx512 ? avx512::winograd_input_transform : avx2::winograd_input_transform;
  auto multiply = avx512 ? avx512::winograd_multiply : avx2::winograd_multiply;
  auto output = avx512 ? avx512::winograd_output_transform : avx2::winograd_output_transform;
#endif

  WinogradX86Args a;
  a.m = tile_;
  a.in_channels = p.in_channels, a.in_h = p.in_h, a.in_w = p.in_w, a.in_block = in_block_;
  a.out_channels = p.out_channels, a.out_h = p.out_h, a.out_w = p.out_w, a.out_block = out_block_;
  a.pad_top = p.pad_top, a.pad_left = p.pad_left;
  a.tiles_w = tiles_w_;
  a.ic_padded = ic_padded_, a.oc_padded = oc_padded_;
  a.chunk_capacity = chunk_tiles_;
  a.u = u_.data();
  a.u_group_vectors = u_group_vectors_;
  a.bias = bias_.data();
  a.epilogue.activation = activation_.kind;
  a.epilogue.alpha = activation_.alpha, a.epilogue.beta = activation_.beta;
  a.epilogue.clip_min = activation_.min, a.epilogue.clip_max = activation_.max;
  a.epilogue.slope = slope_.data();
  a.v_pos_stride = chunk_tiles_ * ic_padded_ + kCacheLineFloats;
  a.mm_pos_stride = chunk_tiles_ * oc_padded_ + kCacheLineFloats;
  a.v = thread_scratch(positions * (a.v_pos_stride + a.mm_pos_stride));
  a.mm = a.v + positions * a.v_pos_stride;

  const bool threaded = pool && pool->size() > 1;
  auto parallel = [&](int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
    if (threaded)
      pool->parallel_for(n, fn);
    else
      fn(0, n);
  };
  const int64_t in_image = p.in_channels * p.in_h * p.in_w, out_image = p.out_channels * p.out_h * p.out_w;
  const int64_t threads = threaded ? pool->size() : 1;
  const int64_t tile_rows = vectors_of(isa_).tile_rows;
  if (threaded && tiles >= threads * 2 * tile_rows) {
    // Enough tiles for every thread to run whole chunks of its own: each thread transforms, multiplies
    // and transforms back its chunks in its own scratch (in its own core's cache), with no barrier in
    // between. Splitting each phase of one chunk among the threads instead (below) passed the chunk's
    // v and mm between cores three times per chunk and scaled poorly on two cores (measured:
    // bench/REPORT.md, "Design decisions and their measurements").
    int64_t chunks = std::max((tiles + chunk_tiles_ - 1) / chunk_tiles_, threads);
    chunks = (chunks + threads - 1) / threads * threads;
    const int64_t chunk = (tiles + chunks - 1) / chunks;
    chunks = (tiles + chunk - 1) / chunk;
    pool->parallel_for(p.batch * chunks, [&](int64_t b, int64_t e) {
      WinogradX86Args t = a;
      t.v = thread_scratch(positions * (a.v_pos_stride + a.mm_pos_stride));
      t.mm = t.v + positions * t.v_pos_stride;
      for (int64_t job = b; job < e; ++job) {
        const int64_t n = job / chunks, first = job % chunks * chunk, count = std::min(chunk, tiles - first);
        t.x = x + n * in_image;
        t.y = y + n * out_image;
        t.residual = residual ? residual + n * out_image : nullptr;
        input(t, first, 0, count);
        multiply(t, count, 0, items);
        output(t, first, 0, count);
      }
    });
    return;
  }
  for (int64_t n = 0; n < p.batch; ++n) {
    a.x = x + n * in_image;
    a.y = y + n * out_image;
    a.residual = residual ? residual + n * out_image : nullptr;
    for (int64_t first = 0; first < tiles; first += chunk_tiles_) {
      const int64_t count = std::min(chunk_tiles_, tiles - first);
      parallel(count, [&](int64_t b, int64_t e) { input(a, first, b, e); });
      parallel(items, [&](int64_t b, int64_t e) { multiply(a, count, b, e); });
      parallel(count, [&](int64_t b, int64_t e) { output(a, first, b, e); });
    }
  }
#else
  (void)x, (void)y, (void)residual, (void)pool;
  throw Error("WinogradConv2d: x86-64 and AArch64 only");
#endif
}

}  // namespace ninegrid
