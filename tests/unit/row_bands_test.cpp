// parallel_row_bands (ops/elementwise_common.h): every row of every plane is handed out exactly once, and
// with a pool each call is one thread's band of one plane, the band the convs give that thread.
#include <gtest/gtest.h>

#include <mutex>
#include <utility>
#include <vector>

#include "core/thread_pool.h"
#include "ops/elementwise_common.h"

namespace ninegrid {
namespace {

// The calls parallel_row_bands makes, as (begin, end) pairs.
std::vector<std::pair<int64_t, int64_t>> calls_of(ThreadPool* pool, int64_t planes, int64_t h, int64_t work) {
  std::mutex m;
  std::vector<std::pair<int64_t, int64_t>> calls;
  parallel_row_bands(pool, planes, h, work, [&](int64_t b, int64_t e) {
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
      for (int64_t planes : {1, 4, 9}) {
        SCOPED_TRACE(std::to_string(threads) + " threads, " + std::to_string(planes) + " planes of " +
                     std::to_string(h) + " rows");
        const auto calls = calls_of(&pool, planes, h, kParallelGrain);
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

TEST(RowBands, FewerRowsThanThreadsOrLittleWorkStillCoverEveryRow) {
  ThreadPool pool(3);
  expect_each_row_once(calls_of(&pool, 5, 2, kParallelGrain), 10);      // h below the threads
  expect_each_row_once(calls_of(&pool, 5, 40, kParallelGrain - 1), 200);  // below the grain: one call
  EXPECT_EQ(calls_of(&pool, 5, 40, kParallelGrain - 1).size(), 1u);
  expect_each_row_once(calls_of(nullptr, 6, 7, kParallelGrain), 42);
  EXPECT_TRUE(calls_of(&pool, 0, 7, kParallelGrain).empty());
}

}  // namespace
}  // namespace ninegrid
