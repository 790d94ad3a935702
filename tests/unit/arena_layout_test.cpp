#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "runtime/arena_layout.h"

namespace ninegrid {
namespace {

ArenaBuffer buf(size_t bytes, int first, int last) {
  ArenaBuffer b;
  b.bytes = bytes;
  b.first = first;
  b.last = last;
  return b;
}

bool lifetimes_intersect(const ArenaBuffer& x, const ArenaBuffer& y) { return x.first <= y.last && y.first <= x.last; }

// The greedy as the header states it, written plainly: largest first (then first step, then index), each
// at the lowest offset clear of every placed buffer whose lifetime intersects its own, found by checking
// every candidate (0 and each such buffer's end) against every such buffer. O(n^2) and more.
std::vector<size_t> reference_offsets(const std::vector<ArenaBuffer>& buffers) {
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const ArenaBuffer &x = buffers[a], &y = buffers[b];
    if (x.bytes != y.bytes) return x.bytes > y.bytes;
    if (x.first != y.first) return x.first < y.first;
    return a < b;
  });
  std::vector<size_t> offsets(buffers.size(), 0);
  std::vector<size_t> placed;
  for (size_t i : order) {
    const ArenaBuffer& it = buffers[i];
    std::vector<size_t> live;
    for (size_t j : placed)
      if (lifetimes_intersect(buffers[j], it) && buffers[j].bytes > 0) live.push_back(j);
    std::vector<size_t> candidates{0};
    for (size_t j : live) candidates.push_back(offsets[j] + buffers[j].bytes);
    size_t best = SIZE_MAX;
    for (size_t y : candidates) {
      bool clear = true;
      for (size_t j : live)
        if (y < offsets[j] + buffers[j].bytes && offsets[j] < y + it.bytes) clear = false;
      if (clear) best = std::min(best, y);
    }
    offsets[i] = it.bytes == 0 ? 0 : best;
    placed.push_back(i);
  }
  return offsets;
}

std::string describe(const std::vector<ArenaBuffer>& buffers) {
  std::string s;
  for (const ArenaBuffer& b : buffers)
    s += std::to_string(b.bytes) + "@[" + std::to_string(b.first) + "," + std::to_string(b.last) + "] ";
  return s;
}

// Assigns offsets and checks everything that must hold of them; returns the arena size.
size_t assign_and_check(std::vector<ArenaBuffer>& buffers) {
  const std::vector<ArenaBuffer> input = buffers;
  const size_t size = assign_arena_offsets(buffers);
  size_t top = 0;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const ArenaBuffer& b = buffers[i];
    EXPECT_EQ(b.bytes, input[i].bytes);
    EXPECT_EQ(b.first, input[i].first);
    EXPECT_EQ(b.last, input[i].last);
    EXPECT_EQ(b.offset % 64, 0u) << "buffer " << i;
    top = std::max(top, b.offset + b.bytes);
  }
  EXPECT_EQ(size, top);
  // No two buffers live at the same step share a byte.
  for (size_t i = 0; i < buffers.size(); ++i)
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      const ArenaBuffer &x = buffers[i], &y = buffers[j];
      if (!lifetimes_intersect(x, y)) continue;
      const bool bytes_overlap = x.offset < y.offset + y.bytes && y.offset < x.offset + x.bytes;
      EXPECT_FALSE(bytes_overlap) << "buffers " << i << " and " << j << " in " << describe(input);
    }
  const std::vector<size_t> want = reference_offsets(input);
  for (size_t i = 0; i < buffers.size(); ++i)
    EXPECT_EQ(buffers[i].offset, want[i]) << "buffer " << i << " in " << describe(input);
  return size;
}

TEST(ArenaLayout, Empty) {
  std::vector<ArenaBuffer> none;
  EXPECT_EQ(assign_arena_offsets(none), 0u);
}

TEST(ArenaLayout, OneBuffer) {
  std::vector<ArenaBuffer> one{buf(192, 3, 7)};
  one[0].offset = 12345;  // whatever it held before is overwritten
  EXPECT_EQ(assign_and_check(one), 192u);
  EXPECT_EQ(one[0].offset, 0u);
}

TEST(ArenaLayout, IdenticalLifetimesStackLargestFirst) {
  std::vector<ArenaBuffer> b{buf(64, 2, 5), buf(256, 2, 5), buf(128, 2, 5), buf(256, 2, 5)};
  EXPECT_EQ(assign_and_check(b), 704u);
  EXPECT_EQ(b[1].offset, 0u);    // 256, lower index first
  EXPECT_EQ(b[3].offset, 256u);  // 256
  EXPECT_EQ(b[2].offset, 512u);  // 128
  EXPECT_EQ(b[0].offset, 640u);  // 64
}

