// Memory for tensors and packed weights: 64-byte aligned (a cache line, an AVX-512 vector). Blocks from
// 64 KiB on live in transparent huge pages (Linux with THP in "madvise" mode, the common default), which
// cuts the page faults of loading a model and the TLB misses of streaming its weights: blocks from 8 MiB
// on start on a 2 MiB boundary of their own, smaller ones share the huge pages of a pool. Free with
// free_aligned_memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace ninegrid {

// When the caller writes a new block: `Now` for a block it fills in full right away (zeroes it, copies
// into it), whose pages are then faulted in at allocation, in huge pages while those come fast and in
// 4 KiB pages while they do not (see the .cpp); `Later` for one written later or in part (an arena), whose
// pages fault on first touch as usual.
enum class FirstTouch { Later, Now };

// At least `bytes` bytes (at least one line), or nullptr when the system has no memory for them.
void* allocate_aligned_memory(size_t bytes, FirstTouch touch = FirstTouch::Later);
// Frees a block from allocate_aligned_memory (null: nothing).
void free_aligned_memory(void* p);
// The bytes of the blocks allocated and not yet freed, as the allocators count them (a block may count a
// little more than was asked). For tests and statistics: what a model's weights or a session hold.
int64_t aligned_memory_live_bytes();

// The 2 MiB pages of huge-page blocks faulted in at allocation (FirstTouch::Now) so far: asked for as one
// huge page each (what the kernel gave is its own: small pages where THP is off, or pages that were
// already there), or as 4 KiB pages because fresh huge pages were slow to come (see the .cpp). For tests
// and statistics.
struct HugePageStats {
  int64_t huge = 0;
  int64_t small = 0;
};
HugePageStats huge_page_stats();
// How long a fresh huge page's first touch may take before the pages after it get 4 KiB pages: 0 makes
// every huge page count as slow, a negative value restores the default. For tests.
void set_slow_huge_page_limit_for_testing(double milliseconds);

// `count` elements of `element_size` bytes, rounded up to whole lines, zero-filled; throws Error naming the
// size when the system has no memory for them.
void* allocate_zeroed_aligned_memory(int64_t count, size_t element_size);

// A 64-byte aligned array of packed weights or constants (vector loads never straddle cache lines; large
// ones live in huge pages, see above), zero-filled.
template <typename T>
class AlignedArray {
 public:
  AlignedArray() = default;
  explicit AlignedArray(int64_t count)
      : data_(static_cast<T*>(allocate_zeroed_aligned_memory(count, sizeof(T)))), size_(count) {}
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  int64_t size() const { return size_; }
  T& operator[](int64_t i) { return data_[i]; }
  const T& operator[](int64_t i) const { return data_[i]; }

 private:
  struct Free {
    void operator()(T* p) const { free_aligned_memory(p); }
  };
  std::unique_ptr<T[], Free> data_;
  int64_t size_ = 0;
};

using AlignedFloats = AlignedArray<float>;

}  // namespace ninegrid
