// The fast transposed convolution (ops/conv_transpose_fast.h: a FastConv2d GEMM, then the x86 col2im
// kernels) against the reference kernel conv_transpose_ref followed by the scalar activation, over
// randomised shapes, once per instruction set the CPU has (the ISA is passed explicitly; NINEGRID_ISA is
// not consulted), on one and two threads. Then the ConvTranspose op's fused activation on its fast and
// reference paths, the fusion pass, and a whole ONNX model at opt-level 0 and 2.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <random>
#include <string>
#include <vector>

#include "conv_test_util.h"
#include "graph/passes/passes.h"
#include "kernels/ref/conv_transpose_ref.h"
#include "ninegrid/ninegrid.h"
#include "ops/conv_transpose_fast.h"
#include "ops/fused_activation.h"
#include "core/cpu_features.h"
#include "runtime/model_impl.h"
#include "core/thread_pool.h"
#include "unit/elementwise_test_util.h"
#include "unit/onnx_proto_writer.h"

namespace ninegrid {
namespace {

using namespace conv_test;


// Output length along one axis (ONNX): s * (in - 1) + output_padding + (k - 1) * d + 1 - pads.
int64_t full_minus_pads(int64_t in, int64_t k, int64_t s, int64_t d, int64_t adj, int64_t pad_begin, int64_t pad_end) {
  return s * (in - 1) + adj + (k - 1) * d + 1 - pad_begin - pad_end;
}

std::string describe(const ConvTransposeParams& p) {
  auto pair = [](const int64_t* v) { return std::to_string(v[1]) + "x" + std::to_string(v[2]); };
  return "batch " + std::to_string(p.batch) + ", channels " + std::to_string(p.in_channels) + "->" +
         std::to_string(p.out_channels) + ", in " + pair(p.in) + ", out " + pair(p.out) + ", kernel " +
         pair(p.kernel) + ", stride " + pair(p.stride) + ", dilation " + pair(p.dilation) + ", pad begin " +
         pair(p.pad_begin);
}

// A random 2-D transposed convolution, or false when the draw leaves no output. Two kinds: taps that tile
// the output (kernel == stride, dilation 1: col2im's direct path) and any other window.
bool random_params(std::mt19937& rng, ConvTransposeParams& p) {
  p = ConvTransposeParams{};
  p.batch = pick(rng, {1, 1, 2});
  p.in_channels = pick(rng, {1, 3, 5, 16, 17, 24, 33});
  p.out_channels = pick(rng, {1, 3, 5, 17, 24, 33});
  const bool tiling = uniform(rng, 0, 9) < 4;
  const int64_t size_kind = uniform(rng, 0, 9);
  for (int axis = 1; axis < 3; ++axis) {
    p.in[axis] = size_kind == 0 ? 1 : size_kind < 3 ? uniform(rng, 20, 40) : uniform(rng, 1, 16);
    if (tiling) {
      p.stride[axis] = pick(rng, {1, 2, 2, 3});
      p.kernel[axis] = p.stride[axis];
      p.dilation[axis] = 1;
    } else {
      p.kernel[axis] = pick(rng, {1, 2, 3, 4});
      p.stride[axis] = pick(rng, {1, 2, 3});
      p.dilation[axis] = pick(rng, {1, 1, 2});
    }
    const int64_t adj = uniform(rng, 0, std::max(p.stride[axis], p.dilation[axis]) - 1);
    p.pad_begin[axis] = pick(rng, {0, 0, 1});
    const int64_t pad_end = pick(rng, {0, 0, 1});  // unlike pad_begin: asymmetric pads
    p.out[axis] = full_minus_pads(p.in[axis], p.kernel[axis], p.stride[axis], p.dilation[axis], adj,
                                  p.pad_begin[axis], pad_end);
    if (p.out[axis] <= 0) return false;
  }
  // Keep the double reference (run twice: values and magnitudes) quick.
  return p.macs() <= 6'000'000;
}

// y = activation(conv_transpose_ref(x) + bias), the definition the fast path must match.
std::vector<float> reference(const ConvTransposeParams& p, const std::vector<float>& x, const std::vector<float>& w,
                             const float* bias, const Activation& act) {
  const int64_t out_plane = p.out[0] * p.out[1] * p.out[2];
  std::vector<float> y(static_cast<size_t>(p.batch * p.out_channels * out_plane));
  conv_transpose_ref(p, x.data(), w.data(), bias, y.data());
  for (size_t i = 0; i < y.size(); ++i)
    y[i] = apply_activation(act, y[i], static_cast<int64_t>(i) / out_plane % p.out_channels);
  return y;
}

// Per output, sum |bias| + sum |w * x| over what lands there: the scale of the rounding any order of the
// sums can make (see expect_within_bound).
std::vector<float> magnitude(const ConvTransposeParams& p, const std::vector<float>& x, const std::vector<float>& w,
                             const float* bias) {
  std::vector<float> abias;
  if (bias) abias = abs_of(std::vector<float>(bias, bias + p.out_channels));
  return reference(p, abs_of(x), abs_of(w), bias ? abias.data() : nullptr, Activation::none());
}

struct Coverage {
  int runs = 0, tiling = 0, overlapping = 0, one_band = 0, many_bands = 0, band_shared_by_threads = 0,
      bands_per_thread = 0, no_bias = 0, restaged_input = 0, plain_input = 0;
  std::map<std::string, int> activations;
};

void check_case(std::mt19937& rng, const ConvTransposeParams& p, Isa isa, int trial, ThreadPool* pool, Coverage& cov) {
  const int64_t out_plane = p.out[1] * p.out[2];
  const auto x = random_vector(rng, static_cast<size_t>(p.batch * p.in_channels * p.in[1] * p.in[2]));
  const auto w = random_vector(rng, static_cast<size_t>(p.in_channels * p.out_channels * p.kernel[1] * p.kernel[2]));
  const auto bias = random_vector(rng, static_cast<size_t>(p.out_channels));
  const auto slopes = random_vector(rng, static_cast<size_t>(p.out_channels));
  const auto acts = all_activations(slopes.data());
  const Activation act = acts[static_cast<size_t>(trial) % acts.size()];
  const float* b = trial % 3 != 2 ? bias.data() : nullptr;

  const FastConvTranspose2d deconv(p, w.data(), b, act, isa);
  std::vector<float> got(static_cast<size_t>(p.batch * p.out_channels * out_plane), -777.f);
  deconv.run(x.data(), got.data(), pool);

  const std::string what = deconv.name() + ", " + describe(p) + ", " + activation_name(act.kind) +
                           (b ? "" : ", no bias") + (pool ? ", 2 threads" : "");
  EXPECT_EQ(deconv.name(), std::string("gemm-col2im/") + isa_name(isa)) << what;
  expect_within_bound(got, reference(p, x, w, b, act), magnitude(p, x, w, b), what);

  cov.runs++;
  const bool tiling = p.kernel[1] == p.stride[1] && p.kernel[2] == p.stride[2] && p.dilation[1] == 1 &&
                      p.dilation[2] == 1;
  (tiling ? cov.tiling : cov.overlapping)++;
  (deconv.bands() > 1 ? cov.many_bands : cov.one_band)++;
  if (pool) {
    // The split FastConvTranspose2d::run makes for two threads.
    const int64_t tasks = p.batch * deconv.bands();
    (tasks % 2 != 0 && tasks < 8 ? cov.band_shared_by_threads : cov.bands_per_thread)++;
  }
  cov.no_bias += b == nullptr;
  (deconv.gemm_input_block() == 8 ? cov.restaged_input : cov.plain_input)++;
  cov.activations[activation_label(act)]++;
}

class ConvTransposeFast : public ::testing::TestWithParam<Isa> {};

TEST_P(ConvTransposeFast, MatchesReferenceOnRandomShapes) {
  SKIP_WITHOUT(GetParam());
  std::mt19937 rng(2024);
  ThreadPool two(2);
  Coverage cov;
  const int cases = 360;
  int trial = 0;
  for (int attempts = 0; cov.runs < cases && attempts < 50 * cases; ++attempts) {
    ConvTransposeParams p;
    if (!random_params(rng, p)) continue;
    ASSERT_TRUE(FastConvTranspose2d::supports(p, GetParam())) << describe(p);
    // Two threads on every other case; the activation changes every case, so both see all of them.
    check_case(rng, p, GetParam(), trial, (trial / 9) % 2 ? &two : nullptr, cov);
    ++trial;
    if (HasFatalFailure()) return;
  }
  ASSERT_EQ(cov.runs, cases) << "too few usable random shapes";
  // Every path was taken.
  EXPECT_GT(cov.tiling, 0);
  EXPECT_GT(cov.overlapping, 0);
  EXPECT_GT(cov.one_band, 0);
  EXPECT_GT(cov.many_bands, 0);
  EXPECT_GT(cov.band_shared_by_threads, 0);
  EXPECT_GT(cov.bands_per_thread, 0);
  EXPECT_GT(cov.no_bias, 0);
  EXPECT_GT(cov.restaged_input, 0);
  EXPECT_GT(cov.plain_input, 0);
  std::set<std::string> labels;  // (relu6 and clip are both "Clip")
  for (const Activation& act : all_activations(nullptr)) labels.insert(activation_label(act));
  EXPECT_EQ(cov.activations.size(), labels.size());
}

// Large planes that must be made in several bands, with the PP-OCR shape among them (scaled down).
TEST_P(ConvTransposeFast, LargePlanesInBands) {
  SKIP_WITHOUT(GetParam());
  std::mt19937 rng(5);
  ThreadPool two(2);
  Coverage cov;
  struct Shape2 {
    int64_t c, m, h, w, k, s, d, pad;
  };
  const Shape2 shapes[] = {
      {24, 24, 80, 72, 2, 2, 1, 0},  // PP-OCR's first ConvTranspose (kernel == stride)
      {24, 1, 96, 100, 2, 2, 1, 0},  // and its second
      {8, 33, 40, 44, 4, 2, 1, 1},   // overlapping taps: bands share input rows
      {5, 17, 33, 30, 3, 1, 2, 2},   // dilated, stride 1
  };
  int trial = 0;
  for (const Shape2& s : shapes) {
    ConvTransposeParams p;
    p.in_channels = s.c, p.out_channels = s.m;
    for (int axis = 1; axis < 3; ++axis) {
      p.in[axis] = axis == 1 ? s.h : s.w;
      p.kernel[axis] = s.k, p.stride[axis] = s.s, p.dilation[axis] = s.d, p.pad_begin[axis] = s.pad;
      p.out[axis] = full_minus_pads(p.in[axis], s.k, s.s, s.d, 0, s.pad, s.pad);
    }
    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &two}) {
      check_case(rng, p, GetParam(), trial++, pool, cov);
      if (HasFatalFailure()) return;
    }
  }
  EXPECT_EQ(cov.one_band, 0) << "every shape here needs several bands";
}

