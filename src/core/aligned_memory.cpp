#include "core/aligned_memory.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#if defined(__linux__)
#include <malloc.h>
#include <sys/mman.h>
#endif

#include "ninegrid/tensor.h"

namespace ninegrid {

namespace {
constexpr size_t kLine = 64;
constexpr size_t kHugePage = size_t(2) << 20;
// From this size on a block gets huge pages of its own: below it the rounding to a whole huge page at the
// end would cost too much memory for what it saves.
constexpr size_t kHugeFrom = 4 * kHugePage;

#if defined(__linux__) && defined(MADV_HUGEPAGE) && !defined(__SANITIZE_ADDRESS__)
#define NINEGRID_HUGE_PAGE_POOL 1
#endif

#if defined(__linux__) && defined(MADV_HUGEPAGE)
#if !defined(MADV_POPULATE_WRITE)
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels refuse it and pages fault on first touch
#endif

// Backs fresh huge pages at allocation, one 2 MiB page at a time, and gives up on them while the system
// is slow to hand them out. Clearing a 2 MiB page takes about 0.1 ms on a real machine, but on a virtual
// machine whose host takes back the memory its guest frees (virtio-balloon free page reporting works on
// blocks of 2 MiB and more) each fresh huge page waits for the host to back it again: 6-16 ms, against
// about 1 ms for the same 2 MiB in 4 KiB pages, which come from memory used moments ago. ResNet-50's
// load touches 92 such pages. A page whose first touch takes longer than kSlowFaultMs therefore switches
// the pages after it to 4 KiB ones (MADV_NOHUGEPAGE while they are faulted in), and every kRetryAfter pages
// one huge page is tried again, as the host's state changes. 4 KiB pages cost inference a few per cent in
// TLB misses until khugepaged merges them. Measured: bench/REPORT.md, "Loading while fresh huge pages are slow".
class HugePageBacking {
 public:
  // Faults in the 2 MiB page at `page` (huge-page aligned, advised MADV_HUGEPAGE, a block about to be
  // written lying in it): in a huge page while those come fast, else in 4 KiB pages. Safe on pages other
  // blocks already use: populating does not write, it only maps what is missing.
  // The time is wall time, so a thread descheduled during the fault counts it as slow; that costs the next
  // kRetryAfter pages their huge pages, no more.
  void back(char* page) {
    if (unsupported_.load(std::memory_order_relaxed)) return;
    if (take_small_page()) {
      madvise(page, kHugePage, MADV_NOHUGEPAGE);
      const bool done = populate(page);
      // Advised again, so that khugepaged may merge these 4 KiB pages into a huge page in the background (by
      // default it scans 16 MB every 10 s, for the whole system): a session that lives on can regain the
      // TLB reach.
      madvise(page, kHugePage, MADV_HUGEPAGE);
      if (done) small_pages_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    const auto start = std::chrono::steady_clock::now();
    if (!populate(page)) return;
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    huge_pages_.fetch_add(1, std::memory_order_relaxed);
    if (ms >= limit_ms_.load(std::memory_order_relaxed)) small_left_.store(kRetryAfter, std::memory_order_relaxed);
  }

  void set_limit_ms(double ms) {
    limit_ms_.store(ms < 0 ? kSlowFaultMs : ms);
    small_left_.store(0);
  }
  HugePageStats stats() const { return {huge_pages_.load(), small_pages_.load()}; }

 private:
  static constexpr double kSlowFaultMs = 2.0;
  static constexpr int kRetryAfter = 32;

  // One of the kRetryAfter small pages after a slow huge one, if any are left.
  bool take_small_page() {
    int left = small_left_.load(std::memory_order_relaxed);
    while (left > 0)
      if (small_left_.compare_exchange_weak(left, left - 1, std::memory_order_relaxed)) return true;
    return false;
  }

  bool populate(char* page) {
    if (madvise(page, kHugePage, MADV_POPULATE_WRITE) == 0) return true;
    if (errno == EINVAL) unsupported_.store(true, std::memory_order_relaxed);
    return false;
  }

  std::atomic<bool> unsupported_{false};
  std::atomic<double> limit_ms_{kSlowFaultMs};
  std::atomic<int> small_left_{0};
  std::atomic<int64_t> huge_pages_{0}, small_pages_{0};
};

HugePageBacking& huge_page_backing() {
  static HugePageBacking* b = new HugePageBacking;
  return *b;
}
#endif

#if defined(NINEGRID_HUGE_PAGE_POOL)
// Blocks from kPoolFrom up to kHugeFrom share huge pages: 32 MiB regions mapped with MADV_HUGEPAGE and
// cut up first-fit in 4 KiB units, freed runs merged with their neighbours. A model's packed weights are
// mostly such blocks (MobileNetV2: 50 layers of 4 KB to 1.6 MB each); with 4 KiB pages each inference's
// stream of 14 MB of weights missed the TLB all along. Tensors share the pool too: the decoded weights a
// model's loading frees as it packs them make room for the packed ones (with only the packed weights
// pooled the peak RSS grew, glibc keeping the freed ones). Measured: bench/REPORT.md, "Design decisions
// and their measurements".
// (Not under AddressSanitizer, which checks only the blocks it hands out itself.)
constexpr size_t kPoolFrom = size_t(64) << 10;
constexpr size_t kPoolUnit = size_t(4) << 10;
constexpr size_t kRegionBytes = size_t(32) << 20;
constexpr size_t kHugeBudget = size_t(64) << 20;

class HugePagePool {
 public:
  // A block of `bytes` rounded up to whole units (*size), or null.
  void* allocate(size_t bytes, size_t* size_out, FirstTouch touch) {
    const size_t size = (bytes + kPoolUnit - 1) / kPoolUnit * kPoolUnit;
    *size_out = size;
    std::lock_guard<std::mutex> lock(mutex_);
    for (Region& r : regions_)
      if (void* p = take(r, size, touch)) return p;
    Region r;
    r.size = std::max(kRegionBytes, (size + kHugePage - 1) / kHugePage * kHugePage);
    // Over-map by a huge page to start the region on a huge-page boundary.
    r.mapped_bytes = r.size + kHugePage;
    void* m = mmap(nullptr, r.mapped_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return nullptr;
    r.mapped = static_cast<char*>(m);
    r.base = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(r.mapped) + kHugePage - 1) / kHugePage * kHugePage);
    // Advice only: without THP the region keeps small pages. Up to a budget (enough for MobileNetV2's
    // weights and activations): on a virtual machine the first touch of a huge page can be slow while the
    // host backs it, and a large model's loading paid that for every region (ResNet-50's load times with
    // and without the budget: bench/REPORT.md, "Design decisions and their measurements").
    if (huge_bytes_ + r.size <= kHugeBudget) {
      madvise(r.base, r.size, MADV_HUGEPAGE);
      huge_bytes_ += r.size;
      r.huge = true;
      r.backed.assign(r.size / kHugePage, false);
    }
    r.free_runs[0] = r.size;
    regions_.push_back(r);
    return take(regions_.back(), size, touch);
  }

