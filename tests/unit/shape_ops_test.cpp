// The data-movement and shape operators (Concat, Split, Slice, Reshape, Flatten, Transpose, Squeeze,
// Unsqueeze, Shape, Size, Gather, GatherElements, Constant, ConstantOfShape, Cast, CastLike, Expand, Tile,
// Range, DepthToSpace, SpaceToDepth, EyeLike), their reference kernels, and the planner's handling of them
// (buffer aliasing, folding of shape arithmetic). Expected values are worked out by hand from the ONNX
// operator definitions; float16 bit patterns from the IEEE 754 binary16 format.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include "elementwise_test_util.h"
#include "kernels/ref/cast.h"
#include "kernels/ref/copy_strided.h"
#include "kernels/ref/float16.h"
#include "ops/op.h"
#include "runtime/plan.h"
#include "core/thread_pool.h"

namespace ninegrid {
namespace {

using namespace eltest;

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();


// A tensor of raw 16-bit patterns labelled float16 / bfloat16.
Tensor bits16(DataType t, const Shape& shape, const std::vector<uint16_t>& v) {
  Tensor x = Tensor::empty(t, shape);
  EXPECT_EQ(static_cast<size_t>(x.numel()), v.size());
  std::memcpy(x.data(), v.data(), v.size() * 2);
  return x;
}
std::vector<uint16_t> bits_of(const Tensor& t) {
  std::vector<uint16_t> v(static_cast<size_t>(t.numel()));
  std::memcpy(v.data(), t.data(), v.size() * 2);
  return v;
}

Tensor run_n(const std::string& op, std::vector<In> inputs, Attributes attrs, int out_index, int num_outputs) {
  OpSpec s;
  s.op_type = op;
  s.inputs = std::move(inputs);
  s.attrs = std::move(attrs);
  s.num_outputs = num_outputs;
  return run_op(s).at(static_cast<size_t>(out_index));
}

std::string error_running(const std::string& op, std::vector<In> inputs, Attributes attrs = {}, int num_outputs = 1) {
  OpSpec s;
  s.op_type = op;
  s.inputs = std::move(inputs);
  s.attrs = std::move(attrs);
  s.num_outputs = num_outputs;
  return error_of(s);
}

#define EXPECT_ERROR_HAS(message, text)                                                        \
  do {                                                                                         \
    const std::string m_ = (message);                                                          \
    EXPECT_NE(m_.find(text), std::string::npos) << "error was: '" << m_ << "'";                \
    EXPECT_NE(m_.find("node_under_test"), std::string::npos) << "error names no node: " << m_; \
  } while (0)

Attribute ints(std::vector<int64_t> v) { return Attribute::of_ints(std::move(v)); }
Attribute one(int64_t v) { return Attribute::of_int(v); }

// ---------------------------------------------------------------- Concat

TEST(Concat, JoinsAlongAxisOne) {
  Tensor y = run1("Concat", {arg(i64({2, 2}, {1, 2, 3, 4})), arg(i64({2, 1}, {5, 6}))}, attrs_of({{"axis", one(1)}}));
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{1, 2, 5, 3, 4, 6}));
}

