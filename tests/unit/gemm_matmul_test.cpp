// Gemm and MatMul (one-node Graph/Session) against triple loops in double written from the ONNX
// definitions: transposes, alpha/beta, every broadcast form of C, numpy-style batched MatMul with 1-D
// promotion; and the reference GEMM kernel's row ranges.
#include <gtest/gtest.h>

#include <random>

#include "kernels/ref/gemm_ref.h"
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

// ONNX Gemm by its definition, in double: alpha * A' B' + beta * C, C (if given) broadcast to [M, N].
std::vector<double> gemm_by_definition(const Tensor& a, const Tensor& b, const Tensor* c, bool ta, bool tb,
                                       float alpha, float beta) {
  const int64_t m = ta ? a.dim(1) : a.dim(0), k = ta ? a.dim(0) : a.dim(1), n = tb ? b.dim(0) : b.dim(1);
  std::vector<double> want;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t kk = 0; kk < k; ++kk)
        s += double(a.data_as<float>()[ta ? kk * m + i : i * k + kk]) * b.data_as<float>()[tb ? j * k + kk : kk * n + j];
      double cv = 0;
      if (c) {
        const Shape& cs = c->shape();
        const int64_t rows = cs.size() == 2 ? cs[0] : 1, cols = cs.empty() ? 1 : cs.back();
        cv = c->data_as<float>()[(rows == 1 ? 0 : i) * cols + (cols == 1 ? 0 : j)];
      }
      want.push_back(alpha * s + beta * cv);
    }
  return want;
}

TEST(GemmOp, TransposesScalesAndBroadcastC) {
  std::mt19937 rng(10);
  const int64_t m = 5, n = 7, k = 3;
  const std::vector<Shape> c_shapes = {{}, {1}, {n}, {m, 1}, {1, n}, {m, n}};
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (size_t ci = 0; ci <= c_shapes.size(); ++ci) {
        const bool has_c = ci < c_shapes.size();
        const Tensor a = random_tensor(rng, ta ? Shape{k, m} : Shape{m, k});
        const Tensor b = random_tensor(rng, tb ? Shape{n, k} : Shape{k, n});
        const Tensor c = has_c ? random_tensor(rng, c_shapes[ci]) : Tensor();
        const float alpha = 0.5f, beta = -2.f;
        std::vector<eltest::In> in = {arg(a), konst(b)};
        if (has_c) in.push_back(arg(c));
        const Tensor y = eltest::run1("Gemm", in,
                                      attrs_of({{"transA", Attribute::of_int(ta)},
                                                {"transB", Attribute::of_int(tb)},
                                                {"alpha", Attribute::of_float(alpha)},
                                                {"beta", Attribute::of_float(beta)}}));
        ASSERT_EQ(y.shape(), (Shape{m, n}));
        eltest::expect_near_all(y, gemm_by_definition(a, b, has_c ? &c : nullptr, ta, tb, alpha, beta), 1e-5, 1e-6);
      }
}

// A fully connected layer (constant B and C) runs on the vector pointwise kernel: sizes not a multiple of
// the vector width, one and several rows, B in both orientations, C a row, a scalar or absent.
TEST(GemmOp, FullyConnectedWithConstantWeights) {
  std::mt19937 rng(11);
  for (int64_t m : {1, 3})
    for (int tb = 0; tb < 2; ++tb)
      for (int ci = 0; ci < 3; ++ci) {
        const int64_t n = 37, k = 70;
        const Tensor a = random_tensor(rng, Shape{m, k});
        const Tensor b = random_tensor(rng, tb ? Shape{n, k} : Shape{k, n});
        const Tensor c = ci == 0 ? random_tensor(rng, Shape{n}) : ci == 1 ? random_tensor(rng, Shape{1}) : Tensor();
        const float alpha = 1.5f, beta = 0.25f;
        std::vector<eltest::In> in = {arg(a), konst(b)};
        if (c.defined()) in.push_back(konst(c));
        const Tensor y = eltest::run1("Gemm", in,
                                      attrs_of({{"transB", Attribute::of_int(tb)},
                                                {"alpha", Attribute::of_float(alpha)},
                                                {"beta", Attribute::of_float(beta)}}));
        ASSERT_EQ(y.shape(), (Shape{m, n}));
        eltest::expect_near_all(y, gemm_by_definition(a, b, c.defined() ? &c : nullptr, false, tb, alpha, beta), 1e-5,
                                1e-6);
      }
}

TEST(GemmOp, Errors) {
  auto err = [&](std::vector<eltest::In> in) {
    OpSpec s;
    s.op_type = "Gemm";
    s.inputs = std::move(in);
    return eltest::error_of(s);
  };
  const Tensor a = f32({2, 3}, std::vector<float>(6, 1.f));
  std::string m = err({arg(a), arg(f32({2, 3}, std::vector<float>(6, 1.f)))});
  EXPECT_NE(m.find("inner dimensions differ"), std::string::npos) << m;
  m = err({arg(a), arg(f32({3, 4}, std::vector<float>(12, 1.f))), arg(f32({3}, {1, 2, 3}))});
  EXPECT_NE(m.find("does not broadcast"), std::string::npos) << m;
  m = err({arg(f32({6}, std::vector<float>(6, 1.f))), arg(f32({3, 4}, std::vector<float>(12, 1.f)))});
  EXPECT_NE(m.find("must be a matrix"), std::string::npos) << m;
}