TEST(ArenaLayout, ZeroLengthLifetimes) {
  // Steps 0, 1, 2 each hold buffers living a single step: those of one step stack, different steps
  // reuse the same bytes.
  std::vector<ArenaBuffer> b{buf(128, 0, 0), buf(64, 1, 1), buf(64, 1, 1), buf(256, 2, 2), buf(64, 0, 0)};
  EXPECT_EQ(assign_and_check(b), 256u);
  EXPECT_EQ(b[0].offset, 0u);
  EXPECT_EQ(b[4].offset, 128u);
  EXPECT_EQ(b[1].offset, 0u);
  EXPECT_EQ(b[2].offset, 64u);
  EXPECT_EQ(b[3].offset, 0u);
}

TEST(ArenaLayout, SharingAStepIsOverlapping) {
  // [0,1] and [1,2] are both live at step 1; [0,1] and [2,3] never are.
  std::vector<ArenaBuffer> b{buf(64, 0, 1), buf(64, 1, 2), buf(64, 2, 3)};
  EXPECT_EQ(assign_and_check(b), 128u);
  EXPECT_EQ(b[0].offset, 0u);
  EXPECT_EQ(b[1].offset, 64u);
  EXPECT_EQ(b[2].offset, 0u);
}

TEST(ArenaLayout, SmallBufferFillsAGapBelowTheTop) {
  // A (512, steps 0-1) at 0; C (256, steps 1-2, before B for its earlier first step) clears A: at 512;
  // B (256, steps 2-3) meets only C: at 0. E (128, steps 1-3) meets A, C and B: on top, at 768.
  // D (128, steps 3-4) meets B and E: at 256, in bytes A used earlier.
  std::vector<ArenaBuffer> b{buf(512, 0, 1), buf(256, 2, 3), buf(256, 1, 2), buf(128, 3, 4), buf(128, 1, 3)};
  EXPECT_EQ(assign_and_check(b), 896u);
  EXPECT_EQ(b[0].offset, 0u);
  EXPECT_EQ(b[1].offset, 0u);
  EXPECT_EQ(b[2].offset, 512u);
  EXPECT_EQ(b[3].offset, 256u);
  EXPECT_EQ(b[4].offset, 768u);
}

TEST(ArenaLayout, HolesBetweenLongLivedBuffers) {
  // Two buffers live throughout (1024 and 512) with a 640-byte hole between them wherever the 640 that
  // pushed the 512 up (steps 0-1) is not live.
  std::vector<ArenaBuffer> b{buf(1024, 0, 9), buf(512, 0, 9), buf(640, 0, 1),
                             buf(640, 5, 6), buf(128, 5, 6), buf(128, 2, 3)};
  EXPECT_EQ(assign_and_check(b), 2304u);
  EXPECT_EQ(b[0].offset, 0u);
  EXPECT_EQ(b[2].offset, 1024u);
  EXPECT_EQ(b[3].offset, 1024u);  // placed before the 512: meets only the 1024
  EXPECT_EQ(b[1].offset, 1664u);  // clears both 640s
  EXPECT_EQ(b[5].offset, 1024u);  // steps 2-3: the hole is empty
  EXPECT_EQ(b[4].offset, 2176u);  // steps 5-6: the hole is full, so on top
}

TEST(ArenaLayout, ZeroByteBuffersTakeNoSpace) {
  std::vector<ArenaBuffer> b{buf(0, 0, 3), buf(64, 0, 3), buf(0, 1, 1), buf(64, 1, 2)};
  EXPECT_EQ(assign_and_check(b), 128u);
  EXPECT_EQ(b[0].offset, 0u);
  EXPECT_EQ(b[2].offset, 0u);
  std::vector<ArenaBuffer> only_empty{buf(0, 0, 0), buf(0, 0, 1)};
  EXPECT_EQ(assign_and_check(only_empty), 0u);
}

TEST(ArenaLayout, StepsFarApartAndNegative) {
  // Lifetimes spanning more step values than there are buffers, and below zero.
  std::vector<ArenaBuffer> b{buf(64, INT_MIN, -5), buf(128, -5, 1000000), buf(64, 1000000, INT_MAX),
                             buf(192, INT_MIN, INT_MAX), buf(64, -4, 999999)};
  assign_and_check(b);
  EXPECT_EQ(b[3].offset, 0u);    // 192 spans everything
  EXPECT_EQ(b[1].offset, 192u);  // 128
  EXPECT_EQ(b[0].offset, 320u);  // meets the 128 at -5
  EXPECT_EQ(b[2].offset, 320u);  // meets the 128 at 1000000, not the first 64
  EXPECT_EQ(b[4].offset, 320u);  // inside the 128's lifetime, between the two others
}

