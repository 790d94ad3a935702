// Helpers shared by the tests of the channel-blocked ops: random tensors and NCHW <-> NCHW[B]c written
// from the layout's definition (element (n, c, p) of the plain tensor at (n * C + c) * plane + p, of the
// blocked one at blocked_offset), independent of the reorder kernels under test.
#pragma once

#include <random>

#include "kernels/ref/reorder_ref.h"
#include "ninegrid/tensor.h"

namespace ninegrid {
namespace blocked_test {

inline Tensor random_tensor(const Shape& shape, unsigned seed, float lo = -4.f, float hi = 4.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  Tensor t = Tensor::empty(DataType::Float32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = dist(rng);
  return t;
}

inline Tensor to_blocked(const Tensor& x, int64_t block) {
  const int64_t n = x.dim(0), c = x.dim(1), plane = x.dim(2) * x.dim(3);
  Tensor y = Tensor::empty(DataType::Float32, x.shape());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < plane; ++p)
        y.data_as<float>()[blocked_offset(b, ch, p, c, plane, block)] = x.data_as<float>()[(b * c + ch) * plane + p];
  return y;
}

inline Tensor from_blocked(const Tensor& y, int64_t block) {
  const int64_t n = y.dim(0), c = y.dim(1), plane = y.dim(2) * y.dim(3);
  Tensor x = Tensor::empty(DataType::Float32, y.shape());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < plane; ++p)
        x.data_as<float>()[(b * c + ch) * plane + p] = y.data_as<float>()[blocked_offset(b, ch, p, c, plane, block)];
  return x;
}

}  // namespace blocked_test
}  // namespace ninegrid
