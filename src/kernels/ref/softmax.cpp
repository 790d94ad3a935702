#include "kernels/ref/softmax.h"

#include <cmath>
#include <limits>
#include <vector>

namespace ninegrid {
namespace ref {

namespace {

// One contiguous row of `n` elements (inner == 1).
void softmax_row(SoftmaxKind kind, const float* x, float* y, int64_t n) {
  if (n <= 0) return;
  int64_t arg = 0;
  float max = x[0];
  for (int64_t k = 1; k < n; ++k)
    if (x[k] > max) {
      max = x[k];
      arg = k;
    }
  if (kind == SoftmaxKind::Hardmax) {
    for (int64_t k = 0; k < n; ++k) y[k] = k == arg ? 1.f : 0.f;
    return;
  }
  double sum = 0;
  if (kind == SoftmaxKind::Softmax) {
    for (int64_t k = 0; k < n; ++k) {
      y[k] = std::exp(x[k] - max);
      sum += y[k];
    }
    const float scale = static_cast<float>(1.0 / sum);
    for (int64_t k = 0; k < n; ++k) y[k] *= scale;
  } else {
    for (int64_t k = 0; k < n; ++k) sum += std::exp(x[k] - max);
    // (x - max) is exact for nearby values; folding max into the log term would round it at max's scale.
    const float log_sum = static_cast<float>(std::log(sum));
    for (int64_t k = 0; k < n; ++k) y[k] = (x[k] - max) - log_sum;
  }
}

// A (axis, inner) slice with inner > 1: the axis is strided, so keep per-column statistics and sweep the
// slice row by row (contiguous accesses) instead of column by column.
// `inner` columns are processed; consecutive axis entries are `stride` floats apart (stride >= inner when
// the slice is a column range of a wider one).
void softmax_strided(SoftmaxKind kind, const float* x, float* y, int64_t axis, int64_t inner, int64_t stride,
                     float* max, int64_t* arg, double* sum) {
  for (int64_t i = 0; i < inner; ++i) {
    max[i] = x[i];
    arg[i] = 0;
    sum[i] = 0;
  }
  for (int64_t a = 1; a < axis; ++a) {
    const float* row = x + a * stride;
    for (int64_t i = 0; i < inner; ++i)
      if (row[i] > max[i]) {
        max[i] = row[i];
        arg[i] = a;
      }
  }
  if (kind == SoftmaxKind::Hardmax) {
    for (int64_t a = 0; a < axis; ++a)
      for (int64_t i = 0; i < inner; ++i) y[a * stride + i] = arg[i] == a ? 1.f : 0.f;
    return;
  }
  for (int64_t a = 0; a < axis; ++a) {
    const float* row = x + a * stride;
    float* out = y + a * stride;
    for (int64_t i = 0; i < inner; ++i) {
      const float e = std::exp(row[i] - max[i]);
      if (kind == SoftmaxKind::Softmax) out[i] = e;
      sum[i] += e;
    }
  }
  if (kind == SoftmaxKind::Softmax) {
    for (int64_t i = 0; i < inner; ++i) sum[i] = 1.0 / sum[i];
    for (int64_t a = 0; a < axis; ++a)
      for (int64_t i = 0; i < inner; ++i) y[a * stride + i] *= static_cast<float>(sum[i]);
  } else {
    for (int64_t i = 0; i < inner; ++i) sum[i] = std::log(sum[i]);
    for (int64_t a = 0; a < axis; ++a)
      for (int64_t i = 0; i < inner; ++i)
        y[a * stride + i] = (x[a * stride + i] - max[i]) - static_cast<float>(sum[i]);
  }
}

}  // namespace

void softmax_f32(SoftmaxKind kind, const float* x, float* y, int64_t axis, int64_t inner, int64_t outer_begin,
                 int64_t outer_end) {
  if (axis <= 0 || inner <= 0) return;
  const int64_t slice = axis * inner;
  if (inner == 1) {
    for (int64_t o = outer_begin; o < outer_end; ++o) softmax_row(kind, x + o * slice, y + o * slice, axis);
    return;
  }
  std::vector<float> max(static_cast<size_t>(inner));
  std::vector<int64_t> arg(static_cast<size_t>(inner));
  std::vector<double> sum(static_cast<size_t>(inner));
  for (int64_t o = outer_begin; o < outer_end; ++o)
    softmax_strided(kind, x + o * slice, y + o * slice, axis, inner, inner, max.data(), arg.data(), sum.data());
}

void softmax_f32_columns(SoftmaxKind kind, const float* x, float* y, int64_t axis, int64_t inner, int64_t outer,
                         int64_t col_begin, int64_t col_end) {
  if (axis <= 0 || inner <= 0 || col_begin >= col_end) return;
  const int64_t count = col_end - col_begin, offset = outer * axis * inner + col_begin;
  std::vector<float> max(static_cast<size_t>(count));
  std::vector<int64_t> arg(static_cast<size_t>(count));
  std::vector<double> sum(static_cast<size_t>(count));
  softmax_strided(kind, x + offset, y + offset, axis, count, inner, max.data(), arg.data(), sum.data());
}

}  // namespace ref
}  // namespace ninegrid