// numpy.matmul, literally, for the shapes below.
std::vector<double> naive_matmul(const Tensor& a, const Tensor& b, const Shape& y_shape) {
  Shape as = a.shape(), bs = b.shape();
  if (as.size() == 1) as.insert(as.begin(), 1);
  if (bs.size() == 1) bs.push_back(1);
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  Shape batch = y_shape;
  batch.resize(std::max(as.size(), bs.size()) - 2);
  std::vector<double> y;
  const int64_t batches = shape_numel(batch);
  for (int64_t bt = 0; bt < batches; ++bt) {
    // Coordinates of this batch, then the matching matrix in A and B (size-1 dims broadcast).
    std::vector<int64_t> coord(batch.size());
    int64_t rem = bt;
    for (size_t d = batch.size(); d-- > 0;) coord[d] = rem % batch[d], rem /= batch[d];
    auto matrix_index = [&](const Shape& s) {
      int64_t idx = 0;
      const size_t lead = s.size() - 2, skip = batch.size() - lead;
      for (size_t d = 0; d < lead; ++d) idx = idx * s[d] + (s[d] == 1 ? 0 : coord[skip + d]);
      return idx;
    };
    const float* am = a.data_as<float>() + matrix_index(as) * m * k;
    const float* bm = b.data_as<float>() + matrix_index(bs) * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t kk = 0; kk < k; ++kk) s += double(am[i * k + kk]) * bm[kk * n + j];
        y.push_back(s);
      }
  }
  return y;
}

TEST(MatMulOp, BatchedBroadcastingAndVectors) {
  std::mt19937 rng(12);
  struct Case {
    Shape a, b, y;
  };
  const std::vector<Case> cases = {
      {{3, 4}, {4, 5}, {3, 5}},
      {{2, 3, 4}, {4, 5}, {2, 3, 5}},
      {{4}, {4, 5}, {5}},
      {{2, 3, 4}, {4}, {2, 3}},
      {{4}, {4}, {}},
      {{2, 1, 3, 4}, {5, 4, 2}, {2, 5, 3, 2}},
      {{1, 3, 4}, {6, 4, 2}, {6, 3, 2}},
      {{7, 1, 17}, {17, 3}, {7, 1, 3}},
  };
  for (const Case& c : cases) {
    const Tensor a = random_tensor(rng, c.a), b = random_tensor(rng, c.b);
    OpSpec s;
    s.op_type = "MatMul";
    s.inputs = {arg(a), arg(b)};
    s.threads = 2;
    const Tensor y = eltest::run_op(s).at(0);
    ASSERT_EQ(y.shape(), c.y) << shape_str(c.a) << " x " << shape_str(c.b);
    eltest::expect_near_all(y, naive_matmul(a, b, c.y), 1e-5, 1e-6);
  }
}

TEST(MatMulOp, ErrorsAndMacs) {
  auto err = [&](Shape a, Shape b) {
    OpSpec s;
    s.op_type = "MatMul";
    s.inputs = {arg(Tensor::zeros(DataType::Float32, a)), arg(Tensor::zeros(DataType::Float32, b))};
    return eltest::error_of(s);
  };
  std::string m = err({2, 3}, {4, 5});
  EXPECT_NE(m.find("inner dimensions differ"), std::string::npos) << m;
  m = err({2, 3, 4}, {3, 4, 5});
  EXPECT_NE(m.find("do not broadcast"), std::string::npos) << m;

  Node n;
  n.name = "mm";
  n.op_type = "MatMul";
  n.inputs = {0, 1};
  n.outputs = {2};
  auto op = OpRegistry::instance().create(n);
  std::vector<TensorDesc> in = {{DataType::Float32, {2, 1, 3, 4}, nullptr, true},
                                {DataType::Float32, {5, 4, 6}, nullptr, true}},
                          out(1);
  op->infer(in, out);
  EXPECT_EQ(op->macs(), 2 * 5 * 3 * 6 * 4);
}

TEST(GemmRef, RowRangesAndBetaZeroIgnoresGarbage) {
  std::mt19937 rng(13);
  const Tensor a = random_tensor(rng, {6, 4}), b = random_tensor(rng, {4, 5});
  GemmParams p;
  p.m = 6, p.n = 5, p.k = 4, p.lda = 4, p.ldb = 5, p.ldc = 5;
  std::vector<float> whole(30, NAN), parts(30, NAN);  // beta = 0: NaN in C must not leak
  gemm_ref(p, a.data_as<float>(), b.data_as<float>(), whole.data());
  gemm_ref(p, a.data_as<float>(), b.data_as<float>(), parts.data(), 0, 2);
  gemm_ref(p, a.data_as<float>(), b.data_as<float>(), parts.data(), 2, 6);
  EXPECT_EQ(whole, parts);
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 5; ++j) {
      double s = 0;
      for (int64_t kk = 0; kk < 4; ++kk) s += double(a.data_as<float>()[i * 4 + kk]) * b.data_as<float>()[kk * 5 + j];
      EXPECT_NEAR(whole[i * 5 + j], s, 1e-6);
    }
}

}  // namespace
}  // namespace ninegrid