TEST(Concat, NegativeAxisAndEmptyInputAndBytes) {
  Tensor y = run1("Concat", {arg(u8({1, 2}, {7, 8})), arg(u8({1, 0}, {})), arg(u8({1, 1}, {9}))},
                  attrs_of({{"axis", one(-1)}}));
  EXPECT_EQ(y.shape(), (Shape{1, 3}));
  EXPECT_EQ(values<uint8_t>(y), (std::vector<uint8_t>{7, 8, 9}));
  Tensor z = run1("Concat", {arg(f32({1, 2}, {1, 2})), konst(f32({2, 2}, {3, 4, 5, 6}))}, attrs_of({{"axis", one(0)}}));
  EXPECT_EQ(z.shape(), (Shape{3, 2}));
  EXPECT_EQ(values<float>(z), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

// Large single-row concats are split into pieces among threads; the pieces must land where a plain
// copy puts them (inputs of uneven sizes that are not multiples of the piece size).
TEST(Concat, ThreadedBatchOneMatchesTheDefinition) {
  const Shape a_shape = {1, 3, 101, 97}, b_shape = {1, 5, 101, 97}, c_shape = {1, 1, 101, 97};
  auto iota_f32 = [](const Shape& s, float start) {
    std::vector<float> v(static_cast<size_t>(shape_numel(s)));
    for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<float>(i);
    return f32(s, v);
  };
  const Tensor a = iota_f32(a_shape, 0.f), b = iota_f32(b_shape, 1e6f), c = iota_f32(c_shape, -1e6f);
  OpSpec spec;
  spec.op_type = "Concat";
  spec.inputs = {arg(a), arg(b), arg(c)};
  spec.attrs = attrs_of({{"axis", one(1)}});
  spec.threads = 2;
  const Tensor y = eltest::run_op(spec)[0];
  ASSERT_EQ(y.shape(), (Shape{1, 9, 101, 97}));
  std::vector<float> want;
  for (const Tensor* t : {&a, &b, &c})
    for (int64_t i = 0; i < t->numel(); ++i) want.push_back(t->data_as<float>()[i]);
  EXPECT_EQ(values<float>(y), want);
}

TEST(Concat, MismatchedShapesAndTypesAreErrors) {
  EXPECT_ERROR_HAS(error_running("Concat", {arg(f32({2, 2}, {1, 2, 3, 4})), arg(f32({3, 1}, {1, 2, 3}))},
                                 attrs_of({{"axis", one(1)}})),
                   "does not match");
  EXPECT_ERROR_HAS(error_running("Concat", {arg(f32({1}, {1})), arg(i64({1}, {1}))}, attrs_of({{"axis", one(0)}})),
                   "int64");
  EXPECT_ERROR_HAS(error_running("Concat", {arg(f32({1}, {1}))}, attrs_of({{"axis", one(1)}})), "out of range");
  EXPECT_ERROR_HAS(error_running("Concat", {arg(f32({1}, {1}))}), "'axis' is required");
}

// ---------------------------------------------------------------- Split

TEST(Split, SizesFromInput) {
  std::vector<In> in = {arg(i32({6}, {1, 2, 3, 4, 5, 6})), konst(i64({2}, {2, 4}))};
  EXPECT_EQ(values<int32_t>(run_n("Split", in, {}, 0, 2)), (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(values<int32_t>(run_n("Split", in, {}, 1, 2)), (std::vector<int32_t>{3, 4, 5, 6}));
}

TEST(Split, EqualPartsAlongAxisOneAndZeroSizedPieces) {
  std::vector<In> in = {arg(f32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}))};
  Tensor b = run_n("Split", in, attrs_of({{"axis", one(1)}}), 1, 2);
  EXPECT_EQ(b.shape(), (Shape{2, 2}));
  EXPECT_EQ(values<float>(b), (std::vector<float>{3, 4, 7, 8}));
  std::vector<In> z = {arg(f32({3}, {1, 2, 3})), konst(i64({3}, {0, 3, 0}))};
  EXPECT_EQ(run_n("Split", z, {}, 0, 3).shape(), (Shape{0}));
  EXPECT_EQ(values<float>(run_n("Split", z, {}, 1, 3)), (std::vector<float>{1, 2, 3}));
}

TEST(Split, NumOutputsLetsTheLastPieceBeSmaller) {
  std::vector<In> in = {arg(i64({7}, {0, 1, 2, 3, 4, 5, 6}))};
  Attributes a = attrs_of({{"num_outputs", one(4)}});
  EXPECT_EQ(values<int64_t>(run_n("Split", in, a, 0, 4)), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(values<int64_t>(run_n("Split", in, a, 3, 4)), (std::vector<int64_t>{6}));
}

TEST(Split, BadSizesAreErrors) {
  EXPECT_ERROR_HAS(error_running("Split", {arg(f32({5}, {1, 2, 3, 4, 5})), konst(i64({2}, {2, 2}))}, {}, 2),
                   "add up to 4");
  EXPECT_ERROR_HAS(error_running("Split", {arg(f32({5}, {1, 2, 3, 4, 5}))}, {}, 2), "equal pieces");
  EXPECT_ERROR_HAS(error_running("Split", {arg(f32({5}, {1, 2, 3, 4, 5})), konst(i64({1}, {5}))}, {}, 2),
                   "has 1 sizes");
  EXPECT_ERROR_HAS(error_running("Split", {arg(f32({4}, {1, 2, 3, 4})), konst(i64({2}, {-1, 5}))}, {}, 2),
                   "negative");
}

// ---------------------------------------------------------------- Slice

TEST(Slice, NegativeStepWithExtremeBoundsReverses) {
  Tensor y = run1("Slice", {arg(i32({5}, {0, 1, 2, 3, 4})), konst(i64({1}, {-1})), konst(i64({1}, {kI64Min})),
                            konst(i64({1}, {0})), konst(i64({1}, {-1}))});
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{4, 3, 2, 1, 0}));
}

TEST(Slice, AxesAndStepsOnTwoDimensions) {
  // x[i][j] = 10 i + j, 3 x 4. Rows 0 and 2, columns 1 and 3 (end INT64_MAX clamps to 4).
  Tensor x = f32({3, 4}, {0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23});
  Tensor y = run1("Slice", {arg(x), konst(i64({2}, {1, 0})), konst(i64({2}, {kI64Max, 3})), konst(i64({2}, {-1, 0})),
                            konst(i64({2}, {2, 2}))});
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{1, 3, 21, 23}));
  // Default axes and steps: rows 1.., columns 0..2 (end -2 means 4 - 2).
  Tensor z = run1("Slice", {arg(x), konst(i64({2}, {1, 0})), konst(i64({2}, {3, -2}))});
  EXPECT_EQ(values<float>(z), (std::vector<float>{10, 11, 20, 21}));
  // Negative step over columns from 2 down to (excluding) 0.
  Tensor w = run1("Slice", {arg(x), konst(i64({1}, {2})), konst(i64({1}, {0})), konst(i64({1}, {1})),
                            konst(i64({1}, {-1}))});
  EXPECT_EQ(values<float>(w), (std::vector<float>{2, 1, 12, 11, 22, 21}));
}

TEST(Slice, OutOfRangeStartsClampToEmpty) {
  Tensor y = run1("Slice", {arg(f32({3}, {1, 2, 3})), konst(i64({1}, {10})), konst(i64({1}, {20}))});
  EXPECT_EQ(y.shape(), (Shape{0}));
  Tensor z = run1("Slice", {arg(f32({3}, {1, 2, 3})), konst(i64({1}, {-10})), konst(i64({1}, {1}))});
  EXPECT_EQ(values<float>(z), (std::vector<float>{1}));
  // A huge step takes one element.
  Tensor w = run1("Slice", {arg(f32({3}, {1, 2, 3})), konst(i64({1}, {0})), konst(i64({1}, {3})), konst(i64({1}, {0})),
                            konst(i64({1}, {kI64Max}))});
  EXPECT_EQ(values<float>(w), (std::vector<float>{1}));
  Tensor v = run1("Slice", {arg(f32({3}, {1, 2, 3})), konst(i64({1}, {2})), konst(i64({1}, {-5})), konst(i64({1}, {0})),
                            konst(i64({1}, {kI64Min}))});
  EXPECT_EQ(values<float>(v), (std::vector<float>{3}));
}

TEST(Slice, BadArgumentsAreErrors) {
  Tensor x = f32({3}, {1, 2, 3});
  EXPECT_ERROR_HAS(error_running("Slice", {arg(x), konst(i64({1}, {0})), konst(i64({1}, {2})), konst(i64({1}, {0})),
                                           konst(i64({1}, {0}))}),
                   "must not be 0");
  EXPECT_ERROR_HAS(error_running("Slice", {arg(x), konst(i64({1}, {0})), konst(i64({2}, {2, 2}))}), "'ends' has 2");
  EXPECT_ERROR_HAS(error_running("Slice", {arg(x), konst(i64({1}, {0})), konst(i64({1}, {2})), konst(i64({1}, {1}))}),
                   "out of range");
  EXPECT_ERROR_HAS(error_running("Slice", {arg(f32({2, 2}, {1, 2, 3, 4})), konst(i64({2}, {0, 0})),
                                           konst(i64({2}, {1, 1})), konst(i64({2}, {1, -1}))}),
                   "repeated");
  // Starts given as a model input: the session plans by the contents each run brings.
  EXPECT_EQ(values<float>(run1("Slice", {arg(x), arg(i64({1}, {1})), konst(i64({1}, {3}))})), (std::vector<float>{2, 3}));
  EXPECT_ERROR_HAS(error_running("Slice", {arg(x), arg(i64({2}, {0, 0})), konst(i64({1}, {2}))}), "'ends' has 1");
}

