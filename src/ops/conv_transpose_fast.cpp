#include "ops/conv_transpose_fast.h"

#include <algorithm>
#include <functional>
#include <initializer_list>

#include "kernels/x86/stage_rows_x86.h"
#include "ops/conv_select.h"
#include "ninegrid/tensor.h"
#include "core/thread_pool.h"
#include "core/thread_scratch.h"

namespace ninegrid {

namespace {

// Scratch floats per band: the restaged input rows, the columns blocked as the GEMM writes them and plain
// for col2im. With the band's output rows this stays within a 1 MB L2, so each step reads what the
// previous one just wrote from there.
constexpr int64_t kBandBudgetFloats = 192 * 1024;
// A band has at least one input row; beyond this many column floats (4 MB) for a single row, the scratch
// would no longer be small, and the reference kernel runs instead. (Splitting rows into column ranges
// would lift this; no model met so far comes near it: PP-OCR's widest row is 96 x 160 floats.)
constexpr int64_t kMaxColsPerRowFloats = int64_t(1) << 20;

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

// The input rows [*lo, *hi) whose values land in output rows [out_begin, out_end): along the height,
// input row ih reaches output rows ih * stride - pad + kh * dilation for kh < kernel.
void contributing_input_rows(const ConvTransposeParams& p, int64_t out_begin, int64_t out_end, int64_t* lo,
                             int64_t* hi) {
  const int64_t span = (p.kernel[1] - 1) * p.dilation[1];
  *lo = std::max<int64_t>(0, ceil_div(out_begin + p.pad_begin[1] - span, p.stride[1]));
  *hi = std::min(p.in[1], floor_div(out_end - 1 + p.pad_begin[1], p.stride[1]) + 1);
}

// The GEMM's vector width: AVX-512 from 16 column channels on, as FastConv2d would choose it.
int64_t gemm_lanes(const ConvTransposeParams& p, Isa isa) {
  return isa >= Isa::Avx512 && p.out_channels * p.kernel[1] * p.kernel[2] > 8 ? 16 : 8;
}

// The GEMM's input block: channels in multiples of 8 are restaged per band into NCHW8c, which the kernels
// read a pixel's channels from one cache line of (PP-OCR's 24 -> 4 GEMM is bound by reading its 24 planes
// and runs faster restaged, the restaging included; measured: bench/REPORT.md, "Design decisions and
// their measurements"); other counts are read in place from the plain planes.
int64_t gemm_in_block(const ConvTransposeParams& p) { return p.in_channels % 8 == 0 ? 8 : 1; }

// The GEMM as a convolution: 1x1 from the input channels to one channel per (m, kh, kw), rounded up to
// whole blocks of `lanes` (the kernels compute whole vectors anyway; the padding channels have zero
// weights and are never read), over `rows` input rows. A restaged input holds just those rows; a plain
// one is the whole image's layout (channel stride in_h * in_w) read from the band's first row on, so its
// in_h stays the image's.
Conv2dParams gemm_params(const ConvTransposeParams& p, int64_t rows, int64_t lanes, int64_t in_block) {
  Conv2dParams g;
  g.batch = 1;
  g.in_channels = p.in_channels;
  g.out_channels = round_up_to_block(p.out_channels * p.kernel[1] * p.kernel[2], lanes);
  g.in_h = in_block == 1 ? p.in[1] : rows;
  g.in_w = p.in[2];
  g.out_h = rows;
  g.out_w = p.in[2];
  return g;
}

// A GEMM over its whole input is a pointwise conv; a band of a plain image's rows needs the direct
// kernel, which (unlike the pointwise one, which runs the plane as one long row) reads rows at the image's
// strides.
ConvAlgorithm gemm_algorithm(const Conv2dParams& g) {
  return g.out_h == g.in_h ? ConvAlgorithm::Pointwise : ConvAlgorithm::Direct;
}

[[maybe_unused]] bool product_at_most(std::initializer_list<int64_t> factors, int64_t limit) {
  int64_t product = 1;
  for (int64_t f : factors) {
    if (f <= 0 || product > limit / f) return false;
    product *= f;
  }
  return true;
}

}  // namespace

bool FastConvTranspose2d::supports(const ConvTransposeParams& p, Isa isa) {
#if defined(__x86_64__)
  if (runnable_isa(isa) < Isa::Avx2) return false;
  if (p.groups != 1 || p.batch < 1 || p.in_channels < 1 || p.out_channels < 1) return false;
  // Depth 1 with a one-tap kernel along it: a 2-D (or 1-D) transposed convolution.
  if (p.in[0] != 1 || p.out[0] != 1 || p.kernel[0] != 1 || p.pad_begin[0] != 0) return false;
  for (int axis = 1; axis < 3; ++axis) {
    if (p.in[axis] < 1 || p.out[axis] < 1 || p.kernel[axis] < 1 || p.stride[axis] < 1 || p.dilation[axis] < 1 ||
        p.pad_begin[axis] < 0)
      return false;
  }
  if (!product_at_most({p.out_channels, p.kernel[1], p.kernel[2], p.in[2]}, kMaxColsPerRowFloats)) return false;
  const int64_t lanes = gemm_lanes(p, runnable_isa(isa)), in_block = gemm_in_block(p);
  return fast_conv_plan(gemm_params(p, p.in[1], lanes, in_block), in_block, lanes, isa, ConvAlgorithm::Pointwise)
             .kernel != ConvKernel::Ref;
#else
  return false;
#endif
}

FastConvTranspose2d::FastConvTranspose2d(const ConvTransposeParams& p, const float* weights, const float* bias,
                                         const Activation& activation, Isa isa)
    : p_(p), isa_(runnable_isa(isa)) {
  if (!supports(p, isa))
    throw Error(std::string("FastConvTranspose2d: no fast kernel for this transposed convolution (isa ") +
                isa_name(isa) + ")");
  if (activation.kind == ActivationKind::PRelu && !activation.slope)
    throw Error("FastConvTranspose2d: PRelu activation without slopes");
  lanes_ = gemm_lanes(p, isa_);
  in_block_ = gemm_in_block(p);
  cols_channels_ = round_up_to_block(p.out_channels * p.kernel[1] * p.kernel[2], lanes_);
  plan_bands();

  // ONNX's [C][M][kh][kw] is a C x (M kh kw) matrix; the GEMM's OIHW weights are its transpose (and zero
  // rows for the padding channels). The GEMM writes whole vectors in NCHW[lanes]c: the kernels' plain-NCHW
  // store (a transpose and masked stores per tile) took as long as the multiply-adds; one reorder pass
  // per band is far cheaper.
  const Conv2dParams g = gemm_params(p, gemm_rows_, lanes_, in_block_);
  const int64_t taps_total = p.out_channels * p.kernel[1] * p.kernel[2];
  std::vector<float> oihw(static_cast<size_t>(cols_channels_ * p.in_channels), 0.f);
  for (int64_t c = 0; c < p.in_channels; ++c)
    for (int64_t o = 0; o < taps_total; ++o) oihw[o * p.in_channels + c] = weights[c * taps_total + o];
  gemm_ = std::make_unique<FastConv2d>(g, oihw.data(), nullptr, Activation::none(),
                                       fast_conv_plan(g, in_block_, lanes_, isa_, gemm_algorithm(g)));

  if (bias) bias_.assign(bias, bias + p.out_channels);
  Col2imArgs& a = col2im_args_;
  a.in_h = p.in[1], a.in_w = p.in[2], a.out_h = p.out[1], a.out_w = p.out[2];
  a.kernel_h = p.kernel[1], a.kernel_w = p.kernel[2];
  a.stride_h = p.stride[1], a.stride_w = p.stride[2];
  a.dilation_h = p.dilation[1], a.dilation_w = p.dilation[2];
  a.pad_top = p.pad_begin[1], a.pad_left = p.pad_begin[2];
  a.cols_rows = gemm_rows_;
  a.bias = bias ? bias_.data() : nullptr;
  set_activation(a.epilogue, activation);
  if (activation.kind == ActivationKind::PRelu) {
    slope_.assign(activation.slope, activation.slope + p.out_channels);
    a.epilogue.slope = slope_.data();
  }
#if defined(__x86_64__)
  col2im_ = isa_ == Isa::Avx512 ? avx512::col2im : avx2::col2im;
  unblock_ = lanes_ == 16 ? avx512::reorder_blocked_to_nchw : avx2::reorder_blocked_to_nchw;
#endif
}

// Bands of output rows, as tall as the scratch budget allows: a band of `fresh` input rows' worth of output
// rows (fresh * stride) may need a few more input rows when taps overlap, so the band height is the
// largest whose every band needs at most the budget's rows. All bands then run the GEMM over the same
// number of rows (the last ones start early enough to stay inside the image).
void FastConvTranspose2d::plan_bands() {
  const int64_t in_h = p_.in[1], out_h = p_.out[1], stride = p_.stride[1];
  const int64_t budget_rows = std::max<int64_t>(1, kBandBudgetFloats / scratch_floats_per_row());

  // The most input rows any band of `fresh` * stride output rows needs.
  auto rows_needed = [&](int64_t fresh) {
    int64_t most = 0;
    for (int64_t o = 0; o < out_h; o += fresh * stride) {
      int64_t lo, hi;
      contributing_input_rows(p_, o, std::min(o + fresh * stride, out_h), &lo, &hi);
      most = std::max(most, hi - lo);
    }
    return most;
  };
  int64_t fresh = 0;
  if (budget_rows < in_h) {
    for (int64_t f = budget_rows; f >= 1 && fresh == 0; --f)
      if (rows_needed(f) <= budget_rows) fresh = f;
    // Taps spanning more rows than the budget: bands of one stride's rows, over the budget but bounded.
    if (fresh == 0) fresh = 1;
    gemm_rows_ = std::max<int64_t>(1, rows_needed(fresh));
  }
  bands_.clear();
  if (fresh == 0 || gemm_rows_ >= in_h) {
    // The whole image fits the budget (or bands would each need all of it): one band.
    int64_t lo, hi;
    contributing_input_rows(p_, 0, out_h, &lo, &hi);
    gemm_rows_ = in_h;
    bands_.push_back(Band{0, out_h, 0, lo < hi});
    return;
  }
  for (int64_t o = 0; o < out_h; o += fresh * stride) {
    const int64_t end = std::min(o + fresh * stride, out_h);
    int64_t lo, hi;
    contributing_input_rows(p_, o, end, &lo, &hi);
    bands_.push_back(Band{o, end, std::min(lo, in_h - gemm_rows_), lo < hi});
  }
}

// Restaged input rows (when restaged), blocked columns and plain columns of one input row.
int64_t FastConvTranspose2d::scratch_floats_per_row() const {
  return ((in_block_ == 1 ? 0 : p_.in_channels) + 2 * cols_channels_) * p_.in[2];
}

void FastConvTranspose2d::run(const float* x, float* y, ThreadPool* pool, int64_t x_block) const {
  if (x_block != 1 && !accepts_input_block(x_block))
    throw Error("FastConvTranspose2d: input in channel blocks of " + std::to_string(x_block) + " is not supported");
  const int64_t in_image = p_.in_channels * p_.in[1] * p_.in[2];
  const int64_t out_image = p_.out_channels * p_.out[1] * p_.out[2];
  const int64_t cols_floats = scratch_floats_per_row() * gemm_rows_;
  const int64_t per_image = bands(), tasks = p_.batch * per_image;
  auto run_task = [&](int64_t t, float* cols, ThreadPool* inner) {
    const int64_t n = t / per_image;
    run_band(x + n * in_image, x_block, y + n * out_image, bands_[static_cast<size_t>(t % per_image)], cols, inner);
  };
  const int threads = pool ? pool->size() : 1;
  if (threads > 1 && tasks % threads != 0 && tasks < 4 * threads) {
    // Too few bands to share evenly: one after the other, each band's GEMM and col2im split over the pool.
    float* cols = thread_scratch(cols_floats);
    for (int64_t t = 0; t < tasks; ++t) run_task(t, cols, pool);
    return;
  }
  // Each thread runs whole bands in its own scratch: the columns stay in the cache of the core that made them.
  auto some_bands = [&](int64_t begin, int64_t end) {
    float* cols = thread_scratch(cols_floats);
    for (int64_t t = begin; t < end; ++t) run_task(t, cols, nullptr);
  };
  if (threads > 1) pool->parallel_for(tasks, some_bands);
  else some_bands(0, tasks);
}

void FastConvTranspose2d::run_band(const float* x_image, int64_t x_block, float* y_image, const Band& band,
                                   float* scratch,
                                   ThreadPool* pool) const {
  const int64_t plane = gemm_rows_ * p_.in[2];
  float* staged = scratch;
  float* blocked = staged + (in_block_ == 1 ? 0 : p_.in_channels * plane);
  float* cols = blocked + cols_channels_ * plane;
  auto split = [&](int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
    if (pool && pool->size() > 1) pool->parallel_for(n, fn);
    else fn(0, n);
  };
  if (band.has_input) {
    const float* band_x = x_image + band.gemm_row0 * p_.in[2] * x_block;
    if (in_block_ == 1) {
      gemm_->run(band_x, blocked, nullptr, pool);
    } else if (x_block > 1) {
      // Already blocked: each 8-channel block's band rows are a run of 8 of every x_block floats.
      const int64_t image_plane = p_.in[1] * p_.in[2];
      split(p_.in_channels / 8, [&](int64_t begin, int64_t end) {
        for (int64_t b8 = begin; b8 < end; ++b8) {
          const float* src = band_x + (b8 * 8 / x_block) * image_plane * x_block + (b8 * 8) % x_block;
          float* __restrict dst = staged + b8 * plane * 8;
          if (x_block == 8) {
            std::copy(src, src + plane * 8, dst);
          } else {
            for (int64_t px = 0; px < plane; ++px)
              for (int64_t l = 0; l < 8; ++l) dst[px * 8 + l] = src[px * x_block + l];
          }
        }
      });
      gemm_->run(staged, blocked, nullptr, pool);
    } else {
#if defined(__x86_64__)  // (the only machine supports() accepts)
      split(p_.in_channels / 8, [&](int64_t begin, int64_t end) {
        avx2::stage_rows_nchw8c(band_x, staged, p_.in[1] * p_.in[2], plane, begin, end);
      });
#endif
      gemm_->run(staged, blocked, nullptr, pool);
    }
    split(cols_channels_ / lanes_,
          [&](int64_t begin, int64_t end) { unblock_(blocked, cols, cols_channels_, plane, begin, end); });
  }
  Col2imArgs a = col2im_args_;
  a.cols = cols;
  a.cols_row0 = band.gemm_row0;
  a.y = y_image;
  const int64_t channels = p_.out_channels, rows = band.out_end - band.out_begin;
  // (channel, part of the rows) items, a few per thread even for a single channel.
  const int64_t threads = pool ? pool->size() : 1;
  const int64_t parts = threads == 1 ? 1 : std::min(rows, std::max<int64_t>(1, ceil_div(4 * threads, channels)));
  split(channels * parts, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t m = i / parts, part = i % parts;
      col2im_(a, m, m + 1, band.out_begin + rows * part / parts, band.out_begin + rows * (part + 1) / parts);
    }
  });
}

std::string FastConvTranspose2d::name() const { return std::string("gemm-col2im/") + isa_name(isa_); }

}  // namespace ninegrid
