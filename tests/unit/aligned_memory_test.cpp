// allocate_aligned_memory: every block starts on a cache line, large ones on a huge-page boundary, and
// the whole requested size is usable (the sanitizer build checks the writes stay inside); the blocks
// that share the huge-page pool never overlap, however they are allocated and freed.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

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
    free_aligned_memory(p);
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
    free_aligned_memory(p);
  }
}

// Blocks of random sizes in [min_bytes, max_bytes], from allocate(bytes, rng), each filled with a byte of
// its own and freed in random order over `rounds` rounds (a third of them frees): every block starts on a
// line, and after each allocation, at its free and at the end every live block still holds its fill (first,
// last and a few bytes between: every byte would make the test slow).
template <typename Allocate>
void allocate_and_free_at_random(uint32_t seed, size_t min_bytes, size_t max_bytes, int rounds, Allocate allocate,
                                 const std::string& what) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<size_t> size(min_bytes, max_bytes);
  struct Block {
    unsigned char* p;
    size_t bytes;
    unsigned char fill;
  };
  std::vector<Block> live;
  auto check = [&](const Block& b, int round) {
    for (size_t i : {size_t(0), b.bytes / 3, b.bytes / 2, b.bytes - 1})
      ASSERT_EQ(b.p[i], b.fill) << what << ", " << b.bytes << " bytes, round " << round;
  };
  for (int round = 0; round < rounds; ++round) {
    if (!live.empty() && rng() % 3 == 0) {
      const size_t i = rng() % live.size();
      check(live[i], round);
      free_aligned_memory(live[i].p);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
      continue;
    }
    Block b{nullptr, size(rng), static_cast<unsigned char>(round % 255 + 1)};
    b.p = static_cast<unsigned char*>(allocate(b.bytes, rng));
    ASSERT_NE(b.p, nullptr) << what;
    EXPECT_EQ(address(b.p) % 64, 0u) << what;
    std::memset(b.p, b.fill, b.bytes);
    live.push_back(b);
    for (const Block& other : live) check(other, round);
  }
  for (const Block& b : live) {
    check(b, rounds);
    free_aligned_memory(b.p);
  }
}

// Medium blocks (the pool's sizes, 64 KiB to 8 MiB, and a few around them) allocated and freed in random
// order: each keeps its own bytes while the others are written, freed and handed out again.
TEST(AlignedMemory, PooledBlocksKeepTheirBytesWhateverTheOrder) {
  allocate_and_free_at_random(
      7, size_t(60) << 10, size_t(9) << 20, 200,
      [](size_t bytes, std::mt19937&) { return allocate_aligned_memory(bytes); }, "default first touch");
  free_aligned_memory(nullptr);
}

// AlignedArray (packed weights, float and int8): every element zero even when the block is one the pool
// hands out again after it was written, on a line, its count as asked, and counted in the live bytes while it
// lives. Sizes from a line to past the pool's 8 MiB, counts that fill no whole line included.
TEST(AlignedMemory, ArraysAreZeroedOnALineAndCounted) {
  for (int64_t count : {int64_t(1), int64_t(63), int64_t(100000), int64_t(3) << 20, (int64_t(9) << 20) + 5}) {
    for (int reuse = 0; reuse < 2; ++reuse) {
      const int64_t before = aligned_memory_live_bytes();
      {
        AlignedArray<int8_t> bytes(count);
        ASSERT_NE(bytes.data(), nullptr);
        EXPECT_EQ(address(bytes.data()) % 64, 0u) << count;
        EXPECT_EQ(bytes.size(), count);
        EXPECT_GE(aligned_memory_live_bytes() - before, count) << count;
        int64_t nonzero = 0;
        for (int64_t i = 0; i < count; ++i) nonzero += bytes[i] != 0;
        EXPECT_EQ(nonzero, 0) << count << (reuse ? ", a reused block" : "");
        std::memset(bytes.data(), 0x5a, static_cast<size_t>(count));  // what the next round must not see
      }
      EXPECT_EQ(aligned_memory_live_bytes(), before) << count;
    }
    AlignedFloats floats(count / 4 + 1);
    int64_t nonzero = 0;
    for (int64_t i = 0; i < floats.size(); ++i) nonzero += floats[i] != 0.f;
    EXPECT_EQ(nonzero, 0) << count;
  }
}

// Sets the slow-huge-page limit for one test and restores the default however the test ends.
struct SlowHugePageLimit {
  explicit SlowHugePageLimit(double ms) { set_slow_huge_page_limit_for_testing(ms); }
  ~SlowHugePageLimit() { set_slow_huge_page_limit_for_testing(-1.0); }
};

// Large blocks the caller fills right away (FirstTouch::Now) are faulted in at allocation, a 2 MiB page at
// a time: in huge pages while those come fast, and once one is slow (here: every one, the limit set to
// zero) the pages after it in 4 KiB pages, the block usable to its end either way. Every page of the block
// is counted once, as huge or small; a block written later (the default) is left to fault on touch.
TEST(AlignedMemory, LargeBlocksFallBackToSmallPagesWhenHugePagesAreSlow) {
  const size_t huge = size_t(2) << 20, pages = 8;
  for (double limit : {0.0, -1.0}) {
    SlowHugePageLimit set(limit);
    const HugePageStats before = huge_page_stats();
    auto* p = static_cast<unsigned char*>(allocate_aligned_memory(pages * huge, FirstTouch::Now));
    ASSERT_NE(p, nullptr);
    const HugePageStats after = huge_page_stats();
    void* later = allocate_aligned_memory(pages * huge);
    ASSERT_NE(later, nullptr);
    EXPECT_EQ(huge_page_stats().huge, after.huge);
    EXPECT_EQ(huge_page_stats().small, after.small);
    free_aligned_memory(later);
    std::memset(p, 0x5a, pages * huge);
    EXPECT_EQ(p[0], 0x5a);
    EXPECT_EQ(p[pages * huge - 1], 0x5a);
    free_aligned_memory(p);
    const int64_t counted = (after.huge - before.huge) + (after.small - before.small);
    if (counted == 0) GTEST_SKIP() << "this system does not fault pages in ahead (MADV_POPULATE_WRITE, Linux 5.14)";
    EXPECT_EQ(counted, static_cast<int64_t>(pages)) << "limit " << limit;
    if (limit == 0.0) {
      // The first page is tried as a huge one and found slow; the rest take small pages.
      EXPECT_EQ(after.huge - before.huge, 1);
      EXPECT_EQ(after.small - before.small, static_cast<int64_t>(pages) - 1);
    }
  }
}

// The pool's blocks share 2 MiB pages: faulting a page in for a block filled right away, in 4 KiB pages
// or a huge one, leaves the bytes of the live blocks on it as they were, among them blocks written later
// (FirstTouch::Later), which leave their pages to fault on touch. Random sizes and kinds, every huge page
// counted slow (so pages switch between both kinds) and then the default, blocks freed and handed out again.
TEST(AlignedMemory, BlocksFaultedInAtAllocationLeaveTheirNeighboursBytes) {
  for (double limit : {0.0, -1.0}) {
    SlowHugePageLimit set(limit);
    allocate_and_free_at_random(
        11, size_t(64) << 10, size_t(1) << 20, 120,
        [](size_t bytes, std::mt19937& rng) {
          return allocate_aligned_memory(bytes, rng() % 2 ? FirstTouch::Now : FirstTouch::Later);
        },
        "slow-page limit " + std::to_string(limit));
  }
}

}  // namespace
}  // namespace ninegrid