INSTANTIATE_TEST_SUITE_P(Isas, ConvTransposeFast, ::testing::Values(Isa::Avx2, Isa::Avx512),
                         [](const ::testing::TestParamInfo<Isa>& info) { return std::string(isa_name(info.param)); });

TEST(ConvTransposeFastSupport, RefusesWhatItDoesNotRun) {
  ConvTransposeParams p;
  p.in_channels = 4, p.out_channels = 4;
  p.in[1] = p.in[2] = 5;
  p.kernel[1] = p.kernel[2] = 2, p.stride[1] = p.stride[2] = 2;
  p.out[1] = p.out[2] = 10;
  const std::vector<float> w(4 * 4 * 4, 0.5f);
  EXPECT_FALSE(FastConvTranspose2d::supports(p, Isa::Ref));
  EXPECT_THROW(FastConvTranspose2d(p, w.data(), nullptr, Activation::none(), Isa::Ref), Error);
  if (!cpu_has(Isa::Avx2)) GTEST_SKIP() << "this CPU lacks avx2";
  EXPECT_TRUE(FastConvTranspose2d::supports(p, Isa::Avx2));
  ConvTransposeParams grouped = p;
  grouped.groups = 2;
  EXPECT_FALSE(FastConvTranspose2d::supports(grouped, Isa::Avx2));
  ConvTransposeParams deep = p;
  deep.in[0] = 3, deep.out[0] = 3;
  EXPECT_FALSE(FastConvTranspose2d::supports(deep, Isa::Avx2));
  // 64 channels x 16 x 16 taps x 300 columns: one input row's columns alone would take 19 MB of scratch.
  ConvTransposeParams wide = p;
  wide.out_channels = 64;
  wide.in[2] = 300;
  wide.kernel[1] = wide.kernel[2] = wide.stride[1] = wide.stride[2] = 16;
  wide.out[1] = 5 * 16, wide.out[2] = 300 * 16;
  EXPECT_FALSE(FastConvTranspose2d::supports(wide, Isa::Avx2));
  EXPECT_THROW(FastConvTranspose2d(p, w.data(), nullptr, Activation::prelu(nullptr), Isa::Avx2), Error);
}