// ---------------------------------------------------------------- Reshape / Flatten

TEST(Reshape, ZeroCopiesAndMinusOneInfers) {
  Tensor x = i64({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(run1("Reshape", {arg(x), konst(i64({2}, {0, -1}))}).shape(), (Shape{2, 3}));
  EXPECT_EQ(run1("Reshape", {arg(x), konst(i64({3}, {-1, 1, 2}))}).shape(), (Shape{3, 1, 2}));
  Tensor y = run1("Reshape", {arg(x), konst(i64({1}, {-1}))});
  EXPECT_EQ(y.shape(), (Shape{6}));
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
}

TEST(Reshape, AllowZeroMakesZeroARealDimension) {
  Attributes az = attrs_of({{"allowzero", one(1)}});
  EXPECT_EQ(run1("Reshape", {arg(f32({0, 3}, {})), konst(i64({2}, {3, 0}))}, az).shape(), (Shape{3, 0}));
  // Without allowzero the 0 copies the input's 3.
  EXPECT_EQ(run1("Reshape", {arg(f32({2, 3}, {1, 2, 3, 4, 5, 6})), konst(i64({2}, {-1, 0}))}).shape(), (Shape{2, 3}));
}

TEST(Reshape, BadTargetsAreErrors) {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_ERROR_HAS(error_running("Reshape", {arg(x), konst(i64({2}, {4, 2}))}), "cannot reshape 2x3");
  EXPECT_ERROR_HAS(error_running("Reshape", {arg(x), konst(i64({2}, {-1, -1}))}), "more than one -1");
  EXPECT_ERROR_HAS(error_running("Reshape", {arg(x), konst(i64({2}, {4, -1}))}), "cannot reshape");
  EXPECT_ERROR_HAS(error_running("Reshape", {arg(x), konst(i64({2}, {-2, 3}))}), "negative");
  EXPECT_ERROR_HAS(error_running("Reshape", {arg(x), konst(i64({3}, {0, 0, 0}))}), "does not have");
  EXPECT_ERROR_HAS(error_running("Reshape", {arg(x), konst(i64({3}, {kI64Max, kI64Max, 2}))}), "overflows");
  EXPECT_ERROR_HAS(error_running("Reshape", {arg(f32({0, 3}, {})), konst(i64({2}, {0, -1}))}), "multiply to 0");
  // A target given as a model input is checked against the contents each run brings.
  EXPECT_ERROR_HAS(error_running("Reshape", {arg(x), arg(i64({2}, {4, 2}))}), "cannot reshape 2x3");
  Tensor y = run1("Reshape", {arg(x), arg(i64({2}, {3, 2}))});
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(Flatten, SplitsTheShapeAtAxis) {
  Tensor x = Tensor::zeros(DataType::Float32, {2, 3, 4});
  EXPECT_EQ(run1("Flatten", {arg(x)}).shape(), (Shape{2, 12}));
  EXPECT_EQ(run1("Flatten", {arg(x)}, attrs_of({{"axis", one(0)}})).shape(), (Shape{1, 24}));
  EXPECT_EQ(run1("Flatten", {arg(x)}, attrs_of({{"axis", one(3)}})).shape(), (Shape{24, 1}));
  EXPECT_EQ(run1("Flatten", {arg(x)}, attrs_of({{"axis", one(-1)}})).shape(), (Shape{6, 4}));
  Tensor y = run1("Flatten", {arg(i32({2, 1, 2}, {1, 2, 3, 4}))}, attrs_of({{"axis", one(2)}}));
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{1, 2, 3, 4}));
  EXPECT_ERROR_HAS(error_running("Flatten", {arg(x)}, attrs_of({{"axis", one(4)}})), "out of range");
}

// ---------------------------------------------------------------- Transpose

TEST(Transpose, DefaultReversesDimensions) {
  Tensor y = run1("Transpose", {arg(i32({2, 3}, {1, 2, 3, 4, 5, 6}))});
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{1, 4, 2, 5, 3, 6}));
}

