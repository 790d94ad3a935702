// Cross-layer equalisation of `ninegrid quantize` (tools/quant_equalize.h): the rescaled float model
// computes what the original does (both run by ninegrid), and the scales balance each channel's
// activation range against the weights reading it.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ninegrid/ninegrid.h"
#include "onnx_edit.h"
#include "quant_equalize.h"
#include "quant_model.h"

namespace ninegrid::quant {
namespace {

using onnx::TensorProto;

void add_weight(onnx::GraphProto& g, const std::string& name, const std::vector<int64_t>& dims, std::mt19937& rng,
                const std::vector<float>& channel_scale) {
  std::normal_distribution<float> d(0.f, 1.f);
  int64_t n = 1;
  for (int64_t v : dims) n *= v;
  std::vector<float> w(static_cast<size_t>(n));
  const size_t per_row = w.size() / static_cast<size_t>(dims[0]);
  for (size_t i = 0; i < w.size(); ++i) w[i] = d(rng) * 0.3f * channel_scale[(i / per_row) % channel_scale.size()];
  *g.add_initializer() = make_tensor(name, TensorProto::FLOAT, dims, w.data(), w.size() * 4);
}

onnx::NodeProto conv(const std::string& name, const std::vector<std::string>& in, const std::string& out, int k,
                     int group) {
  onnx::NodeProto n = make_node("Conv", in, {out}, name);
  auto* ks = n.add_attribute();
  ks->set_name("kernel_shape");
  ks->set_type(onnx::AttributeProto::INTS);
  ks->add_ints(k);
  ks->add_ints(k);
  auto* pads = n.add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(k / 2);
  if (group > 1) set_int_attr(n, "group", group);
  return n;
}

// x [1,3,8,8] -> conv a (3->6, 3x3, bias) -> Relu -> dw (6 groups, 3x3, bias) -> pw (6->5, 1x1) -> y.
// Channel scales spread a's outputs over two decades, as folded BatchNorms do.
onnx::ModelProto chain_model() {
  std::mt19937 rng(21);
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto& g = *m.mutable_graph();
  g.set_name("chain");
  add_weight(g, "a.w", {6, 3, 3, 3}, rng, {0.05f, 1.f, 3.f, 0.2f, 8.f, 0.5f});
  add_weight(g, "a.b", {6}, rng, {1.f});
  add_weight(g, "dw.w", {6, 1, 3, 3}, rng, {2.f, 0.1f, 1.f, 4.f, 0.3f, 1.f});
  add_weight(g, "dw.b", {6}, rng, {1.f});
  add_weight(g, "pw.w", {5, 6, 1, 1}, rng, {1.f});
  *g.add_node() = conv("a", {"x", "a.w", "a.b"}, "a_out", 3, 1);
  *g.add_node() = make_node("Relu", {"a_out"}, {"r"}, "relu");
  *g.add_node() = conv("dw", {"r", "dw.w", "dw.b"}, "dw_out", 3, 6);
  *g.add_node() = conv("pw", {"dw_out", "pw.w"}, "y", 1, 1);
  for (const auto& [name, dims] : std::vector<std::pair<std::string, std::vector<int64_t>>>{{"x", {1, 3, 8, 8}},
                                                                                            {"y", {1, 5, 8, 8}}}) {
    onnx::ValueInfoProto* v = name == "x" ? g.add_input() : g.add_output();
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(TensorProto::FLOAT);
    for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
  }
  return m;
}

std::vector<float> run(const onnx::ModelProto& m, std::vector<float> x) {
  const std::string bytes = serialize_model(m);
  Options o;
  o.threads = 1;
  auto model = Model::load_onnx(bytes.data(), bytes.size(), o);
  auto s = model->create_session();
  s->set_input("x", Tensor::wrap(DataType::Float32, {1, 3, 8, 8}, x.data()));
  s->run();
  const Tensor y = s->output("y");
  return std::vector<float>(y.data_as<float>(), y.data_as<float>() + y.numel());
}

std::vector<float> floats(const onnx::ModelProto& m, const std::string& node, int slot) {
  const Index idx(m.graph());
  for (const auto& n : m.graph().node())
    if (n.name() == node) {
      std::vector<float> v;
      tensor_floats(*idx.init(m.graph(), n.input(slot)), &v);
      return v;
    }
  return {};
}

TEST(QuantEqualize, ScalesBalanceActivationAndWeightRanges) {
  const std::vector<double> a = {1, 4, 0, 9, 1e-3}, r = {1, 1, 2, 4, 10};
  const std::vector<double> s = equalization_scales(a, r);
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s[2], 1.0);  // a dead channel keeps its scale
  // After scaling, a_i / s_i and r_i * s_i are the same up to one common factor (the normalisation).
  const double k = (a[0] / s[0]) / (r[0] * s[0]);
  for (int i : {1, 3, 4}) EXPECT_NEAR((a[i] / s[i]) / (r[i] * s[i]), k, 1e-9 * k) << i;
  double log_sum = 0;
  for (int i : {0, 1, 3, 4}) log_sum += std::log(s[i]);
  EXPECT_NEAR(log_sum, 0.0, 1e-9);  // geometric mean 1
  // Never beyond 64 of the mean, whatever the ranges.
  const std::vector<double> wild = equalization_scales({1e-12, 1e12}, {1, 1});
  EXPECT_LE(wild[1], 64.0);
  EXPECT_GE(wild[0], 1.0 / 64);
}

TEST(QuantEqualize, RescaledModelComputesTheSameAndBalancesTheChannels) {
  const onnx::ModelProto original = chain_model();
  QuantPlan plan;
  // Every node a layer, as plan_quantization makes them: a with its Relu, dw, pw.
  plan.layers.push_back({0, "a", "a", "Conv+Relu", 1, "r", {"x"}});
  plan.layers.push_back({2, "dw", "dw", "Conv", -1, "dw_out", {"r"}});
  plan.layers.push_back({3, "pw", "pw", "Conv", -1, "y", {"dw_out"}});
  const std::vector<EqualizationPair> pairs = equalization_pairs(original, plan);
  ASSERT_EQ(pairs.size(), 2u);  // a -> dw and dw -> pw; pw's output is the graph output
  EXPECT_EQ(pairs[0].tensor, "r");
  EXPECT_EQ(pairs[1].tensor, "dw_out");

  std::map<std::string, std::vector<double>> ranges = {{"r", {0.1, 2, 6, 0.4, 16, 1}},
                                                       {"dw_out", {3, 0.2, 1, 9, 0.5, 2}}};
  onnx::ModelProto eq = original;
  EXPECT_EQ(equalize(eq, pairs, ranges), 2);

  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> x(3 * 8 * 8);
  for (float& v : x) v = d(rng);
  const std::vector<float> y0 = run(original, x), y1 = run(eq, x);
  ASSERT_EQ(y0.size(), y1.size());
  double max_abs = 0, max_diff = 0;
  for (size_t i = 0; i < y0.size(); ++i) {
    max_abs = std::max(max_abs, static_cast<double>(std::fabs(y0[i])));
    max_diff = std::max(max_diff, static_cast<double>(std::fabs(y0[i] - y1[i])));
  }
  EXPECT_LE(max_diff, 1e-5 * max_abs);

  // Each pair's scales, read back from the rescaled weights: s_i (a -> dw) from a's weight rows, which
  // nothing else rescales, and t_i (dw -> pw) from dw's bias. dw's weights of channel i were multiplied
  // by s_i (as a consumer) and divided by t_i (as a producer). Balance: (a_i / s_i) / (r_i * s_i) is one
  // number for every channel of a pair, r_i being the consumer's largest weight before the pair.
  const std::vector<float> a0 = floats(original, "a", 1), a1 = floats(eq, "a", 1);
  const std::vector<float> dw0 = floats(original, "dw", 1), b0 = floats(original, "dw", 2), b1 = floats(eq, "dw", 2);
  const std::vector<float> pw0 = floats(original, "pw", 1);
  ASSERT_EQ(a1.size(), a0.size());
  ASSERT_EQ(b1.size(), 6u);
  std::vector<double> first, second;
  bool rescaled = false;
  for (size_t c = 0; c < 6; ++c) {
    const double s = static_cast<double>(a0[c * 27]) / a1[c * 27];
    const double t = static_cast<double>(b0[c]) / b1[c];
    rescaled = rescaled || std::fabs(s - 1) > 1e-3 || std::fabs(t - 1) > 1e-3;
    double r_dw = 0, r_pw = 0;
    for (size_t k = 0; k < 9; ++k) r_dw = std::max(r_dw, static_cast<double>(std::fabs(dw0[c * 9 + k])));
    for (size_t o = 0; o < 5; ++o) r_pw = std::max(r_pw, static_cast<double>(std::fabs(pw0[o * 6 + c])));
    first.push_back((ranges["r"][c] / s) / (r_dw * s));
    second.push_back((ranges["dw_out"][c] / t) / (r_pw * t));
  }
  EXPECT_TRUE(rescaled);
  for (size_t c = 1; c < 6; ++c) {
    EXPECT_NEAR(first[c], first[0], 1e-4 * first[0]) << c;
    EXPECT_NEAR(second[c], second[0], 1e-4 * second[0]) << c;
  }
}

}  // namespace
}  // namespace ninegrid::quant
