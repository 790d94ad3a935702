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

// At least `bytes` bytes (at least one line), or nullptr when the system has no memory for them.
void* allocate_aligned_memory(size_t bytes);
// Frees a block from allocate_aligned_memory (null: nothing).
void free_aligned_memory(void* p);
// The bytes of the blocks allocated and not yet freed, as the allocators count them (a block may count a
// little more than was asked). For tests and statistics: what a model's weights or a session hold.
int64_t aligned_memory_live_bytes();

// A 64-byte aligned float array (vector loads of packed weights never straddle cache lines).
class AlignedFloats {
 public:
  AlignedFloats() = default;
  explicit AlignedFloats(int64_t count);  // zero-filled
  float* data() { return data_.get(); }
  const float* data() const { return data_.get(); }
  int64_t size() const { return size_; }

 private:
  struct Free {
    void operator()(float* p) const { free_aligned_memory(p); }
  };
  std::unique_ptr<float[], Free> data_;
  int64_t size_ = 0;
};

}  // namespace ninegrid
