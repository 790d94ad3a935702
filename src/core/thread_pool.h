// A fixed pool of worker threads for splitting one operator's loop (NeoCPU §3.1.2): workers are created
// once per session, spin briefly before sleeping so back-to-back layers do not pay a wake-up, and the
// work is split into one contiguous chunk per thread on the outermost loop.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ninegrid {

class ThreadPool {
 public:
  // `threads` counts the calling thread: ThreadPool(1) runs everything inline.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(begin, end) over disjoint ranges covering [0, n), in parallel. Returns when all are done.
  // A call from inside a running task executes inline.
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn);

  // The number of threads worth using: the CPUs this process may run on.
  static int default_threads();

 private:
  void worker_loop(int index);
  void run_chunk(int index);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  alignas(64) std::atomic<uint64_t> generation_{0};
  alignas(64) std::atomic<int> remaining_{0};
  alignas(64) const std::function<void(int64_t, int64_t)>* job_ = nullptr;
  int64_t job_n_ = 0;
  int chunks_ = 1;
  bool stop_ = false;
};

}  // namespace ninegrid
