// Spans of one image's channels shared instead of copied (runtime/plan.cpp): a Concat's inputs are
// written in their spans of its output (place_inputs_in_outputs), and a Split's outputs are views of their
// spans of its input (span_view_offset). These tests hold the plan to where it puts each value, and the
// results to values computed here (exact element-wise ops) or to the unoptimised graph (convs), with and
// without the sharing, on 1-3 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "runtime/session_impl.h"
#include "unit/graph_builder.h"

namespace ninegrid {
namespace {

using test_graph::GraphBuilder;

struct Placed {
  std::map<std::string, Tensor> out;
  std::map<std::string, ValueSlot> slots;  // by value name, as planned
  size_t arena = 0;
  int concat_inputs = 0, concat_inputs_placed = 0;  // over the planned graph's Concats
};

// Runs `g` on x and reads back the plan's slot of every value.
Placed run_and_inspect(const Graph& g, const Tensor& x, int level = 0, int threads = 1) {
  Options o;
  o.opt_level = level;
  o.threads = threads;
  auto model = std::make_shared<Model>(std::make_unique<ModelImpl>(g, o, "onnx"));
  auto session = model->create_session();
  Placed p;
  p.out = session->run({{"x", x}});
  const SessionImpl& impl = InternalAccess::impl(*session);
  const Graph& planned = impl.model().graph();
  for (size_t v = 0; v < planned.values.size(); ++v) p.slots[planned.values[v].name] = impl.plan().slots[v];
  p.arena = impl.plan().arena_bytes;
  for (const Node& n : planned.nodes) {
    if (n.op_type != "Concat") continue;
    for (int v : n.inputs) {
      const ValueSlot& slot = impl.plan().slots[v];
      ++p.concat_inputs;
      p.concat_inputs_placed += slot.storage == Storage::Alias && slot.alias_of == n.outputs[0];
    }
  }
  return p;
}

void expect_in(const Placed& p, const std::string& value, const std::string& host, size_t offset, const Graph& g) {
  const ValueSlot& s = p.slots.at(value);
  ASSERT_EQ(s.storage, Storage::Alias) << value << " is not placed in another value";
  EXPECT_EQ(s.alias_of, g.find_value(host)) << value;
  EXPECT_EQ(s.offset, offset) << value;
}

void expect_own_bytes(const Placed& p, const std::string& value) {
  EXPECT_EQ(p.slots.at(value).storage, Storage::Arena) << value << " should keep bytes of its own";
}

float relu(float v) { return v > 0.f ? v : 0.f; }

// z = Concat(relu(x), -x, |x|) + 1 along the channels, computed element by element.
Tensor expected_three(const Tensor& x) {
  const int64_t c = x.dim(1), plane = x.dim(2) * x.dim(3);
  Tensor z = Tensor::empty(DataType::Float32, {1, 3 * c, x.dim(2), x.dim(3)});
  const float* xp = x.data_as<float>();
  float* zp = z.data_as<float>();
  for (int64_t i = 0; i < c * plane; ++i) {
    zp[i] = relu(xp[i]) + 1.f;
    zp[c * plane + i] = -xp[i] + 1.f;
    zp[2 * c * plane + i] = std::fabs(xp[i]) + 1.f;
  }
  return z;
}

void expect_equal(const Tensor& want, const Tensor& got) {
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < want.numel(); ++i)
    ASSERT_EQ(got.data_as<float>()[i], want.data_as<float>()[i]) << "element " << i;
}

GraphBuilder three_parts(Shape x_shape) {
  GraphBuilder b;
  b.input("x", x_shape);
  b.node("Relu", {"x"}, {"a"});
  b.node("Neg", {"x"}, {"b"});
  b.node("Abs", {"x"}, {"c"});
  b.node("Concat", {"a", "b", "c"}, {"cat"}).attrs.set("axis", Attribute::of_int(1));
  b.constant("one", {1}, 1.f, 1.f);
  b.node("Add", {"cat", "one"}, {"z"});
  b.output("z");
  return b;
}

TEST(ConcatInPlace, PartsAreWrittenInTheirSpansOfTheOutput) {
  // 8 x 6 x 6 floats = 1152 bytes a part: every span starts on 64 bytes.
  GraphBuilder b = three_parts({1, 8, 6, 6});
  const Tensor x = test_graph::random_input({1, 8, 6, 6}, 3);
  for (int threads : {1, 2, 3}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    const Placed p = run_and_inspect(b.g, x, 0, threads);
    expect_in(p, "a", "cat", 0, b.g);
    expect_in(p, "b", "cat", 1152, b.g);
    expect_in(p, "c", "cat", 2304, b.g);
    expect_equal(expected_three(x), p.out.at("z"));
  }
}

TEST(ConcatInPlace, TheArenaHoldsTheOutputOnce) {
  // Without the placement the three parts and the output (as large as the three) are live at the
  // Concat; with it, the output alone (z, the graph's output, has a tensor of its own).
  GraphBuilder b = three_parts({1, 16, 32, 32});
  const Tensor x = test_graph::random_input({1, 16, 32, 32}, 4);
  const Placed placed = run_and_inspect(b.g, x);
  EXPECT_EQ(placed.arena, 3 * 16 * 32 * 32 * sizeof(float));
  expect_equal(expected_three(x), placed.out.at("z"));
}

TEST(ConcatInPlace, AGraphOutputPartIsCopiedAndTheOthersPlaced) {
  GraphBuilder b = three_parts({1, 16, 32, 32});
  b.output("b");  // the caller's tensor: b is written there and copied into the output
  const Tensor x = test_graph::random_input({1, 16, 32, 32}, 4);
  const Placed p = run_and_inspect(b.g, x);
  expect_in(p, "a", "cat", 0, b.g);
  EXPECT_EQ(p.slots.at("b").storage, Storage::FreshOutput);
  expect_in(p, "c", "cat", 2 * 16 * 32 * 32 * sizeof(float), b.g);
  expect_equal(expected_three(x), p.out.at("z"));
}

TEST(ConcatInPlace, SpansOffTheArenaAlignmentAreCopied) {
  // 3 x 5 x 5 floats = 300 bytes: the first part starts at 0 and is placed, the others would start at
  // 300 and 600 and are copied by the Concat, after the first part's producer wrote its span.
  GraphBuilder b = three_parts({1, 3, 5, 5});
  const Tensor x = test_graph::random_input({1, 3, 5, 5}, 5);
  const Placed p = run_and_inspect(b.g, x);
  expect_in(p, "a", "cat", 0, b.g);
  expect_own_bytes(p, "b");
  expect_own_bytes(p, "c");
  expect_equal(expected_three(x), p.out.at("z"));
}

TEST(ConcatInPlace, ABatchOfImagesIsCopied) {
  GraphBuilder b = three_parts({2, 8, 6, 6});
  const Tensor x = test_graph::random_input({2, 8, 6, 6}, 6);
  const Placed p = run_and_inspect(b.g, x);
  for (const char* v : {"a", "b", "c"}) expect_own_bytes(p, v);
  // Per image: relu, neg, abs parts, plus one.
  const Tensor& z = p.out.at("z");
  const float* xp = x.data_as<float>();
  const float* zp = z.data_as<float>();
  const int64_t part = 8 * 36;
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t i = 0; i < part; ++i) {
      ASSERT_EQ(zp[n * 3 * part + i], relu(xp[n * part + i]) + 1.f);
      ASSERT_EQ(zp[n * 3 * part + part + i], -xp[n * part + i] + 1.f);
      ASSERT_EQ(zp[n * 3 * part + 2 * part + i], std::fabs(xp[n * part + i]) + 1.f);
    }
}

