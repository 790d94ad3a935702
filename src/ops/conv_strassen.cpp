#include "ops/conv_strassen.h"

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "kernels/x86/strassen_x86.h"
#include "ninegrid/tensor.h"
#include "core/thread_pool.h"
#include "core/thread_scratch.h"

namespace ninegrid {

namespace {

// The kernels' ISA: the output block is the vector width.
Isa blocks_isa(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa) {
  isa = runnable_isa(isa);
  if (isa == Isa::Ref || is_arm_isa(isa)) return Isa::Ref;  // (no NEON Strassen kernels yet)
  if (p.kernel_h != 1 || p.kernel_w != 1 || p.stride_h != 1 || p.stride_w != 1 || p.pad_top != 0 ||
      p.pad_left != 0 || p.groups != 1 || p.batch < 1 || p.in_h < 1 || p.in_w < 1 || p.out_h != p.in_h ||
      p.out_w != p.in_w || p.in_channels < 1 || p.out_channels < 1)
    return Isa::Ref;
  if ((in_block != 8 && in_block != 16) || p.in_channels % in_block != 0 || p.out_channels % out_block != 0)
    return Isa::Ref;
  if (out_block == 16) return isa == Isa::Avx512 ? Isa::Avx512 : Isa::Ref;
  return out_block == 8 ? Isa::Avx2 : Isa::Ref;
}

// Packs the rows x cols matrix a(oc, k) for the GEMM kernel: [oc group][k][group lanes], groups of
// group_lanes channels (the last maybe narrower); rows is a multiple of the vector width.
AlignedFloats pack(int64_t rows, int64_t cols, int64_t group_lanes, const std::function<float(int64_t, int64_t)>& a) {
  AlignedFloats out(rows * cols);
  for (int64_t oc = 0; oc < rows; ++oc) {
    const int64_t group = oc / group_lanes;
    const int64_t width = std::min(group_lanes, rows - group * group_lanes);
    float* g = out.data() + group * group_lanes * cols;
    for (int64_t k = 0; k < cols; ++k) g[k * width + oc % group_lanes] = a(oc, k);
  }
  return out;
}

}  // namespace

bool StrassenConv1x1::supports(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa) {
  return blocks_isa(p, in_block, out_block, isa) != Isa::Ref;
}

Isa StrassenConv1x1::kernel_isa(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa) {
  return blocks_isa(p, in_block, out_block, isa);
}

bool StrassenConv1x1::splittable(const Conv2dParams& p, int64_t in_block, int64_t out_block) {
  return p.in_channels % (2 * in_block) == 0 && p.out_channels % (2 * out_block) == 0 && p.in_h * p.in_w >= 2;
}

StrassenConv1x1::StrassenConv1x1(const Conv2dParams& p, const float* weights, const float* bias,
                                 const Activation& activation, const ConvPlan& plan)
    : params_(p), isa_(blocks_isa(p, plan.in_block, plan.out_block, plan.isa)), lanes_(plan.out_block),
      in_block_(plan.in_block), serial_(plan.split == ConvSplit::Serial), activation_(activation) {
  if (plan.kernel != ConvKernel::Strassen) throw Error("StrassenConv1x1: the plan is not a Strassen one");
  if (isa_ == Isa::Ref || isa_ != plan.isa)
    throw Error("StrassenConv1x1: not a 1x1 stride-1 unpadded ungrouped conv with supported blocks (in " +
                std::to_string(plan.in_block) + ", out " + std::to_string(plan.out_block) + ", isa " +
                isa_name(plan.isa) + ")");
  if (activation.kind == ActivationKind::PRelu && !activation.slope)
    throw Error("StrassenConv1x1: PRelu activation without slopes");
  if (plan.strassen_levels < 0 || plan.strassen_levels > 1) throw Error("StrassenConv1x1: levels must be 0 or 1");
  if (plan.split != ConvSplit::Auto && plan.split != ConvSplit::Serial)
    throw Error("StrassenConv1x1: the split is Auto or Serial");
  if (plan.strassen_levels == 1 && !splittable(p, plan.in_block, plan.out_block))
    throw Error("StrassenConv1x1: channels or plane too small to split");
  levels_ = plan.strassen_levels;

  const int64_t group_lanes = lanes_ * (isa_ == Isa::Avx512 ? avx512::kStrassenOcVectors : avx2::kStrassenOcVectors);
  const int64_t oc = p.out_channels, ic = p.in_channels;
  auto w = [&](int64_t o, int64_t i) { return weights[o * ic + i]; };
  full_ = pack(oc, ic, group_lanes, w);
  if (levels_ == 1) {
    const int64_t m = oc / 2, k = ic / 2;
    auto a11 = [&](int64_t o, int64_t i) { return w(o, i); };
    auto a12 = [&](int64_t o, int64_t i) { return w(o, k + i); };
    auto a21 = [&](int64_t o, int64_t i) { return w(m + o, i); };
    auto a22 = [&](int64_t o, int64_t i) { return w(m + o, k + i); };
    half_[0] = pack(m, k, group_lanes, [&](int64_t o, int64_t i) { return a11(o, i) + a22(o, i); });
    half_[1] = pack(m, k, group_lanes, [&](int64_t o, int64_t i) { return a21(o, i) + a22(o, i); });
    half_[2] = pack(m, k, group_lanes, a11);
    half_[3] = pack(m, k, group_lanes, a22);
    half_[4] = pack(m, k, group_lanes, [&](int64_t o, int64_t i) { return a11(o, i) + a12(o, i); });
    half_[5] = pack(m, k, group_lanes, [&](int64_t o, int64_t i) { return a21(o, i) - a11(o, i); });
    half_[6] = pack(m, k, group_lanes, [&](int64_t o, int64_t i) { return a12(o, i) - a22(o, i); });
  }
  bias_ = pad_per_channel(bias, oc, lanes_);
  if (activation.kind == ActivationKind::PRelu) slope_ = pad_per_channel(activation.slope, oc, lanes_);
}

void StrassenConv1x1::run(const float* x, float* y, const float* residual, ThreadPool* pool) const {
#if defined(__x86_64__)
  const Conv2dParams& p = params_;
  const bool avx512 = isa_ == Isa::Avx512;
  auto gemm = avx512 ? avx512::strassen_gemm : avx2::strassen_gemm;
  auto combine = avx512 ? avx512::strassen_combine : avx2::strassen_combine;
  const int64_t mr = avx512 ? avx512::kStrassenPixels : avx2::kStrassenPixels;
  const int64_t nb = avx512 ? avx512::kStrassenOcVectors : avx2::kStrassenOcVectors;
  const int64_t L = lanes_, B = in_block_;
  const int64_t hw = p.in_h * p.in_w, ic = p.in_channels, oc = p.out_channels;
  const bool threaded = pool && pool->size() > 1 && !serial_;
  auto parallel = [&](int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
    if (threaded)
      pool->parallel_for(n, fn);
    else
      fn(0, n);
  };

  StrassenGemmArgs base;
  base.x_block = B;
  base.bias = bias_.data();
  set_activation(base.epilogue, activation_);
  base.epilogue.slope = slope_.data();
  // One product over `pixels` pixels: W (packed, m x k) times the X view, into up to two targets.
  auto product = [&](const float* w, int64_t m, int64_t k, const float* xv, int64_t x_stride, int64_t pixels,
                     const StrassenTarget& t0, const StrassenTarget& t1) {
    StrassenGemmArgs a = base;
    a.k_count = k, a.x = xv, a.x_block_stride = x_stride, a.pixels = pixels;
    a.oc_vectors = m / L, a.w = w;
    a.target[0] = t0, a.target[1] = t1;
    const int64_t items = ((a.oc_vectors + nb - 1) / nb) * ((pixels + mr - 1) / mr);
    parallel(items, [&](int64_t b, int64_t e) { gemm(a, b, e); });
  };
  auto target = [&](float* dst, float sign, bool accumulate, bool final, const float* res, int64_t first) {
    StrassenTarget t;
    t.base = dst, t.block_stride = hw * L, t.sign = sign, t.accumulate = accumulate, t.final = final;
    t.residual = final ? res : nullptr;
    t.first_channel = first;
    return t;
  };
  const StrassenTarget none;

  const int64_t in_image = ic * hw, out_image = oc * hw;
  for (int64_t n = 0; n < p.batch; ++n) {
    const float* xn = x + n * in_image;
    float* yn = y + n * out_image;
    const float* rn = residual ? residual + n * out_image : nullptr;
    if (levels_ == 0) {
      product(full_.data(), oc, ic, xn, hw * B, hw, target(yn, 1.f, false, true, rn, 0), none);
      continue;
    }
    const int64_t m = oc / 2, k = ic / 2, half = hw / 2;
    // Scratch: the five X-side sums ([k / B][half][B] each), and a copy of an in-place residual, which
    // the products would overwrite before the final updates read it.
    const int64_t sum_floats = k * half;
    const bool copy_residual = rn && rn == yn;
    float* scratch = thread_scratch(5 * sum_floats + (copy_residual ? out_image : 0));
    if (copy_residual) {
      std::copy(rn, rn + out_image, scratch + 5 * sum_floats);
      rn = scratch + 5 * sum_floats;
    }
    // Views: X (block stride hw * B) and Y (hw * L) quadrants; the sums have block stride half * B.
    const int64_t xs = hw * B, ss = half * B;
    const float* x11 = xn;
    const float* x12 = xn + half * B;
    const float* x21 = xn + (k / B) * xs;
    const float* x22 = x21 + half * B;
    float* s[5];
    for (int i = 0; i < 5; ++i) s[i] = scratch + i * sum_floats;
    const int64_t blocks = k / B;
    parallel(blocks, [&](int64_t b, int64_t e) {
      combine(s[0], ss, x11, xs, x22, xs, 1.f, B, half, b, e);   // B11 + B22
      combine(s[1], ss, x12, xs, x22, xs, -1.f, B, half, b, e);  // B12 - B22
      combine(s[2], ss, x21, xs, x11, xs, -1.f, B, half, b, e);  // B21 - B11
      combine(s[3], ss, x11, xs, x12, xs, 1.f, B, half, b, e);   // B11 + B12
      combine(s[4], ss, x21, xs, x22, xs, 1.f, B, half, b, e);   // B21 + B22
    });
    float* c11 = yn;
    float* c12 = yn + half * L;
    float* c21 = yn + (m / L) * hw * L;
    float* c22 = c21 + half * L;
    auto res = [&](const float* c) { return rn ? rn + (c - yn) : nullptr; };
    // C11 = M1 + M4 - M5 + M7, C12 = M3 + M5, C21 = M2 + M4, C22 = M1 - M2 + M3 + M6; each quadrant's last
    // update applies the epilogue.
    product(half_[0].data(), m, k, s[0], ss, half, target(c11, 1.f, false, false, nullptr, 0),
            target(c22, 1.f, false, false, nullptr, m));                                        // M1
    product(half_[1].data(), m, k, x11, xs, half, target(c21, 1.f, false, false, nullptr, m),
            target(c22, -1.f, true, false, nullptr, m));                                        // M2
    product(half_[2].data(), m, k, s[1], ss, half, target(c12, 1.f, false, false, nullptr, 0),
            target(c22, 1.f, true, false, nullptr, m));                                         // M3
    product(half_[3].data(), m, k, s[2], ss, half, target(c11, 1.f, true, false, nullptr, 0),
            target(c21, 1.f, true, true, res(c21), m));                                         // M4
    product(half_[4].data(), m, k, x22, xs, half, target(c11, -1.f, true, false, nullptr, 0),
            target(c12, 1.f, true, true, res(c12), 0));                                         // M5
    product(half_[5].data(), m, k, s[3], ss, half, target(c22, 1.f, true, true, res(c22), m), none);  // M6
    product(half_[6].data(), m, k, s[4], ss, half, target(c11, 1.f, true, true, res(c11), 0), none);  // M7
    if (hw % 2 == 1) {  // the last pixel (an odd plane) by a plain product
      const int64_t last = hw - 1;
      product(full_.data(), oc, ic, xn + last * B, xs, 1, target(yn + last * L, 1.f, false, true, res(yn + last * L), 0),
              none);
    }
  }
#else
  (void)x, (void)y, (void)residual, (void)pool;
  throw Error("StrassenConv1x1: x86 only");
#endif
}

}  // namespace ninegrid
