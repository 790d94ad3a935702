#include "kernels/ref/winograd_ref.h"

#include <string>

#include "ninegrid/tensor.h"

namespace ninegrid {

namespace {

constexpr int kR = 3;  // kernel side

// Coefficients (lowest power first) of prod_{l in points, l != skip} (x - l).
std::vector<double> product_of_roots(const std::vector<double>& points, int skip) {
  std::vector<double> poly{1.0};
  for (int l = 0; l < static_cast<int>(points.size()); ++l) {
    if (l == skip) continue;
    std::vector<double> next(poly.size() + 1, 0.0);
    for (size_t i = 0; i < poly.size(); ++i) {
      next[i] -= points[l] * poly[i];
      next[i + 1] += poly[i];
    }
    poly = next;
  }
  return poly;
}

// Toom-Cook with the finite points p_0 .. p_{alpha-2} and infinity (the last row/column), which makes
// y = A^T ((G g) (.) (B^T d)) the correlation y_i = sum_k d_{i+k} g_k:
//   A^T[i][j] = p_j^i, A^T[i][alpha-1] = [i == m-1]
//   G[j][k] = p_j^k / prod_{l != j} (p_j - p_l), G[alpha-1][k] = [k == r-1]
//   B^T[j] = coefficients of prod_{l != j} (x - p_l), B^T[alpha-1] = those of prod_l (x - p_l)
WinogradMatrices build(int m, const std::vector<double>& points) {
  WinogradMatrices w;
  w.m = m;
  w.alpha = m + kR - 1;
  const int n = w.alpha;
  w.at.assign(static_cast<size_t>(m * n), 0.0);
  w.g.assign(static_cast<size_t>(n * kR), 0.0);
  w.bt.assign(static_cast<size_t>(n * n), 0.0);
  for (int i = 0; i < m; ++i) {
    double power = 1.0;
    for (int j = 0; j < n - 1; ++j) {
      power = 1.0;
      for (int e = 0; e < i; ++e) power *= points[j];
      w.at[i * n + j] = power;
    }
  }
  w.at[(m - 1) * n + n - 1] = 1.0;
  for (int j = 0; j < n - 1; ++j) {
    double denominator = 1.0;
    for (int l = 0; l < n - 1; ++l)
      if (l != j) denominator *= points[j] - points[l];
    double power = 1.0;
    for (int k = 0; k < kR; ++k, power *= points[j]) w.g[j * kR + k] = power / denominator;
  }
  w.g[(n - 1) * kR + kR - 1] = 1.0;
  for (int j = 0; j < n; ++j) {
    const std::vector<double> poly = product_of_roots(points, j < n - 1 ? j : -1);
    for (size_t l = 0; l < poly.size(); ++l) w.bt[j * n + static_cast<int>(l)] = poly[l];
  }
  return w;
}

}  // namespace

const WinogradMatrices& winograd_matrices(int m) {
  static const WinogradMatrices f2 = build(2, {0.0, 1.0, -1.0});
  static const WinogradMatrices f4 = build(4, {0.0, 1.0, -1.0, 2.0, -2.0});
  static const WinogradMatrices f6 = build(6, {0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5});
  switch (m) {
    case 2: return f2;
    case 4: return f4;
    case 6: return f6;
  }
  throw Error("winograd: unsupported output tile " + std::to_string(m) + " (2, 4 or 6)");
}

bool winograd_applicable(const Conv2dParams& p) {
  return p.kernel_h == 3 && p.kernel_w == 3 && p.stride_h == 1 && p.stride_w == 1 && p.dilation_h == 1 &&
         p.dilation_w == 1 && p.groups == 1 && p.batch >= 1 && p.in_channels >= 1 && p.out_channels >= 1 &&
         p.in_h >= 1 && p.in_w >= 1 && p.out_h >= 1 && p.out_w >= 1 && p.pad_top >= 0 && p.pad_left >= 0;
}

namespace {

// U = G g G^T, the tile's size known to the compiler so that both products unroll (the generic loops were a
// third of ResNet-18's load time), for two pairs at once, one per lane of a GCC vector of two doubles (an SSE2
// or NEON register), row i of G g computed just before the row of U that uses it, so that the kernels, the
// row and a sum stay in registers. Each lane adds in the order of the plain loops, starting from 0.0 as they
// did (which keeps the sign of a zero sum: -0 + 0 is +0), and no product is fused into an FMA (this file is
// built without FMA on x86-64 and with -ffp-contract=off on AArch64: CMakeLists.txt), so the result is the
// same to the bit.
template <int N>
void transform_pairs(const WinogradMatrices& t, const float* kernels, int64_t pairs, int64_t pair_stride,
                     int64_t position_stride, float* out) {
  constexpr int kLanes = 2;
  using Lanes = double __attribute__((vector_size(kLanes * sizeof(double))));
  double g[N][kR];
  for (int i = 0; i < N; ++i)
    for (int k = 0; k < kR; ++k) g[i][k] = t.g[i * kR + k];
  for (int64_t pair = 0; pair < pairs; pair += kLanes) {
    const bool both = pair + 1 < pairs;
    const float* w = kernels + pair * kR * kR;
    Lanes x[kR][kR];
    for (int k = 0; k < kR * kR; ++k) x[k / kR][k % kR] = Lanes{w[k], both ? w[kR * kR + k] : 0.0};
    float* u = out + pair * pair_stride;
    for (int i = 0; i < N; ++i) {
      Lanes gg[kR];  // row i of G g
      for (int c = 0; c < kR; ++c) gg[c] = 0.0 + g[i][0] * x[0][c] + g[i][1] * x[1][c] + g[i][2] * x[2][c];
      for (int j = 0; j < N; ++j) {
        const Lanes v = 0.0 + gg[0] * g[j][0] + gg[1] * g[j][1] + gg[2] * g[j][2];
        u[(i * N + j) * position_stride] = static_cast<float>(v[0]);
        if (both) u[pair_stride + (i * N + j) * position_stride] = static_cast<float>(v[1]);
      }
    }
  }
}

}  // namespace

void winograd_transform_weights(int m, const float* kernels, int64_t pairs, int64_t pair_stride,
                                int64_t position_stride, float* out) {
  const WinogradMatrices& t = winograd_matrices(m);
  switch (t.alpha) {
    case 4: transform_pairs<4>(t, kernels, pairs, pair_stride, position_stride, out); break;
    case 6: transform_pairs<6>(t, kernels, pairs, pair_stride, position_stride, out); break;
    default: transform_pairs<8>(t, kernels, pairs, pair_stride, position_stride, out); break;
  }
}

void winograd_transform_weights(int m, const float* kernels, int64_t pairs, float* out) {
  const int n = winograd_matrices(m).alpha;
  winograd_transform_weights(m, kernels, pairs, n * n, 1, out);
}

std::vector<float> winograd_transform_weights(int m, const float* oihw, int64_t out_channels, int64_t in_channels) {
  const int n = winograd_matrices(m).alpha;
  std::vector<float> u(static_cast<size_t>(out_channels * in_channels * n * n));
  winograd_transform_weights(m, oihw, out_channels * in_channels, u.data());
  return u;
}

void conv2d_winograd_ref(const Conv2dParams& p, const Epilogue& epilogue, int m, const float* x, const float* w,
                         const float* bias, float* y) {
  if (!winograd_applicable(p)) throw Error("conv2d_winograd_ref: not a 3x3 stride-1 dilation-1 ungrouped conv");
  const WinogradMatrices& t = winograd_matrices(m);
  const int n = t.alpha;
  std::vector<float> at(t.at.begin(), t.at.end()), bt(t.bt.begin(), t.bt.end());
  const std::vector<float> u = winograd_transform_weights(m, w, p.out_channels, p.in_channels);

  const int64_t ic_count = p.in_channels, oc_count = p.out_channels;
  const int64_t in_plane = p.in_h * p.in_w, out_plane = p.out_h * p.out_w;
  const int64_t tiles_h = (p.out_h + m - 1) / m, tiles_w = (p.out_w + m - 1) / m;
  std::vector<float> v(static_cast<size_t>(ic_count * n * n));  // V of one tile, every input channel
  std::vector<float> d(static_cast<size_t>(n * n)), tmp(static_cast<size_t>(n * n));
  std::vector<float> acc(static_cast<size_t>(n * n)), out(static_cast<size_t>(m * n));

  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t ty = 0; ty < tiles_h; ++ty) {
      for (int64_t tx = 0; tx < tiles_w; ++tx) {
        const int64_t ih0 = ty * m - p.pad_top, iw0 = tx * m - p.pad_left;
        // V = B^T d B for each input channel, d the zero-padded input patch.
        for (int64_t ic = 0; ic < ic_count; ++ic) {
          const float* xc = x + (b * ic_count + ic) * in_plane;
          for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
              const int64_t ih = ih0 + i, iw = iw0 + j;
              d[i * n + j] = ih >= 0 && ih < p.in_h && iw >= 0 && iw < p.in_w ? xc[ih * p.in_w + iw] : 0.f;
            }
          for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
              float s = 0.f;
              for (int k = 0; k < n; ++k) s += bt[i * n + k] * d[k * n + j];
              tmp[i * n + j] = s;
            }
          float* vc = v.data() + ic * n * n;
          for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
              float s = 0.f;
              for (int k = 0; k < n; ++k) s += tmp[i * n + k] * bt[j * n + k];
              vc[i * n + j] = s;
            }
        }
        for (int64_t oc = 0; oc < oc_count; ++oc) {
          // M = sum_ic U (.) V, then Y = A^T M A.
          for (float& f : acc) f = 0.f;
          for (int64_t ic = 0; ic < ic_count; ++ic) {
            const float* uc = u.data() + (oc * ic_count + ic) * n * n;
            const float* vc = v.data() + ic * n * n;
            for (int e = 0; e < n * n; ++e) acc[e] += uc[e] * vc[e];
          }
          for (int i = 0; i < m; ++i)
            for (int j = 0; j < n; ++j) {
              float s = 0.f;
              for (int k = 0; k < n; ++k) s += at[i * n + k] * acc[k * n + j];
              out[i * n + j] = s;
            }
          const int64_t plane = b * oc_count + oc;
          for (int i = 0; i < m; ++i) {
            const int64_t oh = ty * m + i;
            if (oh >= p.out_h) break;
            for (int j = 0; j < m; ++j) {
              const int64_t ow = tx * m + j;
              if (ow >= p.out_w) break;
              float s = 0.f;
              for (int k = 0; k < n; ++k) s += out[i * n + k] * at[j * n + k];
              const int64_t index = plane * out_plane + oh * p.out_w + ow;
              float value = s + (bias ? bias[oc] : 0.f);
              if (epilogue.residual) value += epilogue.residual[index];
              y[index] = apply_activation(epilogue.activation, value, oc);
            }
          }
        }
      }
    }
  }
}

}  // namespace ninegrid
