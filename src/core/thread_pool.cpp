#include "core/thread_pool.h"

#include <sched.h>

#include <algorithm>

namespace ninegrid {

namespace {

thread_local bool t_inside_task = false;

// Threads of every pool in the process that currently occupy a core: callers inside parallel_for, and
// workers from the moment they wake until they go back to sleep (spinning or running a chunk).
std::atomic<int> g_busy{0};

// The cores there are to share; sched_getaffinity is a system call, so it is asked once.
std::atomic<int> g_cpus{0};
int process_cpus() {
  int cpus = g_cpus.load(std::memory_order_relaxed);
  if (cpus > 0) return cpus;
  cpus = ThreadPool::default_threads();
  g_cpus.store(cpus, std::memory_order_relaxed);
  return cpus;
}

// Spinning only helps while every busy thread has a core of its own: beyond that a spinning thread takes
// the core of a thread with work (possibly the very one it waits for).
bool may_spin() { return g_busy.load(std::memory_order_relaxed) <= process_cpus(); }

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

constexpr int kChunkBits = 16;  // published_ holds generation << kChunkBits | chunk count
constexpr uint64_t kChunkMask = (uint64_t{1} << kChunkBits) - 1;
constexpr int kMaxThreads = static_cast<int>(kChunkMask);

struct BusyScope {
  BusyScope() { g_busy.fetch_add(1, std::memory_order_relaxed); }
  ~BusyScope() { g_busy.fetch_sub(1, std::memory_order_relaxed); }
};

// Marks the thread as inside a task, so a parallel_for from within runs inline.
struct TaskScope {
  TaskScope() : outer(t_inside_task) { t_inside_task = true; }
  ~TaskScope() { t_inside_task = outer; }
  bool outer;
};

}  // namespace

int ThreadPool::default_threads() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  unsigned n = std::thread::hardware_concurrency();
  return n ? static_cast<int>(n) : 1;
}

void ThreadPool::set_process_cpus(int cpus) { g_cpus.store(cpus > 0 ? cpus : default_threads()); }

ThreadPool::ThreadPool(int threads, std::chrono::microseconds spin) : spin_(std::max(spin, spin.zero())) {
  threads = std::clamp(threads, 1, kMaxThreads);
  slots_.reset(new Slot[static_cast<size_t>(threads)]);
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true, std::memory_order_relaxed);
    // A new generation with no chunks: spinning workers see it, sleeping ones are woken by it.
    published_.store(((published_.load(std::memory_order_relaxed) >> kChunkBits) + 1) << kChunkBits,
                     std::memory_order_release);
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

template <typename Done>
bool ThreadPool::spin_until(Done done) const {
  if (done()) return true;
  if (spin_.count() == 0 || !may_spin()) return false;
  // The clock and the shared count are read only every few dozen pauses: both cost more than a pause.
  const auto deadline = std::chrono::steady_clock::now() + spin_;
  for (unsigned i = 1;; ++i) {
    cpu_relax();
    if (done()) return true;
    if (i % 32 == 0 && (!may_spin() || std::chrono::steady_clock::now() >= deadline)) return false;
  }
}

void ThreadPool::run_chunks(uint64_t word, int first) {
  const uint64_t generation = word >> kChunkBits;
  const int chunks = static_cast<int>(word & kChunkMask);
  for (int k = 0; k < chunks; ++k) {
    const int index = (first + k) % chunks;
    // Winning this exchange proves the job is still `generation`: it cannot finish while chunk `index`
    // is unclaimed, so job_ and job_n_ stay valid until this chunk is counted as done.
    std::atomic<uint64_t>& claimed = slots_[static_cast<size_t>(index)].claimed;
    uint64_t seen = claimed.load(std::memory_order_relaxed);
    if (seen >= generation || !claimed.compare_exchange_strong(seen, generation, std::memory_order_acq_rel)) continue;
    const int64_t begin = job_n_ * index / chunks, end = job_n_ * (index + 1) / chunks;
    const uint64_t target = job_target_;
    try {
      TaskScope task;
      (*job_)(begin, end);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
    // seq_cst pairs with the caller's caller_sleeping_ store: either it sees the job finished or we see
    // it asleep.
    if (finished_.fetch_add(1) + 1 == target) {
      if (caller_sleeping_.load()) {
        std::lock_guard<std::mutex> lock(mutex_);
        done_.notify_one();
      }
      return;  // the last chunk: none is left to claim (and the caller may be publishing the next job)
    }
  }
}

void ThreadPool::worker_loop(int index) {
  uint64_t seen = 0;  // the last job word handled
  auto fresh = [&] { return published_.load(std::memory_order_acquire) != seen; };
  // awake_ rises before g_busy and falls after it, so a caller reading g_busy then awake_ never takes
  // its own workers for another pool's threads.
  awake_.fetch_add(1);
  g_busy.fetch_add(1);
  for (;;) {
    if (!spin_until(fresh)) {
      g_busy.fetch_sub(1);
      awake_.fetch_sub(1);
      {
        // The caller publishes under the mutex, so the word cannot change between this check and the wait.
        std::unique_lock<std::mutex> lock(mutex_);
        ++sleepers_;
        wake_.wait(lock, fresh);
        --sleepers_;
      }
      awake_.fetch_add(1);
      g_busy.fetch_add(1);
    }
    seen = published_.load(std::memory_order_acquire);
    if (stop_.load(std::memory_order_relaxed)) break;
    run_chunks(seen, index);
  }
  g_busy.fetch_sub(1);
  awake_.fetch_sub(1);
}

int ThreadPool::helpers_wanted(int64_t n) const {
  if (workers_.empty() || n < 2) return 0;
  // Busy threads of other pools (and callers with no pool), not counting this caller and its own workers,
  // which are the ones to be used. Racy by nature: a guess of what the next microseconds look like.
  const int busy = g_busy.load();
  const int others = busy - 1 - awake_.load();
  const int spare = process_cpus() - 1 - std::max(others, 0);
  return static_cast<int>(std::clamp<int64_t>(std::min<int64_t>(spare, n - 1), 0, int64_t(workers_.size())));
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (t_inside_task) {
    fn(0, n);
    return;
  }
  BusyScope busy;
  const int helpers = helpers_wanted(n);
  if (helpers == 0) {
    TaskScope task;
    fn(0, n);
    return;
  }
  const int chunks = helpers + 1;
  // finished_ only grows, so publishing a job does not write the line the threads count on.
  const uint64_t target = job_target_ + static_cast<uint64_t>(chunks);
  job_ = &fn;
  job_n_ = n;
  job_target_ = target;
  const uint64_t word =
      ((published_.load(std::memory_order_relaxed) >> kChunkBits) + 1) << kChunkBits | static_cast<uint64_t>(chunks);
  int wake = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    published_.store(word, std::memory_order_release);
    wake = std::min(sleepers_, helpers - std::min(helpers, awake_.load(std::memory_order_relaxed)));
  }
  for (int i = 0; i < wake; ++i) wake_.notify_one();

  run_chunks(word, 0);
  // seq_cst, as in run_chunks: after caller_sleeping_ is set, this load must not be served from before it.
  auto finished = [&] { return finished_.load() == target; };
  if (!spin_until(finished)) {
    std::unique_lock<std::mutex> lock(mutex_);
    caller_sleeping_.store(true);
    done_.wait(lock, finished);
    caller_sleeping_.store(false, std::memory_order_relaxed);
  }
  if (error_) {
    std::exception_ptr error;
    std::swap(error, error_);
    std::rethrow_exception(error);
  }
}

}  // namespace ninegrid
