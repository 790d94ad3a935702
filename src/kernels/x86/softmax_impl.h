// Softmax and LogSoftmax along a strided axis for a vector type V: the elements of one softmax are
// `stride` floats apart (the (outer, axis, inner) view of kernels/ref/softmax.h with inner > 1), so each
// vector holds kLanes neighbouring columns, each its own softmax, and walks down the axis. This is the
// case of detection heads (RetinaFace: 2 classes on the channel axis of a large plane), where a
// vector along the axis would hold only 2 elements. Include only from ISA files, after the simd header.
#pragma once

#include <cstdint>

#include "kernels/x86/vector_math_impl.h"

namespace ninegrid {
namespace {

// The softmax (or log-softmax) of `lanes` (1..kLanes) neighbouring columns starting at x: three sweeps
// down the axis (maximum, exponentials and their sum, normalisation), as the reference does per column.
// Lanes past `lanes` are neither read nor written.
template <class V>
void softmax_column_vector(bool log, const float* x, float* y, int64_t axis, int64_t stride, int lanes) {
  using T = typename V::T;
  const bool whole = lanes == V::kLanes;
  auto load = [=](const float* p) { return whole ? V::load(p) : V::load_first(p, lanes); };
  auto store = [=](float* p, T v) {
    if (whole) V::store(p, v);
    else V::store_first(p, v, lanes);
  };
  // A NaN anywhere in a column makes its sum NaN, so the whole column comes out NaN whatever the
  // maximum holds (as in the reference); +inf makes x - max NaN, likewise.
  T max = load(x);
  for (int64_t a = 1; a < axis; ++a) max = V::max(max, load(x + a * stride));
  T sum = V::zero();
  for (int64_t a = 0; a < axis; ++a) {
    const T e = exp_v<V>(V::sub(load(x + a * stride), max));
    sum = V::add(sum, e);
    if (!log) store(y + a * stride, e);
  }
  if (log) {
    // (x - max) - log(sum), as the reference: x - max is exact for nearby values, and sum >= 1 (the
    // maximum contributes e^0), so log_v's normal-input domain holds.
    const T log_sum = log_v<V>(sum);
    for (int64_t a = 0; a < axis; ++a)
      store(y + a * stride, V::sub(V::sub(load(x + a * stride), max), log_sum));
  } else {
    const T inv_sum = V::div(V::set1(1.f), sum);
    for (int64_t a = 0; a < axis; ++a) store(y + a * stride, V::mul(load(y + a * stride), inv_sum));
  }
}

// `count` columns starting at x (axis entries `stride` apart, stride >= count), kLanes at a time.
template <class V>
void softmax_columns_vectors(bool log, const float* x, float* y, int64_t axis, int64_t count, int64_t stride) {
  constexpr int kLanes = V::kLanes;
  int64_t i = 0;
  for (; i + kLanes <= count; i += kLanes) softmax_column_vector<V>(log, x + i, y + i, axis, stride, kLanes);
  if (i < count) softmax_column_vector<V>(log, x + i, y + i, axis, stride, static_cast<int>(count - i));
}

}  // namespace
}  // namespace ninegrid