TEST(Transpose, PermOnHalfFloatsMovesBitsUnchanged) {
  // x[i][j][k] = 4i + 2j + k as bit patterns; perm (2, 0, 1): y[k][i][j] = x[i][j][k].
  Tensor x = bits16(DataType::Float16, {2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  Tensor y = run1("Transpose", {arg(x)}, attrs_of({{"perm", ints({2, 0, 1})}}));
  EXPECT_EQ(y.dtype(), DataType::Float16);
  EXPECT_EQ(bits_of(y), (std::vector<uint16_t>{0, 2, 4, 6, 1, 3, 5, 7}));
}

TEST(Transpose, BadPermIsAnError) {
  Tensor x = f32({2, 2}, {1, 2, 3, 4});
  EXPECT_ERROR_HAS(error_running("Transpose", {arg(x)}, attrs_of({{"perm", ints({0, 0})}})), "repeated");
  EXPECT_ERROR_HAS(error_running("Transpose", {arg(x)}, attrs_of({{"perm", ints({0})}})), "rank 2");
  EXPECT_ERROR_HAS(error_running("Transpose", {arg(x)}, attrs_of({{"perm", ints({0, 2})}})), "out of range");
}

TEST(Transpose, LargeTensorOnTwoThreadsMatchesIndexFormula) {
  // 3 x 300 x 200 floats (720 KB): large enough for the parallel path. perm (2, 0, 1).
  const int64_t A = 3, B = 300, C = 200;
  Tensor x = Tensor::empty(DataType::Float32, {A, B, C});
  float* px = x.data_as<float>();
  for (int64_t i = 0; i < A * B * C; ++i) px[i] = static_cast<float>(i);
  OpSpec s;
  s.op_type = "Transpose";
  s.inputs = {arg(x)};
  s.attrs = attrs_of({{"perm", ints({2, 0, 1})}});
  s.threads = 2;
  Tensor y = run_op(s).at(0);
  ASSERT_EQ(y.shape(), (Shape{C, A, B}));
  const float* py = y.data_as<float>();
  int64_t bad = 0;
  for (int64_t k = 0; k < C; ++k)
    for (int64_t i = 0; i < A; ++i)
      for (int64_t j = 0; j < B; ++j) bad += py[(k * A + i) * B + j] != static_cast<float>((i * B + j) * C + k);
  EXPECT_EQ(bad, 0);
}

// ---------------------------------------------------------------- Squeeze / Unsqueeze

TEST(Squeeze, WithAndWithoutAxes) {
  Tensor x = f32({1, 3, 1}, {1, 2, 3});
  EXPECT_EQ(run1("Squeeze", {arg(x)}).shape(), (Shape{3}));
  EXPECT_EQ(run1("Squeeze", {arg(x), konst(i64({1}, {-1}))}).shape(), (Shape{1, 3}));
  EXPECT_EQ(run1("Squeeze", {arg(f32({1}, {5}))}).shape(), (Shape{}));
  EXPECT_ERROR_HAS(error_running("Squeeze", {arg(x), konst(i64({1}, {1}))}), "not 1");
  EXPECT_ERROR_HAS(error_running("Squeeze", {arg(x), konst(i64({1}, {3}))}), "out of range");
}

TEST(Unsqueeze, AxesIndexTheOutput) {
  Tensor x = i64({3}, {1, 2, 3});
  EXPECT_EQ(run1("Unsqueeze", {arg(x), konst(i64({2}, {0, -1}))}).shape(), (Shape{1, 3, 1}));
  EXPECT_EQ(run1("Unsqueeze", {arg(x), konst(i64({2}, {2, 0}))}).shape(), (Shape{1, 3, 1}));
  EXPECT_EQ(run1("Unsqueeze", {arg(f32({}, {7})), konst(i64({1}, {0}))}).shape(), (Shape{1}));
  EXPECT_EQ(values<int64_t>(run1("Unsqueeze", {arg(x), konst(i64({1}, {1}))})), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_ERROR_HAS(error_running("Unsqueeze", {arg(x), konst(i64({2}, {0, 0}))}), "repeated");
  EXPECT_ERROR_HAS(error_running("Unsqueeze", {arg(x), konst(i64({1}, {2}))}), "out of range");
  EXPECT_ERROR_HAS(error_running("Unsqueeze", {arg(x)}), "needs 'axes'");
}

// ---------------------------------------------------------------- Shape / Size

TEST(ShapeOp, StartAndEndSelectDimensions) {
  Tensor x = Tensor::zeros(DataType::UInt8, {2, 3, 4});
  EXPECT_EQ(values<int64_t>(run1("Shape", {arg(x)})), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(values<int64_t>(run1("Shape", {arg(x)}, attrs_of({{"start", one(1)}}))), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(values<int64_t>(run1("Shape", {arg(x)}, attrs_of({{"end", one(-1)}}))), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values<int64_t>(run1("Shape", {arg(x)}, attrs_of({{"start", one(-10)}, {"end", one(10)}}))),
            (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(run1("Shape", {arg(x)}, attrs_of({{"start", one(2)}, {"end", one(1)}})).shape(), (Shape{0}));
}

TEST(SizeOp, CountsElementsAsAScalar) {
  Tensor y = run1("Size", {arg(Tensor::zeros(DataType::Float32, {2, 3, 4}))});
  EXPECT_EQ(y.shape(), (Shape{}));
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{24}));
}

// ---------------------------------------------------------------- Gather / GatherElements

TEST(Gather, AxisZeroWithTwoDimensionalIndices) {
  Tensor data = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor y = run1("Gather", {arg(data), arg(i32({1, 2}, {2, 0}))});
  EXPECT_EQ(y.shape(), (Shape{1, 2, 2}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{5, 6, 1, 2}));
}

TEST(Gather, AxisOneNegativeIndexAndScalarIndex) {
  Tensor data = i64({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor y = run1("Gather", {arg(data), konst(i64({2}, {-1, 0}))}, attrs_of({{"axis", one(1)}}));
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{3, 1, 6, 4}));
  Tensor z = run1("Gather", {arg(data), arg(i64({}, {1}))});
  EXPECT_EQ(z.shape(), (Shape{3}));
  EXPECT_EQ(values<int64_t>(z), (std::vector<int64_t>{4, 5, 6}));
}

TEST(Gather, OutOfRangeIndicesAreErrorsAtLoadAndAtRun) {
  Tensor data = f32({3}, {1, 2, 3});
  EXPECT_ERROR_HAS(error_running("Gather", {arg(data), konst(i64({1}, {3}))}), "out of range");
  EXPECT_ERROR_HAS(error_running("Gather", {arg(data), arg(i64({1}, {-4}))}), "out of range");
  EXPECT_ERROR_HAS(error_running("Gather", {arg(data), arg(f32({1}, {0}))}), "int64 or int32");
}

TEST(GatherElements, PicksAlongTheAxisPerPosition) {
  // ONNX's documented example: axis 1, data [[1,2],[3,4]], indices [[0,0],[1,0]] -> [[1,1],[4,3]].
  Tensor y = run1("GatherElements", {arg(i32({2, 2}, {1, 2, 3, 4})), arg(i64({2, 2}, {0, 0, 1, 0}))},
                  attrs_of({{"axis", one(1)}}));
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{1, 1, 4, 3}));
  // Axis 0, negative index, indices smaller than data: out[i][j] = data[idx[i][j]][j].
  Tensor z = run1("GatherElements", {arg(f32({3, 2}, {1, 2, 3, 4, 5, 6})), arg(i32({1, 2}, {-1, 1}))});
  EXPECT_EQ(z.shape(), (Shape{1, 2}));
  EXPECT_EQ(values<float>(z), (std::vector<float>{5, 4}));
}

TEST(GatherElements, BadIndicesAreErrors) {
  Tensor data = f32({2, 2}, {1, 2, 3, 4});
  EXPECT_ERROR_HAS(error_running("GatherElements", {arg(data), arg(i64({2, 1}, {0, 2}))}, attrs_of({{"axis", one(1)}})),
                   "out of range");
  EXPECT_ERROR_HAS(error_running("GatherElements", {arg(data), arg(i64({3, 1}, {0, 0, 0}))}, attrs_of({{"axis", one(1)}})),
                   "exceed data");
  EXPECT_ERROR_HAS(error_running("GatherElements", {arg(data), arg(i64({4}, {0, 0, 0, 0}))}), "rank");
}

// ---------------------------------------------------------------- Constant / ConstantOfShape / EyeLike / Range

TEST(Constant, EachValueAttributeForm) {
  Tensor a = run1("Constant", {}, attrs_of({{"value_ints", ints({3, 4})}}));
  EXPECT_EQ(a.dtype(), DataType::Int64);
  EXPECT_EQ(values<int64_t>(a), (std::vector<int64_t>{3, 4}));
  Tensor b = run1("Constant", {}, attrs_of({{"value_float", Attribute::of_float(2.5f)}}));
  EXPECT_EQ(b.shape(), (Shape{}));
  EXPECT_EQ(values<float>(b), (std::vector<float>{2.5f}));
  Tensor c = run1("Constant", {}, attrs_of({{"value", Attribute::of_tensor(u8({2}, {9, 8}))}}));
  EXPECT_EQ(values<uint8_t>(c), (std::vector<uint8_t>{9, 8}));
  Tensor d = run1("Constant", {}, attrs_of({{"value_int", one(-3)}}));
  EXPECT_EQ(values<int64_t>(d), (std::vector<int64_t>{-3}));
  Tensor e = run1("Constant", {}, attrs_of({{"value_floats", Attribute::of_floats({1.f, -1.f})}}));
  EXPECT_EQ(values<float>(e), (std::vector<float>{1.f, -1.f}));
  EXPECT_ERROR_HAS(error_running("Constant", {}), "exactly one");
  EXPECT_ERROR_HAS(error_running("Constant", {}, attrs_of({{"value_strings", Attribute::of_strings({"a"})}})),
                   "unsupported");
}

TEST(ConstantOfShape, FillsWithTheValueOrFloatZero) {
  Tensor y = run1("ConstantOfShape", {konst(i64({2}, {2, 3}))},
                  attrs_of({{"value", Attribute::of_tensor(i32({1}, {7}))}}));
  EXPECT_EQ(y.dtype(), DataType::Int32);
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>(6, 7)));
  Tensor z = run1("ConstantOfShape", {konst(i64({1}, {2}))});
  EXPECT_EQ(z.dtype(), DataType::Float32);
  EXPECT_EQ(values<float>(z), (std::vector<float>{0, 0}));
  EXPECT_EQ(run1("ConstantOfShape", {konst(i64({2}, {0, 4}))}).shape(), (Shape{0, 4}));
  EXPECT_ERROR_HAS(error_running("ConstantOfShape", {konst(i64({1}, {-1}))}), "negative");
  EXPECT_ERROR_HAS(error_running("ConstantOfShape", {konst(i64({3}, {kI64Max, kI64Max, 2}))}), "shape");
  // The shape given as a model input.
  EXPECT_EQ(values<float>(run1("ConstantOfShape", {arg(i64({1}, {2}))})), (std::vector<float>{0, 0}));
  EXPECT_ERROR_HAS(error_running("ConstantOfShape", {arg(i64({1}, {-1}))}), "negative");
}

TEST(EyeLike, OnesOnTheKthDiagonal) {
  Tensor y = run1("EyeLike", {arg(Tensor::zeros(DataType::Float32, {2, 3}))}, attrs_of({{"k", one(1)}}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{0, 1, 0, 0, 0, 1}));
  Tensor z = run1("EyeLike", {arg(Tensor::zeros(DataType::Float32, {3, 2}))},
                  attrs_of({{"k", one(-1)}, {"dtype", one(static_cast<int>(DataType::Int32))}}));
  EXPECT_EQ(z.dtype(), DataType::Int32);
  EXPECT_EQ(values<int32_t>(z), (std::vector<int32_t>{0, 0, 1, 0, 0, 1}));
  Tensor w = run1("EyeLike", {arg(Tensor::zeros(DataType::Int64, {2, 2}))}, attrs_of({{"k", one(kI64Min)}}));
  EXPECT_EQ(values<int64_t>(w), (std::vector<int64_t>{0, 0, 0, 0}));
}

TEST(Range, IntegerAndFloatSequences) {
  EXPECT_EQ(values<int32_t>(run1("Range", {konst(i32({}, {1})), konst(i32({}, {7})), konst(i32({}, {2}))})),
            (std::vector<int32_t>{1, 3, 5}));
  EXPECT_EQ(values<int64_t>(run1("Range", {konst(i64({}, {10})), konst(i64({}, {4})), konst(i64({}, {-3}))})),
            (std::vector<int64_t>{10, 7}));
  EXPECT_EQ(values<float>(run1("Range", {konst(f32({}, {0})), konst(f32({}, {1})), konst(f32({}, {0.25f}))})),
            (std::vector<float>{0, 0.25f, 0.5f, 0.75f}));
  EXPECT_EQ(run1("Range", {konst(i64({}, {5})), konst(i64({}, {1})), konst(i64({}, {1}))}).shape(), (Shape{0}));
  // The whole int64 span in two steps, without overflow.
  EXPECT_EQ(values<int64_t>(run1("Range", {konst(i64({}, {kI64Min})), konst(i64({}, {kI64Max})),
                                           konst(i64({}, {kI64Max}))})),
            (std::vector<int64_t>{kI64Min, -1, kI64Max - 1}));
}

TEST(Range, BadArgumentsAreErrors) {
  EXPECT_ERROR_HAS(error_running("Range", {konst(i32({}, {1})), konst(i32({}, {7})), konst(i32({}, {0}))}),
                   "must not be 0");
  EXPECT_ERROR_HAS(error_running("Range", {konst(f32({}, {0})), konst(f32({}, {1e30f})), konst(f32({}, {1e-3f}))}),
                   "too many");
  EXPECT_ERROR_HAS(error_running("Range", {konst(i32({}, {1})), konst(i64({}, {7})), konst(i32({}, {1}))}), "int64");
  // Bounds given as model inputs.
  EXPECT_ERROR_HAS(error_running("Range", {arg(i32({}, {1})), konst(i32({}, {7})), arg(i32({}, {0}))}), "must not be 0");
  EXPECT_EQ(values<int32_t>(run1("Range", {arg(i32({}, {1})), konst(i32({}, {7})), arg(i32({}, {2}))})),
            (std::vector<int32_t>{1, 3, 5}));
  EXPECT_ERROR_HAS(error_running("Range", {konst(u8({}, {1})), konst(u8({}, {7})), konst(u8({}, {1}))}), "unsupported");
}

// ---------------------------------------------------------------- Expand / Tile

TEST(Expand, BroadcastsBothWays) {
  Tensor y = run1("Expand", {arg(i32({3, 1}, {1, 2, 3})), konst(i64({3}, {2, 1, 2}))});
  EXPECT_EQ(y.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  // A target dimension of 1 keeps the input's.
  EXPECT_EQ(run1("Expand", {arg(f32({2, 2}, {1, 2, 3, 4})), konst(i64({1}, {1}))}).shape(), (Shape{2, 2}));
  EXPECT_ERROR_HAS(error_running("Expand", {arg(f32({3}, {1, 2, 3})), konst(i64({1}, {2}))}), "cannot expand");
}

TEST(Tile, RepeatsEachDimension) {
  Tensor y = run1("Tile", {arg(i64({2, 2}, {1, 2, 3, 4})), konst(i64({2}, {2, 1}))});
  EXPECT_EQ(y.shape(), (Shape{4, 2}));
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{1, 2, 3, 4, 1, 2, 3, 4}));
  Tensor z = run1("Tile", {arg(u8({1, 2}, {5, 6})), konst(i64({2}, {2, 2}))});
  EXPECT_EQ(values<uint8_t>(z), (std::vector<uint8_t>{5, 6, 5, 6, 5, 6, 5, 6}));
  EXPECT_EQ(run1("Tile", {arg(u8({1, 2}, {5, 6})), konst(i64({2}, {0, 2}))}).shape(), (Shape{0, 4}));
  EXPECT_ERROR_HAS(error_running("Tile", {arg(u8({2}, {5, 6})), konst(i64({2}, {1, 1}))}), "rank 1");
  EXPECT_ERROR_HAS(error_running("Tile", {arg(u8({2}, {5, 6})), konst(i64({1}, {-1}))}), "negative");
  EXPECT_ERROR_HAS(error_running("Tile", {arg(u8({2}, {5, 6})), konst(i64({1}, {kI64Max}))}), "overflows");
}

