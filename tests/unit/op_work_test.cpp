// Ops whose work per output value grows with an attribute (a pooling window, LRN's size, a Resize's taps)
// report it in macs(), so that profile(), `ninegrid info` and bounds on the work of a run see it: a model
// of a few hundred bytes can ask for 10^11 of them with small tensors (found by fuzz/onnx_run_fuzzer).
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ops/op.h"
#include "unit/elementwise_test_util.h"

namespace ninegrid {
namespace {

using eltest::attrs_of;
using eltest::f32;

// The op for one node, its shapes inferred from `in` (X first; later inputs may carry values).
std::unique_ptr<Op> inferred(const std::string& type, const Attributes& attrs, const std::vector<TensorDesc>& in) {
  Node n;
  n.name = "n";
  n.op_type = type;
  n.attrs = attrs;
  for (size_t i = 0; i < in.size(); ++i) n.inputs.push_back(static_cast<int>(i));
  n.outputs = {static_cast<int>(in.size())};
  auto op = OpRegistry::instance().create(n);
  std::vector<TensorDesc> out(1);
  op->infer(in, out);
  return op;
}

TensorDesc shape_of(const Shape& s) { return {DataType::Float32, s, nullptr, true}; }

int64_t resize_macs(const std::string& mode, const Shape& x, const Tensor& scales) {
  return inferred("Resize", attrs_of({{"mode", Attribute::of_string(mode)}}),
                  {shape_of(x), {DataType::Float32, {}, nullptr, false}, {DataType::Float32, scales.shape(), &scales, true}})
      ->macs();
}

TEST(OpWork, ResizeCountsEveryTap) {
  // 1 x 3 x 8 x 12 outputs with height and width resampled: 2 x 2 taps (linear), 4 x 4 (cubic), 0 (copies).
  const Tensor hw = f32({4}, {1, 1, 2, 2});
  EXPECT_EQ(resize_macs("linear", {1, 3, 4, 6}, hw), 3 * 8 * 12 * 4);
  EXPECT_EQ(resize_macs("cubic", {1, 3, 4, 6}, hw), 3 * 8 * 12 * 16);
  EXPECT_EQ(resize_macs("nearest", {1, 3, 4, 6}, hw), 0);
  // Every axis resampled: 2 x 6 x 8 x 12 outputs, 2^4 taps each; only the width: 2 taps.
  EXPECT_EQ(resize_macs("linear", {1, 3, 4, 6}, f32({4}, {2, 2, 2, 2})), 2 * 6 * 8 * 12 * 16);
  EXPECT_EQ(resize_macs("linear", {1, 3, 4, 6}, f32({4}, {1, 1, 1, 3})), 3 * 4 * 18 * 2);
}

TEST(OpWork, PoolingCountsEveryWindowTap) {
  // 2 x 3 planes, a 3 x 2 window with stride 1 over 7 x 5: 5 x 4 outputs of 6 taps each.
  const Attributes a = attrs_of({{"kernel_shape", Attribute::of_ints({3, 2})}});
  for (const char* type : {"MaxPool", "AveragePool", "LpPool"})
    EXPECT_EQ(inferred(type, a, {shape_of({2, 3, 7, 5})})->macs(), 2 * 3 * 5 * 4 * 6) << type;
  // A window as large as the padded input: each of 1023 x 1023 outputs reads 512 x 512 taps.
  const Attributes big = attrs_of({{"kernel_shape", Attribute::of_ints({512, 512})},
                                   {"pads", Attribute::of_ints({511, 511, 511, 511})}});
  EXPECT_EQ(inferred("MaxPool", big, {shape_of({1, 1, 512, 512})})->macs(), int64_t(1023 * 1023) * 512 * 512);
}

TEST(OpWork, LrnCountsTheChannelsEachOutputSums) {
  // size 5 over 8 channels: up to 5 squares per output; a size beyond the channels sums them all.
  EXPECT_EQ(inferred("LRN", attrs_of({{"size", Attribute::of_int(5)}}), {shape_of({2, 8, 3, 3})})->macs(),
            2 * 8 * 9 * 5);
  EXPECT_EQ(inferred("LRN", attrs_of({{"size", Attribute::of_int(4001)}}), {shape_of({1, 40, 2, 2})})->macs(),
            40 * 4 * 40);
}

}  // namespace
}  // namespace ninegrid
