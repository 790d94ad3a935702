#include "kernels/ref/reduce.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/ref/scalar_math.h"

namespace ninegrid {
namespace ref {

ReduceGeometry make_reduce_geometry(const std::vector<int64_t>& shape, const std::vector<bool>& reduce_axis) {
  ReduceGeometry g;
  g.out_numel = 1;
  g.reduce_count = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    const bool red = d < reduce_axis.size() && reduce_axis[d];
    (red ? g.reduce_count : g.out_numel) *= shape[d];
    if (shape[d] == 1) continue;  // contributes nothing to the layout
    if (!g.dims.empty() && static_cast<bool>(g.reduced.back()) == red) {
      g.dims.back() *= shape[d];
    } else {
      g.dims.push_back(shape[d]);
      g.reduced.push_back(red);
    }
  }
  // Always end with a reduced dimension when nothing is reduced, so each output reduces one element.
  if (g.dims.empty() || !std::count(g.reduced.begin(), g.reduced.end(), 1)) {
    g.dims.push_back(1);
    g.reduced.push_back(1);
  }
  g.work_units = g.reduced.back() ? g.out_numel : (g.dims.back() == 0 ? 0 : g.out_numel / g.dims.back());
  return g;
}

namespace {

// Walks a set of dimensions in row-major order, tracking the element offset.
struct Odometer {
  std::vector<int64_t> dims, strides, index;
  int64_t offset = 0;

  void add(int64_t dim, int64_t stride) {
    dims.push_back(dim);
    strides.push_back(stride);
    index.push_back(0);
  }
  int64_t count() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }
  void reset() {
    offset = 0;
    for (auto& i : index) i = 0;
  }
  // Position `linear` (< count(), so no dimension is 0).
  void seek(int64_t linear) {
    offset = 0;
    for (size_t d = dims.size(); d-- > 0;) {
      index[d] = linear % dims[d];
      linear /= dims[d];
      offset += index[d] * strides[d];
    }
  }
  void next() {
    for (size_t d = dims.size(); d-- > 0;) {
      offset += strides[d];
      if (++index[d] < dims[d]) return;
      offset -= strides[d] * dims[d];
      index[d] = 0;
    }
  }
};

// Accumulators. Each has Acc init(), add(Acc&, T) and T finish(Acc, count).
template <class T>
using SumAcc = std::conditional_t<std::is_floating_point_v<T>, double, T>;

template <class T>
struct SumP {
  using Acc = SumAcc<T>;
  Acc init() const { return 0; }
  void add(Acc& a, T v) const { a = add_wrap<Acc>(a, static_cast<Acc>(v)); }
  T finish(Acc a, int64_t) const { return static_cast<T>(a); }
};
template <class T>
struct MeanP : SumP<T> {
  using Acc = SumAcc<T>;
  T finish(Acc a, int64_t count) const {
    if constexpr (std::is_floating_point_v<T>) return static_cast<T>(a / static_cast<double>(count));  // 0/0 is NaN
    else return count == 0 ? T(0) : static_cast<T>(static_cast<int64_t>(a) / count);
  }
};
template <class T>
struct MaxP {
  using Acc = T;
  Acc init() const {
    return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
  }
  void add(Acc& a, T v) const { a = MaxOp()(a, v); }
  T finish(Acc a, int64_t) const { return a; }
};
template <class T>
struct MinP {
  using Acc = T;
  Acc init() const {
    return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
  }
  void add(Acc& a, T v) const { a = MinOp()(a, v); }
  T finish(Acc a, int64_t) const { return a; }
};
template <class T>
struct ProdP {
  using Acc = SumAcc<T>;
  Acc init() const { return 1; }
  void add(Acc& a, T v) const { a = mul_wrap<Acc>(a, static_cast<Acc>(v)); }
  T finish(Acc a, int64_t) const { return static_cast<T>(a); }
};
template <class T>
struct L1P : SumP<T> {
  using Acc = SumAcc<T>;
  void add(Acc& a, T v) const { a = add_wrap<Acc>(a, static_cast<Acc>(abs_wrap(v))); }
};
template <class T>
struct SumSquareP : SumP<T> {
  using Acc = SumAcc<T>;
  void add(Acc& a, T v) const {
    const Acc w = static_cast<Acc>(v);
    a = add_wrap<Acc>(a, mul_wrap<Acc>(w, w));
  }
};
// The rest accumulate in double whatever T is, and convert back with saturation.
template <class T>
struct L2P {
  using Acc = double;
  Acc init() const { return 0; }
  void add(Acc& a, T v) const { a += static_cast<double>(v) * static_cast<double>(v); }
  T finish(Acc a, int64_t) const { return saturate_cast<T>(std::sqrt(a)); }
};
template <class T>
struct LogSumP {
  using Acc = double;
  Acc init() const { return 0; }
  void add(Acc& a, T v) const { a += static_cast<double>(v); }
  T finish(Acc a, int64_t) const { return saturate_cast<T>(std::log(a)); }
};
// log(sum(exp(v))) as max + log(sum(exp(v - max))), with the maximum tracked online.
struct LogSumExpAcc {
  double max;
  double sum;
};
template <class T>
struct LogSumExpP {
  using Acc = LogSumExpAcc;
  Acc init() const { return {-std::numeric_limits<double>::infinity(), 0.0}; }
  void add(Acc& a, T v) const {
    const double d = static_cast<double>(v);
    if (d > a.max) {
      a.sum = a.sum * std::exp(a.max - d) + 1.0;
      a.max = d;
    } else if (d == a.max) {  // also infinities equal to the maximum, where d - max would be NaN
      a.sum += 1.0;
    } else {
      a.sum += std::exp(d - a.max);
    }
  }
  T finish(Acc a, int64_t) const { return saturate_cast<T>(a.max + std::log(a.sum)); }
};

template <class T, class P>
void reduce_with(const P& p, const ReduceGeometry& g, const T* x, T* y, int64_t begin, int64_t end) {
  using Acc = typename P::Acc;
  const size_t nd = g.dims.size();
  std::vector<int64_t> stride(nd, 1);
  for (size_t d = nd - 1; d-- > 0;) stride[d] = stride[d + 1] * g.dims[d + 1];
  const int64_t run = g.dims.back();
  Odometer kept, red;
  for (size_t d = 0; d + 1 < nd; ++d) (g.reduced[d] ? red : kept).add(g.dims[d], stride[d]);
  const int64_t red_count = red.count();
  if (begin >= end) return;
  kept.seek(begin);

  if (g.reduced.back()) {
    // One output per unit; the innermost `run` elements are contiguous.
    for (int64_t u = begin; u < end; ++u, kept.next()) {
      Acc acc = p.init();
      red.reset();
      for (int64_t r = 0; r < red_count; ++r, red.next()) {
        const T* src = x + kept.offset + red.offset;
        for (int64_t j = 0; j < run; ++j) p.add(acc, src[j]);
      }
      y[u] = p.finish(acc, g.reduce_count);
    }
  } else {
    // One row of `run` outputs per unit, accumulated together.
    std::vector<Acc> acc(static_cast<size_t>(run));
    for (int64_t u = begin; u < end; ++u, kept.next()) {
      for (auto& a : acc) a = p.init();
      red.reset();
      for (int64_t r = 0; r < red_count; ++r, red.next()) {
        const T* src = x + kept.offset + red.offset;
        for (int64_t j = 0; j < run; ++j) p.add(acc[j], src[j]);
      }
      T* dst = y + u * run;
      for (int64_t j = 0; j < run; ++j) dst[j] = p.finish(acc[j], g.reduce_count);
    }
  }
}

}  // namespace

