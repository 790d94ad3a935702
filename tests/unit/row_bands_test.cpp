// parallel_row_bands (ops/elementwise_common.h): every row of every plane is handed out exactly once, and
// with a pool, on one image with fewer channels than pixels, each call is one thread's band of one plane,
// the band the convs give that thread.
#include <gtest/gtest.h>

#include <mutex>
#include <utility>
#include <vector>

#include "core/thread_pool.h"
#include "ninegrid/tensor.h"
#include "ops/elementwise_common.h"

namespace ninegrid {
namespace {

// The calls parallel_row_bands makes, as (begin, end) pairs.
std::vector<std::pair<int64_t, int64_t>> calls_of(ThreadPool* pool, const Shape& nchw, int64_t block, int64_t work) {
  std::mutex m;
  std::vector<std::pair<int64_t, int64_t>> calls;
  parallel_row_bands(pool, nchw, block, work, [&](int64_t b, int64_t e) {
    std::lock_guard<std::mutex> lock(m);
    calls.emplace_back(b, e);
  });
  return calls;
}

void expect_each_row_once(const std::vector<std::pair<int64_t, int64_t>>& calls, int64_t rows) {
  std::vector<int> seen(rows, 0);
  for (auto [b, e] : calls) {
    ASSERT_LE(0, b);
    ASSERT_LE(b, e);
    ASSERT_LE(e, rows);
    for (int64_t r = b; r < e; ++r) ++seen[r];
  }
  for (int64_t r = 0; r < rows; ++r) EXPECT_EQ(seen[r], 1) << "row " << r;
}

TEST(RowBands, EachCallIsOneThreadsBandOfOnePlane) {
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    for (int64_t h : {3, 7, 40, 41}) {
      for (int64_t block : {1, 16}) {
        for (int64_t planes : {1, 4, 9}) {
          const Shape nchw{1, planes * block, h, 64};
          SCOPED_TRACE(std::to_string(threads) + " threads, " + shape_str(nchw) + " in blocks of " +
                       std::to_string(block));
          const auto calls = calls_of(&pool, nchw, block, kParallelGrain);
          expect_each_row_once(calls, planes * h);
          for (auto [b, e] : calls) {
            const int64_t plane = b / h, r0 = b - plane * h, r1 = e - plane * h;
            bool is_band = false;
            for (int t = 0; t < threads; ++t) is_band |= r0 == h * t / threads && r1 == h * (t + 1) / threads;
            EXPECT_TRUE(is_band) << "rows [" << r0 << ", " << r1 << ") of plane " << plane;
          }
        }
      }
    }
  }
}

TEST(RowBands, FlatWhereTheConvsSplitOtherwiseOrThereIsLittleWork) {
  ThreadPool pool(3);
  // Below the grain: one call. Fewer rows than threads, a batch, or as many channels as pixels (the
  // convs split by channels there): flat ranges of rows, each row once.
  EXPECT_EQ(calls_of(&pool, {1, 80, 40, 8}, 16, kParallelGrain - 1).size(), 1u);
  expect_each_row_once(calls_of(&pool, {1, 80, 40, 8}, 16, kParallelGrain - 1), 200);
  for (const Shape& nchw : {Shape{1, 80, 2, 50}, Shape{2, 48, 20, 20}, Shape{1, 512, 7, 7}, Shape{1, 64, 8, 8}}) {
    SCOPED_TRACE(shape_str(nchw));
    const auto calls = calls_of(&pool, nchw, 16, kParallelGrain);
    const int64_t rows = nchw[0] * nchw[1] / 16 * nchw[2];
    expect_each_row_once(calls, rows);
    EXPECT_LE(calls.size(), 3u);  // one contiguous range per thread at most
  }
  expect_each_row_once(calls_of(nullptr, {1, 6, 7, 9}, 1, kParallelGrain), 42);
  EXPECT_TRUE(calls_of(&pool, {1, 0, 7, 9}, 1, kParallelGrain).empty());
}

}  // namespace
}  // namespace ninegrid
