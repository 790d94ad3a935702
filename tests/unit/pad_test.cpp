// Pad (one-node Graph/Session) against numpy.pad's documented results, computed by hand, and a naive
// per-element formulation of the four modes over random shapes and pads (negative pads crop first).
#include <gtest/gtest.h>

#include <random>

#include "unit/elementwise_test_util.h"

namespace ninegrid {
namespace {

using eltest::arg;
using eltest::attrs_of;
using eltest::f32;
using eltest::i64;
using eltest::konst;
using eltest::omitted;
using eltest::OpSpec;

Tensor pad(const Tensor& x, const std::vector<int64_t>& pads, const std::string& mode, eltest::In value = omitted(),
           eltest::In axes = omitted()) {
  return eltest::run1("Pad", {arg(x), konst(i64({static_cast<int64_t>(pads.size())}, pads)), value, axes},
                      attrs_of({{"mode", Attribute::of_string(mode)}}));
}

TEST(PadOp, HandComputedModes) {
  const Tensor x = f32({1, 4}, {1, 2, 3, 4});
  // numpy.pad([1, 2, 3, 4], (3, 2), mode=...):
  eltest::expect_near_all(pad(x, {0, 3, 0, 2}, "constant", konst(f32({}, {9}))), {9, 9, 9, 1, 2, 3, 4, 9, 9});
  eltest::expect_near_all(pad(x, {0, 3, 0, 2}, "constant"), {0, 0, 0, 1, 2, 3, 4, 0, 0});
  eltest::expect_near_all(pad(x, {0, 3, 0, 2}, "reflect"), {4, 3, 2, 1, 2, 3, 4, 3, 2});
  eltest::expect_near_all(pad(x, {0, 3, 0, 2}, "edge"), {1, 1, 1, 1, 2, 3, 4, 4, 4});
  eltest::expect_near_all(pad(x, {0, 3, 0, 2}, "wrap"), {2, 3, 4, 1, 2, 3, 4, 1, 2});
  // Reflect further than the length repeats the mirror (numpy: [3, 2, 1, 2, 3, 2, 1, 2, 3] for [1, 2, 3]).
  eltest::expect_near_all(pad(f32({3}, {1, 2, 3}), {3, 3}, "reflect"), {2, 3, 2, 1, 2, 3, 2, 1, 2});
  // Negative pads crop: drop one at the start, pad two edge values at the end of what is left.
  eltest::expect_near_all(pad(x, {0, -1, 0, 2}, "edge"), {2, 3, 4, 4, 4});
  // 2-D with axes: pad only axis 0 (rows) by one each side, reflect.
  const Tensor m = f32({2, 2}, {1, 2, 3, 4});
  const Tensor y = pad(m, {1, 1}, "reflect", omitted(), konst(i64({1}, {0})));
  ASSERT_EQ(y.shape(), (Shape{4, 2}));
  eltest::expect_near_all(y, {3, 4, 1, 2, 3, 4, 1, 2});
}

TEST(PadOp, IntegerDataAndConstant) {
  const Tensor x = i64({2}, {7, 8});
  const Tensor y = eltest::run1("Pad", {arg(x), konst(i64({2}, {1, 2})), konst(i64({1}, {-5}))});
  EXPECT_EQ(eltest::values<int64_t>(y), (std::vector<int64_t>{-5, 7, 8, -5, -5}));
}

// numpy.pad per element: output coordinate o reads input coordinate i = o - pad_begin of the cropped
// range, mirrored / clamped / wrapped until it falls inside.
int64_t naive_source(int64_t o, int64_t in, int64_t begin, int64_t end, const std::string& mode) {
  const int64_t lo = begin < 0 ? -begin : 0, hi = end < 0 ? in + end : in;
  int64_t i = o - begin;
  if (i >= lo && i < hi) return i;
  if (mode == "constant") return -1;
  if (mode == "edge") return i < lo ? lo : hi - 1;
  if (mode == "wrap") {
    while (i < lo) i += hi - lo;
    while (i >= hi) i -= hi - lo;
    return i;
  }
  if (hi - lo == 1) return lo;
  while (i < lo || i >= hi) i = i < lo ? 2 * lo - i : 2 * (hi - 1) - i;  // mirror at the border values
  return i;
}

TEST(PadOp, RandomShapesMatchNaiveFormulation) {
  std::mt19937 rng(5);
  auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  const char* modes[] = {"constant", "reflect", "edge", "wrap"};
  for (int trial = 0; trial < 120; ++trial) {
    const std::string mode = modes[trial % 4];
    const int rank = static_cast<int>(uniform(1, 4));
    Shape xs;
    std::vector<int64_t> pads(2 * rank);
    Shape ys;
    for (int a = 0; a < rank; ++a) xs.push_back(uniform(2, 4));
    for (int a = 0; a < rank; ++a) {
      pads[a] = uniform(-1, 4);
      pads[rank + a] = uniform(-1, 4);
      ys.push_back(xs[a] + pads[a] + pads[rank + a]);
    }
    Tensor x = Tensor::empty(DataType::Float32, xs);
    for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] = static_cast<float>(i);
    const Tensor y = pad(x, pads, mode, konst(f32({1}, {-1.f})));
    ASSERT_EQ(y.shape(), ys) << mode;
    std::vector<int64_t> c(static_cast<size_t>(rank), 0);
    for (int64_t o = 0; o < shape_numel(ys); ++o) {
      int64_t rem = o, src = 0;
      bool constant = false;
      for (int a = rank - 1; a >= 0; --a) c[a] = rem % ys[a], rem /= ys[a];
      for (int a = 0; a < rank; ++a) {
        const int64_t s = naive_source(c[a], xs[a], pads[a], pads[rank + a], mode);
        if (s < 0) constant = true;
        src = src * xs[a] + std::max<int64_t>(s, 0);
      }
      ASSERT_EQ(y.data_as<float>()[o], constant ? -1.f : static_cast<float>(src)) << mode << " output " << o;
    }
  }
}

TEST(PadOp, Errors) {
  const Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto err = [&](std::vector<eltest::In> in, const std::string& mode = "constant") {
    OpSpec s;
    s.op_type = "Pad";
    s.inputs = std::move(in);
    s.attrs = attrs_of({{"mode", Attribute::of_string(mode)}});
    return eltest::error_of(s);
  };
  auto has = [](const std::string& msg, const std::string& needle) {
    EXPECT_NE(msg.find(needle), std::string::npos) << "want '" << needle << "' in: " << msg;
    EXPECT_NE(msg.find("node_under_test"), std::string::npos) << msg;
  };
  has(err({arg(x), konst(i64({2}, {1, 1}))}), "expected 4");
  has(err({arg(x), konst(i64({4}, {0, -4, 0, 0}))}), "below zero");
  has(err({arg(x), arg(i64({4}, {0, -4, 0, 0}))}), "below zero");  // pads given as a model input
  const Tensor padded = eltest::run1("Pad", {arg(x), arg(i64({4}, {0, 1, 0, 1}))});
  EXPECT_EQ(padded.shape(), (Shape{2, 5}));
  EXPECT_EQ(eltest::values<float>(padded), (std::vector<float>{0, 1, 2, 3, 0, 0, 4, 5, 6, 0}));
  has(err({arg(x), konst(i64({4}, {0, 1, 0, 1})), konst(eltest::i32({1}, {1}))}), "constant_value must have");
  has(err({arg(x), konst(i64({4}, {0, 1, 0, 1}))}, "mirror"), "unsupported: mode");
  has(err({arg(x), konst(i64({4}, {0, -3, 0, 1}))}, "reflect"), "empty axis");
  has(err({arg(x), konst(i64({2}, {1, 1})), omitted(), konst(i64({1}, {2}))}), "out of range");
  has(err({arg(x), konst(i64({4}, {0, int64_t(1) << 62, 0, 0}))}), "out of range");
}

TEST(PadOp, EmptyOutputWithALongAxisAllocatesNothing) {
  // Axis 0 is empty, so padding axis 1 by 2^40 describes an empty output: no index table is built.
  const Tensor x = f32({0, 2}, {});
  const Tensor y = pad(x, {0, int64_t(1) << 40, 0, 0}, "edge");
  EXPECT_EQ(y.shape(), (Shape{0, (int64_t(1) << 40) + 2}));
}

}  // namespace
}  // namespace ninegrid