template <class T>
void reduce(ReduceKind kind, const ReduceGeometry& g, const T* x, T* y, int64_t begin, int64_t end) {
  switch (kind) {
    case ReduceKind::Sum: return reduce_with(SumP<T>(), g, x, y, begin, end);
    case ReduceKind::Mean: return reduce_with(MeanP<T>(), g, x, y, begin, end);
    case ReduceKind::Max: return reduce_with(MaxP<T>(), g, x, y, begin, end);
    case ReduceKind::Min: return reduce_with(MinP<T>(), g, x, y, begin, end);
    case ReduceKind::Prod: return reduce_with(ProdP<T>(), g, x, y, begin, end);
    case ReduceKind::L1: return reduce_with(L1P<T>(), g, x, y, begin, end);
    case ReduceKind::L2: return reduce_with(L2P<T>(), g, x, y, begin, end);
    case ReduceKind::SumSquare: return reduce_with(SumSquareP<T>(), g, x, y, begin, end);
    case ReduceKind::LogSum: return reduce_with(LogSumP<T>(), g, x, y, begin, end);
    case ReduceKind::LogSumExp: return reduce_with(LogSumExpP<T>(), g, x, y, begin, end);
  }
}

template <class T>
void arg_reduce(const T* x, int64_t* y, int64_t axis, int64_t inner, bool want_max, bool last_index, int64_t begin,
                int64_t end) {
  for (int64_t u = begin; u < end; ++u) {
    const int64_t o = u / inner, i = u % inner;
    const T* p = x + o * axis * inner + i;
    int64_t best = 0;
    T best_value = p[0];
    for (int64_t a = 1; a < axis; ++a) {
      const T v = p[a * inner];
      const bool better = want_max ? (last_index ? v >= best_value : v > best_value)
                                   : (last_index ? v <= best_value : v < best_value);
      if (better) {
        best_value = v;
        best = a;
      }
    }
    y[u] = best;
  }
}

#define NINEGRID_REDUCE_INSTANTIATE(T) \
  template void reduce<T>(ReduceKind, const ReduceGeometry&, const T*, T*, int64_t, int64_t);
NINEGRID_REDUCE_INSTANTIATE(float)
NINEGRID_REDUCE_INSTANTIATE(double)
NINEGRID_REDUCE_INSTANTIATE(int32_t)
NINEGRID_REDUCE_INSTANTIATE(int64_t)

#define NINEGRID_ARG_REDUCE_INSTANTIATE(T) \
  template void arg_reduce<T>(const T*, int64_t*, int64_t, int64_t, bool, bool, int64_t, int64_t);
NINEGRID_ARG_REDUCE_INSTANTIATE(float)
NINEGRID_ARG_REDUCE_INSTANTIATE(double)
NINEGRID_ARG_REDUCE_INSTANTIATE(int8_t)
NINEGRID_ARG_REDUCE_INSTANTIATE(uint8_t)
NINEGRID_ARG_REDUCE_INSTANTIATE(int16_t)
NINEGRID_ARG_REDUCE_INSTANTIATE(uint16_t)
NINEGRID_ARG_REDUCE_INSTANTIATE(int32_t)
NINEGRID_ARG_REDUCE_INSTANTIATE(int64_t)
NINEGRID_ARG_REDUCE_INSTANTIATE(uint32_t)
NINEGRID_ARG_REDUCE_INSTANTIATE(uint64_t)

}  // namespace ref
}  // namespace ninegrid
