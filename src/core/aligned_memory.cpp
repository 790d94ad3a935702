#include "core/aligned_memory.h"

#include <cstdlib>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace ninegrid {

namespace {
constexpr size_t kLine = 64;
constexpr size_t kHugePage = size_t(2) << 20;
// From this size on a block gets huge pages: below it the rounding to a whole huge page at the end would
// cost too much memory for what it saves.
constexpr size_t kHugeFrom = 4 * kHugePage;
}  // namespace

void* allocate_aligned_memory(size_t bytes) {
  const size_t rounded = bytes == 0 ? kLine : (bytes + kLine - 1) / kLine * kLine;
  void* p = nullptr;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (rounded >= kHugeFrom) {
    if (posix_memalign(&p, kHugePage, rounded) != 0) return nullptr;
    // Advice only: without THP support it fails harmlessly and the block keeps small pages.
    madvise(p, rounded / kHugePage * kHugePage, MADV_HUGEPAGE);
    return p;
  }
#endif
  return std::aligned_alloc(kLine, rounded);
}

}  // namespace ninegrid
