// ThreadPool: every index covered exactly once, nested calls inline, many pools on more threads than
// cores, teardown right after use, exceptions. Speed is not checked here (bench/sessions_bench.cpp).
#include "core/thread_pool.h"

#include <gtest/gtest.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace ninegrid {
namespace {

using Range = std::pair<int64_t, int64_t>;
using std::chrono::microseconds;

// Pretends the process has `cpus` cores for the test's lifetime, so that pools bigger than this machine
// still split their loops into one chunk per thread.
struct ProcessCpus {
  explicit ProcessCpus(int cpus) { ThreadPool::set_process_cpus(cpus); }
  ~ProcessCpus() { ThreadPool::set_process_cpus(0); }
};

// A lost wake-up or a teardown that never ends shows as a hang: end the test with a message instead of
// waiting for CTest's timeout.
class Watchdog {
 public:
  explicit Watchdog(std::chrono::seconds limit)
      : thread_([this, limit] {
          std::unique_lock<std::mutex> lock(mutex_);
          if (!cv_.wait_for(lock, limit, [this] { return done_; })) {
            std::fprintf(stderr, "thread_pool_test: still running after %llds, a thread pool hangs\n",
                         static_cast<long long>(limit.count()));
            std::abort();
          }
        }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

// Runs parallel_for(n) and returns the ranges fn was called with, after checking that they cover [0, n)
// exactly once.
std::set<Range> covered_ranges(ThreadPool& pool, int64_t n) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
  std::mutex mutex;
  std::set<Range> ranges;
  std::atomic<int> calls{0};
  pool.parallel_for(n, [&](int64_t begin, int64_t end) {
    EXPECT_LT(begin, end);
    for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
    calls.fetch_add(1);
    std::lock_guard<std::mutex> lock(mutex);
    ranges.insert({begin, end});
  });
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "index " << i << " of " << n;
  EXPECT_EQ(static_cast<size_t>(calls.load()), ranges.size());
  return ranges;
}

// With cores to spare, a loop is split into min(n, threads) contiguous chunks, whoever runs them.
std::set<Range> expected_chunks(int64_t n, int threads) {
  const int64_t chunks = std::min<int64_t>(n, threads);
  std::set<Range> ranges;
  for (int64_t i = 0; i < chunks; ++i) ranges.insert({n * i / chunks, n * (i + 1) / chunks});
  return ranges;
}

TEST(ThreadPool, CoversEveryIndexOnceInOneChunkPerThread) {
  Watchdog watchdog(std::chrono::seconds(120));
  ProcessCpus cpus(64);
  for (int threads : {1, 2, 3, 4, 7, 16}) {
    for (int64_t spin_us : {0, 200}) {
      ThreadPool pool(threads, microseconds(spin_us));
      ASSERT_EQ(pool.size(), threads);
      for (int64_t n : {1, 2, 3, 5, 7, 8, 15, 16, 17, 64, 100, 1000, 12345}) {
        for (int repeat = 0; repeat < 3; ++repeat)
          EXPECT_EQ(covered_ranges(pool, n), expected_chunks(n, threads))
              << "threads " << threads << " spin " << spin_us << " n " << n;
      }
      int calls = 0;
      pool.parallel_for(0, [&](int64_t, int64_t) { ++calls; });
      pool.parallel_for(-3, [&](int64_t, int64_t) { ++calls; });
      EXPECT_EQ(calls, 0);
    }
  }
}

TEST(ThreadPool, CoversEveryIndexOnceWhateverTheCoreCount) {
  Watchdog watchdog(std::chrono::seconds(120));
  // On the real core count (and on one core, where every loop runs inline) the split may be coarser,
  // never wrong.
  for (int cpus : {0, 1, 2}) {
    ProcessCpus budget(cpus);
    for (int threads : {2, 4, 8}) {
      ThreadPool pool(threads);
      for (int64_t n : {1, 2, 3, 9, 100, 4097}) covered_ranges(pool, n);
    }
  }
}

TEST(ThreadPool, NestedCallsRunInlineOnTheCallingThread) {
  Watchdog watchdog(std::chrono::seconds(120));
  ProcessCpus cpus(8);
  ThreadPool pool(4), other(3);
  std::atomic<int> outer_calls{0}, nested_inline{0}, nested_calls{0};
  pool.parallel_for(4, [&](int64_t begin, int64_t end) {
    outer_calls.fetch_add(1);
    const std::thread::id self = std::this_thread::get_id();
    for (ThreadPool* p : {&pool, &other}) {
      int calls = 0;
      bool inline_whole = true;
      p->parallel_for(100, [&](int64_t b, int64_t e) {
        ++calls;  // a plain int: only this thread may run the nested loop
        inline_whole = inline_whole && b == 0 && e == 100 && std::this_thread::get_id() == self;
      });
      nested_calls.fetch_add(calls);
      if (calls == 1 && inline_whole) nested_inline.fetch_add(1);
    }
  });
  EXPECT_EQ(outer_calls.load(), 4);
  EXPECT_EQ(nested_calls.load(), 8);
  EXPECT_EQ(nested_inline.load(), 8);
  // After the outer loop the thread is no longer inside a task: the next loop splits again.
  EXPECT_EQ(covered_ranges(pool, 8), expected_chunks(8, 4));
}

// Many threads, each with its own pool, at once: more threads than cores (and, with the budget raised,
// pools that split while they are starved of cores). Each loop adds to every element once, so a chunk
// lost, run twice or still running when parallel_for returns shows in the sums.
void run_many_pools(int sessions, int threads, int loops, microseconds spin) {
  std::vector<int64_t> wrong(static_cast<size_t>(sessions), 0);
  std::vector<std::thread> callers;
  for (int s = 0; s < sessions; ++s) {
    callers.emplace_back([&, s] {
      ThreadPool pool(threads, spin);
      const int64_t n = 1000 + 37 * s;
      std::vector<int64_t> values(static_cast<size_t>(n), 0);
      for (int loop = 1; loop <= loops; ++loop) {
        pool.parallel_for(n, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) values[static_cast<size_t>(i)] += i + s;
        });
        int64_t sum = 0;
        for (int64_t v : values) sum += v;
        if (sum != loop * (n * (n - 1) / 2 + s * n)) ++wrong[static_cast<size_t>(s)];
      }
    });
  }
  for (auto& c : callers) c.join();
  for (int s = 0; s < sessions; ++s) EXPECT_EQ(wrong[static_cast<size_t>(s)], 0) << "session " << s;
}

