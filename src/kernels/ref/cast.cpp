#include "kernels/ref/cast.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/ref/float16.h"

namespace ninegrid {
namespace ref {

namespace {

// Storage types for the element kinds C++ has no arithmetic type for.
struct Half { uint16_t bits; };
struct BFloat { uint16_t bits; };
struct Bool8 { uint8_t v; };

template <class T>
constexpr bool is_integer = std::is_integral<T>::value;

// ---- reading: every source becomes either a double (floating sources, exactly) or an integer ----

inline double as_double(float x) { return x; }
inline double as_double(double x) { return x; }
inline double as_double(Half x) { return half_to_float(x.bits); }
inline double as_double(BFloat x) { return bfloat16_to_float(x.bits); }

// An integer as a double that rounds to any narrower format exactly as the integer itself would: above
// 2^53 the bits that do not fit are folded into a sticky low bit, so the later rounding step still sees
// whether the discarded part was zero, a half, or more.
template <class I>
double integer_for_narrowing(I v) {
  const bool negative = std::is_signed<I>::value && v < 0;
  uint64_t mag = negative ? uint64_t(0) - static_cast<uint64_t>(static_cast<int64_t>(v)) : static_cast<uint64_t>(v);
  int shift = 0;
  while ((mag >> shift) >= (uint64_t(1) << 53)) ++shift;
  if (shift > 0) {
    const uint64_t lost = mag & ((uint64_t(1) << shift) - 1);
    mag = (mag >> shift) | (lost ? 1u : 0u);
  }
  const double d = std::ldexp(static_cast<double>(mag), shift);
  return negative ? -d : d;
}

// ---- writing ----

// Floating value -> integer type: truncate, NaN -> 0, saturate to the 64-bit range, then wrap.
template <class To>
To float_to_integer(double x) {
  if (std::isnan(x)) return To(0);
  x = std::trunc(x);
  if (std::is_same<To, uint64_t>::value) {
    if (x >= 18446744073709551616.0) return static_cast<To>(std::numeric_limits<uint64_t>::max());
    if (x >= 0) return static_cast<To>(static_cast<uint64_t>(x));
  }
  int64_t i;
  if (x >= 9223372036854775808.0) i = std::numeric_limits<int64_t>::max();
  else if (x < -9223372036854775808.0) i = std::numeric_limits<int64_t>::min();
  else i = static_cast<int64_t>(x);
  return static_cast<To>(i);
}

inline float double_to_float(double x) {
  // Beyond FLT_MAX plus half an ulp the result is infinity; converting such a value directly is
  // undefined behaviour in C++, so handle it here.
  const double kOverflow = 340282356779733661637539395458142568448.0;  // 2^128 - 2^103
  if (x >= kOverflow) return std::numeric_limits<float>::infinity();
  if (x <= -kOverflow) return -std::numeric_limits<float>::infinity();
  return static_cast<float>(x);
}

template <class To>
struct Write {
  // From a floating source (exact double).
  static To from_double(double x) { return float_to_integer<To>(x); }
  // From an integer source.
  template <class I>
  static To from_integer(I v) { return static_cast<To>(v); }
};
template <>
struct Write<float> {
  static float from_double(double x) { return double_to_float(x); }
  template <class I>
  static float from_integer(I v) { return static_cast<float>(v); }  // one correctly rounded conversion
};
template <>
struct Write<double> {
  static double from_double(double x) { return x; }
  template <class I>
  static double from_integer(I v) { return static_cast<double>(v); }
};
template <>
struct Write<Half> {
  static Half from_double(double x) { return Half{double_to_half(x)}; }
  template <class I>
  static Half from_integer(I v) { return Half{double_to_half(integer_for_narrowing(v))}; }
};
template <>
struct Write<BFloat> {
  static BFloat from_double(double x) { return BFloat{double_to_bfloat16(x)}; }
  template <class I>
  static BFloat from_integer(I v) { return BFloat{double_to_bfloat16(integer_for_narrowing(v))}; }
};
template <>
struct Write<Bool8> {
  static Bool8 from_double(double x) { return Bool8{static_cast<uint8_t>(x != 0.0 ? 1 : 0)}; }  // NaN != 0
  template <class I>
  static Bool8 from_integer(I v) { return Bool8{static_cast<uint8_t>(v != 0 ? 1 : 0)}; }
};

template <class From, class To>
To convert_one(From x) {
  if constexpr (std::is_same<From, Bool8>::value) {
    return Write<To>::from_integer(static_cast<int64_t>(x.v != 0));
  } else if constexpr (is_integer<From>) {
    return Write<To>::from_integer(x);
  } else {
    return Write<To>::from_double(as_double(x));
  }
}

template <class From, class To>
void convert_all(const void* src, void* dst, int64_t n) {
  // memcpy per element: tensors wrapped from user memory need not be aligned for From / To.
  const unsigned char* s = static_cast<const unsigned char*>(src);
  unsigned char* d = static_cast<unsigned char*>(dst);
  for (int64_t i = 0; i < n; ++i) {
    From x;
    std::memcpy(&x, s + i * sizeof(From), sizeof(From));
    const To y = convert_one<From, To>(x);
    std::memcpy(d + i * sizeof(To), &y, sizeof(To));
  }
}

template <class From>
void convert_from(const void* src, void* dst, DataType to, int64_t n) {
  switch (to) {
    case DataType::Float32: return convert_all<From, float>(src, dst, n);
    case DataType::Float64: return convert_all<From, double>(src, dst, n);
    case DataType::Float16: return convert_all<From, Half>(src, dst, n);
    case DataType::BFloat16: return convert_all<From, BFloat>(src, dst, n);
    case DataType::Int8: return convert_all<From, int8_t>(src, dst, n);
    case DataType::Int16: return convert_all<From, int16_t>(src, dst, n);
    case DataType::Int32: return convert_all<From, int32_t>(src, dst, n);
    case DataType::Int64: return convert_all<From, int64_t>(src, dst, n);
    case DataType::UInt8: return convert_all<From, uint8_t>(src, dst, n);
    case DataType::UInt16: return convert_all<From, uint16_t>(src, dst, n);
    case DataType::UInt32: return convert_all<From, uint32_t>(src, dst, n);
    case DataType::UInt64: return convert_all<From, uint64_t>(src, dst, n);
    case DataType::Bool: return convert_all<From, Bool8>(src, dst, n);
    default: throw Error(std::string("cast to ") + dtype_name(to) + " is unsupported");
  }
}

}  // namespace

bool cast_supported(DataType t) {
  switch (t) {
    case DataType::Float32: case DataType::Float64: case DataType::Float16: case DataType::BFloat16:
    case DataType::Int8: case DataType::Int16: case DataType::Int32: case DataType::Int64:
    case DataType::UInt8: case DataType::UInt16: case DataType::UInt32: case DataType::UInt64:
    case DataType::Bool:
      return true;
    default:
      return false;
  }
}

void cast_elements(const void* src, DataType from, void* dst, DataType to, int64_t n) {
  if (n <= 0) return;
  if (from == to) {
    std::memcpy(dst, src, static_cast<size_t>(n) * dtype_size(from));
    return;
  }
  switch (from) {
    case DataType::Float32: return convert_from<float>(src, dst, to, n);
    case DataType::Float64: return convert_from<double>(src, dst, to, n);
    case DataType::Float16: return convert_from<Half>(src, dst, to, n);
    case DataType::BFloat16: return convert_from<BFloat>(src, dst, to, n);
    case DataType::Int8: return convert_from<int8_t>(src, dst, to, n);
    case DataType::Int16: return convert_from<int16_t>(src, dst, to, n);
    case DataType::Int32: return convert_from<int32_t>(src, dst, to, n);
    case DataType::Int64: return convert_from<int64_t>(src, dst, to, n);
    case DataType::UInt8: return convert_from<uint8_t>(src, dst, to, n);
    case DataType::UInt16: return convert_from<uint16_t>(src, dst, to, n);
    case DataType::UInt32: return convert_from<uint32_t>(src, dst, to, n);
    case DataType::UInt64: return convert_from<uint64_t>(src, dst, to, n);
    case DataType::Bool: return convert_from<Bool8>(src, dst, to, n);
    default: throw Error(std::string("cast from ") + dtype_name(from) + " is unsupported");
  }
}

}  // namespace ref
}  // namespace ninegrid
