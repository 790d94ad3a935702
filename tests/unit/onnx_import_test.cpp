// The ONNX importer: what a valid model becomes in the IR, how old opset forms are rewritten, and that
// malformed files (hand-built defects, truncations, bit flips of real models) give a clean Error.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>

#include "import/onnx/onnx_importer.h"
#include "import/onnx/tensor_proto.h"
#include "ninegrid/ninegrid.h"
#include "ops/op.h"
#include "unit/onnx_proto_writer.h"

namespace ninegrid {
namespace {

using namespace onnx_pb;

Graph import(const std::string& bytes) { return import_onnx(bytes.data(), bytes.size()); }

// The Error message of importing `bytes`; fails the test if there is none.
std::string import_error(const std::string& bytes) {
  try {
    import(bytes);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an Error";
  return "";
}

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

// x (float 1x3) -> <op> -> y, with the given extra nodes, initializers and opset.
std::string single_op_model(const std::string& op, const std::vector<Writer>& attrs = {}, int opset = 13) {
  return model(graph({node(op, {"x"}, {"y"}, "the_node", attrs)}, {value_info("x", FLOAT, {1, 3})},
                     {value_info("y", FLOAT, {1, 3})}),
               opset);
}

const Value& value_named(const Graph& g, const std::string& name) {
  int id = g.find_value(name);
  if (id < 0) throw Error("no value " + name);
  return g.values[id];
}

template <class T>
std::vector<T> values_of(const Tensor& t) {
  const T* p = t.data_as<T>();
  return std::vector<T>(p, p + t.numel());
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// ---- valid models ----

TEST(OnnxImport, IdentityModelLoadsAndRuns) {
  std::string bytes = single_op_model("Identity");
  auto m = Model::load_onnx(bytes.data(), bytes.size());
  ASSERT_EQ(m->inputs().size(), 1u);
  EXPECT_EQ(m->inputs()[0].name, "x");
  EXPECT_EQ(m->inputs()[0].dtype, DataType::Float32);
  EXPECT_EQ(m->inputs()[0].shape, (Shape{1, 3}));
  ASSERT_EQ(m->outputs().size(), 1u);
  EXPECT_EQ(m->outputs()[0].name, "y");
  std::vector<float> x = {1.5f, -2.f, 3.25f};
  auto out = m->create_session()->run({{"x", Tensor::wrap(DataType::Float32, {1, 3}, x.data())}});
  EXPECT_EQ(values_of<float>(out.at("y")), x);
}

TEST(OnnxImport, ReluModelLoadsAndRuns) {
  if (!OpRegistry::instance().supports("Relu")) GTEST_SKIP() << "Relu is not registered yet";
  std::string bytes = single_op_model("Relu");
  auto m = Model::load_onnx(bytes.data(), bytes.size());
  std::vector<float> x = {1.5f, -2.f, 0.f};
  auto out = m->create_session()->run({{"x", Tensor::wrap(DataType::Float32, {1, 3}, x.data())}});
  EXPECT_EQ(values_of<float>(out.at("y")), (std::vector<float>{1.5f, 0.f, 0.f}));
}

TEST(OnnxImport, NodesKeepNamesOpsetAttributesAndOmittedInputs) {
  std::string bytes = model(
      graph({node("Foo", {"x", "", "w"}, {"y", ""}, "", {attr_int("i", -7), attr_float("f", 0.5f),
                                                          attr_string("s", "abc"), attr_ints("is", {1, -2}),
                                                          attr_floats("fs", {0.25f}),
                                                          attr_tensor("t", raw(tensor("", INT64, {2}) ,
                                                                               raw_bytes<int64_t>({4, 5})))})},
            {value_info("x", FLOAT, {-1, 3})}, {value_info("y", FLOAT, {})},
            {raw(tensor("w", FLOAT, {1}), raw_bytes<float>({2.f}))}),
      11);
  Graph g = import(bytes);
  ASSERT_EQ(g.nodes.size(), 1u);
  const Node& n = g.nodes[0];
  EXPECT_EQ(n.name, "Foo_0");  // invented from op type and index
  EXPECT_EQ(n.op_type, "Foo");
  EXPECT_EQ(n.opset, 11);
  ASSERT_EQ(n.inputs.size(), 3u);
  EXPECT_EQ(n.inputs[0], g.find_value("x"));
  EXPECT_EQ(n.inputs[1], -1);
  EXPECT_EQ(n.inputs[2], g.find_value("w"));
  ASSERT_EQ(n.outputs.size(), 2u);
  EXPECT_EQ(n.outputs[1], -1);
  EXPECT_EQ(n.attrs.get_int("i", 0), -7);
  EXPECT_EQ(n.attrs.get_float("f", 0), 0.5f);
  EXPECT_EQ(n.attrs.get_string("s", ""), "abc");
  EXPECT_EQ(n.attrs.get_ints("is"), (std::vector<int64_t>{1, -2}));
  EXPECT_EQ(n.attrs.get_floats("fs"), (std::vector<float>{0.25f}));
  EXPECT_EQ(values_of<int64_t>(n.attrs.get_tensor("t")), (std::vector<int64_t>{4, 5}));

  ASSERT_EQ(g.inputs.size(), 1u);  // the initializer is not an input
  const Value& x = g.values[g.inputs[0]];
  EXPECT_TRUE(x.shape_known);
  EXPECT_EQ(x.shape, (Shape{-1, 3}));  // dim_param -> dynamic
  EXPECT_EQ(x.dtype, DataType::Float32);
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(g.values[g.outputs[0]].name, "y");
  EXPECT_TRUE(g.values[g.outputs[0]].shape_known);
  EXPECT_EQ(g.values[g.outputs[0]].shape, Shape{});
}

TEST(OnnxImport, InitializersListedAsInputsStayConstants) {
  // Before IR version 4 exporters listed every initializer among the graph inputs too.
  std::string bytes = model(graph({node("Identity", {"w"}, {"y"})}, {value_info("w", FLOAT, {2})},
                                  {value_info("y", FLOAT, {2})}, {raw(tensor("w", FLOAT, {2}), raw_bytes<float>({1, 2}))}));
  Graph g = import(bytes);
  EXPECT_TRUE(g.inputs.empty());
  EXPECT_TRUE(value_named(g, "w").is_constant());
}

// Model::load hands the file's bytes over (import_onnx(std::string&&)), and the importer frees each
// initializer's bytes in the proto once decoded: the graph must hold the same constants as an import from
// a borrowed buffer, and the bytes must be gone.
TEST(OnnxImport, ImportFromOwnedBytesFreesThemAndKeepsTheConstants) {
  const std::vector<float> w = {1.5f, -2.f, 3.25f, 0.f, 7.f, -0.5f};
  std::string bytes = model(graph({node("Add", {"x", "w"}, {"y"})}, {value_info("x", FLOAT, {6})},
                                  {value_info("y", FLOAT, {6})}, {raw(tensor("w", FLOAT, {6}), raw_bytes<float>(w))}));
  const Graph borrowed = import(bytes);
  const Graph owned = import_onnx(std::move(bytes));
  EXPECT_TRUE(bytes.empty());
  const Tensor& a = value_named(borrowed, "w").constant;
  const Tensor& b = value_named(owned, "w").constant;
  ASSERT_EQ(b.shape(), Shape{6});
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(a.data_as<float>()[i], w[i]);
    EXPECT_EQ(b.data_as<float>()[i], w[i]);
  }
  std::string truncated = model(graph({node("Add", {"x", "w"}, {"y"})}, {value_info("x", FLOAT, {6})},
                                      {value_info("y", FLOAT, {6})}, {raw(tensor("w", FLOAT, {6}), raw_bytes<float>(w))}));
  truncated.resize(truncated.size() / 2);
  EXPECT_THROW(import_onnx(std::move(truncated)), Error);
}

// The importer hands protobuf the model without its initializers' raw_data and decodes those from the
// model's bytes itself (import/onnx/raw_data_split.h): what protobuf makes of repeated occurrences must
// still hold. A graph given twice is merged (its initializers appended), a tensor's raw_data given twice
// is the last one, and a model the split does not walk (a group among unknown fields) is parsed whole.
TEST(OnnxImport, RawDataReadBesideProtobufKeepsProtobufsMeaning) {
  const std::vector<float> a = {1.f, 2.f}, b = {-3.f, 4.5f}, c = {7.f, 8.f};
  Writer first = graph({node("Add", {"x", "a"}, {"t"})}, {value_info("x", FLOAT, {2})}, {value_info("y", FLOAT, {2})},
                       {raw(tensor("a", FLOAT, {2}), raw_bytes<float>(a))});
  Writer twice = raw(raw(tensor("b", FLOAT, {2}), raw_bytes<float>(c)), raw_bytes<float>(b));  // b's bytes win
  Writer second;
  second.message(1, node("Add", {"t", "b"}, {"y"})).message(5, twice);
  Writer m;
  m.int64(1, 8).message(7, first);
  Writer id;
  id.bytes(1, "").int64(2, 13);
  m.message(8, id).message(7, second);
  const Graph g = import(m.str());
  EXPECT_EQ(values_of<float>(value_named(g, "a").constant), a);
  EXPECT_EQ(values_of<float>(value_named(g, "b").constant), b);
  EXPECT_EQ(g.nodes.size(), 2u);

  // An unknown field 100 holding an empty group (wire types 3 and 4): protobuf skips it.
  std::string grouped = model(graph({node("Add", {"x", "a"}, {"y"})}, {value_info("x", FLOAT, {2})},
                                    {value_info("y", FLOAT, {2})}, {raw(tensor("a", FLOAT, {2}), raw_bytes<float>(a))}));
  grouped += std::string("\xa3\x06\xa4\x06", 4);
  EXPECT_EQ(values_of<float>(value_named(import(grouped), "a").constant), a);
}

TEST(OnnxImport, RawInitializersOfEveryNumericType) {
  std::vector<Writer> inits = {
      raw(tensor("f32", FLOAT, {2}), raw_bytes<float>({1.5f, -2.f})),
      raw(tensor("f64", DOUBLE, {1}), raw_bytes<double>({0.125})),
      raw(tensor("f16", FLOAT16, {2}), raw_bytes<uint16_t>({0x3c00, 0xc000})),
      raw(tensor("i8", INT8, {2}), raw_bytes<int8_t>({-128, 127})),
      raw(tensor("i16", INT16, {1}), raw_bytes<int16_t>({-300})),
      raw(tensor("i32", INT32, {1}), raw_bytes<int32_t>({-70000})),
      raw(tensor("i64", INT64, {2, 1}), raw_bytes<int64_t>({int64_t(1) << 40, -1})),
      raw(tensor("u8", UINT8, {1}), raw_bytes<uint8_t>({255})),
      raw(tensor("u16", UINT16, {1}), raw_bytes<uint16_t>({65535})),
      raw(tensor("u32", UINT32, {1}), raw_bytes<uint32_t>({4000000000u})),
      raw(tensor("u64", UINT64, {1}), raw_bytes<uint64_t>({uint64_t(1) << 63})),
      raw(tensor("b", BOOL, {3}), std::string("\x00\x01\x07", 3)),
      raw(tensor("empty", FLOAT, {0, 4}), ""),
  };
  Graph g = import(model(graph({node("Identity", {"x"}, {"y"})}, {value_info("x", FLOAT, {1})},
                               {value_info("y", FLOAT, {1})}, inits)));
  EXPECT_EQ(values_of<float>(value_named(g, "f32").constant), (std::vector<float>{1.5f, -2.f}));
  EXPECT_EQ(values_of<double>(value_named(g, "f64").constant), (std::vector<double>{0.125}));
  const Tensor& f16 = value_named(g, "f16").constant;
  EXPECT_EQ(f16.dtype(), DataType::Float16);
  EXPECT_EQ(static_cast<const uint16_t*>(f16.data())[1], 0xc000);
  EXPECT_EQ(values_of<int8_t>(value_named(g, "i8").constant), (std::vector<int8_t>{-128, 127}));
  EXPECT_EQ(values_of<int16_t>(value_named(g, "i16").constant), (std::vector<int16_t>{-300}));
  EXPECT_EQ(values_of<int32_t>(value_named(g, "i32").constant), (std::vector<int32_t>{-70000}));
  const Value& i64 = value_named(g, "i64");
  EXPECT_EQ(i64.shape, (Shape{2, 1}));
  EXPECT_TRUE(i64.shape_known);
  EXPECT_EQ(values_of<int64_t>(i64.constant), (std::vector<int64_t>{int64_t(1) << 40, -1}));
  EXPECT_EQ(values_of<uint8_t>(value_named(g, "u8").constant), (std::vector<uint8_t>{255}));
  EXPECT_EQ(values_of<uint16_t>(value_named(g, "u16").constant), (std::vector<uint16_t>{65535}));
  EXPECT_EQ(values_of<uint32_t>(value_named(g, "u32").constant), (std::vector<uint32_t>{4000000000u}));
  EXPECT_EQ(values_of<uint64_t>(value_named(g, "u64").constant), (std::vector<uint64_t>{uint64_t(1) << 63}));
  // Any non-zero byte is true; stored as 1 so it is a valid bool.
  const uint8_t* b = static_cast<const uint8_t*>(value_named(g, "b").constant.data());
  EXPECT_EQ(b[0], 0);
  EXPECT_EQ(b[1], 1);
  EXPECT_EQ(b[2], 1);
  EXPECT_EQ(value_named(g, "empty").constant.numel(), 0);
}

TEST(OnnxImport, TypedFieldInitializers) {
  Writer f32 = tensor("f32", FLOAT, {2});
  f32.float32(4, 0.5f).float32(4, -1.f);
  Writer i8 = tensor("i8", INT8, {2});  // small ints are widened into int32_data
  i8.int64(5, -5).int64(5, 100);
  Writer f16 = tensor("f16", FLOAT16, {1});  // float16 bits in int32_data
  f16.int64(5, 0x3800);
  Writer b = tensor("b", BOOL, {2});
  b.int64(5, 0).int64(5, 3);
  Writer i64 = tensor("i64", INT64, {3});
  i64.int64(7, 9).int64(7, -9).int64(7, int64_t(1) << 50);
  Writer f64 = tensor("f64", DOUBLE, {1});
  {
    double d = -0.75;
    uint64_t bits;
    std::memcpy(&bits, &d, 8);
    // double_data is a packed field: one length-delimited run of fixed64
    std::string run(reinterpret_cast<const char*>(&bits), 8);
    f64.bytes(10, run);
  }
  Writer u32 = tensor("u32", UINT32, {1});  // uint32 lives in uint64_data
  u32.int64(11, 4000000000LL);
  Graph g = import(model(graph({node("Identity", {"x"}, {"y"})}, {value_info("x", FLOAT, {1})},
                               {value_info("y", FLOAT, {1})}, {f32, i8, f16, b, i64, f64, u32})));
  EXPECT_EQ(values_of<float>(value_named(g, "f32").constant), (std::vector<float>{0.5f, -1.f}));
  EXPECT_EQ(values_of<int8_t>(value_named(g, "i8").constant), (std::vector<int8_t>{-5, 100}));
  EXPECT_EQ(static_cast<const uint16_t*>(value_named(g, "f16").constant.data())[0], 0x3800);
  const uint8_t* bv = static_cast<const uint8_t*>(value_named(g, "b").constant.data());
  EXPECT_EQ(bv[0], 0);
  EXPECT_EQ(bv[1], 1);
  EXPECT_EQ(values_of<int64_t>(value_named(g, "i64").constant), (std::vector<int64_t>{9, -9, int64_t(1) << 50}));
  EXPECT_EQ(values_of<double>(value_named(g, "f64").constant), (std::vector<double>{-0.75}));
  EXPECT_EQ(values_of<uint32_t>(value_named(g, "u32").constant), (std::vector<uint32_t>{4000000000u}));
}

TEST(OnnxImport, ConstantNodesBecomeConstantValues) {
  std::string bytes = model(graph(
      {node("Constant", {}, {"c1"}, "k1", {attr_ints("value_ints", {3, 4})}),
       node("Constant", {}, {"c2"}, "k2", {attr_float("value_float", 2.5f)}),
       node("Constant", {}, {"c3"}, "k3", {attr_tensor("value", raw(tensor("", INT32, {1}), raw_bytes<int32_t>({-1})))}),
       node("Identity", {"c1"}, {"y"})},
      {}, {value_info("y", INT64, {2})}));
  Graph g = import(bytes);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "Identity");
  EXPECT_EQ(values_of<int64_t>(value_named(g, "c1").constant), (std::vector<int64_t>{3, 4}));
  const Value& c2 = value_named(g, "c2");
  EXPECT_EQ(c2.shape, Shape{});
  EXPECT_EQ(values_of<float>(c2.constant), (std::vector<float>{2.5f}));
  EXPECT_EQ(values_of<int32_t>(value_named(g, "c3").constant), (std::vector<int32_t>{-1}));
}

TEST(OnnxImport, ConstantNodeCanBeAGraphOutputAndRun) {
  std::string bytes = model(graph({node("Constant", {}, {"y"}, "k", {attr_floats("value_floats", {1.f, 2.f})})}, {},
                                  {value_info("y", FLOAT, {2})}));
  auto m = Model::load_onnx(bytes.data(), bytes.size());
  auto out = m->create_session()->run({});
  EXPECT_EQ(values_of<float>(out.at("y")), (std::vector<float>{1.f, 2.f}));
}

// ---- old opset forms become inputs ----

// The constant behind input `i` of the only node, as int64 or float values.
std::vector<int64_t> const_ints(const Graph& g, int i) {
  int id = g.nodes.at(0).inputs.at(i);
  EXPECT_GE(id, 0);
  return values_of<int64_t>(g.values.at(id).constant);
}
std::vector<float> const_floats(const Graph& g, int i) {
  int id = g.nodes.at(0).inputs.at(i);
  EXPECT_GE(id, 0);
  return values_of<float>(g.values.at(id).constant);
}

TEST(OnnxImport, Slice9AttributesBecomeInputs) {
  Graph g = import(single_op_model(
      "Slice", {attr_ints("starts", {0, 1}), attr_ints("ends", {1, 3}), attr_ints("axes", {0, 1})}, 9));
  const Node& n = g.nodes[0];
  ASSERT_EQ(n.inputs.size(), 4u);
  EXPECT_EQ(const_ints(g, 1), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(const_ints(g, 2), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(const_ints(g, 3), (std::vector<int64_t>{0, 1}));
  EXPECT_FALSE(n.attrs.has("starts"));
  EXPECT_FALSE(n.attrs.has("axes"));
}

TEST(OnnxImport, Slice9WithoutAxesLeavesAxesOmitted) {
  Graph g = import(single_op_model("Slice", {attr_ints("starts", {1}), attr_ints("ends", {2})}, 9));
  EXPECT_EQ(g.nodes[0].inputs.size(), 3u);
}

TEST(OnnxImport, NewOpsetsAreNotRewritten) {
  // At opset 13, 'axes' on Squeeze is not a valid attribute: it is left for the operator to refuse.
  Graph g = import(single_op_model("Squeeze", {attr_ints("axes", {0})}, 13));
  EXPECT_EQ(g.nodes[0].inputs.size(), 1u);
  EXPECT_TRUE(g.nodes[0].attrs.has("axes"));
}

TEST(OnnxImport, SqueezeUnsqueezeSplit11AxesBecomeInputs) {
  for (const char* op : {"Squeeze", "Unsqueeze"}) {
    Graph g = import(single_op_model(op, {attr_ints("axes", {0, -1})}, 11));
    ASSERT_EQ(g.nodes[0].inputs.size(), 2u) << op;
    EXPECT_EQ(const_ints(g, 1), (std::vector<int64_t>{0, -1})) << op;
    EXPECT_FALSE(g.nodes[0].attrs.has("axes")) << op;
  }
  Graph g = import(single_op_model("Split", {attr_int("axis", 1), attr_ints("split", {1, 2})}, 11));
  EXPECT_EQ(const_ints(g, 1), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(g.nodes[0].attrs.get_int("axis", 0), 1);  // other attributes stay
}

TEST(OnnxImport, Clip6MinMaxBecomeInputs) {
  Graph both = import(single_op_model("Clip", {attr_float("min", -1.f), attr_float("max", 6.f)}, 6));
  EXPECT_EQ(const_floats(both, 1), (std::vector<float>{-1.f}));
  EXPECT_EQ(const_floats(both, 2), (std::vector<float>{6.f}));
  EXPECT_EQ(both.values[both.nodes[0].inputs[1]].shape, Shape{});  // scalars
  Graph max_only = import(single_op_model("Clip", {attr_float("max", 6.f)}, 6));
  ASSERT_EQ(max_only.nodes[0].inputs.size(), 3u);
  EXPECT_EQ(max_only.nodes[0].inputs[1], -1);
  EXPECT_EQ(const_floats(max_only, 2), (std::vector<float>{6.f}));
}

TEST(OnnxImport, Pad2And1PadsAndValueBecomeInputs) {
  Graph g = import(single_op_model("Pad", {attr_ints("pads", {0, 1, 0, 2}), attr_float("value", 0.5f),
                                           attr_string("mode", "constant")}, 2));
  EXPECT_EQ(const_ints(g, 1), (std::vector<int64_t>{0, 1, 0, 2}));
  EXPECT_EQ(const_floats(g, 2), (std::vector<float>{0.5f}));
  EXPECT_EQ(g.nodes[0].attrs.get_string("mode", ""), "constant");
  Graph g1 = import(single_op_model("Pad", {attr_ints("paddings", {1, 1, 1, 1})}, 1));
  EXPECT_EQ(const_ints(g1, 1), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_FALSE(g1.nodes[0].attrs.has("paddings"));
}

TEST(OnnxImport, Upsample7ScalesBecomeInput) {
  Graph g = import(single_op_model("Upsample", {attr_floats("scales", {1.f, 1.f, 2.f, 2.f})}, 7));
  EXPECT_EQ(const_floats(g, 1), (std::vector<float>{1.f, 1.f, 2.f, 2.f}));
  EXPECT_FALSE(g.nodes[0].attrs.has("scales"));
}

TEST(OnnxImport, LegacyAttributeOfWrongTypeNamesTheNode) {
  std::string msg = import_error(single_op_model("Squeeze", {attr_string("axes", "zero")}, 11));
  EXPECT_CONTAINS(msg, "the_node");
  EXPECT_CONTAINS(msg, "axes");
}

// ---- malformed or unsupported models ----

TEST(OnnxImport, NotProtobufIsAnError) {
  EXPECT_CONTAINS(import_error(""), "not a valid ONNX model");
  EXPECT_CONTAINS(import_error("\xff\xff\xff\xff"), "not a valid ONNX model");
  EXPECT_CONTAINS(import_error(std::string("\x3a\x50\x0a", 3)), "not a valid ONNX model");  // graph cut short
}

TEST(OnnxImport, OpsetChecks) {
  EXPECT_CONTAINS(import_error(single_op_model("Identity", {}, 19)), "unsupported opset version 19");
  EXPECT_CONTAINS(import_error(single_op_model("Identity", {}, 0)), "no opset");
  EXPECT_NO_THROW(import(single_op_model("Identity", {}, 18)));
  EXPECT_NO_THROW(import(single_op_model("Identity", {}, 1)));
}

TEST(OnnxImport, OtherDomainsAreUnsupportedOperatorsNamingTheNode) {
  for (const char* domain : {"com.microsoft", "ai.onnx.ml"}) {
    std::string bytes = model(graph({node("FusedConv", {"x"}, {"y"}, "fc1", {}, domain)},
                                    {value_info("x", FLOAT, {1})}, {value_info("y", FLOAT, {1})}));
    std::string msg = import_error(bytes);
    EXPECT_CONTAINS(msg, "unsupported operator");
    EXPECT_CONTAINS(msg, "FusedConv");
    EXPECT_CONTAINS(msg, "'fc1'");
    EXPECT_CONTAINS(msg, domain);
  }
  // A model of only another domain need not import the default one: its operator is what fails.
  std::string training = model(graph({node("Adagrad", {"x"}, {"y"}, "opt", {}, "ai.onnx.preview.training")},
                                     {value_info("x", FLOAT, {1})}, {value_info("y", FLOAT, {1})}),
                               0);
  EXPECT_CONTAINS(import_error(training), "unsupported operator 'Adagrad'");
}

TEST(OnnxImport, UnregisteredOperatorNamesOpAndNode) {
  std::string bytes = single_op_model("NoSuchOperator");
  try {
    Model::load_onnx(bytes.data(), bytes.size());
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.what(), "unsupported operator");
    EXPECT_CONTAINS(e.what(), "NoSuchOperator");
    EXPECT_CONTAINS(e.what(), "the_node");
  }
}

TEST(OnnxImport, CycleIsAnError) {
  std::string bytes = model(graph({node("Identity", {"b"}, {"a"}, "n1"), node("Identity", {"a"}, {"b"}, "n2")}, {},
                                  {value_info("b", FLOAT, {1})}));
  EXPECT_CONTAINS(import_error(bytes), "cycle");
}

TEST(OnnxImport, InputThatNothingProducesIsAnError) {
  std::string bytes = model(graph({node("Identity", {"ghost"}, {"y"}, "n1")}, {value_info("x", FLOAT, {1})},
                                  {value_info("y", FLOAT, {1})}));
  std::string msg = import_error(bytes);
  EXPECT_CONTAINS(msg, "ghost");
  EXPECT_CONTAINS(msg, "n1");
}

TEST(OnnxImport, DoubleProducerAndUnproducedOutputAreErrors) {
  EXPECT_CONTAINS(import_error(model(graph({node("Identity", {"x"}, {"y"}, "n1"), node("Identity", {"x"}, {"y"}, "n2")},
                                           {value_info("x", FLOAT, {1})}, {value_info("y", FLOAT, {1})}))),
                  "also produced");
  EXPECT_CONTAINS(import_error(model(graph({}, {value_info("x", FLOAT, {1})}, {value_info("nowhere", FLOAT, {1})}))),
                  "nowhere");
}

// Imports x -> Identity -> y with one extra initializer and returns the error.
std::string initializer_error(const Writer& init) {
  return import_error(model(graph({node("Identity", {"x"}, {"y"})}, {value_info("x", FLOAT, {1})},
                                  {value_info("y", FLOAT, {1})}, {init})));
}

TEST(OnnxImport, TensorWhoseDimsProductOverflowsIsAnError) {
  Writer t = tensor("huge", FLOAT, {int64_t(1) << 40, int64_t(1) << 40});
  std::string msg = initializer_error(raw(t, "abcd"));
  EXPECT_CONTAINS(msg, "huge");
  Writer t2 = tensor("huge2", INT64, {int64_t(1) << 61, 1});  // elements fit int64, bytes do not
  EXPECT_CONTAINS(initializer_error(raw(t2, "")), "huge2");
  Writer neg = tensor("neg", FLOAT, {-1, 4});
  EXPECT_CONTAINS(initializer_error(neg), "negative");
}

TEST(OnnxImport, RawDataSizeMismatchIsAnError) {
  Writer t = tensor("w", FLOAT, {2, 3});
  std::string msg = initializer_error(raw(t, std::string(23, '\0')));
  EXPECT_CONTAINS(msg, "'w'");
  EXPECT_CONTAINS(msg, "23 bytes");
  Writer typed = tensor("v", FLOAT, {3});
  typed.float32(4, 1.f);
  EXPECT_CONTAINS(initializer_error(typed), "'v'");
  Writer missing = tensor("m", FLOAT, {3});  // no data at all
  EXPECT_CONTAINS(initializer_error(missing), "'m'");
}

TEST(OnnxImport, ExternalDataIsAnError) {
  Writer t = tensor("big_weight", FLOAT, {4});
  Writer entry;
  entry.bytes(1, "location").bytes(2, "weights.bin");
  t.message(13, entry).int64(14, 1);
  std::string msg = initializer_error(t);
  EXPECT_CONTAINS(msg, "external data not supported");
  EXPECT_CONTAINS(msg, "big_weight");
}

TEST(OnnxImport, StringTensorsAndUnknownTypesAreErrors) {
  Writer s = tensor("names", STRING, {1});
  s.bytes(6, "hello");
  EXPECT_CONTAINS(initializer_error(s), "unsupported element type string");
  EXPECT_CONTAINS(initializer_error(raw(tensor("c", 14, {1}), std::string(8, '\0'))), "complex64");
  EXPECT_CONTAINS(initializer_error(raw(tensor("q", 99, {1}), "x")), "unsupported element type");
}

TEST(OnnxImport, SubgraphAttributeIsAnErrorNamingTheNode) {
  Writer body = graph({}, {}, {});
  std::string bytes = model(graph({node("If", {"x"}, {"y"}, "branch", {attr_graph("then_branch", body)})},
                                  {value_info("x", BOOL, {})}, {value_info("y", FLOAT, {1})}));
  std::string msg = import_error(bytes);
  EXPECT_CONTAINS(msg, "subgraphs are not supported");
  EXPECT_CONTAINS(msg, "'branch'");
}

TEST(OnnxImport, NonTensorInputIsAnErrorNamingIt) {
  Writer elem;  // TypeProto{tensor_type{elem_type: FLOAT}}
  {
    Writer tt;
    tt.int64(1, FLOAT);
    elem.message(1, tt);
  }
  Writer seq;
  seq.message(1, elem);
  Writer type;
  type.message(4, seq);  // sequence_type
  Writer vi;
  vi.bytes(1, "frames").message(2, type);
  std::string msg = import_error(
      model(graph({node("Identity", {"frames"}, {"y"})}, {vi}, {value_info("y", FLOAT, {1})})));
  EXPECT_CONTAINS(msg, "frames");
  EXPECT_CONTAINS(msg, "sequence");
}

TEST(OnnxImport, ModelWithoutGraphOrOutputsIsAnError) {
  Writer m;
  m.int64(1, 8);
  Writer id;
  id.bytes(1, "").int64(2, 13);
  m.message(8, id);
  EXPECT_CONTAINS(import_error(m.str()), "no graph");
  EXPECT_CONTAINS(import_error(model(graph({}, {value_info("x", FLOAT, {1})}, {}))), "no outputs");
}

TEST(OnnxImport, ParseTensorProtoReadsAndValidates) {
  std::string bytes = raw(tensor("t", INT32, {2}), raw_bytes<int32_t>({7, -8})).str();
  Tensor t = parse_tensor_proto(bytes.data(), bytes.size());
  EXPECT_EQ(values_of<int32_t>(t), (std::vector<int32_t>{7, -8}));
  EXPECT_THROW(parse_tensor_proto(bytes.data(), bytes.size() - 1), Error);
}

// ---- truncated and bit-flipped real models ----

// Real models: BlazeFace from the project cache and some of ONNX's own test models.
std::vector<std::string> real_model_paths() {
  std::vector<std::string> paths;
  const char* cache = std::getenv("NINEGRID_CACHE");
  std::string root = cache ? cache : std::string(NINEGRID_SOURCE_DIR) + "/.cache";
  paths.push_back(root + "/npm/blazeface/package/ONNX/face_detection_front_128x128_barracuda.onnx");
  for (const char* t : {"test_relu", "test_conv_with_strides_padding", "test_slice", "test_constant",
                        "test_reshape_reordered_all_dims", "test_gemm_all_attributes", "test_split_variable_parts_1d",
                        "test_resize_upsample_scales_linear", "test_batchnorm_example", "test_clip_default_min"})
    paths.push_back(std::string("/usr/share/libonnx-testdata/data/node/") + t + "/model.onnx");
  return paths;
}

// Loads through the whole pipeline; true if it loaded, false on Error. Anything else fails the test.
bool loads(const std::string& bytes, const std::string& what) {
  try {
    Model::load_onnx(bytes.data(), bytes.size());
    return true;
  } catch (const Error&) {
    return false;
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": not an ninegrid::Error: " << e.what();
  }
  return false;
}

TEST(OnnxImport, TruncatedModelsGiveErrors) {
  int models = 0;
  for (const std::string& path : real_model_paths()) {
    std::string bytes = read_file(path);
    if (bytes.empty()) continue;
    ++models;
    // Every cut point of a small model; for a big one the first KB densely, then 300 spread out.
    std::vector<size_t> cuts;
    for (size_t c = 0; c < bytes.size() && c < 1024; ++c) cuts.push_back(c);
    for (size_t k = 0; k < 300 && bytes.size() > 1024; ++k) cuts.push_back(1024 + (bytes.size() - 1024) * k / 300);
    for (size_t c : cuts) {
      std::string cut = bytes.substr(0, c);
      EXPECT_THROW(import(cut), Error) << path << " cut at " << c;
      EXPECT_FALSE(loads(cut, path + " cut at " + std::to_string(c)));
    }
  }
  if (models == 0) GTEST_SKIP() << "no real ONNX models found (run scripts/setup.sh, install libonnx-testdata)";
}

TEST(OnnxImport, BitFlippedModelsLoadOrGiveErrors) {
  int models = 0;
  for (const std::string& path : real_model_paths()) {
    const std::string bytes = read_file(path);
    if (bytes.empty()) continue;
    ++models;
    std::mt19937 rng(12345 + models);
    // Big models: flips in the first 4 KB (structure: names, nodes, attributes) and anywhere.
    const size_t hot = std::min<size_t>(bytes.size(), 4096);
    const int trials = bytes.size() > 4096 ? 300 : 200;
    for (int t = 0; t < trials; ++t) {
      std::string flipped = bytes;
      const int flips = 1 + static_cast<int>(rng() % 3);
      for (int f = 0; f < flips; ++f) {
        size_t at = (t % 2 ? rng() % bytes.size() : rng() % hot);
        flipped[at] = static_cast<char>(flipped[at] ^ (1u << (rng() % 8)));
      }
      loads(flipped, path + " trial " + std::to_string(t));
    }
  }
  if (models == 0) GTEST_SKIP() << "no real ONNX models found";
}

}  // namespace
}  // namespace ninegrid