  // Gives the block back, setting *bytes to its size; false if it did not come from the pool.
  bool release(void* p, size_t* bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = sizes_.find(p);
    if (it == sizes_.end()) return false;
    const size_t size = it->second;
    *bytes = size;
    sizes_.erase(it);
    for (size_t i = 0; i < regions_.size(); ++i) {
      Region& r = regions_[i];
      char* c = static_cast<char*>(p);
      if (c < r.base || c >= r.base + r.size) continue;
      size_t offset = static_cast<size_t>(c - r.base), length = size;
      // Merge with the free runs right after and right before.
      auto next = r.free_runs.find(offset + length);
      if (next != r.free_runs.end()) {
        length += next->second;
        r.free_runs.erase(next);
      }
      auto prev = r.free_runs.lower_bound(offset);
      if (prev != r.free_runs.begin()) {
        --prev;
        if (prev->first + prev->second == offset) {
          offset = prev->first;
          length += prev->second;
          r.free_runs.erase(prev);
        }
      }
      r.free_runs[offset] = length;
      r.used -= size;
      if (r.used == 0) release_spare_regions();
      return true;
    }
    return true;  // unreachable: every recorded block lies in a region
  }

 private:
  struct Region {
    char* mapped = nullptr;  // what mmap returned, and its length (for munmap)
    size_t mapped_bytes = 0;
    char* base = nullptr;  // huge-page aligned start of the usable size bytes
    size_t size = 0;
    size_t used = 0;
    bool huge = false;  // advised MADV_HUGEPAGE (counted in huge_bytes_)
    std::vector<bool> backed;  // per 2 MiB page of a huge region: faulted in by a block's allocation
    std::map<size_t, size_t> free_runs;  // offset -> length
  };

  // Empty regions stay mapped while they hold no more than the live blocks do: a model's loading frees and
  // allocates temporaries in turn, and mapping a fresh region each time had the kernel clear its huge
  // pages again, which made ResNet-50's load slower than with glibc's blocks (measured: bench/REPORT.md,
  // "Design decisions and their measurements"). Once nothing is live they all go back to the system.
  void release_spare_regions() {
    size_t used = 0, empty = 0;
    for (const Region& r : regions_) {
      if (r.used) used += r.used;
      else empty += r.size;
    }
    while (empty > used) {
      size_t smallest = regions_.size();
      for (size_t i = 0; i < regions_.size(); ++i)
        if (regions_[i].used == 0 && (smallest == regions_.size() || regions_[i].size < regions_[smallest].size))
          smallest = i;
      empty -= regions_[smallest].size;
      if (regions_[smallest].huge) huge_bytes_ -= regions_[smallest].size;
      munmap(regions_[smallest].mapped, regions_[smallest].mapped_bytes);
      regions_.erase(regions_.begin() + static_cast<std::ptrdiff_t>(smallest));
    }
  }

