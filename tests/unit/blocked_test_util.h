// Helpers shared by the tests of the channel-blocked ops: random tensors and NCHW <-> NCHW[B]c written
// from the layout's definition (element (n, c, p) of the plain tensor at (n * C + c) * plane + p, of the
// blocked one at blocked_offset), independent of the reorder kernels under test.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
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

// Any element type (the int8 ops' uint8 and int8 tensors too): elements are moved as bytes.
inline Tensor to_blocked(const Tensor& x, int64_t block) {
  const int64_t n = x.dim(0), c = x.dim(1), plane = x.dim(2) * x.dim(3);
  const size_t elem = dtype_size(x.dtype());
  Tensor y = Tensor::empty(x.dtype(), x.shape());
  const auto* src = static_cast<const unsigned char*>(x.data());
  auto* dst = static_cast<unsigned char*>(y.data());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < plane; ++p)
        std::memcpy(dst + blocked_offset(b, ch, p, c, plane, block) * elem, src + ((b * c + ch) * plane + p) * elem,
                    elem);
  return y;
}

inline Tensor from_blocked(const Tensor& y, int64_t block) {
  const int64_t n = y.dim(0), c = y.dim(1), plane = y.dim(2) * y.dim(3);
  const size_t elem = dtype_size(y.dtype());
  Tensor x = Tensor::empty(y.dtype(), y.shape());
  const auto* src = static_cast<const unsigned char*>(y.data());
  auto* dst = static_cast<unsigned char*>(x.data());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < plane; ++p)
        std::memcpy(dst + ((b * c + ch) * plane + p) * elem, src + blocked_offset(b, ch, p, c, plane, block) * elem,
                    elem);
  return x;
}

// Float tensors equal bit for bit: NaNs, infinities and the sign of zero included. Names the first few
// elements that differ.
inline void expect_same_bits(const Tensor& want, const Tensor& got) {
  ASSERT_EQ(got.shape(), want.shape());
  int64_t bad = 0;
  for (int64_t i = 0; i < want.numel(); ++i)
    if (std::memcmp(want.data_as<float>() + i, got.data_as<float>() + i, sizeof(float)) != 0 && bad++ < 5)
      ADD_FAILURE() << "element " << i << ": want " << want.data_as<float>()[i] << ", got " << got.data_as<float>()[i];
  EXPECT_EQ(bad, 0) << "of " << want.numel();
}

}  // namespace blocked_test
}  // namespace ninegrid
