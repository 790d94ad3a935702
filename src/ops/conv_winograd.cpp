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

}  // namespace

WinogradVectors winograd_vectors(Isa isa) {
  if (isa == Isa::Avx512)
    return {16, avx512::kWinogradTileRows, avx512::kWinogradTallRows, avx512::kWinogradOcVectors, true};
  if (is_arm_isa(isa)) return {4, neon::kWinogradTileRows, neon::kWinogradTallRows, neon::kWinogradOcVectors, false};
  return {8, avx2::kWinogradTileRows, avx2::kWinogradTallRows, avx2::kWinogradOcVectors, false};
}

// The transformed weights stream through once per chunk, the chunk's scratch (v and mm) is best kept in
// L2: chunks get a scratch budget of half the weights' size, clamped to [kChunkBytes, 4 kChunkBytes]
// (large weights: fewer passes over them matter more than a scratch that spills to L3), never fewer
// tiles than a tall register tile, and are split evenly.
WinogradChunks winograd_chunks(const Conv2dParams& p, int m, const WinogradVectors& vectors) {
  const int64_t lanes = vectors.lanes;
  const int64_t positions = int64_t(m + 2) * (m + 2);
  const int64_t icp = round_up_to_block(p.in_channels, lanes), ocp = round_up_to_block(p.out_channels, lanes);
  const int64_t per_tile_bytes = positions * (icp + ocp) * int64_t(sizeof(float));
  const int64_t weight_bytes = positions * icp * ocp * int64_t(sizeof(float));
  const int64_t budget = std::min(4 * kChunkBytes, std::max(kChunkBytes, weight_bytes / 2));
  const int64_t tall_rows = vectors.tall_rows;
  WinogradChunks c;
  c.tiles = ((p.out_h + m - 1) / m) * ((p.out_w + m - 1) / m);
  const int64_t most = std::max(tall_rows, budget / per_tile_bytes);
  c.chunks = (c.tiles + most - 1) / most;
  c.chunk_tiles = (c.tiles + c.chunks - 1) / c.chunks;
  return c;
}

bool winograd_fits_tall_tile(const Conv2dParams& p, int m, Isa isa) {
  const WinogradVectors vectors = winograd_vectors(isa);
  return winograd_chunks(p, m, vectors).chunk_tiles <= vectors.tall_rows;
}

// The rule: a chunk that fits a tall register tile runs tall when the wide tile would read its panel of
// weights (the input channels x two vectors of output channels) from beyond L1 on its second pass over
// the chunk's tiles; with a panel that L1 holds, the wide tile's fewer loads per FMA win on x86
// (bench/REPORT.md, "The Winograd register tile as a plan choice"). NEON keeps the tall tile wherever it
// fits, as before: not measured on an Arm core.
int64_t winograd_group_vectors(const Conv2dParams& p, Isa isa, int m, int oc_tile) {
  const WinogradVectors vectors = winograd_vectors(isa);
  if (oc_tile == 1) return 1;
  if (oc_tile == 2 || !winograd_fits_tall_tile(p, m, isa)) return vectors.oc_vectors;
  if (is_arm_isa(isa)) return 1;
  constexpr int64_t kL1PanelBytes = 32 * 1024;
  const int64_t panel_bytes =
      round_up_to_block(p.in_channels, vectors.lanes) * vectors.oc_vectors * vectors.lanes * int64_t(sizeof(float));
  return panel_bytes > kL1PanelBytes ? 1 : vectors.oc_vectors;
}

bool WinogradConv2d::applicable(const Conv2dParams& p) { return winograd_applicable(p); }

bool WinogradConv2d::supports(const Conv2dParams& p) {
  return applicable(p) && p.in_channels >= 16 && p.out_channels >= 16;
}

bool WinogradConv2d::supports(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa) {
  return supports(p) && runs(p, in_block, out_block, isa);
}

