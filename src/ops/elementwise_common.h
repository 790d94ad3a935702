// Helpers shared by the element-wise, softmax and reduction operators: mapping a DataType to its C++
// type (visit_dtype), checking supported types with an "unsupported" error, broadcasting shapes with an
// error naming them, and splitting a loop over the session's thread pool.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/ref/broadcast.h"
#include "kernels/ref/elementwise_loops.h"
#include "ops/op.h"
#include "core/thread_pool.h"

namespace ninegrid {

template <class T>
struct TypeTag {
  using type = T;
};
template <class... Ts>
struct TypeList {};

using FloatTypes = TypeList<float, double>;
using SignedTypes = TypeList<float, double, int8_t, int16_t, int32_t, int64_t>;
using NumericTypes = TypeList<float, double, int8_t, uint8_t, int16_t, uint16_t, int32_t, int64_t, uint32_t, uint64_t>;
// What the comparison Equal accepts: numbers and bool.
using EqualityTypes =
    TypeList<float, double, int8_t, uint8_t, int16_t, uint16_t, int32_t, int64_t, uint32_t, uint64_t, bool>;

// Calls fn(TypeTag<T>{}) with the C++ type T of `dtype` if T is in the list. Returns whether it did.
template <class... Ts, class Fn>
bool visit_dtype(TypeList<Ts...>, DataType dtype, Fn&& fn) {
  return ((dtype == DataTypeOf<Ts>::value ? (fn(TypeTag<Ts>{}), true) : false) || ...);
}

template <class... Ts>
bool dtype_in(TypeList<Ts...>, DataType dtype) {
  return ((dtype == DataTypeOf<Ts>::value) || ...);
}

// "float32, float64, int32" for error messages.
template <class... Ts>
std::string dtype_list(TypeList<Ts...>) {
  std::string s;
  ((s += (s.empty() ? "" : ", ") + std::string(dtype_name(DataTypeOf<Ts>::value))), ...);
  return s;
}

// Throws "<what> has unsupported type float16 (supported: float32, ...)" unless dtype is in the list.
template <class List>
void require_dtype(const Op& op, List list, DataType dtype, const char* what) {
  if (!dtype_in(list, dtype))
    op.error(std::string(what) + " has unsupported type " + dtype_name(dtype) + " (supported: " + dtype_list(list) +
             ")");
}

// The numpy broadcast of `shapes`; throws a node error naming them if they do not broadcast.
Shape broadcast_or_throw(const Op& op, const std::vector<Shape>& shapes);

// Below this many elements a loop runs on the calling thread: waking the workers would cost more.
constexpr int64_t kParallelGrain = int64_t(1) << 15;

// fn(begin, end) over [0, n), split across the pool when `work` (elements touched) is large enough.
template <class Fn>
void parallel_range(ThreadPool* pool, int64_t n, int64_t work, Fn&& fn) {
  if (n <= 0) return;
  if (pool == nullptr || pool->size() <= 1 || n == 1 || work < kParallelGrain) {
    fn(int64_t(0), n);
    return;
  }
  pool->parallel_for(n, fn);
}

// fn(begin, end) over the rows [0, N * C / block * H) of a tensor of logical shape [N, C, H, W] stored in
// channel blocks of `block` (1: plain NCHW), a row being W * block elements. Split across the pool so
// that every thread takes the same band of rows in each plane, the band the direct-family convs give it
// on both sides of this op (row_band_chunks, ops/conv_fast.h): a flat split would give each thread whole
// planes, half of them written by the other core. Where those convs split by channels instead (more
// channels than pixels, or a batch), so does this: flat.
// Whether a layer's threads split it in bands of rows (the test row_band_chunks and parallel_row_bands
// share): one image, at least a row per thread, and fewer channels than pixels.
inline bool splits_in_row_bands(int64_t batch, int64_t channels, int64_t h, int64_t w, int64_t threads) {
  return threads > 1 && batch == 1 && h >= threads && channels < h * w;
}

template <class Fn>
void parallel_row_bands(ThreadPool* pool, const Shape& nchw, int64_t block, int64_t work, Fn&& fn) {
  const int64_t planes = nchw[0] * (nchw[1] / block), h = nchw[2];
  const int64_t threads = pool ? pool->size() : 1;
  if (work < kParallelGrain || !splits_in_row_bands(nchw[0], nchw[1], h, nchw[3], threads)) {
    parallel_range(pool, planes * h, work, fn);
    return;
  }
  pool->parallel_for(threads, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t r0 = h * t / threads, r1 = h * (t + 1) / threads;
      for (int64_t plane = 0; plane < planes; ++plane) fn(plane * h + r0, plane * h + r1);
    }
  });
}

// y = f(a, b) with numpy broadcasting; y already has the broadcast shape.
template <class A, class B, class Y, class F>
void run_broadcast_binary(ThreadPool* pool, const Tensor& a, const Tensor& b, Tensor& y, F f) {
  const ref::BroadcastIndexer ix(y.shape(), {a.shape(), b.shape()});
  const A* ap = a.data_as<A>();
  const B* bp = b.data_as<B>();
  Y* yp = y.data_as<Y>();
  parallel_range(pool, ix.numel(), ix.numel(),
                 [&](int64_t begin, int64_t end) { ref::binary_broadcast(ix, ap, bp, yp, begin, end, f); });
}

}  // namespace ninegrid