// ---------------------------------------------------------------- DepthToSpace / SpaceToDepth

TEST(DepthToSpace, DcrAndCrdOrders) {
  Tensor x = f32({1, 8, 1, 1}, {0, 1, 2, 3, 4, 5, 6, 7});
  // DCR: y[c][i][j] = x[(2i + j) * 2 + c].
  Tensor dcr = run1("DepthToSpace", {arg(x)}, attrs_of({{"blocksize", one(2)}}));
  EXPECT_EQ(dcr.shape(), (Shape{1, 2, 2, 2}));
  EXPECT_EQ(values<float>(dcr), (std::vector<float>{0, 2, 4, 6, 1, 3, 5, 7}));
  // CRD: y[c][i][j] = x[4c + 2i + j].
  Tensor crd = run1("DepthToSpace", {arg(x)}, attrs_of({{"blocksize", one(2)}, {"mode", Attribute::of_string("CRD")}}));
  EXPECT_EQ(values<float>(crd), (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_ERROR_HAS(error_running("DepthToSpace", {arg(f32({1, 3, 1, 1}, {1, 2, 3}))}, attrs_of({{"blocksize", one(2)}})),
                   "multiple");
  EXPECT_ERROR_HAS(error_running("DepthToSpace", {arg(x)}, attrs_of({{"blocksize", one(2)}, {"mode", Attribute::of_string("X")}})),
                   "unsupported");
}

TEST(SpaceToDepth, TilesBecomeChannels) {
  // 1 x 1 x 2 x 4 with x[h][w] = 10h + w, blocksize 2: channel (2i + j) holds x[2h' + i][2w' + j].
  Tensor x = i32({1, 1, 2, 4}, {0, 1, 2, 3, 10, 11, 12, 13});
  Tensor y = run1("SpaceToDepth", {arg(x)}, attrs_of({{"blocksize", one(2)}}));
  EXPECT_EQ(y.shape(), (Shape{1, 4, 1, 2}));
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{0, 2, 1, 3, 10, 12, 11, 13}));
  EXPECT_ERROR_HAS(error_running("SpaceToDepth", {arg(i32({1, 1, 3, 2}, {1, 2, 3, 4, 5, 6}))},
                                 attrs_of({{"blocksize", one(2)}})),
                   "multiples");
  EXPECT_ERROR_HAS(error_running("SpaceToDepth", {arg(i32({2}, {1, 2}))}, attrs_of({{"blocksize", one(2)}})), "4-D");
}

