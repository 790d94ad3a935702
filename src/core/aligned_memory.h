// Memory for tensors and packed weights: 64-byte aligned (a cache line, an AVX-512 vector); large blocks
// also start on a 2 MiB boundary and ask the kernel for transparent huge pages (Linux with THP in
// "madvise" mode, the common default), which cuts the page faults of loading a model and the TLB misses
// of streaming its weights. Free with std::free.
#pragma once

#include <cstddef>

namespace ninegrid {

// At least `bytes` bytes (at least one line), or nullptr when the system has no memory for them.
void* allocate_aligned_memory(size_t bytes);

}  // namespace ninegrid
