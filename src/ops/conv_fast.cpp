#include "ops/conv_fast.h"

#include <algorithm>
#include <string>

#include "ninegrid/tensor.h"
#include "core/thread_pool.h"
#include "core/thread_scratch.h"
#include "kernels/gather_strided.h"
#include "ops/elementwise_common.h"  // splits_in_row_bands

namespace ninegrid {

bool conv_is_depthwise(const Conv2dParams& p) {
  return p.groups > 1 && p.groups == p.in_channels && p.groups == p.out_channels;
}

bool conv_is_pointwise(const Conv2dParams& p) {
  return p.kernel_h == 1 && p.kernel_w == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_top == 0 &&
         p.pad_left == 0 && p.out_h == p.in_h && p.out_w == p.in_w;
}

// A 1x1 conv with stride > 1 whose every output pixel reads inside the input (no padding on the
// top/left, any bottom/right padding never reached): the input pixels it reads are gathered into a
// plane of the output's size, then the pointwise kernel runs on that. ResNet's downsampling 1x1 s2
// convs, where the direct and indirect kernels' short row tiles ran well below the pointwise kernel's
// speed (measured: bench/REPORT.md, "Design decisions and their measurements").
bool conv_is_strided_pointwise(const Conv2dParams& p) {
  return p.kernel_h == 1 && p.kernel_w == 1 && (p.stride_h > 1 || p.stride_w > 1) && p.pad_top == 0 &&
         p.pad_left == 0 && (p.out_h - 1) * p.stride_h < p.in_h && (p.out_w - 1) * p.stride_w < p.in_w;
}

bool fast_conv_shape_ok(const Conv2dParams& p) {
  if (p.batch < 1 || p.in_channels < 1 || p.out_channels < 1 || p.groups < 1 || p.in_channels % p.groups != 0 ||
      p.out_channels % p.groups != 0)
    return false;
  return p.in_h >= 1 && p.in_w >= 1 && p.out_h >= 1 && p.out_w >= 1 && p.kernel_h >= 1 && p.kernel_w >= 1 &&
         p.stride_h >= 1 && p.stride_w >= 1 && p.dilation_h >= 1 && p.dilation_w >= 1 && p.pad_top >= 0 &&
         p.pad_left >= 0;
}

bool fast_kernel_fits(const Conv2dParams& p, int64_t lanes, ConvKernel kernel) {
  switch (kernel) {
    // Depthwise input in another block (or with channels not a multiple of the lanes) is staged into
    // the lanes' block first (see FastConv2d::run).
    case ConvKernel::Depthwise: return conv_is_depthwise(p);
    case ConvKernel::Pointwise:
      if (!conv_is_pointwise(p) && !conv_is_strided_pointwise(p)) return false;
      [[fallthrough]];
    case ConvKernel::Direct: return p.groups == 1 || p.out_channels_per_group() % lanes == 0;
    default: return false;
  }
}

ConvKernel fast_kernel_by_shape(const Conv2dParams& p) {
  return conv_is_depthwise(p)                                      ? ConvKernel::Depthwise
         : conv_is_pointwise(p) || conv_is_strided_pointwise(p) ? ConvKernel::Pointwise
                                                                     : ConvKernel::Direct;
}

namespace {

const char* depthwise_name(const Conv2dParams& p) {
  const bool square = p.kernel_h == p.kernel_w && p.stride_h == p.stride_w && p.dilation_h == 1 &&
                      p.dilation_w == 1 && (p.stride_h == 1 || p.stride_h == 2);
  if (square && p.kernel_h == 3) return "depthwise3x3";
  if (square && p.kernel_h == 5) return "depthwise5x5";
  return "depthwise";
}

}  // namespace

bool FastConv2d::fits(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa, ConvKernel kernel) {
#if defined(__x86_64__) || defined(__aarch64__)
  if (isa == Isa::Ref || runnable_isa(isa) != isa) return false;
  if (!fast_conv_shape_ok(p) || !is_kernel_channel_block(in_block, p.in_channels) ||
      !is_kernel_channel_block(out_block, p.out_channels))
    return false;
#endif
#if defined(__aarch64__)
  // NEON: 4 channels per register; output NCHW4c or plain NCHW, input NCHW4c or a plain image (which the
  // direct kernel reads as the paper's Algorithm 2 does: there is no first-layer kernel for 4 lanes), or,
  // depthwise, any block (restaged).
  if (isa != Isa::Neon || kernel == ConvKernel::FirstLayer || (out_block != 4 && out_block != 1)) return false;
  if (kernel != ConvKernel::Depthwise && in_block != 4 && in_block != 1) return false;
  return fast_kernel_fits(p, 4, kernel);
#elif defined(__x86_64__)
  if ((isa != Isa::Avx2 && isa != Isa::Avx512) || !isa_takes_block(isa, in_block) || !isa_takes_block(isa, out_block))
    return false;
  // The first-layer kernel puts output pixels across the lanes, so any output block suits either width
  // but 16, which needs the 16-lane kernels.
  if (kernel == ConvKernel::FirstLayer)
    return in_block == 1 && p.groups == 1 && (p.stride_w == 1 || p.stride_w == 2) &&
           (out_block != 16 || isa == Isa::Avx512);
  // The others write their own lanes' block, plain NCHW, or (16 lanes, from 16 output channels on) pairs
  // of 8-channel blocks.
  const int64_t lanes = isa == Isa::Avx512 ? 16 : 8;
  if (out_block == 16 && lanes != 16) return false;
  if (out_block == 8 && lanes == 16 && p.out_channels <= 8) return false;
  return fast_kernel_fits(p, lanes, kernel);
#else
  (void)p, (void)in_block, (void)out_block, (void)isa, (void)kernel;
  return false;
#endif
}

FastConv2d::FastConv2d(const Conv2dParams& p, const float* weights, const float* bias, const Activation& activation,
                       const ConvPlan& plan)
    : params_(p) {
  const int64_t in_block = plan.in_block, out_block = plan.out_block;
  if (!fits(p, in_block, out_block, plan.isa, plan.kernel))
    throw Error(std::string("FastConv2d: no fast kernel for this convolution (") + conv_kernel_name(plan.kernel) +
                ", in block " + std::to_string(in_block) + ", out block " + std::to_string(out_block) + ", isa " +
                isa_name(plan.isa) + ")");
  if (plan.oc_tile < 0 || plan.oc_tile > 2) throw Error("FastConv2d: the register tile holds 1 or 2 output blocks");
  if (plan.split == ConvSplit::Tiles) throw Error("FastConv2d: splits by channels or rows, not by Winograd tiles");
  if (activation.kind == ActivationKind::PRelu && !activation.slope)
    throw Error("FastConv2d: PRelu activation without slopes");
  kernel_isa_ = plan.isa;
  lanes_ = isa_block(plan.isa);
  in_block_ = in_block;
  split_ = plan.split;
  int64_t block_channels = lanes_;  // output channels per range block
#if defined(__x86_64__)
  const bool avx512 = kernel_isa_ == Isa::Avx512;
  switch (plan.kernel) {
    case ConvKernel::FirstLayer:
      kernel_ = avx512 ? avx512::conv2d_first_layer : avx2::conv2d_first_layer;
      algorithm_name_ = "first-layer";
      block_channels = 8;  // channel octets
      weights_ = pack_conv_weights(weights, p.out_channels, p.in_channels, p.kernel_h, p.kernel_w, block_channels);
      scratch_floats_ = 1;  // sized below, once the arguments are complete
      break;
    case ConvKernel::Depthwise:
      kernel_ = avx512 ? avx512::conv2d_depthwise : avx2::conv2d_depthwise;
      break;
    case ConvKernel::Pointwise:
      kernel_ = avx512 ? avx512::conv2d_pointwise : avx2::conv2d_pointwise;
      blocks_per_tile_ = plan.oc_tile == 1 ? 1 : avx512 ? avx512::kOcBlocksPerTile : avx2::kOcBlocksPerTile;
      break;
    default:
      kernel_ = avx512 ? avx512::conv2d_direct : avx2::conv2d_direct;
      blocks_per_tile_ = plan.oc_tile == 1 ? 1 : avx512 ? avx512::kOcBlocksPerTile : avx2::kOcBlocksPerTile;
      break;
  }
#elif defined(__aarch64__)
  switch (plan.kernel) {
    case ConvKernel::Depthwise: kernel_ = neon::conv2d_depthwise; break;
    case ConvKernel::Pointwise:
      kernel_ = neon::conv2d_pointwise;
      blocks_per_tile_ = plan.oc_tile == 1 ? 1 : neon::kOcBlocksPerTile;
      break;
    default:
      kernel_ = neon::conv2d_direct;
      blocks_per_tile_ = plan.oc_tile == 1 ? 1 : neon::kOcBlocksPerTile;
      break;
  }
#endif
  // The weights and the choice's name, whatever the ISA.
  switch (plan.kernel) {
    case ConvKernel::FirstLayer: break;
    case ConvKernel::Depthwise:
      algorithm_name_ = depthwise_name(p);
      weights_ = pack_depthwise_weights(weights, p.out_channels, p.kernel_h, p.kernel_w, lanes_);
      stage_input_ = in_block != lanes_ || p.in_channels % lanes_ != 0;
      break;
    case ConvKernel::Pointwise:
      subsample_input_ = !conv_is_pointwise(p);
      algorithm_name_ = subsample_input_ ? "pointwise-strided" : "pointwise";
      weights_ = pack_conv_weights(weights, p.out_channels, p.in_channels_per_group(), 1, 1, lanes_);
      break;
    default:
      algorithm_name_ = "direct";
      weights_ = pack_conv_weights(weights, p.out_channels, p.in_channels_per_group(), p.kernel_h, p.kernel_w, lanes_);
      break;
  }
  blocks_ = round_up_to_block(p.out_channels, block_channels) / block_channels;
  bias_ = pad_per_channel(bias, p.out_channels, lanes_);

  X86ConvArgs& a = args_;
  a.in_channels = p.in_channels, a.in_h = p.in_h, a.in_w = p.in_w;
  if (subsample_input_) a.in_h = p.out_h, a.in_w = p.out_w;  // the kernel reads the gathered plane
  a.out_channels = p.out_channels, a.out_h = p.out_h, a.out_w = p.out_w;
  a.groups = p.groups;
  a.in_channels_per_group = p.in_channels_per_group();
  a.out_channels_per_group = p.out_channels_per_group();
  a.kernel_h = p.kernel_h, a.kernel_w = p.kernel_w;
  a.stride_h = subsample_input_ ? 1 : p.stride_h, a.stride_w = subsample_input_ ? 1 : p.stride_w;
  a.dilation_h = p.dilation_h, a.dilation_w = p.dilation_w;
  a.pad_top = p.pad_top, a.pad_left = p.pad_left;
  a.in_block = stage_input_ ? lanes_ : in_block;
  a.out_block = out_block;
  a.oc_blocks_per_tile = plan.oc_tile == 1 ? 1 : 2;
  a.weights = weights_.data();
  a.bias = bias_.data();
  set_activation(a, activation);
  if (activation.kind == ActivationKind::PRelu) {
    slope_ = pad_per_channel(activation.slope, p.out_channels, lanes_);
    a.slope = slope_.data();
  }
#if defined(__x86_64__)
  if (scratch_floats_)
    scratch_floats_ = (avx512 ? avx512::conv2d_first_layer_scratch_floats : avx2::conv2d_first_layer_scratch_floats)(a);
#endif
}

namespace {

// Copies channel blocks [block_begin, block_end) of `lanes` channels from NCHW[in_block]c (in_block
// dividing channels) to NCHW[lanes]c, the channels past `channels` zero.
void stage_channel_blocks(const float* src, float* dst, int64_t channels, int64_t plane, int64_t in_block,
                          int64_t lanes, int64_t block_begin, int64_t block_end) {
  // Pixel by pixel, so the output is written sequentially while the lanes' input streams (one per
  // channel) are each read sequentially too; a lane-by-lane loop would stride through the output.
  constexpr int64_t kMaxLanes = 16;
  for (int64_t b = block_begin; b < block_end; ++b) {
    float* out = dst + b * plane * lanes;
    const float* in[kMaxLanes];
    int64_t real = 0;
    for (int64_t j = 0; j < lanes && b * lanes + j < channels; ++j, ++real) {
      const int64_t c = b * lanes + j;
      in[j] = src + (c / in_block) * plane * in_block + c % in_block;
    }
    for (int64_t i = 0; i < plane; ++i, out += lanes) {
      for (int64_t j = 0; j < real; ++j) out[j] = in[j][i * in_block];
      for (int64_t j = real; j < lanes; ++j) out[j] = 0.f;
    }
  }
}

}  // namespace

void FastConv2d::run(const float* x, float* y, const float* residual, ThreadPool* pool) const {
  const Conv2dParams& p = params_;
  if (stage_input_) {
    // The depthwise kernels read whole vectors of `lanes_` channels: restage the input in that block
    // (one memory pass, far cheaper than the convolution it enables), then convolve from there.
    const int64_t plane = p.in_h * p.in_w, blocks = round_up_to_block(p.in_channels, lanes_) / lanes_;
    float* staged = thread_scratch(p.batch * blocks * lanes_ * plane);
    auto stage = [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t n = t / blocks, b = t % blocks;
        const float* src = x + n * p.in_channels * plane;
        float* dst = staged + n * blocks * lanes_ * plane;
#if defined(__x86_64__)
        // Plain NCHW: vector transposes, P channels x P pixels at a time (they made BlazeFace's
        // 28-channel depthwise, restaging included, much faster; measured: bench/REPORT.md, "Design
        // decisions and their measurements").
        if (in_block_ == 1) {
          (kernel_isa_ == Isa::Avx512 ? avx512::reorder_nchw_to_blocked : avx2::reorder_nchw_to_blocked)(
              src, dst, p.in_channels, plane, b, b + 1);
          continue;
        }
#endif
        stage_channel_blocks(src, dst, p.in_channels, plane, in_block_, lanes_, b, b + 1);
      }
    };
    if (pool && pool->size() > 1 && split_ != ConvSplit::Serial) pool->parallel_for(p.batch * blocks, stage);
    else stage(0, p.batch * blocks);
    run_kernel(staged, blocks * lanes_ * plane, y, residual, pool);
    return;
  }
  if (subsample_input_) {
    const int64_t blocks = p.in_channels / in_block_, gathered_image = p.in_channels * p.out_h * p.out_w;
    float* gathered = thread_scratch(p.batch * gathered_image);
    auto gather = [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t n = t / blocks, b = t % blocks;
        gather_strided_pixels(p, in_block_, x + n * p.in_channels * p.in_h * p.in_w, gathered + n * gathered_image,
                              b, b + 1);
      }
    };
    if (pool && pool->size() > 1 && split_ != ConvSplit::Serial) pool->parallel_for(p.batch * blocks, gather);
    else gather(0, p.batch * blocks);
    run_kernel(gathered, gathered_image, y, residual, pool);
    return;
  }
  run_kernel(x, p.in_channels * p.in_h * p.in_w, y, residual, pool);
}