// ---------------------------------------------------------------- Cast / CastLike

Attributes to(DataType t) { return attrs_of({{"to", one(static_cast<int>(t))}}); }

TEST(Cast, FloatToIntegerTruncatesAndStaysDefined) {
  Tensor y = run1("Cast", {arg(f32({5}, {-1.7f, 2.9f, NAN, 1e20f, -1e20f}))}, to(DataType::Int64));
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{-1, 2, 0, kI64Max, kI64Min}));
  // 300 -> 300 mod 256 = 44; -1 -> 255.
  Tensor z = run1("Cast", {arg(f32({2}, {300.f, -1.f}))}, to(DataType::UInt8));
  EXPECT_EQ(values<uint8_t>(z), (std::vector<uint8_t>{44, 255}));
}

TEST(Cast, IntegersWrapAndBoolsAreZeroOrOne) {
  EXPECT_EQ(values<uint8_t>(run1("Cast", {arg(i64({3}, {300, -1, 5}))}, to(DataType::UInt8))),
            (std::vector<uint8_t>{44, 255, 5}));
  Tensor b = run1("Cast", {arg(f32({4}, {0.f, 0.5f, NAN, -2.f}))}, to(DataType::Bool));
  EXPECT_EQ(b.dtype(), DataType::Bool);
  EXPECT_EQ(values<bool>(b), (std::vector<bool>{false, true, true, true}));
  EXPECT_EQ(values<float>(run1("Cast", {arg(boolean({2}, {1, 0}))}, to(DataType::Float32))),
            (std::vector<float>{1.f, 0.f}));
  // 2^64 - 1 rounds to 2^64 as a float.
  Tensor big = Tensor::from_vector<uint64_t>(DataType::UInt64, {1}, {std::numeric_limits<uint64_t>::max()});
  EXPECT_EQ(values<float>(run1("Cast", {arg(big)}, to(DataType::Float32)))[0], 18446744073709551616.f);
}