// ---- The ConvTranspose op's fused activation ----

using eltest::arg;
using eltest::konst;
using eltest::OpSpec;

Tensor random_tensor(std::mt19937& rng, const Shape& shape) {
  Tensor t = Tensor::empty(DataType::Float32, shape);
  const auto v = random_vector(rng, static_cast<size_t>(t.numel()));
  std::copy(v.begin(), v.end(), t.data_as<float>());
  return t;
}

struct FusedCase {
  const char* activation;
  std::vector<float> params;
};

Attributes fused_attrs(const FusedCase& fc) {
  Attributes a;
  a.set("ng.activation", Attribute::of_string(fc.activation));
  if (!fc.params.empty()) a.set("ng.activation_params", Attribute::of_floats(fc.params));
  return a;
}

class ConvTransposeFusedActivation : public ::testing::TestWithParam<FusedCase> {};

// Weights given as constants take the fast path (when the CPU has AVX2); weights bound at run time can
// only take the reference one. Both must apply the fused activation as the definition does.
TEST_P(ConvTransposeFusedActivation, FastAndReferencePathsApplyIt) {
  const FusedCase& fc = GetParam();
  std::mt19937 rng(11);
  const Tensor x = random_tensor(rng, {2, 5, 7, 6}), w = random_tensor(rng, {5, 3, 3, 3}), b = random_tensor(rng, {3});
  const Tensor slope = random_tensor(rng, {3, 1, 1});
  ConvTransposeParams p;
  p.batch = 2, p.in_channels = 5, p.out_channels = 3;
  p.in[1] = 7, p.in[2] = 6, p.kernel[1] = p.kernel[2] = 3, p.stride[1] = p.stride[2] = 2;
  p.pad_begin[1] = p.pad_begin[2] = 1;
  p.out[1] = 13, p.out[2] = 11;  // 2 * (in - 1) + 3 - 2

  Activation act = read_fused_activation(fused_attrs(fc));
  const std::vector<float> xv(x.data_as<float>(), x.data_as<float>() + x.numel());
  const std::vector<float> wv(w.data_as<float>(), w.data_as<float>() + w.numel());
  act.slope = slope.data_as<float>();
  const std::vector<float> want = reference(p, xv, wv, b.data_as<float>(), act);
  const std::vector<float> mag = magnitude(p, xv, wv, b.data_as<float>());

  for (bool constant_weights : {true, false}) {
    OpSpec spec;
    spec.op_type = "ConvTranspose";
    spec.inputs = {arg(x), constant_weights ? konst(w) : arg(w), konst(b)};
    if (std::string(fc.activation) == "PRelu") {
      spec.inputs.push_back(eltest::omitted());
      spec.inputs.push_back(konst(slope));
    }
    spec.attrs = fused_attrs(fc);
    spec.attrs.set("strides", Attribute::of_ints({2, 2}));
    spec.attrs.set("pads", Attribute::of_ints({1, 1, 1, 1}));
    spec.threads = constant_weights ? 2 : 1;
    const Tensor y = eltest::run_op(spec).at(0);
    ASSERT_EQ(y.shape(), (Shape{2, 3, 13, 11}));
    const std::string what =
        std::string(fc.activation) + (constant_weights ? " (constant weights)" : " (weights at run time)");
    expect_within_bound(std::vector<float>(y.data_as<float>(), y.data_as<float>() + y.numel()), want, mag, what);
  }
}

