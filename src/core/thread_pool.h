// A fixed pool of worker threads for splitting one operator's loop (NeoCPU §3.1.2): workers are created
// once per session, spin briefly before sleeping so back-to-back layers do not pay a wake-up, and the
// work is split into one contiguous chunk per thread on the outermost loop.
//
// Many sessions may run at once, each with its own pool, on fewer cores than they have threads. Waiting
// by spinning then only takes cores from threads that have work, so the pools share one process-wide
// count of the threads that occupy a core (callers inside parallel_for, workers spinning or working):
//  - an idle thread spins only while that count is within the CPUs the process may use, and never longer
//    than the pool's spin limit; otherwise it sleeps;
//  - a loop engages only as many workers as there are cores not taken by other pools' threads, and none
//    (it runs inline) when there are none;
//  - chunks are claimed, not assigned: whoever is running takes a chunk nobody has started, so a caller
//    never waits for a worker that has not been scheduled, only for chunks already being worked on.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace ninegrid {

class ThreadPool {
 public:
  // How long an idle thread may spin before it sleeps, by default: long enough to bridge the gap between
  // two layers of one run and the wait for a slower chunk, short enough that a session that stopped
  // running gives its cores back at once.
  static constexpr std::chrono::microseconds kDefaultSpin{200};

  // `threads` counts the calling thread: ThreadPool(1) runs everything inline. `spin` bounds each spin
  // wait (of an idle worker for the next loop, of the caller for the workers' chunks); zero never spins.
  explicit ThreadPool(int threads, std::chrono::microseconds spin = kDefaultSpin);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }
  std::chrono::microseconds spin() const { return spin_; }

  // Calls fn(begin, end) over disjoint ranges covering [0, n), in parallel. Returns when all are done;
  // an exception from fn is rethrown here once every range has finished. A call from inside a running
  // task executes inline.
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn);

  // The number of threads worth using: the CPUs this process may run on.
  static int default_threads();

  // The cores all pools of the process share (spinning and engaging workers are judged against it): by
  // default default_threads() at first use; `cpus` <= 0 restores that. For tests, and for a program that
  // keeps some of its cores for other work.
  static void set_process_cpus(int cpus);

 private:
  struct alignas(64) Slot {
    // The last generation in which this chunk was claimed: a chunk of job g is free while this is below g.
    std::atomic<uint64_t> claimed{0};
  };

  void worker_loop(int index);
  // Claims and runs free chunks of the job published as `word`, starting with chunk `first`.
  void run_chunks(uint64_t word, int first);
  // Spins until done() while the process has cores to spare, at most spin_; returns done().
  template <typename Done>
  bool spin_until(Done done) const;
  int helpers_wanted(int64_t n) const;

  std::chrono::microseconds spin_;
  std::vector<std::thread> workers_;
  std::unique_ptr<Slot[]> slots_;  // one per thread

  // The current job: generation << 16 | chunk count, written by the caller after the job's fields below.
  alignas(64) std::atomic<uint64_t> published_{0};
  const std::function<void(int64_t, int64_t)>* job_ = nullptr;
  int64_t job_n_ = 0;
  uint64_t job_target_ = 0;   // finished_ once every chunk of the current job is done
  std::exception_ptr error_;  // the first exception from a chunk (written under mutex_)
  alignas(64) std::atomic<uint64_t> finished_{0};  // chunks finished, over all jobs
  alignas(64) std::atomic<int> awake_{0};    // this pool's workers not asleep
  std::atomic<bool> caller_sleeping_{false};
  std::atomic<bool> stop_{false};

  std::mutex mutex_;
  std::condition_variable wake_;  // workers: a new job (or stop)
  std::condition_variable done_;  // the caller: finished_ reached the job's target
  int sleepers_ = 0;              // workers waiting on wake_ (under mutex_)
};

}  // namespace ninegrid