bool WinogradConv2d::runs(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa) {
  return applicable(p) && is_kernel_channel_block(in_block, p.in_channels) && is_kernel_channel_block(out_block, p.out_channels) &&
         runnable_isa(isa) != Isa::Ref && isa_takes_block(runnable_isa(isa), in_block) &&
         isa_takes_block(runnable_isa(isa), out_block);
}

WinogradConv2d::WinogradConv2d(const Conv2dParams& p, const float* weights, const float* bias,
                               const Activation& activation, const ConvPlan& plan)
    : params_(p), isa_(plan.isa), tile_(plan.winograd_tile), in_block_(plan.in_block), out_block_(plan.out_block),
      split_(plan.split), activation_(activation) {
  if (!applicable(p)) throw Error("WinogradConv2d: not a 3x3 stride-1 dilation-1 ungrouped convolution");
  if (plan.kernel != ConvKernel::Winograd) throw Error("WinogradConv2d: the plan is not a Winograd one");
  if (isa_ == Isa::Ref || runnable_isa(isa_) != isa_)
    throw Error(std::string("WinogradConv2d: needs AVX2, AVX-512 or NEON that this CPU runs (asked for ") +
                isa_name(isa_) + ")");
  if (!is_kernel_channel_block(in_block_, p.in_channels) || !is_kernel_channel_block(out_block_, p.out_channels) ||
      !isa_takes_block(isa_, in_block_) || !isa_takes_block(isa_, out_block_))
    throw Error("WinogradConv2d: invalid blocks (in " + std::to_string(in_block_) + ", out " +
                std::to_string(out_block_) + ")");
  if (activation.kind == ActivationKind::PRelu && !activation.slope)
    throw Error("WinogradConv2d: PRelu activation without slopes");
  if (tile_ != 2 && tile_ != 4 && tile_ != 6)
    throw Error("WinogradConv2d: tile must be 2, 4 or 6, not " + std::to_string(tile_));
  if (split_ == ConvSplit::Rows) throw Error("WinogradConv2d: splits by tiles or by phases, not by rows");

  const WinogradVectors vectors = winograd_vectors(isa_);
  lanes_ = vectors.lanes;
  ic_padded_ = round_up_to_block(p.in_channels, lanes_);
  oc_padded_ = round_up_to_block(p.out_channels, lanes_);
  tiles_h_ = (p.out_h + tile_ - 1) / tile_;
  tiles_w_ = (p.out_w + tile_ - 1) / tile_;
  const int64_t alpha = tile_ + 2, positions = alpha * alpha;

  const WinogradChunks chunks = winograd_chunks(p, tile_, vectors);
  chunk_tiles_ = chunks.chunk_tiles;
  u_group_vectors_ = winograd_group_vectors(p, isa_, tile_, plan.oc_tile);
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
  set_activation(a.epilogue, activation_);
  a.epilogue.slope = slope_.data();
  a.v_pos_stride = chunk_tiles_ * ic_padded_ + kCacheLineFloats;
  a.mm_pos_stride = chunk_tiles_ * oc_padded_ + kCacheLineFloats;
  a.v = thread_scratch(positions * (a.v_pos_stride + a.mm_pos_stride));
  a.mm = a.v + positions * a.v_pos_stride;

  const bool threaded = pool && pool->size() > 1 && split_ != ConvSplit::Serial;
  auto parallel = [&](int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
    if (threaded)
      pool->parallel_for(n, fn);
    else
      fn(0, n);
  };
  const int64_t in_image = p.in_channels * p.in_h * p.in_w, out_image = p.out_channels * p.out_h * p.out_w;
  const int64_t threads = threaded ? pool->size() : 1;
  const int64_t tile_rows = winograd_vectors(isa_).tile_rows;
  // The split: whole chunks per thread (Tiles; Auto when every thread gets two register tiles' worth) or
  // each phase of a chunk shared (Channels; Auto on smaller planes).
  const bool per_thread_chunks = split_ == ConvSplit::Tiles    ? tiles >= threads
                                 : split_ == ConvSplit::Auto ? tiles >= threads * 2 * tile_rows
                                                             : false;
  if (threaded && per_thread_chunks) {
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