TEST(ConcatInPlace, NestedConcatsShareTheOuterOutput) {
  GraphBuilder b;
  b.input("x", {1, 8, 6, 6});
  b.node("Relu", {"x"}, {"a"});
  b.node("Neg", {"x"}, {"b"});
  b.node("Abs", {"x"}, {"c"});
  b.node("Concat", {"a", "b"}, {"ab"}).attrs.set("axis", Attribute::of_int(1));
  b.node("Concat", {"ab", "c"}, {"cat"}).attrs.set("axis", Attribute::of_int(1));
  b.constant("one", {1}, 1.f, 1.f);
  b.node("Add", {"cat", "one"}, {"z"});
  b.output("z");
  const Tensor x = test_graph::random_input({1, 8, 6, 6}, 7);
  const Placed p = run_and_inspect(b.g, x);
  expect_in(p, "ab", "cat", 0, b.g);
  expect_in(p, "a", "cat", 0, b.g);
  expect_in(p, "b", "cat", 1152, b.g);
  expect_in(p, "c", "cat", 2304, b.g);
  expect_equal(expected_three(x), p.out.at("z"));
}

TEST(ConcatInPlace, AViewMovesWithTheValueItViews) {
  // Concat(reshape(relu(x)), -x, |x|) on [1, 8, 36]: relu(x) is placed, and the view follows it.
  GraphBuilder b;
  b.input("x", {1, 8, 6, 6});
  b.node("Relu", {"x"}, {"a4"});
  test_graph::add_const<int64_t>(b, "shape3", DataType::Int64, {3}, {1, 8, 36});
  b.node("Reshape", {"a4", "shape3"}, {"a"});
  b.node("Reshape", {"x", "shape3"}, {"x3"});
  b.node("Neg", {"x3"}, {"b"});
  b.node("Abs", {"x3"}, {"c"});
  b.node("Concat", {"a", "b", "c"}, {"cat"}).attrs.set("axis", Attribute::of_int(1));
  test_graph::add_const<int64_t>(b, "shape4", DataType::Int64, {4}, {1, 24, 6, 6});
  b.node("Reshape", {"cat", "shape4"}, {"cat4"});
  b.constant("one", {1}, 1.f, 1.f);
  b.node("Add", {"cat4", "one"}, {"z"});
  b.output("z");
  const Tensor x = test_graph::random_input({1, 8, 6, 6}, 8);
  const Placed p = run_and_inspect(b.g, x);
  expect_in(p, "a4", "cat", 0, b.g);
  expect_in(p, "a", "cat", 0, b.g);
  expect_in(p, "b", "cat", 1152, b.g);
  expect_equal(expected_three(x), p.out.at("z"));
}