INSTANTIATE_TEST_SUITE_P(Activations, ConvTransposeFusedActivation,
                         ::testing::Values(FusedCase{"Relu", {}}, FusedCase{"Clip", {-0.3f, 0.4f}},
                                           FusedCase{"LeakyRelu", {0.2f}}, FusedCase{"PRelu", {}},
                                           FusedCase{"Sigmoid", {}}, FusedCase{"HardSigmoid", {0.3f, 0.4f}},
                                           FusedCase{"HardSwish", {}}),
                         [](const ::testing::TestParamInfo<FusedCase>& info) {
                           return std::string(info.param.activation);
                         });

TEST(ConvTransposeFusedActivation, BadEpilogueInputsAreRefused) {
  std::mt19937 rng(3);
  const Tensor x = random_tensor(rng, {1, 2, 4, 4}), w = random_tensor(rng, {2, 3, 2, 2});
  auto error_with = [&](const char* activation, std::vector<eltest::In> extra) {
    OpSpec spec;
    spec.op_type = "ConvTranspose";
    spec.inputs = {arg(x), konst(w), eltest::omitted()};
    for (auto& e : extra) spec.inputs.push_back(e);
    if (*activation) spec.attrs.set("ng.activation", Attribute::of_string(activation));
    return eltest::error_of(spec);
  };
  const Tensor slope = random_tensor(rng, {3});
  EXPECT_NE(error_with("PRelu", {}).find("needs its slope"), std::string::npos);
  EXPECT_NE(error_with("", {eltest::omitted(), konst(slope)}).find("without ng.activation = PRelu"), std::string::npos);
  EXPECT_NE(error_with("PRelu", {eltest::omitted(), konst(random_tensor(rng, {2}))}).find("must hold 1 or 3"),
            std::string::npos);
  EXPECT_NE(error_with("Relu", {konst(random_tensor(rng, {1, 3, 8, 8}))}).find("no fused residual"), std::string::npos);
  EXPECT_NE(error_with("Swish", {}).find("unsupported fused activation"), std::string::npos);
}

