// The broadcasting kernel helpers on their own: broadcast_shape, and BroadcastIndexer's runs checked
// element by element against index arithmetic, including runs split at arbitrary [begin, end) bounds as
// the thread pool splits them.
#include <gtest/gtest.h>

#include <random>

#include "kernels/ref/broadcast.h"

namespace ninegrid {
namespace {

using Dims = std::vector<int64_t>;

TEST(BroadcastShape, NumpyRules) {
  Dims out;
  ASSERT_TRUE(ref::broadcast_shape({{2, 3, 4}, {3, 1}}, &out));
  EXPECT_EQ(out, (Dims{2, 3, 4}));
  ASSERT_TRUE(ref::broadcast_shape({{}, {5}}, &out));
  EXPECT_EQ(out, (Dims{5}));
  ASSERT_TRUE(ref::broadcast_shape({{1, 3}, {2, 1}, {1}}, &out));
  EXPECT_EQ(out, (Dims{2, 3}));
  ASSERT_TRUE(ref::broadcast_shape({{0, 3}, {1, 3}}, &out));
  EXPECT_EQ(out, (Dims{0, 3}));
  ASSERT_TRUE(ref::broadcast_shape({{}, {}}, &out));
  EXPECT_EQ(out, Dims{});
  EXPECT_FALSE(ref::broadcast_shape({{2, 3}, {4}}, &out));
  EXPECT_FALSE(ref::broadcast_shape({{0}, {3}}, &out));
  EXPECT_FALSE(ref::broadcast_shape({{2, 3}, {3, 2, 2}}, &out));
  ASSERT_TRUE(ref::broadcast_shape({{2, 1}, {3, 2, 2}}, &out));  // (1,2,1) against (3,2,2)
  EXPECT_EQ(out, (Dims{3, 2, 2}));
}

int64_t offset_of(const Dims& in, const Dims& out, int64_t linear) {
  const size_t lead = out.size() - in.size();
  Dims coord(out.size());
  for (size_t d = out.size(); d-- > 0;) {
    coord[d] = linear % out[d];
    linear /= out[d];
  }
  int64_t off = 0;
  for (size_t d = 0; d < in.size(); ++d) off = off * in[d] + (in[d] == 1 ? 0 : coord[lead + d]);
  return off;
}

// Walks [begin, end) and checks every element's input offsets and that runs tile the range exactly.
void check_range(const ref::BroadcastIndexer& ix, const Dims& out, const std::vector<Dims>& ins, int64_t begin,
                 int64_t end) {
  int64_t next = begin;
  ix.for_each_run(begin, end, [&](const int64_t* off, int64_t o, int64_t n) {
    ASSERT_EQ(o, next);
    ASSERT_GT(n, 0);
    for (int64_t k = 0; k < n; ++k)
      for (size_t i = 0; i < ins.size(); ++i) {
        const int64_t got = off[i] + (ix.steps_along_run(static_cast<int>(i)) ? k : 0);
        ASSERT_EQ(got, offset_of(ins[i], out, o + k)) << "input " << i << " element " << o + k;
      }
    next = o + n;
  });
  EXPECT_EQ(next, std::max(begin, end));
}

TEST(BroadcastIndexer, RunsMatchIndexArithmeticOnAnyRange) {
  std::mt19937 rng(3);
  for (int iter = 0; iter < 200; ++iter) {
    const int rank = static_cast<int>(rng() % 5);
    Dims out(rank);
    for (auto& d : out) d = 1 + rng() % 4;
    const int n_in = 1 + static_cast<int>(rng() % 3);
    std::vector<Dims> ins(n_in);
    for (auto& in : ins) {
      const int r = static_cast<int>(rng() % (rank + 1));
      for (int d = rank - r; d < rank; ++d) in.push_back(rng() % 3 == 0 ? 1 : out[d]);
    }
    Dims check;
    std::vector<Dims> all = ins;
    all.push_back(out);
    ASSERT_TRUE(ref::broadcast_shape(all, &check));
    ASSERT_EQ(check, out);
    const ref::BroadcastIndexer ix(out, ins);
    const int64_t numel = ix.numel();
    check_range(ix, out, ins, 0, numel);
    for (int k = 0; k < 4 && numel > 0; ++k) {
      int64_t b = rng() % numel, e = rng() % (numel + 1);
      if (b > e) std::swap(b, e);
      check_range(ix, out, ins, b, e);
    }
  }
}

TEST(BroadcastIndexer, CoalescesEqualShapesIntoOneRun) {
  const ref::BroadcastIndexer ix({2, 3, 4}, {{2, 3, 4}, {2, 3, 4}});
  int runs = 0;
  ix.for_each_run(0, ix.numel(), [&](const int64_t*, int64_t, int64_t n) {
    ++runs;
    EXPECT_EQ(n, 24);
  });
  EXPECT_EQ(runs, 1);
  // A per-channel operand against NCHW: runs of H*W with the channel value repeated.
  const ref::BroadcastIndexer pc({2, 3, 4, 5}, {{2, 3, 4, 5}, {3, 1, 1}});
  EXPECT_TRUE(pc.steps_along_run(0));
  EXPECT_FALSE(pc.steps_along_run(1));
  pc.for_each_run(0, pc.numel(), [&](const int64_t* off, int64_t o, int64_t n) {
    EXPECT_EQ(n, 20);
    EXPECT_EQ(off[1], (o / 20) % 3);
  });
}

TEST(BroadcastIndexer, ZeroSizeOutputHasNoRuns) {
  const ref::BroadcastIndexer ix({0, 3}, {{1, 3}, {0, 1}});
  EXPECT_EQ(ix.numel(), 0);
  int runs = 0;
  ix.for_each_run(0, 10, [&](const int64_t*, int64_t, int64_t) { ++runs; });
  EXPECT_EQ(runs, 0);
}

TEST(BroadcastIndexer, RejectsNonBroadcastableInput) {
  EXPECT_THROW(ref::BroadcastIndexer({2, 3}, {{4}}), std::invalid_argument);
  EXPECT_THROW(ref::BroadcastIndexer({3}, {{2, 3}}), std::invalid_argument);
}

}  // namespace
}  // namespace ninegrid