TEST(Cast, FloatToHalfRoundsToNearestEven) {
  const float tiny = std::ldexp(1.f, -24), half_tiny = std::ldexp(1.f, -25);
  Tensor x = f32({11}, {1.f, 65504.f, 65519.f, 65520.f, 1.f / 3.f, tiny, half_tiny, 1.5f * half_tiny, -0.f, NAN,
                        -INFINITY});
  Tensor y = run1("Cast", {arg(x)}, to(DataType::Float16));
  EXPECT_EQ(y.dtype(), DataType::Float16);
  // 1/3 = 0x3555 (mantissa 0x155 = 341: 1.0101010101b, the next bit a 0).
  EXPECT_EQ(bits_of(y), (std::vector<uint16_t>{0x3C00, 0x7BFF, 0x7BFF, 0x7C00, 0x3555, 0x0001, 0x0000, 0x0001, 0x8000,
                                               0x7E00, 0xFC00}));
}

TEST(Cast, DoubleToHalfRoundsOnce) {
  // 1 + 2^-11 + 2^-40 lies just above the midpoint of 1 and 1 + 2^-10, so it rounds up; through float it
  // would first become the midpoint 1 + 2^-11 and then round to even, down to 1.
  Tensor x = f64({2}, {1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40), 1.0 + std::ldexp(1.0, -11)});
  EXPECT_EQ(bits_of(run1("Cast", {arg(x)}, to(DataType::Float16))), (std::vector<uint16_t>{0x3C01, 0x3C00}));
}

TEST(Cast, HalfToFloatAndDoubleIsExact) {
  Tensor h = bits16(DataType::Float16, {5}, {0x0001, 0x7C00, 0xFBFF, 0x3555, 0x03FF});
  Tensor y = run1("Cast", {arg(h)}, to(DataType::Float32));
  std::vector<float> v = values<float>(y);
  EXPECT_EQ(v[0], std::ldexp(1.f, -24));
  EXPECT_EQ(v[1], INFINITY);
  EXPECT_EQ(v[2], -65504.f);
  EXPECT_EQ(v[3], 341.f / 1024.f * 0.25f + 0.25f);  // 2^-2 * (1 + 341/1024)
  EXPECT_EQ(v[4], 1023.f * std::ldexp(1.f, -24));   // largest subnormal
  EXPECT_EQ(values<double>(run1("Cast", {arg(h)}, to(DataType::Float64)))[2], -65504.0);
}

TEST(Cast, IntegersToHalfRoundToNearestEven) {
  // Above 2048 half steps by 2: 2049 is a tie (to even 2048), 2051 a tie to 2052; 70000 overflows.
  Tensor y = run1("Cast", {arg(i64({4}, {2049, 2051, -2050, 70000}))}, to(DataType::Float16));
  EXPECT_EQ(bits_of(y), (std::vector<uint16_t>{0x6800, 0x6802, 0xE801, 0x7C00}));
}

TEST(Cast, BFloat16RoundsToNearestEven) {
  // bfloat16 keeps 7 mantissa bits: 1 + 2^-8 ties to 1.0, 1 + 3 * 2^-8 ties up to 1 + 2^-6.
  Tensor y = run1("Cast", {arg(f32({3}, {1.f + std::ldexp(1.f, -8), 1.f + 3 * std::ldexp(1.f, -8), -2.f}))},
                  to(DataType::BFloat16));
  EXPECT_EQ(bits_of(y), (std::vector<uint16_t>{0x3F80, 0x3F82, 0xC000}));
  Tensor back = run1("Cast", {arg(bits16(DataType::BFloat16, {1}, {0x3F82}))}, to(DataType::Float32));
  EXPECT_EQ(values<float>(back)[0], 1.f + std::ldexp(1.f, -6));
}

TEST(Cast, StringsAreUnsupported) {
  EXPECT_ERROR_HAS(error_running("Cast", {arg(f32({1}, {1}))}, to(DataType::String)), "unsupported");
  EXPECT_ERROR_HAS(error_running("Cast", {arg(f32({1}, {1}))}), "'to' is required");
}

TEST(CastLike, TakesTheSecondInputsType) {
  Tensor y = run1("CastLike", {arg(i32({2}, {-3, 4})), arg(f64({1}, {0.0}))});
  EXPECT_EQ(y.dtype(), DataType::Float64);
  EXPECT_EQ(values<double>(y), (std::vector<double>{-3.0, 4.0}));
}

TEST(CastKernel, HalfConversionRoundTripsEveryFiniteHalf) {
  // Every finite half converts to float and back to the same bits (NaNs excluded: they canonicalise).
  int bad = 0;
  for (uint32_t b = 0; b < 0x10000; ++b) {
    if ((b & 0x7C00) == 0x7C00 && (b & 0x3FF)) continue;
    if (ref::float_to_half(ref::half_to_float(static_cast<uint16_t>(b))) != b) ++bad;
  }
  EXPECT_EQ(bad, 0);
}

// ---------------------------------------------------------------- kernels