TEST(ConcatInPlace, APartReadTwiceOrAGraphInputKeepsItsBytes) {
  // Concat(a, a, x): a appears twice and x is the caller's tensor; neither moves, and that Concat copies
  // all three into its output, which is itself placed in the next Concat's output beside -a.
  GraphBuilder b;
  b.input("x", {1, 8, 6, 6});
  b.node("Relu", {"x"}, {"a"});
  b.node("Concat", {"a", "a", "x"}, {"cat"}).attrs.set("axis", Attribute::of_int(1));
  b.node("Neg", {"a"}, {"na"});
  b.node("Concat", {"cat", "na"}, {"cat2"}).attrs.set("axis", Attribute::of_int(1));
  b.node("Abs", {"cat2"}, {"z"});
  b.output("z");
  const Tensor x = test_graph::random_input({1, 8, 6, 6}, 9);
  const Placed p = run_and_inspect(b.g, x);
  expect_own_bytes(p, "a");
  expect_in(p, "cat", "cat2", 0, b.g);
  expect_in(p, "na", "cat2", 3 * 1152, b.g);
  const float* xp = x.data_as<float>();
  const float* zp = p.out.at("z").data_as<float>();
  for (int64_t i = 0; i < 288; ++i) {
    ASSERT_EQ(zp[i], relu(xp[i]));
    ASSERT_EQ(zp[288 + i], relu(xp[i]));
    ASSERT_EQ(zp[2 * 288 + i], std::fabs(xp[i]));
    ASSERT_EQ(zp[3 * 288 + i], relu(xp[i]));
  }
}

TEST(ConcatInPlace, APartReadAfterTheConcatKeepsItsValue) {
  // a and b are placed in cat; both are read again after the Concat, by which time the arena has
  // handed out other buffers: the output's lifetime must cover those reads, and start at a's write,
  // before the temporary t that b is computed from.
  GraphBuilder b;
  b.input("x", {1, 16, 8, 8});
  b.node("Relu", {"x"}, {"a"});
  b.node("Abs", {"x"}, {"t"});
  b.node("Neg", {"t"}, {"b"});
  b.node("Concat", {"a", "b"}, {"cat"}).attrs.set("axis", Attribute::of_int(1));
  b.node("Abs", {"cat"}, {"t1"});
  b.node("Neg", {"t1"}, {"t2"});
  b.node("Abs", {"t2"}, {"t3"});
  b.node("Add", {"a", "b"}, {"ab"});
  b.node("Concat", {"t3", "ab"}, {"z"}).attrs.set("axis", Attribute::of_int(1));
  b.output("z");
  const Tensor x = test_graph::random_input({1, 16, 8, 8}, 10);
  const Placed p = run_and_inspect(b.g, x);
  expect_in(p, "a", "cat", 0, b.g);
  expect_in(p, "b", "cat", 4096, b.g);
  const float* xp = x.data_as<float>();
  const float* zp = p.out.at("z").data_as<float>();
  const int64_t part = 16 * 64;
  for (int64_t i = 0; i < part; ++i) {
    ASSERT_EQ(zp[i], relu(xp[i]));
    ASSERT_EQ(zp[part + i], std::fabs(xp[i]));
    ASSERT_EQ(zp[2 * part + i], relu(xp[i]) + -std::fabs(xp[i]));
  }
}