TEST(ThreadPool, ManyPoolsOnMoreThreadsThanCoresFinishWithTheRightResult) {
  Watchdog watchdog(std::chrono::seconds(120));
  run_many_pools(16, 2, 2000, ThreadPool::kDefaultSpin);
  run_many_pools(8, 4, 2000, microseconds(0));
  ProcessCpus cpus(32);  // every pool splits though the machine has far fewer cores
  run_many_pools(16, 2, 2000, ThreadPool::kDefaultSpin);
  run_many_pools(8, 4, 2000, microseconds(0));
  run_many_pools(4, 8, 2000, microseconds(50));
}

TEST(ThreadPool, DestroyedRightAfterUse) {
  Watchdog watchdog(std::chrono::seconds(120));
  ProcessCpus cpus(8);
  for (int round = 0; round < 300; ++round) {
    const int threads = 2 + round % 4;
    ThreadPool pool(threads, microseconds(round % 3 == 0 ? 0 : 200));
    std::atomic<int64_t> sum{0};
    pool.parallel_for(100, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) sum.fetch_add(i);
    });
    EXPECT_EQ(sum.load(), 4950);
  }
  // Never used, and used once then left until the workers sleep.
  { ThreadPool unused(4); }
  {
    ThreadPool pool(4, microseconds(10));
    covered_ranges(pool, 40);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

double process_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

// Spinning is bounded in time: threads that wait (workers for the next loop, the caller and the workers
// for a slow chunk) stop burning CPU once the spin limit has passed, however long the wait.
TEST(ThreadPool, WaitingThreadsStopSpinningAfterTheSpinLimit) {
  Watchdog watchdog(std::chrono::seconds(120));
  ProcessCpus cpus(8);  // spinning allowed as far as the core count goes
  constexpr auto kWait = std::chrono::milliseconds(300);
  for (int spin_us : {0, 2000}) {
    ThreadPool pool(4, microseconds(spin_us));
    covered_ranges(pool, 4);  // the workers have started
    // One chunk sleeps; the other three threads (the caller among them, whichever chunk it took) wait.
    double before = process_cpu_ms();
    pool.parallel_for(4, [&](int64_t begin, int64_t) {
      if (begin == 0) std::this_thread::sleep_for(kWait);
    });
    const double waiting_for_a_chunk = process_cpu_ms() - before;
    // No loop at all: the workers wait for the next one.
    before = process_cpu_ms();
    std::this_thread::sleep_for(kWait);
    const double waiting_for_a_loop = process_cpu_ms() - before;
    // Three threads spinning through a phase would burn up to 900 ms of CPU (several hundred even on two
    // cores shared with other processes); bounded spinning costs at most 3 x the limit plus wake-ups.
    EXPECT_LT(waiting_for_a_chunk, 100) << "spin " << spin_us << " us";
    EXPECT_LT(waiting_for_a_loop, 100) << "spin " << spin_us << " us";
  }
}

TEST(ThreadPool, AnExceptionFromAChunkReachesTheCallerAndThePoolStaysUsable) {
  Watchdog watchdog(std::chrono::seconds(120));
  ProcessCpus cpus(8);
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    for (int64_t thrower : {int64_t{0}, int64_t{99}}) {
      std::atomic<int64_t> done{0};
      EXPECT_THROW(pool.parallel_for(100,
                                     [&](int64_t begin, int64_t end) {
                                       if (begin <= thrower && thrower < end) throw std::runtime_error("chunk");
                                       done.fetch_add(end - begin);
                                     }),
                   std::runtime_error)
          << "threads " << threads;
      // Every chunk that did not throw still ran to its end before parallel_for returned.
      const int64_t thrower_chunk = threads == 1 ? 100 : 100 / threads;
      EXPECT_EQ(done.load(), 100 - thrower_chunk) << "threads " << threads;
      EXPECT_EQ(covered_ranges(pool, 64), expected_chunks(64, threads));
    }
  }
}

}  // namespace
}  // namespace ninegrid
