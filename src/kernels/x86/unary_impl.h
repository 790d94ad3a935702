// Float element-wise activations and math functions for a vector type V: the ops of ref::UnaryF32 that
// CNNs use, each a map over whole vectors and one masked last vector. They follow the reference formulas
// (kernels/ref/unary_f32.cpp) case by case, including what NaN, +-inf and +-0 give, with the vector exp,
// expm1 and log1p of vector_math_impl.h in place of libm. Include only from ISA files, after the simd
// header.
#pragma once

#include <cstdint>

#include "kernels/ref/unary_f32.h"
#include "kernels/x86/vector_math_impl.h"

namespace ninegrid {
namespace {

// y[k] = f(x[k]) for k < n; x and y may be the same array.
template <class V, class F>
void map_vectors(const float* x, float* y, int64_t n, F f) {
  constexpr int kLanes = V::kLanes;
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes) V::store(y + k, f(V::load(x + k)));
  if (k < n) {
    const int rest = static_cast<int>(n - k);
    V::store_first(y + k, f(V::load_first(x + k, rest)), rest);
  }
}

// min(1, max(0, v)) as the reference's std::min(1.f, std::max(0.f, v)): NaN gives 0 (V::max returns its
// second operand when either is NaN), -0 gives +0.
template <class V>
typename V::T clamp01_v(typename V::T v) {
  return V::min(V::max(v, V::zero()), V::set1(1.f));
}


// tanh |x| = (e^2|x| - 1) / (e^2|x| + 1), with expm1 so that small |x| keeps its relative accuracy, and
// the sign of x put back (tanh(-0) = -0). From |x| = 9.01 on tanh rounds to 1, so |x| is clamped at 10
// (keeping NaN) before e^2|x| could overflow into inf / inf.
template <class V>
typename V::T tanh_v(typename V::T x) {
  using T = typename V::T;
  const T a = V::min(V::set1(10.f), V::abs(x));
  const T e = expm1_v<V>(V::add(a, a));
  return V::copy_sign(V::div(e, V::add(e, V::set1(2.f))), x);
}

// x > 0 ? x : alpha (e^x - 1); NaN takes the second branch and stays NaN.
template <class V>
typename V::T elu_v(typename V::T x, typename V::T alpha) {
  return V::select_greater(x, V::zero(), x, V::mul(alpha, expm1_v<V>(x)));
}

// log(1 + e^x) = max(x, 0) + log(1 + e^-|x|) (the reference's two branches in one): no overflow for large
// x, and for very negative x the result is e^x itself, through log1p's relative accuracy.
template <class V>
typename V::T softplus_v(typename V::T x) {
  return V::add(V::max(x, V::zero()), log1p_small<V>(exp_v<V>(V::sub(V::zero(), V::abs(x)))));
}

// Gelu's tanh form x/2 (1 + tanh(z)), z = sqrt(2/pi) (x + 0.044715 x^3), computed as x sigmoid(2z) (the
// same function: 1 + tanh(z) = 2 sigmoid(2z)), which does not cancel where tanh(z) nears -1.
template <class V>
typename V::T gelu_tanh_v(typename V::T x) {
  using T = typename V::T;
  const T x3 = V::mul(V::mul(x, x), x);
  const T two_z = V::mul(V::set1(2.f * 0.79788456080286536f), V::fmadd(V::set1(0.044715f), x3, x));
  return V::mul(x, sigmoid_v<V>(two_z));
}

// y = op(x) over n elements for the ops with a vector kernel; returns false, touching nothing, for the
// others (the caller runs the reference).
template <class V>
bool unary_f32_vectors(ref::UnaryF32 op, const ref::UnaryParams& p, const float* x, float* y, int64_t n) {
  using T = typename V::T;
  using ref::UnaryF32;
  const T alpha = V::set1(p.alpha), beta = V::set1(p.beta), gamma = V::set1(p.gamma);
  switch (op) {
    case UnaryF32::LeakyRelu:
      map_vectors<V>(x, y, n, [=](T v) { return V::scale_negative(v, alpha); });
      return true;
    case UnaryF32::HardSigmoid:
      map_vectors<V>(x, y, n, [=](T v) { return clamp01_v<V>(V::add(V::mul(alpha, v), beta)); });
      return true;
    case UnaryF32::HardSwish:
      map_vectors<V>(x, y, n, [](T v) {
        return V::mul(v, clamp01_v<V>(V::add(V::mul(v, V::set1(1.f / 6.f)), V::set1(0.5f))));
      });
      return true;
    case UnaryF32::Tanh:
      map_vectors<V>(x, y, n, [](T v) { return tanh_v<V>(v); });
      return true;
    case UnaryF32::Elu:
      map_vectors<V>(x, y, n, [=](T v) { return elu_v<V>(v, alpha); });
      return true;
    case UnaryF32::Selu:
      map_vectors<V>(x, y, n, [=](T v) { return V::mul(gamma, elu_v<V>(v, alpha)); });
      return true;
    case UnaryF32::Softplus:
      map_vectors<V>(x, y, n, [](T v) { return softplus_v<V>(v); });
      return true;
    case UnaryF32::GeluTanh:
      map_vectors<V>(x, y, n, [](T v) { return gelu_tanh_v<V>(v); });
      return true;
    case UnaryF32::Exp:
      map_vectors<V>(x, y, n, [](T v) { return exp_v<V>(v); });
      return true;
    case UnaryF32::Sigmoid:
      map_vectors<V>(x, y, n, [](T v) { return sigmoid_v<V>(v); });
      return true;
    case UnaryF32::Silu:
      map_vectors<V>(x, y, n, [](T v) { return V::mul(v, sigmoid_v<V>(v)); });
      return true;
    default:
      return false;
  }
}

}  // namespace
}  // namespace ninegrid