int64_t row_band_chunks(const Conv2dParams& p, int64_t row_chunks, int threads) {
  // A multiple of the threads in row chunks puts the pool's chunk boundaries on row boundaries. Without
  // it, a depthwise layer with many channel blocks (one chunk of rows) split by channels, and each
  // thread read half its input from the other core's cache.
  if (!splits_in_row_bands(p.batch, p.out_channels, p.out_h, p.out_w, threads)) return row_chunks;
  return std::min<int64_t>(p.out_h, (row_chunks + threads - 1) / threads * threads);
}

void FastConv2d::run_kernel(const float* x, int64_t in_image, float* y, const float* residual, ThreadPool* pool) const {
  const Conv2dParams& p = params_;
  const int64_t out_image = p.out_channels * p.out_h * p.out_w;
  auto image_args = [&](int64_t n) {
    X86ConvArgs a = args_;
    a.x = x + n * in_image;
    a.y = y + n * out_image;
    a.residual = residual ? residual + n * out_image : nullptr;
    return a;
  };

  const int threads = pool && split_ != ConvSplit::Serial ? pool->size() : 1;
  if (threads <= 1) {
    X86ConvRange r{0, blocks_, 0, p.out_h};
    r.scratch = scratch_floats_ ? thread_scratch(scratch_floats_) : nullptr;
    for (int64_t n = 0; n < p.batch; ++n) kernel_(image_args(n), r);
    return;
  }
  // Tasks: (image, group of whole tiles of output blocks, chunk of rows), enough of them that the pool's
  // contiguous split gives every thread nearly the same share. When the weights outweigh the image, a
  // thread's consecutive tasks share the output blocks (each thread streams only its part of the
  // weights); otherwise they share the rows (each thread reads only its part of the image, the larger
  // stream; with that, RetinaFace's 64-channel pointwise layers at 80x80 scaled much better on 2 cores:
  // bench/REPORT.md, "Design decisions and their measurements"). The plan may force either split alone:
  // Channels (every task all rows), Rows (every task all output blocks).
  const int64_t tile_groups = (blocks_ + blocks_per_tile_ - 1) / blocks_per_tile_;
  const int64_t wanted = 4 * static_cast<int64_t>(threads);
  int64_t block_groups = tile_groups, row_chunks = 1, group_blocks = blocks_per_tile_;
  bool rows_outer = weights_.size() < in_image;
  if (split_ == ConvSplit::Rows) {
    block_groups = 1, group_blocks = blocks_;
    row_chunks = std::min<int64_t>(p.out_h, std::max<int64_t>(1, (wanted + p.batch - 1) / p.batch));
    rows_outer = true;
  } else if (split_ == ConvSplit::Channels) {
    rows_outer = false;
  } else {
    row_chunks =
        std::min<int64_t>(p.out_h, std::max<int64_t>(1, (wanted + p.batch * block_groups - 1) / (p.batch * block_groups)));
    if (rows_outer) row_chunks = row_band_chunks(p, row_chunks, threads);
  }
  const int64_t tasks = p.batch * block_groups * row_chunks;
  pool->parallel_for(tasks, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t chunk = rows_outer ? (t / block_groups) % row_chunks : t % row_chunks;
      const int64_t group = rows_outer ? t % block_groups : (t / row_chunks) % block_groups;
      const int64_t n = t / (row_chunks * block_groups);
      X86ConvRange r;
      r.oc_block_begin = group * group_blocks;
      r.oc_block_end = std::min(blocks_, r.oc_block_begin + group_blocks);
      r.row_begin = p.out_h * chunk / row_chunks;
      r.row_end = p.out_h * (chunk + 1) / row_chunks;
      r.scratch = scratch_floats_ ? thread_scratch(scratch_floats_) : nullptr;
      kernel_(image_args(n), r);
    }
  });
}

}  // namespace ninegrid
