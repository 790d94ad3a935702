// exp, expm1, log1p and log on float vectors, for a vector type V (simd_avx512.h, simd_avx2.h). Include
// only from ISA files, after the simd header; everything here has internal linkage (CMakeLists.txt's ODR
// note). The coefficients are the Taylor series' own (1/k!, 1/(2k+1)), and each function states the
// error bound its tests (tests/unit/unary_x86_test.cpp) check, in units of u = 2^-24 (half an ulp at 1).
#pragma once

#include <cstdint>

namespace ninegrid {
namespace {

// x = n * ln2 + r with n an integer (held in a float) and |r| <= ln2/2 (plus a rounding), after clamping
// x to [lo, hi]. The clamp keeps NaN: V::max / V::min return their second operand when either is NaN.
template <class V>
struct Ln2Split {
  typename V::T n, r;
};

template <class V>
Ln2Split<V> split_ln2(typename V::T x, float lo, float hi) {
  using T = typename V::T;
  // ln2 = kLn2Hi + kLn2Lo: kLn2Hi is ln2 rounded to float (a multiple of 2^-24). With |n| <= 150,
  // x - n * kLn2Hi is exact in one fused multiply-add: x and n * kLn2Hi are both multiples of 2^-25 or
  // x is smaller than ln2/2 (then n = 0), and the difference is below 1/2, so it fits in 24 bits.
  constexpr float kLn2Hi = 0.693147182464599609375f;
  constexpr float kLn2Lo = -1.90465429995776916e-09f;
  constexpr float kLog2e = 1.44269504088896341f;
  x = V::min(V::set1(hi), V::max(V::set1(lo), x));
  const T n = V::round_nearest(V::mul(x, V::set1(kLog2e)));
  T r = V::fmadd(n, V::set1(-kLn2Hi), x);
  r = V::fmadd(n, V::set1(-kLn2Lo), r);
  return {n, r};
}

// e^r - 1 for |r| <= 0.35: r + r^2 (1/2! + r/3! + ... + r^5/7!). The terms left out are below
// |r|^8/8! < 5.2e-9, which is 0.13u relative to e^r (>= 0.707) and 0.3u relative to e^r - 1 (at least
// 0.84 |r| there); the six fused steps add about 1u.
template <class V>
typename V::T expm1_reduced(typename V::T r) {
  using T = typename V::T;
  T p = V::set1(1.f / 5040.f);
  p = V::fmadd(p, r, V::set1(1.f / 720.f));
  p = V::fmadd(p, r, V::set1(1.f / 120.f));
  p = V::fmadd(p, r, V::set1(1.f / 24.f));
  p = V::fmadd(p, r, V::set1(1.f / 6.f));
  p = V::fmadd(p, r, V::set1(0.5f));
  return V::fmadd(V::mul(r, r), p, r);
}

// e^x = 2^n (1 + (e^r - 1)). Error within 2u (1 ulp) where the result is normal. Overflows to inf from
// x = 88.7228 (n reaches 128 below the clamp at 89), underflows through the subnormals to 0 from
// x = -103.97 (the clamp at -104 keeps n >= -150, which scale_pow2 handles); NaN stays NaN.
template <class V>
typename V::T exp_v(typename V::T x) {
  const Ln2Split<V> s = split_ln2<V>(x, -104.f, 89.f);
  return V::scale_pow2(V::add(V::set1(1.f), expm1_reduced<V>(s.r)), s.n);
}

// 1 / (1 + e^-x): e^-x overflows to inf below x = -88.7, giving 0 as the reference does; NaN stays NaN.
// x is first capped at 87: beyond, e^-x is below half an ulp of 1 so the result is 1 all the same, but
// e^-x itself would be subnormal, and producing subnormals costs Zen 4 several times the arithmetic
// (measured on a conv's fused SiLU: bench/REPORT.md, "Design decisions and their measurements"). (Also
// the conv kernels' fused Sigmoid and SiLU, conv_epilogue_impl.h.)
template <class V>
typename V::T sigmoid_v(typename V::T x) {
  const typename V::T one = V::set1(1.f);
  const typename V::T capped = V::min(V::set1(87.f), x);  // min keeps its second operand's NaN
  return V::div(one, V::add(one, exp_v<V>(V::sub(V::zero(), capped))));
}

// e^x - 1 = 2^n ((e^r - 1) + (1 - 2^-n)), accurate in relative terms near 0 where e^x - 1 cancels (n = 0
// there, so the result is the reduced series itself). Error within 4u (2 ulp). Below x = -30 the result
// is -1 in float (e^-30 < 2^-25 is under half an ulp of 1), so the clamp there keeps 2^-n finite. The
// result takes x's sign bit, which it always has, so that expm1(-0) = -0 (the series gives +0).
template <class V>
typename V::T expm1_v(typename V::T x) {
  using T = typename V::T;
  const Ln2Split<V> s = split_ln2<V>(x, -30.f, 89.f);
  const T one = V::set1(1.f);
  const T one_minus_inv_pow2 = V::sub(one, V::scale_pow2(one, V::sub(V::zero(), s.n)));
  return V::copy_sign(V::scale_pow2(V::add(expm1_reduced<V>(s.r), one_minus_inv_pow2), s.n), x);
}

// log(1 + t) for t in [-0.3, 1]: with s = t / (2 + t) (|s| <= 1/3), log(1 + t) = 2 atanh(s) =
// 2s (1 + s^2/3 + s^4/5 + ... + s^14/15). The terms left out are below 1.2 * s^16/17 < 1.6e-9 = 0.03u
// relative; s carries 2u from its division and sum, the series about 1.5u. Error within 4u (2 ulp).
template <class V>
typename V::T log1p_small(typename V::T t) {
  using T = typename V::T;
  const T s = V::div(t, V::add(V::set1(2.f), t));
  const T s2 = V::mul(s, s);
  T p = V::set1(1.f / 15.f);
  p = V::fmadd(p, s2, V::set1(1.f / 13.f));
  p = V::fmadd(p, s2, V::set1(1.f / 11.f));
  p = V::fmadd(p, s2, V::set1(1.f / 9.f));
  p = V::fmadd(p, s2, V::set1(1.f / 7.f));
  p = V::fmadd(p, s2, V::set1(1.f / 5.f));
  p = V::fmadd(p, s2, V::set1(1.f / 3.f));
  const T two_s = V::add(s, s);
  return V::fmadd(V::mul(two_s, s2), p, two_s);
}

// log(x) for positive normal x (and NaN, which stays NaN): x = m 2^e with m in [sqrt(1/2), sqrt(2)), so
// log(x) = e ln2 + log(1 + (m - 1)), where m - 1 is exact (Sterbenz) and within log1p_small's range.
template <class V>
typename V::T log_v(typename V::T x) {
  using T = typename V::T;
  constexpr float kSqrt2 = 1.41421356237309505f;
  constexpr float kLn2Hi = 0.693147182464599609375f;
  constexpr float kLn2Lo = -1.90465429995776916e-09f;
  const T one = V::set1(1.f), sqrt2 = V::set1(kSqrt2);
  const T m1 = V::mantissa(x), e1 = V::exponent(x);  // m1 in [1, 2)
  const T m = V::select_greater(m1, sqrt2, V::mul(m1, V::set1(0.5f)), m1);
  const T e = V::select_greater(m1, sqrt2, V::add(e1, one), e1);
  const T log_m = log1p_small<V>(V::sub(m, one));
  const T y = V::fmadd(e, V::set1(kLn2Hi), V::fmadd(e, V::set1(kLn2Lo), log_m));
  // AVX2's exponent/mantissa read the bits, which turns NaN into a number: x - x is 0 for finite x and
  // NaN for NaN, and adding it restores the NaN.
  return V::add(y, V::sub(x, x));
}

}  // namespace
}  // namespace ninegrid
