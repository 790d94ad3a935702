// uint8 -> uint8 maps by table: requantisation of a uint8 tensor into another scale and zero point (with an
// activation's clamp), as ng.QRequantize and ng.QConcat run it. A uint8 input has 256 values, so the map is
// built once, by the very float steps of the DequantizeLinear -> [Relu | Clip] -> QuantizeLinear it
// replaces (kernels/ref/quantize_linear_ref.h), and the fused op is the float path's bytes exactly.
#pragma once

#include <array>
#include <cstdint>

namespace ninegrid {

using QuantizedTable = std::array<uint8_t, 256>;

// table[q] = min(max(QuantizeLinear(DequantizeLinear(q; x_scale, x_zero_point); y_scale, y_zero_point),
// qmin), qmax): a Relu before the QuantizeLinear is qmin = y_zero_point and a Clip [lo, hi] is qmin =
// Q(lo), qmax = Q(hi), since quantising is monotonic (graph/passes/qdq_match.cpp's activation_clamp).
QuantizedTable requantize_table(float x_scale, int32_t x_zero_point, float y_scale, int32_t y_zero_point,
                                int32_t qmin, int32_t qmax);

// Whether table[q] = min(max(q, qmin), qmax) for every q (the same scale and zero point in and out): the
// map is then a clamp, or a copy when it spans [0, 255].
bool table_is_clamp(const QuantizedTable& table, int32_t qmin, int32_t qmax);

// A requantisation table as one multiply-add: y = min(max(sat_u8(nearbyint(fma(x, a, b))), qmin), qmax),
// float arithmetic (fma rounded once, halves to even, as the x86 kernels' vfmadd and cvtps2dq in the default
// rounding mode), |a| x 255 + |b| below 2^20 so that nothing overflows. Vector kernels compute this instead
// of looking bytes up where fit_affine_u8 found a and b that give the table's byte for every one of the 256
// inputs, so they are the table exactly (kernels/x86/requantize_u8_affine_x86.h).
struct AffineU8 {
  float a = 1.f, b = 0.f;
  uint8_t qmin = 0, qmax = 255;
};
uint8_t affine_u8_ref(const AffineU8& m, uint8_t x);
// Whether some a, b near the float steps' (a = x_scale / y_scale, b = y_zero_point - x_zero_point * a), each
// zero or a normal float, give `table` exactly; then *m holds them with the clamp [qmin, qmax]. (Exact in
// the default floating-point environment, as the rest of the engine: rounding to nearest, no flushing of
// subnormals.)
bool fit_affine_u8(const QuantizedTable& table, float x_scale, int32_t x_zero_point, float y_scale,
                   int32_t y_zero_point, int32_t qmin, int32_t qmax, AffineU8* m);

// y[i] = table[x[i]] for i < n (x and y may be the same array).
void qlookup_ref(const QuantizedTable& table, const uint8_t* x, uint8_t* y, int64_t n);
// y[i] = min(max(x[i], qmin), qmax) for i < n.
void qclamp_ref(uint8_t qmin, uint8_t qmax, const uint8_t* x, uint8_t* y, int64_t n);

}  // namespace ninegrid