// Convs writing into one Concat, optimised (layouts planned, activations fused), against
// the unoptimised graph: RetinaFace's SSH module in miniature (a conv; two 3x3 convs in series beside
// it; Concat; ReLU; a conv reading the result). The first conv is 1x1 so that it never merges with its
// 3x3 sibling into one conv and a Split (merge_sibling_convs), whatever the ISA's layout.
TEST(ConcatInPlace, BlockedConvOutputsMatchTheUnoptimisedGraph) {
  for (int64_t c : {8, 16, 24}) {
    GraphBuilder b(static_cast<unsigned>(c));
    b.input("x", {1, 16, 20, 20});
    auto conv = [&](const std::string& in, const std::string& out, int64_t from, int64_t to, int64_t k = 3) {
      b.constant(out + "_w", {to, from, k, k}, -0.2f, 0.2f);
      b.constant(out + "_b", {to}, -0.1f, 0.1f);
      const int64_t pad = k / 2;
      b.node("Conv", {in, out + "_w", out + "_b"}, {out}).attrs.set("pads", Attribute::of_ints({pad, pad, pad, pad}));
    };
    conv("x", "p", 16, 2 * c, 1);
    conv("x", "q0", 16, c);
    b.node("Relu", {"q0"}, {"q1"});
    conv("q1", "q", c, c);
    conv("q1", "r", c, c);
    b.node("Concat", {"p", "q", "r"}, {"cat"}).attrs.set("axis", Attribute::of_int(1));
    b.node("Relu", {"cat"}, {"cr"});
    conv("cr", "z", 4 * c, 8);
    b.output("z");
    const Tensor x = test_graph::random_input({1, 16, 20, 20}, 11);
    const Tensor want = test_graph::run_at(b.g, 0, x).at("z");
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE("channels " + std::to_string(c) + ", threads " + std::to_string(threads));
      const Placed p = run_and_inspect(b.g, x, 2, threads);
      // The convs' blocked outputs when the Concat is blocked (16 channels: whole 16-channel blocks), the
      // reorders to plain before it otherwise.
      EXPECT_EQ(p.concat_inputs, 3);
      EXPECT_EQ(p.concat_inputs_placed, 3);
      test_graph::expect_close(want, p.out.at("z"));
    }
  }
}

// x -> Relu -> a -> Split(8, 16) -> -s0, |s1|: both parts views of a.
GraphBuilder split_graph(Shape shape, std::vector<int64_t> sizes, bool split_input = false) {
  GraphBuilder b;
  b.input("x", shape);
  b.node("Relu", {"x"}, {"a"});
  test_graph::add_const<int64_t>(b, "sizes", DataType::Int64, {2}, sizes);
  b.node("Split", {split_input ? "x" : "a", "sizes"}, {"s0", "s1"}).attrs.set("axis", Attribute::of_int(1));
  b.node("Neg", {"s0"}, {"z0"});
  b.node("Abs", {"s1"}, {"z1"});
  b.output("z0");
  b.output("z1");
  return b;
}

// z0 = -relu(x) over the first `first` channels, z1 = |relu(x)| (or |x|) over the rest, per image.
void expect_split_values(const Tensor& x, int64_t first, const Placed& p, bool split_input = false) {
  const int64_t n = x.dim(0), c = x.dim(1), plane = x.dim(2) * x.dim(3);
  const float* xp = x.data_as<float>();
  const float* z0 = p.out.at("z0").data_as<float>();
  const float* z1 = p.out.at("z1").data_as<float>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < c * plane; ++j) {
      const float v = xp[i * c * plane + j];
      if (j < first * plane)
        ASSERT_EQ(z0[i * first * plane + j], -(split_input ? v : relu(v))) << i << " " << j;
      else
        ASSERT_EQ(z1[i * (c - first) * plane + j - first * plane], std::fabs(split_input ? v : relu(v))) << i << " " << j;
    }
}

TEST(SplitViews, PartsAreViewsOfTheirSpans) {
  GraphBuilder b = split_graph({1, 24, 6, 6}, {8, 16});
  const Tensor x = test_graph::random_input({1, 24, 6, 6}, 21);
  for (int threads : {1, 2, 3}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    const Placed p = run_and_inspect(b.g, x, 0, threads);
    expect_in(p, "s0", "a", 0, b.g);
    expect_in(p, "s1", "a", 8 * 36 * sizeof(float), b.g);
    expect_split_values(x, 8, p);
  }
}

