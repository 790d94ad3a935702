// Scalar arithmetic shared by the element-wise kernels, defined for every element type without undefined
// behaviour: signed integers wrap on overflow (as two's complement hardware does) instead of being UB,
// integer division by zero gives 0 instead of a trap, and float-to-integer conversions saturate.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace ninegrid {
namespace ref {

// The unsigned type in which T's arithmetic wraps without integer promotion to a signed int.
template <class T>
using WrapType = std::make_unsigned_t<std::common_type_t<T, unsigned>>;

template <class T>
inline T add_wrap(T a, T b) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b));
  else return a + b;
}
template <class T>
inline T sub_wrap(T a, T b) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<WrapType<T>>(a) - static_cast<WrapType<T>>(b));
  else return a - b;
}
template <class T>
inline T mul_wrap(T a, T b) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b));
  else return a * b;
}
template <class T>
inline T neg_wrap(T a) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(WrapType<T>(0) - static_cast<WrapType<T>>(a));
  else return -a;
}
template <class T>
inline T abs_wrap(T a) {
  if constexpr (std::is_unsigned_v<T>) return a;
  else if constexpr (std::is_integral_v<T>) return a < 0 ? neg_wrap(a) : a;
  else return std::fabs(a);
}

// Integer division truncates toward zero (C semantics, as ONNX Runtime does); x / 0 gives 0 and
// MIN / -1 wraps to MIN instead of trapping.
template <class T>
inline T div_safe(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>)
      if (b == -1) return neg_wrap(a);
    return static_cast<T>(a / b);
  } else {
    return a / b;
  }
}

// ONNX Mod with fmod=0 (integers only): the remainder takes the divisor's sign, like Python's %.
template <class T>
inline T mod_floor(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;
    T r = static_cast<T>(a % b);
    if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
    return r;
  } else {
    return static_cast<T>(a % b);
  }
}

// ONNX Mod with fmod=1: the remainder takes the dividend's sign, like C's fmod and %.
template <class T>
inline T mod_trunc(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::fmod(a, b);
  } else {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>)
      if (b == -1) return 0;
    return static_cast<T>(a % b);
  }
}

// double -> T, clamped to T's range (NaN gives 0), so out-of-range values are not undefined behaviour.
template <class T>
inline T saturate_cast(double v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    if (std::isnan(v)) return 0;
    if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    // max() of 64-bit types is not exactly representable: compare against 2^bits instead.
    const double upper = std::ldexp(1.0, std::numeric_limits<T>::digits);
    if (v >= upper) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  }
}

// Rounds halves to the nearest even integer (ONNX Round), independent of the FPU rounding mode.
inline float round_half_even(float x) {
  const float r = std::round(x);  // halves away from zero
  if (std::fabs(x - std::trunc(x)) == 0.5f) return 2.0f * std::round(x * 0.5f);
  return r;
}

// Binary functors for the broadcasting loops. Each maps (a, b) to one output element.
struct AddOp { template <class T> T operator()(T a, T b) const { return add_wrap(a, b); } };
struct SubOp { template <class T> T operator()(T a, T b) const { return sub_wrap(a, b); } };
struct MulOp { template <class T> T operator()(T a, T b) const { return mul_wrap(a, b); } };
struct DivOp { template <class T> T operator()(T a, T b) const { return div_safe(a, b); } };
struct ModFloorOp { template <class T> T operator()(T a, T b) const { return mod_floor(a, b); } };
struct ModTruncOp { template <class T> T operator()(T a, T b) const { return mod_trunc(a, b); } };
// Max/Min propagate NaN like numpy's maximum/minimum.
struct MaxOp {
  template <class T> T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(a) || std::isnan(b)) return a + b;
    return b > a ? b : a;
  }
};
struct MinOp {
  template <class T> T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(a) || std::isnan(b)) return a + b;
    return b < a ? b : a;
  }
};
// Pow with a base of type B and an exponent of type E, giving B (ONNX Pow-12+).
struct PowOp {
  template <class B, class E> B operator()(B base, E exponent) const {
    if constexpr (std::is_same_v<B, float> && std::is_same_v<E, float>) return std::pow(base, exponent);
    else return saturate_cast<B>(std::pow(static_cast<double>(base), static_cast<double>(exponent)));
  }
};
struct EqualOp { template <class T> bool operator()(T a, T b) const { return a == b; } };
struct LessOp { template <class T> bool operator()(T a, T b) const { return a < b; } };
struct LessEqualOp { template <class T> bool operator()(T a, T b) const { return a <= b; } };
struct GreaterOp { template <class T> bool operator()(T a, T b) const { return a > b; } };
struct GreaterEqualOp { template <class T> bool operator()(T a, T b) const { return a >= b; } };
struct AndOp { bool operator()(bool a, bool b) const { return a && b; } };
struct OrOp { bool operator()(bool a, bool b) const { return a || b; } };
struct XorOp { bool operator()(bool a, bool b) const { return a != b; } };
// PRelu: x where x >= 0, slope * x elsewhere.
struct PReluOp {
  template <class T> T operator()(T x, T slope) const { return x < 0 ? mul_wrap(slope, x) : x; }
};

}  // namespace ref
}  // namespace ninegrid