TEST(ArenaLayout, ChainAlternatesBetweenTwoSlots) {
  // A chain of n equal tensors: each written at step i and read at step i + 1.
  const int n = 20000;
  std::vector<ArenaBuffer> b;
  for (int i = 0; i < n; ++i) b.push_back(buf(4096, i, i + 1));
  EXPECT_EQ(assign_arena_offsets(b), 8192u);
  for (int i = 0; i < n; ++i) ASSERT_EQ(b[i].offset, i % 2 ? 4096u : 0u) << i;
}

TEST(ArenaLayout, ManyLiveAtOnceStack) {
  // A Split into n outputs that one Concat reads, then each output's own consumer.
  const int n = 5000;
  std::vector<ArenaBuffer> b;
  for (int i = 0; i < n; ++i) b.push_back(buf(64, 0, 1));
  EXPECT_EQ(assign_arena_offsets(b), 64u * n);
  for (int i = 0; i < n; ++i) ASSERT_EQ(b[i].offset, 64u * i) << i;
}

// Random buffer sets of several kinds, each checked against the reference greedy.
struct RandomCase {
  const char* name;
  int count_max;      // buffers per set: 1..count_max
  int steps_max;      // lifetimes within [0, steps)
  int long_percent;   // share of buffers that live long
  int size_choices;   // sizes are 64 * (1..size_choices): few choices make many ties
};

void check_random_sets(const RandomCase& c, int sets, uint32_t seed) {
  std::mt19937 rng(seed);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int s = 0; s < sets; ++s) {
    const int n = uniform(1, c.count_max);
    const int steps = uniform(1, c.steps_max);
    std::vector<ArenaBuffer> b;
    for (int i = 0; i < n; ++i) {
      int first = uniform(0, steps - 1);
      int len = uniform(0, 99) < c.long_percent ? uniform(0, steps) : uniform(0, 3);
      int last = std::min(steps - 1, first + len);
      size_t bytes = 64 * static_cast<size_t>(uniform(1, c.size_choices));
      if (uniform(0, 99) < 3) bytes = 0;
      b.push_back(buf(bytes, first, last));
    }
    // Sometimes spread the steps far apart, so they are ranked rather than shifted.
    if (uniform(0, 3) == 0)
      for (ArenaBuffer& x : b) {
        x.first = x.first * 100000 - 7;
        x.last = x.last * 100000 - 7;
      }
    SCOPED_TRACE(std::string(c.name) + " set " + std::to_string(s));
    assign_and_check(b);
    if (testing::Test::HasFailure()) return;  // one failing set says enough
  }
}

TEST(ArenaLayout, RandomSetsMatchTheReferenceGreedy) {
  const RandomCase cases[] = {
      {"short lifetimes, few sizes", 60, 40, 5, 3},
      {"short lifetimes, many sizes", 60, 40, 5, 64},
      {"many long-lived", 60, 30, 40, 8},
      {"all long-lived, ties", 40, 10, 100, 2},
      {"crowded steps", 120, 8, 20, 6},
      {"larger sets", 300, 200, 10, 32},
  };
  uint32_t seed = 1;
  for (const RandomCase& c : cases) check_random_sets(c, 300, seed++);
}

TEST(ArenaLayout, ChainsWithSkipsAndBranchesMatchTheReferenceGreedy) {
  // Network-like sets: a chain whose tensors change size by stage, with residual skips (a tensor read
  // again a few steps later) and the odd tensor kept to the end (a detection head's inputs).
  std::mt19937 rng(77);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int s = 0; s < 100; ++s) {
    const int n = uniform(10, 250);
    std::vector<ArenaBuffer> b;
    size_t bytes = 64 * static_cast<size_t>(uniform(64, 256));
    for (int i = 0; i < n; ++i) {
      if (uniform(0, 15) == 0) bytes = std::max<size_t>(64, bytes / 2 / 64 * 64);
      int last = i + 1;
      int r = uniform(0, 9);
      if (r < 3) last = i + uniform(2, 4);
      if (r == 9) last = n;
      b.push_back(buf(bytes * static_cast<size_t>(uniform(1, 2)), i, last));
    }
    SCOPED_TRACE("set " + std::to_string(s));
    assign_and_check(b);
    if (HasFailure()) return;
  }
}

}  // namespace
}  // namespace ninegrid