TEST(SplitViews, SpansOffTheAlignmentBatchesAndGraphInputsAreCopied) {
  {
    // 1 x 5 x 5 floats = 100 bytes: the second part would start off the 64-byte alignment.
    GraphBuilder b = split_graph({1, 3, 5, 5}, {1, 2});
    const Tensor x = test_graph::random_input({1, 3, 5, 5}, 22);
    const Placed p = run_and_inspect(b.g, x);
    expect_in(p, "s0", "a", 0, b.g);
    expect_own_bytes(p, "s1");
    expect_split_values(x, 1, p);
  }
  {
    GraphBuilder b = split_graph({2, 24, 6, 6}, {8, 16});
    const Tensor x = test_graph::random_input({2, 24, 6, 6}, 23);
    const Placed p = run_and_inspect(b.g, x);
    expect_own_bytes(p, "s0");
    expect_own_bytes(p, "s1");
    expect_split_values(x, 8, p);
  }
  {
    // The caller's tensor: no view of it outlives the run's binding, so its parts are copied.
    GraphBuilder b = split_graph({1, 24, 6, 6}, {8, 16}, true);
    const Tensor x = test_graph::random_input({1, 24, 6, 6}, 24);
    const Placed p = run_and_inspect(b.g, x);
    expect_own_bytes(p, "s0");
    expect_own_bytes(p, "s1");
    expect_split_values(x, 8, p, true);
  }
}

TEST(SplitViews, AGraphOutputPartIsWrittenAndTheOtherViewed) {
  GraphBuilder b = split_graph({1, 24, 6, 6}, {8, 16});
  b.output("s1");
  const Tensor x = test_graph::random_input({1, 24, 6, 6}, 25);
  const Placed p = run_and_inspect(b.g, x);
  expect_in(p, "s0", "a", 0, b.g);
  EXPECT_EQ(p.slots.at("s1").storage, Storage::FreshOutput);
  expect_split_values(x, 8, p);
  const float* xp = x.data_as<float>();
  const float* s1 = p.out.at("s1").data_as<float>();
  for (int64_t j = 0; j < 16 * 36; ++j) ASSERT_EQ(s1[j], relu(xp[8 * 36 + j]));
}

TEST(SplitViews, ViewsFollowTheirValueIntoAConcatAndKeepTheirOffsetThroughAReshape) {
  // a is placed in cat (after the Split made s0 and s1 views of it): the views move with it; r1, a
  // Reshape of s1, is a view of the same span.
  GraphBuilder b;
  b.input("x", {1, 24, 6, 6});
  b.node("Relu", {"x"}, {"a"});
  b.node("Neg", {"x"}, {"na"});
  test_graph::add_const<int64_t>(b, "sizes", DataType::Int64, {2}, {8, 16});
  b.node("Split", {"a", "sizes"}, {"s0", "s1"}).attrs.set("axis", Attribute::of_int(1));
  test_graph::add_const<int64_t>(b, "flat", DataType::Int64, {3}, {1, 16, 36});
  b.node("Reshape", {"s1", "flat"}, {"r1"});
  b.node("Concat", {"a", "na"}, {"cat"}).attrs.set("axis", Attribute::of_int(1));
  b.node("Neg", {"s0"}, {"z0"});
  b.node("Abs", {"r1"}, {"z1"});
  b.node("Abs", {"cat"}, {"z2"});
  b.output("z0");
  b.output("z1");
  b.output("z2");
  const Tensor x = test_graph::random_input({1, 24, 6, 6}, 26);
  const Placed p = run_and_inspect(b.g, x);
  expect_in(p, "a", "cat", 0, b.g);
  expect_in(p, "na", "cat", 24 * 36 * sizeof(float), b.g);
  expect_in(p, "s0", "cat", 0, b.g);
  expect_in(p, "s1", "cat", 8 * 36 * sizeof(float), b.g);
  expect_in(p, "r1", "cat", 8 * 36 * sizeof(float), b.g);
  const float* xp = x.data_as<float>();
  const float* z0 = p.out.at("z0").data_as<float>();
  const float* z1 = p.out.at("z1").data_as<float>();
  const float* z2 = p.out.at("z2").data_as<float>();
  for (int64_t j = 0; j < 24 * 36; ++j) {
    if (j < 8 * 36) ASSERT_EQ(z0[j], -relu(xp[j]));
    else ASSERT_EQ(z1[j - 8 * 36], relu(xp[j]));
    ASSERT_EQ(z2[j], relu(xp[j]));
    ASSERT_EQ(z2[24 * 36 + j], std::fabs(xp[j]));
  }
}

}  // namespace
}  // namespace ninegrid
