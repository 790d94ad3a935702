// Inner loops of the element-wise operators: a functor applied along one contiguous run, and drivers that
// walk a BroadcastIndexer's runs. Each stepping pattern (both operands advance, or one repeats a single
// value) has its own loop so the compiler can vectorise it.
#pragma once

#include <cstdint>

#include "kernels/ref/broadcast.h"

namespace ninegrid {
namespace ref {

// y[k] = f(x[k]) for k < n.
template <class X, class Y, class F>
inline void map_run(const X* x, Y* y, int64_t n, F f) {
  for (int64_t k = 0; k < n; ++k) y[k] = f(x[k]);
}

// y[k] = f(a[k or 0], b[k or 0]) for k < n: a_steps / b_steps say whether each operand advances.
template <class A, class B, class Y, class F>
inline void binary_run(const A* a, bool a_steps, const B* b, bool b_steps, Y* y, int64_t n, F f) {
  if (a_steps && b_steps) {
    for (int64_t k = 0; k < n; ++k) y[k] = f(a[k], b[k]);
  } else if (a_steps) {
    const B bv = *b;
    for (int64_t k = 0; k < n; ++k) y[k] = f(a[k], bv);
  } else if (b_steps) {
    const A av = *a;
    for (int64_t k = 0; k < n; ++k) y[k] = f(av, b[k]);
  } else {
    const Y v = f(*a, *b);
    for (int64_t k = 0; k < n; ++k) y[k] = v;
  }
}

// Output elements [begin, end) of y = f(a, b) with a and b broadcast by `ix` (inputs 0 and 1).
template <class A, class B, class Y, class F>
void binary_broadcast(const BroadcastIndexer& ix, const A* a, const B* b, Y* y, int64_t begin, int64_t end, F f) {
  const bool as = ix.steps_along_run(0), bs = ix.steps_along_run(1);
  ix.for_each_run(begin, end, [&](const int64_t* off, int64_t o, int64_t n) {
    binary_run(a + off[0], as, b + off[1], bs, y + o, n, f);
  });
}

// Output elements [begin, end) of y = cond ? x : z, all three broadcast by `ix`. T is any type of the
// elements' size: selection copies bits.
template <class T>
void where_broadcast(const BroadcastIndexer& ix, const bool* cond, const T* x, const T* z, T* y, int64_t begin,
                     int64_t end) {
  const int64_t sc = ix.steps_along_run(0) ? 1 : 0;
  const int64_t sx = ix.steps_along_run(1) ? 1 : 0;
  const int64_t sz = ix.steps_along_run(2) ? 1 : 0;
  ix.for_each_run(begin, end, [&](const int64_t* off, int64_t o, int64_t n) {
    const bool* c = cond + off[0];
    const T* xp = x + off[1];
    const T* zp = z + off[2];
    T* yp = y + o;
    for (int64_t k = 0; k < n; ++k) yp[k] = c[k * sc] ? xp[k * sx] : zp[k * sz];
  });
}

}  // namespace ref
}  // namespace ninegrid