  // The first free run of region r that holds `size` bytes, cut from its start, its pages faulted in if
  // the caller writes them now; null if none.
  void* take(Region& r, size_t size, FirstTouch touch) {
    for (auto it = r.free_runs.begin(); it != r.free_runs.end(); ++it) {
      if (it->second < size) continue;
      const size_t offset = it->first, rest = it->second - size;
      r.free_runs.erase(it);
      if (rest > 0) r.free_runs[offset + size] = rest;
      r.used += size;
      if (r.huge && touch == FirstTouch::Now) back_pages(r, offset, size);
      void* p = r.base + offset;
      sizes_[p] = size;
      return p;
    }
    return nullptr;
  }

  // The huge pages of region r under [offset, offset + size) that no block has faulted in at allocation
  // yet (a page a FirstTouch::Later block faulted on touch is found present, and counted as huge).
  static void back_pages(Region& r, size_t offset, size_t size) {
    for (size_t page = offset / kHugePage; page * kHugePage < offset + size; ++page) {
      if (r.backed[page]) continue;
      r.backed[page] = true;
      huge_page_backing().back(r.base + page * kHugePage);
    }
  }

  std::mutex mutex_;
  std::vector<Region> regions_;
  std::unordered_map<void*, size_t> sizes_;
  size_t huge_bytes_ = 0;  // regions advised MADV_HUGEPAGE
};

// Never destroyed: blocks may be freed by static destructors of other files.
HugePagePool& pool() {
  static HugePagePool* p = new HugePagePool;
  return *p;
}
#endif

std::atomic<int64_t> g_live_bytes{0};

// What the C library counts for a block of its own (0 where it cannot tell).
size_t malloc_block_bytes(void* p) {
#if defined(__linux__)
  return malloc_usable_size(p);
#else
  (void)p;
  return 0;
#endif
}
}  // namespace

void* allocate_aligned_memory(size_t bytes, FirstTouch touch) {
  const size_t rounded = bytes == 0 ? kLine : (bytes + kLine - 1) / kLine * kLine;
  void* p = nullptr;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (rounded >= kHugeFrom) {
    if (posix_memalign(&p, kHugePage, rounded) != 0) return nullptr;
    // Advice only: without THP support it fails harmlessly and the block keeps small pages.
    const size_t whole = rounded / kHugePage * kHugePage;
    madvise(p, whole, MADV_HUGEPAGE);
    if (touch == FirstTouch::Now)
      for (size_t page = 0; page < whole; page += kHugePage) huge_page_backing().back(static_cast<char*>(p) + page);
    g_live_bytes += static_cast<int64_t>(malloc_block_bytes(p));
    return p;
  }
#endif
#if defined(NINEGRID_HUGE_PAGE_POOL)
  if (rounded >= kPoolFrom) {
    size_t size = 0;
    if (void* q = pool().allocate(rounded, &size, touch)) {
      g_live_bytes += static_cast<int64_t>(size);
      return q;
    }
  }
#endif
  p = std::aligned_alloc(kLine, rounded);
  if (p) g_live_bytes += static_cast<int64_t>(malloc_block_bytes(p));
  return p;
}

void free_aligned_memory(void* p) {
  if (!p) return;
#if defined(NINEGRID_HUGE_PAGE_POOL)
  size_t size = 0;
  if (pool().release(p, &size)) {
    g_live_bytes -= static_cast<int64_t>(size);
    return;
  }
#endif
  g_live_bytes -= static_cast<int64_t>(malloc_block_bytes(p));
  std::free(p);
}

int64_t aligned_memory_live_bytes() { return g_live_bytes.load(); }

HugePageStats huge_page_stats() {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  return huge_page_backing().stats();
#else
  return {};
#endif
}

void set_slow_huge_page_limit_for_testing(double milliseconds) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  huge_page_backing().set_limit_ms(milliseconds);
#else
  (void)milliseconds;
#endif
}

void* allocate_zeroed_aligned_memory(int64_t count, size_t element_size) {
  const size_t bytes = (static_cast<size_t>(count > 0 ? count : 1) * element_size + 63) / 64 * 64;
  void* p = allocate_aligned_memory(bytes, FirstTouch::Now);
  if (!p) throw Error("out of memory allocating " + std::to_string(bytes) + " bytes of aligned memory");
  std::memset(p, 0, bytes);
  return p;
}

}  // namespace ninegrid