TEST(CopyStrided, ZeroAndNegativeStridesOnUnalignedMemory) {
  // Source 2 x 3 int32 at an odd address; view: rows reversed (stride -3), each row's element 1 repeated
  // twice (stride 0), as a 2 x 2 output.
  std::vector<uint8_t> buffer(1 + 6 * 4);
  const int32_t src[6] = {1, 2, 3, 4, 5, 6};
  std::memcpy(buffer.data() + 1, src, sizeof src);
  std::vector<uint8_t> out(1 + 4 * 4);
  const int64_t shape[2] = {2, 2};
  const int64_t strides[2] = {-3, 0};
  ref::copy_strided(out.data() + 1, buffer.data() + 1 + 4 * 4, 4, 2, shape, strides);  // starts at element [1][1]
  int32_t got[4];
  std::memcpy(got, out.data() + 1, sizeof got);
  EXPECT_EQ(std::vector<int32_t>(got, got + 4), (std::vector<int32_t>{5, 5, 2, 2}));
}

TEST(CopyStrided, OddElementSizeAndMergedDimensions) {
  // 3-byte elements; a dense 2 x 2 view merges into one row, a transposed one does not.
  const uint8_t src[12] = {1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4};
  uint8_t out[12] = {};
  const int64_t shape[2] = {2, 2};
  const int64_t dense[2] = {2, 1}, transposed[2] = {1, 2};
  ref::copy_strided(out, src, 3, 2, shape, dense);
  EXPECT_EQ(std::vector<uint8_t>(out, out + 12), std::vector<uint8_t>(src, src + 12));
  ref::copy_strided(out, src, 3, 2, shape, transposed);
  EXPECT_EQ(std::vector<uint8_t>(out, out + 12), (std::vector<uint8_t>{1, 1, 1, 3, 3, 3, 2, 2, 2, 4, 4, 4}));
}

// ---------------------------------------------------------------- planner integration

struct GraphBuilder {
  Graph g;
  int input(const std::string& name, DataType t, const Shape& s) {
    int id = g.add_value(name);
    g.values[id].dtype = t;
    g.values[id].shape = s;
    g.values[id].shape_known = true;
    g.inputs.push_back(id);
    return id;
  }
  int constant(const std::string& name, Tensor t) {
    int id = g.add_value(name);
    g.values[id].dtype = t.dtype();
    g.values[id].shape = t.shape();
    g.values[id].shape_known = true;
    g.values[id].constant = std::move(t);
    return id;
  }
  int node(const std::string& op, std::vector<int> ins, Attributes attrs = {}) {
    Node n;
    n.name = op + std::to_string(g.nodes.size());
    n.op_type = op;
    n.inputs = std::move(ins);
    n.attrs = std::move(attrs);
    int out = g.add_value(n.name + "_out");
    n.outputs = {out};
    g.nodes.push_back(n);
    return out;
  }
};

// A torchvision-style exported flatten: Shape -> Gather(0) -> Unsqueeze -> Concat(-1) -> Reshape.
GraphBuilder exported_flatten() {
  GraphBuilder b;
  int x = b.input("x", DataType::Float32, {2, 3, 2});
  int shape = b.node("Shape", {x});
  int batch = b.node("Gather", {shape, b.constant("zero", i64({}, {0}))});
  int batch1 = b.node("Unsqueeze", {batch, b.constant("axes", i64({1}, {0}))});
  int target = b.node("Concat", {batch1, b.constant("minus_one", i64({1}, {-1}))}, attrs_of({{"axis", one(0)}}));
  int flat = b.node("Reshape", {x, target});
  b.g.outputs.push_back(b.node("Relu", {flat}));
  return b;
}

TEST(Planner, ShapeArithmeticFoldsAndReshapeAliases) {
  GraphBuilder b = exported_flatten();
  std::vector<std::unique_ptr<Op>> ops = create_ops(b.g);
  Plan plan = make_plan(b.g, {{2, 3, 2}}, infer_values(b.g, {{2, 3, 2}}, ops), ops, {});
  // Only Reshape and Relu run; Shape, Gather, Unsqueeze and Concat were computed while planning.
  ASSERT_EQ(plan.steps.size(), 2u);
  EXPECT_EQ(b.g.nodes[plan.steps[0].node].op_type, "Reshape");
  const int target = b.g.nodes[plan.steps[0].node].inputs[1];
  ASSERT_EQ(plan.slots[target].storage, Storage::Folded);
  EXPECT_EQ(values<int64_t>(plan.values.values[target].folded), (std::vector<int64_t>{2, -1}));
  // The Reshape output shares the input's bytes.
  const int reshaped = b.g.nodes[plan.steps[0].node].outputs[0];
  EXPECT_EQ(plan.slots[reshaped].storage, Storage::Alias);
  EXPECT_EQ(plan.desc(reshaped).shape, (Shape{2, 6}));
}

TEST(Planner, ExportedFlattenRunsThroughASession) {
  GraphBuilder b = exported_flatten();
  Options opts;
  opts.opt_level = 0;
  auto model = std::make_shared<Model>(std::make_unique<ModelImpl>(b.g, opts, "onnx"));
  auto session = model->create_session();
  Tensor x = f32({2, 3, 2}, {1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12});
  Tensor y = session->run({{"x", x}}).at(model->outputs()[0].name);
  EXPECT_EQ(y.shape(), (Shape{2, 6}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{1, 0, 3, 0, 5, 0, 7, 0, 9, 0, 11, 0}));
}

TEST(Planner, AliasingOpCopiesWhenItsOutputIsAGraphOutput) {
  // Reshape of a graph input straight to a graph output cannot share the buffer: run() must copy.
  GraphBuilder b;
  int x = b.input("x", DataType::Int32, {2, 2});
  b.g.outputs.push_back(b.node("Reshape", {x, b.constant("s", i64({1}, {4}))}));
  Options opts;
  opts.opt_level = 0;
  auto model = std::make_shared<Model>(std::make_unique<ModelImpl>(b.g, opts, "onnx"));
  auto session = model->create_session();
  Tensor in = i32({2, 2}, {1, 2, 3, 4});
  Tensor y = session->run({{"x", in}}).at(model->outputs()[0].name);
  EXPECT_NE(y.data(), in.data());
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{1, 2, 3, 4}));
}

}  // namespace
}  // namespace ninegrid
