#include "kernels/pool_blocked_fast.h"

#include <algorithm>
#include <vector>

#if defined(__x86_64__) || defined(__aarch64__)
#include "kernels/x86/pool_x86.h"
#define NINEGRID_POOL_KERNELS 1
#endif

namespace ninegrid {

#if NINEGRID_POOL_KERNELS
namespace {

// The windows of p resolved for the vector kernels (kept alive by the vectors it points into).
struct Windows {
  std::vector<PoolAxisWindow> rows, cols;
  PoolBlockedWindows view{};

  explicit Windows(const PoolParams& p) : rows(pool_axis_windows(p, 1)), cols(pool_axis_windows(p, 2)) {
    view.rows = rows.data();
    view.cols = cols.data();
    // The columns whose window has every tap inside the input row: one contiguous run, since a window's
    // start grows with the column (none: an empty run).
    const auto full = [&](const PoolAxisWindow& w) { return w.k_begin == 0 && w.k_end == p.kernel[2]; };
    const auto first = std::find_if(cols.begin(), cols.end(), full);
    const auto last = std::find_if_not(first, cols.end(), full);
    view.full_begin = first - cols.begin();
    view.full_end = last - cols.begin();
  }
};

}  // namespace
#endif

Isa pool_blocked_isa(int64_t block, Isa isa) {
#if defined(__x86_64__)
  isa = runnable_isa(isa);
  if (block == 16 && isa >= Isa::Avx512) return Isa::Avx512;
  if (block == 8 && isa >= Isa::Avx2) return Isa::Avx2;
#elif defined(__aarch64__)
  isa = runnable_isa(isa);
  if (block == 4 && is_arm_isa(isa)) return Isa::Neon;
#endif
  return Isa::Ref;
}

namespace {

// The fp32 and int8 MaxPool share one dispatch: the ISA files overload max_pool_blocked on the element type.
template <class E>
void max_pool_blocked_dispatch(Isa isa, const PoolParams& p, int64_t block, const E* x, E* y, int64_t row_begin,
                               int64_t row_end) {
  if (row_begin >= row_end) return;
#if NINEGRID_POOL_KERNELS
  isa = pool_blocked_isa(block, isa);
  if (isa != Isa::Ref) {
    const Windows w(p);
#if defined(__aarch64__)
    neon::max_pool_blocked(p, w.view, x, y, row_begin, row_end);
#else
    if (isa == Isa::Avx512) avx512::max_pool_blocked(p, w.view, x, y, row_begin, row_end);
    else avx2::max_pool_blocked(p, w.view, x, y, row_begin, row_end);
#endif
    return;
  }
#endif
  max_pool_blocked_ref(p, block, x, y, row_begin, row_end);
}

}  // namespace

void max_pool_blocked_fast(Isa isa, const PoolParams& p, int64_t block, const float* x, float* y, int64_t row_begin,
                           int64_t row_end) {
  max_pool_blocked_dispatch(isa, p, block, x, y, row_begin, row_end);
}

void max_pool_blocked_fast(Isa isa, const PoolParams& p, int64_t block, const uint8_t* x, uint8_t* y,
                           int64_t row_begin, int64_t row_end) {
  max_pool_blocked_dispatch(isa, p, block, x, y, row_begin, row_end);
}

void max_pool_blocked_fast(Isa isa, const PoolParams& p, int64_t block, const int8_t* x, int8_t* y, int64_t row_begin,
                           int64_t row_end) {
  max_pool_blocked_dispatch(isa, p, block, x, y, row_begin, row_end);
}

void average_pool_blocked_fast(Isa isa, const PoolParams& p, bool count_include_pad, int64_t block, const float* x,
                               float* y, int64_t row_begin, int64_t row_end) {
  if (row_begin >= row_end) return;
#if NINEGRID_POOL_KERNELS
  isa = pool_blocked_isa(block, isa);
  if (isa != Isa::Ref) {
    const Windows w(p);
#if defined(__aarch64__)
    neon::average_pool_blocked(p, count_include_pad, w.view, x, y, row_begin, row_end);
#else
    if (isa == Isa::Avx512) avx512::average_pool_blocked(p, count_include_pad, w.view, x, y, row_begin, row_end);
    else avx2::average_pool_blocked(p, count_include_pad, w.view, x, y, row_begin, row_end);
#endif
    return;
  }
#endif
  average_pool_blocked_ref(p, count_include_pad, block, x, y, row_begin, row_end);
}

void global_average_pool_blocked_fast(Isa isa, int64_t plane_size, int64_t block, const float* x, float* y,
                                      int64_t begin, int64_t end) {
  if (begin >= end) return;
#if defined(__x86_64__)
  isa = pool_blocked_isa(block, isa);
  if (isa == Isa::Avx512) return avx512::global_average_pool_blocked(plane_size, x, y, begin, end);
  if (isa == Isa::Avx2) return avx2::global_average_pool_blocked(plane_size, x, y, begin, end);
#elif defined(__aarch64__)
  if (pool_blocked_isa(block, isa) == Isa::Neon) return neon::global_average_pool_blocked(plane_size, x, y, begin, end);
#endif
  global_average_pool_blocked_ref(plane_size, block, x, y, begin, end);
}

}  // namespace ninegrid
