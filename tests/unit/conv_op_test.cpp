// Conv and ConvTranspose as operators, run through a one-node Graph/Session: output shapes for every
// auto_pad mode, values against naive formulations written from the ONNX definitions in this file,
// the fused epilogue inputs, MACs, and clear errors on bad shapes and attributes.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ops/op.h"
#include "unit/elementwise_test_util.h"

namespace ninegrid {
namespace {

using eltest::arg;
using eltest::attrs_of;
using eltest::f32;
using eltest::konst;
using eltest::OpSpec;

Tensor random_tensor(std::mt19937& rng, const Shape& shape) {
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  Tensor t = Tensor::empty(DataType::Float32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = dist(rng);
  return t;
}

// Row-major offset of `coord` in `shape`.
int64_t offset_of(const Shape& shape, const std::vector<int64_t>& coord) {
  int64_t off = 0;
  for (size_t i = 0; i < shape.size(); ++i) off = off * shape[i] + coord[i];
  return off;
}

// Calls fn(coord) for every coordinate of `shape`, row-major.
template <class Fn>
void for_each_coord(const Shape& shape, Fn fn) {
  if (shape_numel(shape) == 0) return;
  std::vector<int64_t> c(shape.size(), 0);
  for (;;) {
    fn(c);
    size_t a = shape.size();
    while (a-- > 0) {
      if (++c[a] < shape[a]) break;
      c[a] = 0;
    }
    if (a == static_cast<size_t>(-1)) return;
  }
}

struct Window {
  std::vector<int64_t> strides, dilations, pad_begin;
  int64_t group = 1;
};

// ONNX Conv, literally: y[n, m, o...] = B[m] + sum_{c, k...} x[n, g*C/G + c, o*s - pad + k*d] * W[m, c, k...].
std::vector<double> naive_conv(const Tensor& x, const Tensor& w, const Tensor* b, const Window& win, const Shape& y_shape) {
  const int64_t cpg = w.dim(1), mpg = w.dim(0) / win.group;
  const size_t sr = x.shape().size() - 2;
  Shape k_shape(w.shape().begin() + 2, w.shape().end());
  std::vector<double> y(static_cast<size_t>(shape_numel(y_shape)), 0.0);
  for_each_coord(y_shape, [&](const std::vector<int64_t>& o) {
    const int64_t n = o[0], m = o[1], g = m / mpg;
    double sum = b ? b->data_as<float>()[m] : 0.0;
    for (int64_t c = 0; c < cpg; ++c)
      for_each_coord(k_shape, [&](const std::vector<int64_t>& k) {
        std::vector<int64_t> xi = {n, g * cpg + c};
        for (size_t a = 0; a < sr; ++a) {
          const int64_t i = o[2 + a] * win.strides[a] - win.pad_begin[a] + k[a] * win.dilations[a];
          if (i < 0 || i >= x.shape()[2 + a]) return;
          xi.push_back(i);
        }
        std::vector<int64_t> wi = {m, c};
        wi.insert(wi.end(), k.begin(), k.end());
        sum += static_cast<double>(x.data_as<float>()[offset_of(x.shape(), xi)]) *
               w.data_as<float>()[offset_of(w.shape(), wi)];
      });
    y[static_cast<size_t>(offset_of(y_shape, o))] = sum;
  });
  return y;
}

Attributes conv_attrs(const std::string& auto_pad, const std::vector<int64_t>& strides,
                      const std::vector<int64_t>& dilations, const std::vector<int64_t>& pads, int64_t group) {
  Attributes a;
  a.set("auto_pad", Attribute::of_string(auto_pad));
  a.set("strides", Attribute::of_ints(strides));
  a.set("dilations", Attribute::of_ints(dilations));
  if (!pads.empty()) a.set("pads", Attribute::of_ints(pads));
  a.set("group", Attribute::of_int(group));
  return a;
}

TEST(ConvOp, AllAutoPadModesMatchTheDefinition) {
  std::mt19937 rng(2024);
  auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  const char* modes[] = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};
  int ran = 0;
  for (int trial = 0; trial < 160; ++trial) {
    const std::string mode = modes[trial % 4];
    const size_t sr = 1 + static_cast<size_t>(uniform(0, 1));  // 1-D or 2-D
    const int64_t group = trial % 5 == 0 ? 3 : 1;
    const int64_t c = group * (trial % 3 == 0 ? 1 : 5), m = group * (trial % 2 == 0 ? 3 : 1);
    Shape xs = {uniform(1, 2), c}, ws = {m, c / group};
    Window win;
    win.group = group;
    std::vector<int64_t> pads(2 * sr);
    for (size_t a = 0; a < sr; ++a) {
      xs.push_back(uniform(1, 9));
      ws.push_back(uniform(1, 4));
      win.strides.push_back(uniform(1, 3));
      win.dilations.push_back(uniform(1, 2));
      pads[a] = uniform(0, 2);
      pads[sr + a] = uniform(0, 2);
    }
    // Expected output shape and begin pads, from the ONNX specification's formulas.
    Shape ys = {xs[0], m};
    win.pad_begin.resize(sr);
    bool fits = true;
    for (size_t a = 0; a < sr; ++a) {
      const int64_t in = xs[2 + a], s = win.strides[a], span = (ws[2 + a] - 1) * win.dilations[a] + 1;
      int64_t out;
      if (mode == "NOTSET") {
        out = (in + pads[a] + pads[sr + a] - span) >= 0 ? (in + pads[a] + pads[sr + a] - span) / s + 1 : 0;
        win.pad_begin[a] = pads[a];
      } else if (mode == "VALID") {
        out = in >= span ? (in - span + s) / s : 0;  // ceil((in - span + 1) / s)
        win.pad_begin[a] = 0;
      } else {
        out = (in + s - 1) / s;
        const int64_t total = std::max<int64_t>(0, (out - 1) * s + span - in);
        win.pad_begin[a] = mode == "SAME_UPPER" ? total / 2 : total - total / 2;
      }
      if (out <= 0) fits = false;
      ys.push_back(out);
    }
    if (!fits) continue;
    ++ran;
    const Tensor x = random_tensor(rng, xs), w = random_tensor(rng, ws), b = random_tensor(rng, {m});
    OpSpec spec;
    spec.op_type = "Conv";
    spec.inputs = {arg(x), konst(w), konst(b)};
    spec.attrs = conv_attrs(mode, win.strides, win.dilations, mode == "NOTSET" ? pads : std::vector<int64_t>{}, group);
    spec.threads = trial % 8 == 0 ? 2 : 1;  // some runs split across threads
    const Tensor y = eltest::run_op(spec).at(0);
    ASSERT_EQ(y.shape(), ys) << "auto_pad " << mode;
    eltest::expect_near_all(y, naive_conv(x, w, &b, win, ys), 1e-5, 1e-5);
  }
  EXPECT_GT(ran, 100);
}

TEST(ConvOp, ThreeDimensionalConv) {
  std::mt19937 rng(5);
  const Tensor x = random_tensor(rng, {1, 2, 4, 5, 3}), w = random_tensor(rng, {3, 2, 2, 3, 2});
  Window win{{1, 2, 1}, {1, 1, 2}, {1, 1, 0}, 1};
  OpSpec spec;
  spec.op_type = "Conv";
  spec.inputs = {arg(x), konst(w)};
  spec.attrs = conv_attrs("NOTSET", win.strides, win.dilations, {1, 1, 0, 0, 1, 1}, 1);
  const Tensor y = eltest::run_op(spec).at(0);
  // depth (4+1-2)/1+1 = 4, height (5+1+1-3)/2+1 = 3, width (3+0+1-3)/1+1 = 2
  ASSERT_EQ(y.shape(), (Shape{1, 3, 4, 3, 2}));
  eltest::expect_near_all(y, naive_conv(x, w, nullptr, win, y.shape()), 1e-5, 1e-5);
}

TEST(ConvOp, FusedEpilogueInputs) {
  std::mt19937 rng(11);
  const Tensor x = random_tensor(rng, {1, 3, 5, 5}), w = random_tensor(rng, {4, 3, 3, 3}), b = random_tensor(rng, {4});
  const Tensor residual = random_tensor(rng, {1, 4, 5, 5});
  Window win{{1, 1}, {1, 1}, {1, 1}, 1};
  const std::vector<double> plain = naive_conv(x, w, &b, win, {1, 4, 5, 5});

  // Clip(-0.3, 0.4) of conv + residual.
  OpSpec spec;
  spec.op_type = "Conv";
  spec.inputs = {arg(x), konst(w), konst(b), arg(residual)};
  spec.attrs = conv_attrs("NOTSET", {1, 1}, {1, 1}, {1, 1, 1, 1}, 1);
  spec.attrs.set("ng.activation", Attribute::of_string("Clip"));
  spec.attrs.set("ng.activation_params", Attribute::of_floats({-0.3f, 0.4f}));
  Tensor y = eltest::run_op(spec).at(0);
  std::vector<double> want(plain.size());
  for (size_t i = 0; i < want.size(); ++i)
    want[i] = std::min(0.4, std::max(-0.3, plain[i] + residual.data_as<float>()[i]));
  eltest::expect_near_all(y, want, 1e-5, 1e-5);

  // PRelu with one slope per channel (as [C, 1, 1]) and with a single shared slope.
  const Tensor slopes = f32({4, 1, 1}, {0.5f, -1.f, 2.f, 0.f});
  for (const Tensor& s : {slopes, f32({1}, {0.25f})}) {
    OpSpec p = spec;
    p.inputs = {arg(x), konst(w), konst(b), eltest::omitted(), konst(s)};
    p.attrs.set("ng.activation", Attribute::of_string("PRelu"));
    p.attrs.erase("ng.activation_params");
    y = eltest::run_op(p).at(0);
    for (size_t i = 0; i < want.size(); ++i) {
      const int64_t ch = static_cast<int64_t>(i) / 25;
      const double slope = s.numel() == 1 ? s.data_as<float>()[0] : s.data_as<float>()[ch];
      want[i] = plain[i] >= 0 ? plain[i] : slope * plain[i];
    }
    eltest::expect_near_all(y, want, 1e-5, 1e-5);
  }
}

std::string conv_error(std::vector<eltest::In> inputs, Attributes attrs, const std::string& op = "Conv") {
  OpSpec spec;
  spec.op_type = op;
  spec.inputs = std::move(inputs);
  spec.attrs = std::move(attrs);
  return eltest::error_of(spec);
}

void expect_error(const std::string& message, const std::string& needle) {
  EXPECT_NE(message.find(needle), std::string::npos) << "message: " << message;
  EXPECT_NE(message.find("node 'node_under_test'"), std::string::npos) << "message: " << message;
}

TEST(ConvOp, ErrorsNameTheProblemAndTheNode) {
  std::mt19937 rng(3);
  const Tensor x = random_tensor(rng, {1, 4, 6, 6});
  expect_error(conv_error({arg(x), konst(random_tensor(rng, {2, 3, 3, 3}))}, {}), "input channels");
  expect_error(conv_error({arg(x), konst(random_tensor(rng, {3, 2, 3, 3}))}, attrs_of({{"group", Attribute::of_int(2)}})),
               "not divisible by group");
  expect_error(conv_error({arg(x), konst(random_tensor(rng, {2, 4, 3, 3})), konst(random_tensor(rng, {3}))}, {}),
               "bias B must have shape [2]");
  expect_error(conv_error({arg(x), konst(random_tensor(rng, {2, 4, 3}))}, {}), "must have the rank of X");
  expect_error(conv_error({arg(random_tensor(rng, {1, 4})), konst(random_tensor(rng, {2, 4}))}, {}), "rank 3 or more");
  expect_error(conv_error({arg(random_tensor(rng, {1, 1, 2, 2, 2, 2})), konst(random_tensor(rng, {1, 1, 1, 1, 1, 1}))}, {}),
               "unsupported");
  expect_error(conv_error({arg(x), konst(random_tensor(rng, {2, 4, 3, 3}))},
                          attrs_of({{"kernel_shape", Attribute::of_ints({5, 5})}})),
               "does not match the weights");
  expect_error(conv_error({arg(x), konst(random_tensor(rng, {2, 4, 7, 7}))}, {}), "does not fit");
  expect_error(conv_error({arg(x), konst(random_tensor(rng, {2, 4, 3, 3}))}, attrs_of({{"strides", Attribute::of_ints({0, 1})}})),
               "strides");
  expect_error(conv_error({arg(x), konst(random_tensor(rng, {2, 4, 3, 3}))}, attrs_of({{"pads", Attribute::of_ints({1, 1})}})),
               "pads");
  expect_error(conv_error({arg(x), konst(random_tensor(rng, {2, 4, 3, 3}))},
                          attrs_of({{"auto_pad", Attribute::of_string("SAME")}})),
               "auto_pad");
  expect_error(conv_error({arg(x), konst(random_tensor(rng, {2, 4, 3, 3}))}, attrs_of({{"group", Attribute::of_int(0)}})),
               "group must be positive");
  // Absurd values are refused before any arithmetic could overflow.
  const int64_t huge = int64_t(1) << 62;
  expect_error(conv_error({arg(x), konst(random_tensor(rng, {2, 4, 3, 3}))},
                          attrs_of({{"dilations", Attribute::of_ints({huge, 1})}})),
               "dilations");
  expect_error(conv_error({arg(x), konst(random_tensor(rng, {2, 4, 3, 3}))},
                          attrs_of({{"pads", Attribute::of_ints({huge, 0, huge, 0})}})),
               "pads");
  expect_error(conv_error({arg(x), konst(random_tensor(rng, {2, 4, 3, 3}))},
                          attrs_of({{"ng.activation", Attribute::of_string("Swish")}})),
               "unsupported fused activation");
  expect_error(conv_error({arg(x), konst(random_tensor(rng, {2, 4, 3, 3}))},
                          attrs_of({{"ng.activation", Attribute::of_string("PRelu")}})),
               "slope");
}

// Creates the op for a node and infers shapes, so its macs() can be read.
std::unique_ptr<Op> inferred_op(const std::string& type, const Attributes& attrs, const std::vector<Shape>& shapes) {
  Node n;
  n.name = "n";
  n.op_type = type;
  n.attrs = attrs;
  n.inputs.assign(shapes.size(), 0);
  n.outputs = {1};
  auto op = OpRegistry::instance().create(n);
  std::vector<TensorDesc> in, out(1);
  for (const Shape& s : shapes) in.push_back({DataType::Float32, s, nullptr, true});
  op->infer(in, out);
  return op;
}

TEST(ConvOp, MacsCountEveryMultiply) {
  // 2 x 16 x 10 x 12 output, each summing 8 / 4 groups = 2 channels x 3 x 3 taps.
  auto op = inferred_op("Conv", attrs_of({{"group", Attribute::of_int(4)}, {"pads", Attribute::of_ints({1, 1, 1, 1})}}),
                        {{2, 8, 10, 12}, {16, 2, 3, 3}});
  EXPECT_EQ(op->macs(), 2 * 16 * 10 * 12 * 2 * 9);
  // 1-D: 1 x 4 x 6 outputs x 3 channels x 5 taps.
  op = inferred_op("Conv", {}, {{1, 3, 10}, {4, 3, 5}});
  EXPECT_EQ(op->macs(), 4 * 6 * 3 * 5);
  // ConvTranspose: every input pixel (1 x 2 x 3 x 3) meets 4 output channels x 2 x 2 taps.
  op = inferred_op("ConvTranspose", {}, {{1, 2, 3, 3}, {2, 4, 2, 2}});
  EXPECT_EQ(op->macs(), 2 * 9 * 4 * 4);
}

// ONNX ConvTranspose, literally: every input value scatters x * W[c, m, k] to o = i*s - pad + k*d.
std::vector<double> naive_conv_transpose(const Tensor& x, const Tensor& w, const Tensor* b, const Window& win,
                                         const Shape& y_shape) {
  const int64_t cpg = x.dim(1) / win.group, mpg = w.dim(1);
  const size_t sr = x.shape().size() - 2;
  Shape k_shape(w.shape().begin() + 2, w.shape().end());
  std::vector<double> y(static_cast<size_t>(shape_numel(y_shape)), 0.0);
  for_each_coord(y_shape, [&](const std::vector<int64_t>& o) {
    if (b) y[static_cast<size_t>(offset_of(y_shape, o))] = b->data_as<float>()[o[1]];
  });
  for_each_coord(x.shape(), [&](const std::vector<int64_t>& i) {
    const int64_t n = i[0], c = i[1], g = c / cpg;
    const double xv = x.data_as<float>()[offset_of(x.shape(), i)];
    for (int64_t mm = 0; mm < mpg; ++mm)
      for_each_coord(k_shape, [&](const std::vector<int64_t>& k) {
        std::vector<int64_t> o = {n, g * mpg + mm};
        for (size_t a = 0; a < sr; ++a) {
          const int64_t pos = i[2 + a] * win.strides[a] - win.pad_begin[a] + k[a] * win.dilations[a];
          if (pos < 0 || pos >= y_shape[2 + a]) return;
          o.push_back(pos);
        }
        std::vector<int64_t> wi = {c, mm};
        wi.insert(wi.end(), k.begin(), k.end());
        y[static_cast<size_t>(offset_of(y_shape, o))] += xv * w.data_as<float>()[offset_of(w.shape(), wi)];
      });
  });
  return y;
}

TEST(ConvTransposeOp, MatchesTheDefinitionOnRandomShapes) {
  std::mt19937 rng(77);
  auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int trial = 0; trial < 80; ++trial) {
    const size_t sr = 1 + static_cast<size_t>(trial % 2);
    const int64_t group = trial % 4 == 0 ? 3 : 1;
    const int64_t c = group * uniform(1, 3), mpg = uniform(1, 3);
    Shape xs = {uniform(1, 2), c}, ws = {c, mpg};
    Window win;
    win.group = group;
    std::vector<int64_t> pads(2 * sr), adj(sr);
    Shape ys = {xs[0], mpg * group};
    bool ok = true;
    for (size_t a = 0; a < sr; ++a) {
      xs.push_back(uniform(1, 5));
      ws.push_back(uniform(1, 4));
      win.strides.push_back(uniform(1, 3));
      win.dilations.push_back(uniform(1, 2));
      pads[a] = uniform(0, 2);
      pads[sr + a] = uniform(0, 2);
      adj[a] = uniform(0, std::max(win.strides[a], win.dilations[a]) - 1);
      win.pad_begin.push_back(pads[a]);
      // output = s * (in - 1) + output_padding + (k - 1) * d + 1 - pads
      const int64_t out = win.strides[a] * (xs[2 + a] - 1) + adj[a] + (ws[2 + a] - 1) * win.dilations[a] + 1 -
                          pads[a] - pads[sr + a];
      if (out <= 0) ok = false;
      ys.push_back(out);
    }
    if (!ok) continue;
    const Tensor x = random_tensor(rng, xs), w = random_tensor(rng, ws), b = random_tensor(rng, {mpg * group});
    OpSpec spec;
    spec.op_type = "ConvTranspose";
    spec.inputs = {arg(x), konst(w), konst(b)};
    spec.attrs = conv_attrs("NOTSET", win.strides, win.dilations, pads, group);
    spec.attrs.set("output_padding", Attribute::of_ints(adj));
    spec.threads = trial % 8 == 0 ? 2 : 1;
    const Tensor y = eltest::run_op(spec).at(0);
    ASSERT_EQ(y.shape(), ys);
    eltest::expect_near_all(y, naive_conv_transpose(x, w, &b, win, ys), 1e-5, 1e-5);
  }
}

TEST(ConvTransposeOp, OutputShapeAndSamePadsPlaceTheOddPadAsSpecified) {
  // 1-D, input [1, 2, 3], kernel [1, 1, 1], stride 2: the full output is 7 long,
  // [1, 1, 3, 2, 5, 3, 3] (overlaps add). Hand-computed.
  const Tensor x = f32({1, 1, 3}, {1, 2, 3}), w = f32({1, 1, 3}, {1, 1, 1});
  auto run = [&](Attributes a) {
    a.set("strides", Attribute::of_ints({2}));
    return eltest::run1("ConvTranspose", {arg(x), konst(w)}, a);
  };
  // SAME_UPPER: out = 3 * 2 = 6, total pad 1 at the end.
  eltest::expect_near_all(run(attrs_of({{"auto_pad", Attribute::of_string("SAME_UPPER")}})), {1, 1, 3, 2, 5, 3});
  // SAME_LOWER: the odd pad at the start.
  eltest::expect_near_all(run(attrs_of({{"auto_pad", Attribute::of_string("SAME_LOWER")}})), {1, 3, 2, 5, 3, 3});
  // output_shape 5 (NOTSET): total 2, one each side.
  eltest::expect_near_all(run(attrs_of({{"output_shape", Attribute::of_ints({5})}})), {1, 3, 2, 5, 3});
  // output_shape 9: larger than the full output, which is extended at the end.
  eltest::expect_near_all(run(attrs_of({{"output_shape", Attribute::of_ints({9})}})), {1, 1, 3, 2, 5, 3, 3, 0, 0});
  // pads [1, 2] crop one value at the start and two at the end.
  eltest::expect_near_all(run(attrs_of({{"pads", Attribute::of_ints({1, 2})}})), {1, 3, 2, 5});
}

TEST(ConvTransposeOp, Errors) {
  std::mt19937 rng(4);
  const Tensor x = random_tensor(rng, {1, 4, 3, 3});
  expect_error(conv_error({arg(x), konst(random_tensor(rng, {3, 2, 3, 3}))}, {}, "ConvTranspose"), "input channels");
  expect_error(conv_error({arg(x), konst(random_tensor(rng, {4, 2, 3, 3})), konst(random_tensor(rng, {3}))}, {},
                          "ConvTranspose"),
               "bias B must have shape [2]");
  expect_error(conv_error({arg(x), konst(random_tensor(rng, {4, 2, 3, 3}))},
                          attrs_of({{"output_padding", Attribute::of_ints({1, 1})}}), "ConvTranspose"),
               "output_padding");
  expect_error(conv_error({arg(x), konst(random_tensor(rng, {4, 2, 3, 3}))}, attrs_of({{"pads", Attribute::of_ints({3, 3, 3, 3})}}),
                          "ConvTranspose"),
               "empty");
  expect_error(conv_error({arg(x), konst(random_tensor(rng, {4, 2, 3, 3}))}, attrs_of({{"group", Attribute::of_int(3)}}),
                          "ConvTranspose"),
               "not divisible by group");
  const int64_t huge = int64_t(1) << 62;
  expect_error(conv_error({arg(x), konst(random_tensor(rng, {4, 2, 3, 3}))},
                          attrs_of({{"strides", Attribute::of_ints({huge, huge})}}), "ConvTranspose"),
               "strides");
  expect_error(conv_error({arg(x), konst(random_tensor(rng, {4, 2, 3, 3}))},
                          attrs_of({{"output_shape", Attribute::of_ints({huge, 3})}}), "ConvTranspose"),
               "output_shape");
}

}  // namespace
}  // namespace ninegrid