// ---- The fusion pass and a whole model ----

// x -> ConvTranspose(w, b; 2x2, stride 2) -> activation -> y, as a graph.
Graph conv_transpose_then(const std::string& activation) {
  Graph g;
  std::mt19937 rng(9);
  auto value = [&](const std::string& name, const Shape& shape, bool constant) {
    const int id = g.add_value(name);
    Value& v = g.values[id];
    v.dtype = DataType::Float32;
    v.shape = shape;
    v.shape_known = true;
    if (constant) v.constant = random_tensor(rng, shape);
    return id;
  };
  g.inputs.push_back(value("x", {1, 4, 6, 5}, false));
  Node deconv;
  deconv.name = "deconv";
  deconv.op_type = "ConvTranspose";
  deconv.inputs = {g.inputs[0], value("w", {4, 6, 2, 2}, true), value("b", {6}, true)};
  deconv.outputs = {g.add_value("c")};
  deconv.attrs.set("strides", Attribute::of_ints({2, 2}));
  Node act;
  act.name = "act";
  act.op_type = activation;
  act.inputs = {deconv.outputs[0]};
  if (activation == "PRelu") act.inputs.push_back(value("slope", {1, 6, 1, 1}, true));
  act.outputs = {g.add_value("y")};
  g.nodes = {deconv, act};
  g.outputs = {act.outputs[0]};
  return g;
}

Tensor run_graph(const Graph& g, int opt_level, const Tensor& x) {
  Options o;
  o.opt_level = opt_level;
  o.threads = 1;
  auto model = std::make_shared<Model>(std::make_unique<ModelImpl>(g, o, "onnx"));
  return model->create_session()->run({{"x", x}}).at("y");
}

