// allocate_aligned_memory: every block starts on a cache line, large ones on a huge-page boundary, and
// the whole requested size is usable (the sanitizer build checks the writes stay inside).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "core/aligned_memory.h"

namespace ninegrid {
namespace {

uintptr_t address(const void* p) { return reinterpret_cast<uintptr_t>(p); }

TEST(AlignedMemory, SmallAndEmptyBlocksStartOnALine) {
  for (size_t bytes : {size_t(0), size_t(1), size_t(63), size_t(64), size_t(1000), size_t(1) << 20}) {
    void* p = allocate_aligned_memory(bytes);
    ASSERT_NE(p, nullptr) << bytes;
    EXPECT_EQ(address(p) % 64, 0u) << bytes;
    std::memset(p, 0x5a, bytes);
    std::free(p);
  }
}

TEST(AlignedMemory, LargeBlocksStartOnAHugePageAndAreUsableToTheEnd) {
  const size_t huge = size_t(2) << 20;
  for (size_t bytes : {8 * huge, 8 * huge + 4, 13 * huge + 12345}) {
    auto* p = static_cast<unsigned char*>(allocate_aligned_memory(bytes));
    ASSERT_NE(p, nullptr) << bytes;
    EXPECT_EQ(address(p) % huge, 0u) << bytes;
    std::memset(p, 0x5a, bytes);
    EXPECT_EQ(p[0], 0x5a);
    EXPECT_EQ(p[bytes - 1], 0x5a);
    std::free(p);
  }
}

}  // namespace
}  // namespace ninegrid
