#include "ops/conv_winograd.h"

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/ref/winograd_ref.h"
#include "kernels/x86/winograd_x86.h"
#include "ninegrid/tensor.h"
#include "runtime/thread_pool.h"

namespace ninegrid {

namespace {

// Scratch (v and mm of one chunk of tiles) is sized to stay in the core's L2 cache together with the
// weights of one transform position, so the three phases of a chunk hand their data over in cache.
constexpr int64_t kChunkBytes = 1 << 20;
constexpr int64_t kCacheLineFloats = 16;

bool valid_block(int64_t block, int64_t channels) {
  return (block == 1 || block == 8 || block == 16) && channels % block == 0;
}

// The best vector ISA this CPU runs, capped by `isa` (never above the hardware, whatever is asked).
Isa effective_isa(Isa isa) {
#if defined(__x86_64__)
  const CpuFeatures& f = cpu_features();
  Isa hardware = Isa::Ref;
  if (f.avx2 && f.fma) hardware = f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq ? Isa::Avx512 : Isa::Avx2;
  return std::min(isa, hardware);
#else
  (void)isa;
  return Isa::Ref;
#endif
}

// Scratch for one run on this thread, grown on demand and kept for the next layer.
float* thread_scratch(int64_t floats) {
  static thread_local AlignedFloats scratch;
  if (scratch.size() < floats) scratch = AlignedFloats(floats);
  return scratch.data();
}

}  // namespace

bool WinogradConv2d::applicable(const Conv2dParams& p) { return winograd_applicable(p); }

bool WinogradConv2d::supports(const Conv2dParams& p) {
  return applicable(p) && p.in_channels >= 32 && p.out_channels >= 32;
}

bool WinogradConv2d::supports(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa) {
  return supports(p) && valid_block(in_block, p.in_channels) && valid_block(out_block, p.out_channels) &&
         effective_isa(isa) != Isa::Ref;
}

int WinogradConv2d::default_tile(const Conv2dParams& p) { return 4; }

WinogradConv2d::WinogradConv2d(const Conv2dParams& p, const float* weights, const float* bias,
                               const Activation& activation, Isa isa, int64_t in_block, int64_t out_block, int tile)
    : params_(p), isa_(effective_isa(isa)), in_block_(in_block), out_block_(out_block), activation_(activation) {
  if (!applicable(p)) throw Error("WinogradConv2d: not a 3x3 stride-1 dilation-1 ungrouped convolution");
  if (!valid_block(in_block, p.in_channels) || !valid_block(out_block, p.out_channels))
    throw Error("WinogradConv2d: invalid blocks (in " + std::to_string(in_block) + ", out " +
                std::to_string(out_block) + ")");
  if (isa_ == Isa::Ref) throw Error(std::string("WinogradConv2d: needs AVX2 or AVX-512 (asked for ") + isa_name(isa) + ")");
  if (activation.kind == ActivationKind::PRelu && !activation.slope)
    throw Error("WinogradConv2d: PRelu activation without slopes");
  tile_ = tile == 0 ? default_tile(p) : tile;
  if (tile_ != 2 && tile_ != 4 && tile_ != 6)
    throw Error("WinogradConv2d: tile must be 2, 4 or 6, not " + std::to_string(tile));

  const bool avx512 = isa_ == Isa::Avx512;
  lanes_ = avx512 ? 16 : 8;
  ic_padded_ = round_up_to_block(p.in_channels, lanes_);
  oc_padded_ = round_up_to_block(p.out_channels, lanes_);
  tiles_h_ = (p.out_h + tile_ - 1) / tile_;
  tiles_w_ = (p.out_w + tile_ - 1) / tile_;
  const int64_t alpha = tile_ + 2, positions = alpha * alpha;

  // Chunks of at most kChunkBytes of scratch, but never fewer tiles than a tall register tile (the
  // weights are streamed once per chunk, so small planes run as one chunk), split evenly.
  const int64_t per_tile_bytes = positions * (ic_padded_ + oc_padded_) * static_cast<int64_t>(sizeof(float));
  const int64_t tall_rows = avx512 ? avx512::kWinogradTallRows : avx2::kWinogradTallRows;
  const int64_t tiles = tiles_h_ * tiles_w_;
  const int64_t most = std::max(tall_rows, kChunkBytes / per_tile_bytes);
  const int64_t chunks = (tiles + most - 1) / most;
  chunk_tiles_ = (tiles + chunks - 1) / chunks;
  // Small planes (every chunk fits a tall register tile) pack u one vector per group; see winograd_x86.h.
  u_group_vectors_ = chunk_tiles_ <= tall_rows ? 1 : (avx512 ? avx512::kWinogradOcVectors : avx2::kWinogradOcVectors);
  const int64_t group_lanes = lanes_ * u_group_vectors_;

  // u[pos][group][ic][lane of the group], zeros for the padding channels.
  const std::vector<float> u = winograd_transform_weights(tile_, weights, p.out_channels, p.in_channels);
  u_ = AlignedFloats(positions * ic_padded_ * oc_padded_);
  for (int64_t pos = 0; pos < positions; ++pos) {
    float* upos = u_.data() + pos * ic_padded_ * oc_padded_;
    for (int64_t oc = 0; oc < p.out_channels; ++oc) {
      const int64_t group = oc / group_lanes;
      const int64_t width = std::min(group_lanes, oc_padded_ - group * group_lanes);  // the last group may be narrower
      float* ugroup = upos + group * ic_padded_ * group_lanes;
      for (int64_t ic = 0; ic < p.in_channels; ++ic)
        ugroup[ic * width + oc % group_lanes] = u[(oc * p.in_channels + ic) * positions + pos];
    }
  }
  bias_ = pad_per_channel(bias, p.out_channels, lanes_);
  if (activation.kind == ActivationKind::PRelu) slope_ = pad_per_channel(activation.slope, p.out_channels, lanes_);
}

void WinogradConv2d::run(const float* x, float* y, const float* residual, ThreadPool* pool) const {
#if defined(__x86_64__)
  const Conv2dParams& p = params_;
  const bool avx512 = isa_ == Isa::Avx512;
  const int64_t alpha = tile_ + 2, positions = alpha * alpha;
  const int64_t group_lanes = lanes_ * u_group_vectors_;
  const int64_t items = positions * ((oc_padded_ + group_lanes - 1) / group_lanes);
  const int64_t tiles = tiles_h_ * tiles_w_;
  auto input = avx512 ? avx512::winograd_input_transform : avx2::winograd_input_transform;
  auto multiply = avx512 ? avx512::winograd_multiply : avx2::winograd_multiply;
  auto output = avx512 ? avx512::winograd_output_transform : avx2::winograd_output_transform;

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
  throw Error("WinogradConv2d: x86 only");
#endif
}

}  // namespace ninegrid