TEST(FuseActivationIntoConvTranspose, ReluAndPReluBecomeItsEpilogue) {
  std::mt19937 rng(1);
  const Tensor x = random_tensor(rng, {1, 4, 6, 5});
  for (const std::string activation : {"Relu", "PRelu"}) {
    Graph g = conv_transpose_then(activation);
    EXPECT_EQ(fuse_activation(g), 1) << activation;
    ASSERT_EQ(g.nodes.size(), 1u) << activation;
    EXPECT_EQ(g.nodes[0].attrs.get_string("ng.activation", ""), activation);
    if (activation == "PRelu") {
      ASSERT_GT(g.nodes[0].inputs.size(), 4u);
      EXPECT_EQ(g.nodes[0].inputs[4], g.find_value("slope"));
    }
    const Graph original = conv_transpose_then(activation);
    const Tensor fused = run_graph(original, 1, x), plain = run_graph(original, 0, x);
    ASSERT_EQ(fused.shape(), plain.shape());
    for (int64_t i = 0; i < fused.numel(); ++i)
      ASSERT_NEAR(fused.data_as<float>()[i], plain.data_as<float>()[i], 1e-5f) << activation << " at " << i;
  }
}

// An ONNX file: x -> ConvTranspose (3x3, stride 2, pads, output_padding) -> Relu -> y.
std::string conv_transpose_relu_onnx(std::mt19937& rng) {
  namespace pb = onnx_pb;
  const std::vector<float> w = random_vector(rng, 8 * 5 * 3 * 3), b = random_vector(rng, 5);
  const pb::Writer graph = pb::graph(
      {pb::node("ConvTranspose", {"x", "w", "b"}, {"c"}, "deconv",
                {pb::attr_ints("strides", {2, 2}), pb::attr_ints("pads", {1, 0, 0, 1}),
                 pb::attr_ints("output_padding", {1, 0})}),
       pb::node("Relu", {"c"}, {"y"}, "relu")},
      {pb::value_info("x", pb::FLOAT, {1, 8, 21, 19})}, {pb::value_info("y", pb::FLOAT, {1, 5, 43, 38})},
      {pb::raw(pb::tensor("w", pb::FLOAT, {8, 5, 3, 3}), pb::raw_bytes(w)),
       pb::raw(pb::tensor("b", pb::FLOAT, {5}), pb::raw_bytes(b))});
  return pb::model(graph, 13);
}

TEST(ConvTransposeModel, ReluFusedAtOptLevel2GivesTheOptLevel0Output) {
  std::mt19937 rng(21);
  const std::string bytes = conv_transpose_relu_onnx(rng);
  const Tensor x = random_tensor(rng, {1, 8, 21, 19});
  std::map<int, Tensor> y;
  for (int level : {0, 2}) {
    Options o;
    o.opt_level = level;
    o.threads = 2;
    auto model = Model::load_onnx(bytes.data(), bytes.size(), o);
    int relus = 0, fused = 0;
    for (const Node& n : InternalAccess::impl(*model).graph().nodes) {
      relus += n.op_type == "Relu";
      fused += n.op_type == "ConvTranspose" && n.attrs.get_string("ng.activation", "") == "Relu";
    }
    EXPECT_EQ(relus, level == 0 ? 1 : 0) << "opt-level " << level;
    EXPECT_EQ(fused, level == 0 ? 0 : 1) << "opt-level " << level;
    y[level] = model->create_session()->run({{"x", x}}).at("y");
  }
  ASSERT_EQ(y[0].shape(), (Shape{1, 5, 43, 38}));
  ASSERT_EQ(y[2].shape(), y[0].shape());
  int negative = 0, positive = 0;
  for (int64_t i = 0; i < y[0].numel(); ++i) {
    ASSERT_NEAR(y[2].data_as<float>()[i], y[0].data_as<float>()[i], 1e-5f) << "at " << i;
    negative += y[0].data_as<float>()[i] < 0.f;
    positive += y[0].data_as<float>()[i] > 0.f;
  }
  EXPECT_EQ(negative, 0);
  EXPECT_GT(positive, 0);
}

}  // namespace
}  // namespace ninegrid
