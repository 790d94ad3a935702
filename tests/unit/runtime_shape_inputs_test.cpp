// Models whose shape arguments (a Reshape's target, an Expand's shape, a ConstantOfShape's shape ...) are
// model inputs: the session plans when their contents arrive, plans again only when they change, and
// refuses, naming the node, contents that are of the wrong type, absurd, or not available while planning.
// (The outputs against numpy: python/tests/test_runtime_shapes.py; ONNX's node tests: onnx_conformance.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graph_builder.h"
#include "ninegrid/ninegrid.h"
#include "runtime/session_impl.h"

namespace ninegrid {
namespace {

using test_graph::GraphBuilder;
using test_graph::model_of;
using test_graph::random_input;

int add_input(GraphBuilder& b, const std::string& name, DataType dtype, Shape shape) {
  const int id = b.input(name, std::move(shape));
  b.g.values[id].dtype = dtype;
  return id;
}

Tensor int64s(const std::vector<int64_t>& v) {
  Tensor t = Tensor::empty(DataType::Int64, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data_as<int64_t>()[i] = v[i];
  return t;
}

SessionImpl& impl(Session& s) { return InternalAccess::impl(s); }

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' not in: " << text;
}

std::string run_error(Session& s, const std::map<std::string, Tensor>& feeds) {
  try {
    s.run(feeds);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// y = Reshape(x, target), x float 2x3x4, target an int64 input of 2 or 3 values.
GraphBuilder reshape_by_input(Shape target_shape = {2}) {
  GraphBuilder b;
  b.input("x", {2, 3, 4});
  add_input(b, "target", DataType::Int64, target_shape);
  b.node("Reshape", {"x", "target"}, {"y"}).name = "reshape_by_input";
  b.output("y");
  return b;
}

// Reshape keeps the bytes: the output is x's elements in order, under the shape asked for.
void expect_reshaped(const Tensor& y, const Tensor& x, const Shape& shape) {
  ASSERT_EQ(y.shape(), shape);
  ASSERT_EQ(y.numel(), x.numel());
  for (int64_t i = 0; i < x.numel(); ++i) ASSERT_EQ(y.data_as<float>()[i], x.data_as<float>()[i]) << i;
}

TEST(RuntimeShapeInputs, PlansAgainOnlyWhenTheShapeDrivingContentsChange) {
  for (int level : {0, 2}) {
    auto model = model_of(reshape_by_input().g, level);
    auto session = model->create_session();
    SessionImpl& s = impl(*session);
    EXPECT_EQ(s.plans_made(), 0) << "nothing to plan by before the first run";
    const Tensor x1 = random_input({2, 3, 4}, 1), x2 = random_input({2, 3, 4}, 2);

    expect_reshaped(session->run({{"x", x1}, {"target", int64s({6, 4})}}).at("y"), x1, {6, 4});
    EXPECT_EQ(s.plans_made(), 1);
    EXPECT_EQ(s.shape_driving_inputs(), std::vector<int>{1});

    // The same target in a new tensor, and new data in x: the plan stands, and x is not folded into it.
    expect_reshaped(session->run({{"x", x2}, {"target", int64s({6, 4})}}).at("y"), x2, {6, 4});
    EXPECT_EQ(s.plans_made(), 1);

    expect_reshaped(session->run({{"x", x1}, {"target", int64s({4, 6})}}).at("y"), x1, {4, 6});
    EXPECT_EQ(s.plans_made(), 2);
    expect_reshaped(session->run({{"x", x2}, {"target", int64s({4, 6})}}).at("y"), x2, {4, 6});
    EXPECT_EQ(s.plans_made(), 2);
    // A -1 and a 0 are resolved against x's shape, per plan.
    expect_reshaped(session->run({{"x", x1}, {"target", int64s({0, -1})}}).at("y"), x1, {2, 12});
    EXPECT_EQ(s.plans_made(), 3);
    expect_reshaped(session->run({{"x", x1}, {"target", int64s({6, 4})}}).at("y"), x1, {6, 4});
    EXPECT_EQ(s.plans_made(), 4);
  }
}

TEST(RuntimeShapeInputs, ModelsWithoutThemPlanOnceAtSessionCreation) {
  GraphBuilder b;
  b.input("x", {2, 3, 4});
  b.node("Reshape", {"x", "target"}, {"y"});
  Tensor target = int64s({4, 6});
  b.g.values[b.value("target")].constant = target;
  b.g.values[b.value("target")].dtype = DataType::Int64;
  b.output("y");
  auto session = model_of(b.g)->create_session();
  EXPECT_EQ(impl(*session).plans_made(), 1);
  const Tensor x = random_input({2, 3, 4}, 3);
  for (int i = 0; i < 3; ++i) expect_reshaped(session->run({{"x", x}}).at("y"), x, {4, 6});
  EXPECT_EQ(impl(*session).plans_made(), 1);
  EXPECT_TRUE(impl(*session).shape_driving_inputs().empty());
}

TEST(RuntimeShapeInputs, PrepareWithShapesAloneLeavesThePlanToTheFirstRun) {
  GraphBuilder b = reshape_by_input();
  b.g.values[b.g.inputs[0]].shape = {-1, 3, 4};  // a dynamic dimension: prepare() is how to fix it
  auto model = model_of(b.g);
  auto session = model->create_session();
  session->prepare({{"x", {2, 3, 4}}});
  EXPECT_EQ(impl(*session).plans_made(), 0);
  EXPECT_TRUE(session->profile().empty());
  const Tensor x = random_input({2, 3, 4}, 4);
  expect_reshaped(session->run({{"x", x}, {"target", int64s({3, 8})}}).at("y"), x, {3, 8});
  EXPECT_EQ(impl(*session).plans_made(), 1);
  // Prepared again for the shapes of the last run: the plan stands; for others, the next run plans.
  session->prepare({{"x", {2, 3, 4}}});
  EXPECT_EQ(impl(*session).plans_made(), 1);
  const Tensor x5 = random_input({5, 3, 4}, 5);
  expect_reshaped(session->run({{"x", x5}, {"target", int64s({3, 20})}}).at("y"), x5, {3, 20});
  EXPECT_EQ(impl(*session).plans_made(), 2);
}

TEST(RuntimeShapeInputs, ComputedFromAnInputThroughOtherNodes) {
  // target = Concat(Shape(x)[0:1], t * 2): Shape looks at x's shape only, so t alone drives shapes.
  GraphBuilder b;
  b.input("x", {2, 3, 4});
  add_input(b, "t", DataType::Int64, {2});
  b.node("Shape", {"x"}, {"xs"});
  b.g.values[b.value("zero")].constant = int64s({0});
  b.g.values[b.value("one")].constant = int64s({1});
  b.g.values[b.value("two")].constant = int64s({2});
  b.node("Slice", {"xs", "zero", "one"}, {"batch"});
  b.node("Mul", {"t", "two"}, {"t2"});
  b.node("Concat", {"batch", "t2"}, {"target"}).attrs.set("axis", Attribute::of_int(0));
  b.node("Reshape", {"x", "target"}, {"y"});
  b.output("y");
  auto session = model_of(b.g)->create_session();
  const Tensor x = random_input({2, 3, 4}, 6);
  expect_reshaped(session->run({{"x", x}, {"t", int64s({3, 1})}}).at("y"), x, {2, 6, 2});
  expect_reshaped(session->run({{"x", x}, {"t", int64s({1, 3})}}).at("y"), x, {2, 2, 6});
  EXPECT_EQ(impl(*session).shape_driving_inputs(), std::vector<int>{1});
  EXPECT_EQ(impl(*session).plans_made(), 2);
}

TEST(RuntimeShapeInputs, ATargetOfTheWrongTypeIsRefusedNamingTheNode) {
  GraphBuilder b;
  b.input("x", {2, 3, 4});
  b.input("target", {2});  // float32: Reshape takes int64
  b.node("Reshape", {"x", "target"}, {"y"}).name = "float_target";
  b.output("y");
  auto session = model_of(b.g)->create_session();
  Tensor target = Tensor::empty(DataType::Float32, {2});
  target.data_as<float>()[0] = 6;
  target.data_as<float>()[1] = 4;
  const std::string e = run_error(*session, {{"x", random_input({2, 3, 4}, 7)}, {"target", target}});
  expect_contains(e, "node 'float_target' (Reshape)");
  expect_contains(e, "int64 or int32, got float32");
}

// Absurd contents ask for more than the budget: refused when planning, naming the node and the size,
// before anything is allocated.
TEST(RuntimeShapeInputs, AbsurdShapeContentsAreAResourceLimitErrorNamingTheNode) {
  {
    GraphBuilder b;
    add_input(b, "shape", DataType::Int64, {3});
    b.node("ConstantOfShape", {"shape"}, {"y"}).name = "fill";
    b.output("y");
    auto session = model_of(b.g)->create_session();
    const std::string e = run_error(*session, {{"shape", int64s({1 << 20, 1 << 20, 1 << 20})}});
    expect_contains(e, "node 'fill' (ConstantOfShape)");
    expect_contains(e, "max_tensor_bytes");
  }
  {
    GraphBuilder b;
    b.input("x", {1, 3});
    add_input(b, "shape", DataType::Int64, {2});
    b.node("Expand", {"x", "shape"}, {"y"}).name = "broadcast";
    b.output("y");
    auto session = model_of(b.g)->create_session();
    const std::string e = run_error(*session, {{"x", random_input({1, 3}, 8)}, {"shape", int64s({int64_t(1) << 40, 3})}});
    expect_contains(e, "node 'broadcast' (Expand)");
    expect_contains(e, "max_tensor_bytes");
    // The session is still usable with sensible contents.
    EXPECT_EQ(session->run({{"x", random_input({1, 3}, 8)}, {"shape", int64s({5, 3})}}).at("y").shape(), (Shape{5, 3}));
  }
  {
    GraphBuilder b;
    b.input("x", {2, 3});
    add_input(b, "repeats", DataType::Int64, {2});
    b.node("Tile", {"x", "repeats"}, {"y"}).name = "tile";
    b.output("y");
    auto session = model_of(b.g)->create_session();
    const std::string e = run_error(*session, {{"x", random_input({2, 3}, 9)}, {"repeats", int64s({-1, 2})}});
    expect_contains(e, "node 'tile' (Tile)");
  }
}

TEST(RuntimeShapeInputs, ALargeInputCannotDriveShapes) {
  // The target is sliced out of a 5000-element input: planning by it would copy and compare it every run.
  GraphBuilder b;
  b.input("x", {2, 3, 4});
  add_input(b, "many", DataType::Int64, {5000});
  b.g.values[b.value("zero")].constant = int64s({0});
  b.g.values[b.value("two")].constant = int64s({2});
  b.node("Slice", {"many", "zero", "two"}, {"target"});
  b.node("Reshape", {"x", "target"}, {"y"}).name = "reshape_by_slice";
  b.output("y");
  auto session = model_of(b.g)->create_session();
  std::vector<int64_t> many(5000, 1);
  many[0] = 4;
  many[1] = 6;
  const std::string e = run_error(*session, {{"x", random_input({2, 3, 4}, 10)}, {"many", int64s(many)}});
  expect_contains(e, "node 'reshape_by_slice' (Reshape)");
  expect_contains(e, "input 'many'");
  expect_contains(e, "5000 elements");
}

TEST(RuntimeShapeInputs, AValueOnlyARunComputesIsAnErrorNamingTheNode) {
  // The target comes out of a 128 MiB Tile of a small input: too large to evaluate while planning, so
  // the Reshape's target is known only when the run computes it.
  GraphBuilder b;
  b.input("x", {2, 3, 4});
  add_input(b, "t", DataType::Int64, {2});
  b.g.values[b.value("repeats")].constant = int64s({int64_t(1) << 23});
  b.g.values[b.value("zero")].constant = int64s({0});
  b.g.values[b.value("two")].constant = int64s({2});
  b.node("Tile", {"t", "repeats"}, {"tiled"}).name = "big_tile";
  b.node("Slice", {"tiled", "zero", "two"}, {"target"});
  b.node("Reshape", {"x", "target"}, {"y"}).name = "reshape_late";
  b.output("y");
  auto session = model_of(b.g)->create_session();
  const std::string e = run_error(*session, {{"x", random_input({2, 3, 4}, 11)}, {"t", int64s({4, 6})}});
  expect_contains(e, "node 'reshape_late' (Reshape)");
  expect_contains(e, "unsupported");
  expect_contains(e, "computed at run time by node");
}

TEST(RuntimeShapeInputs, AModelWithThemLoadsAsOneWithDynamicShapes) {
  // Load-time inference cannot know the target: the model loads, its output's shape stays as declared
  // (unknown), and the first run plans.
  for (int level : {0, 1, 2}) {
    auto model = model_of(reshape_by_input({3}).g, level);
    ASSERT_EQ(model->outputs().size(), 1u);
    auto session = model->create_session();
    const Tensor x = random_input({2, 3, 4}, 12);
    expect_reshaped(session->run({{"x", x}, {"target", int64s({4, 3, 2})}}).at("y"), x, {4, 3, 2});
  }
}

}  // namespace
}  // namespace ninegrid
