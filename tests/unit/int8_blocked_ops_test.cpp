// The int8 operators on channel-blocked tensors NCHW[B]c, as the layout pass plans them for quantised
// models (plan_layout.cpp): each runs as a one-node session twice on the same random uint8 (or int8) data,
// plain and blocked (inputs rearranged into blocks here from the layout's definition, the output
// rearranged back), and the two results must be the same bits: integer arithmetic, and the blocked
// kernels sum and requantise exactly as the plain ones do. The plain operators are tested against
// independent formulations elsewhere (qdq_ops_test, pool_op_test, pad_test, ...).
//
// Blocks 4, 8 and 16 over channel counts that the ISA block (16) does not divide, and several blocks per
// tensor. Also: ng.Reorder on uint8 and int8 against the layout's definition, nearest Resize on int8 data
// against the float Resize, and the blocked modes the ops refuse.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>

#include "ir/quant_attrs.h"
#include "unit/blocked_test_util.h"
#include "unit/elementwise_test_util.h"

namespace ninegrid {
namespace {

using blocked_test::from_blocked;
using blocked_test::to_blocked;
using eltest::arg;
using eltest::f32;
using eltest::i64;
using eltest::konst;
using eltest::OpSpec;
using eltest::u8;

// Uniform bytes over the whole range of the type (uint8 or int8).
Tensor random_bytes(DataType t, const Shape& shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(0, 255);
  Tensor x = Tensor::empty(t, shape);
  auto* p = static_cast<uint8_t*>(x.data());
  for (int64_t i = 0; i < x.numel(); ++i) p[i] = static_cast<uint8_t>(d(rng));
  return x;
}

Tensor random_floats(const Shape& shape, unsigned seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  Tensor x = Tensor::empty(DataType::Float32, shape);
  for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] = d(rng);
  return x;
}

// How the layout pass marks a node: spatial ops (pools, Pad, Slice) get ng.in_block = ng.out_block = B,
// element-wise ones (ng.QAdd, ng.QConcat, QuantizeLinear, DequantizeLinear) ng.out_block = B only.
enum class Marks { InAndOut, OutOnly };

// `blocked_inputs`: the inputs that carry the layout (the others are parameters).
OpSpec with_block(OpSpec spec, int64_t block, Marks marks, const std::set<size_t>& blocked_inputs) {
  if (marks == Marks::InAndOut) spec.attrs.set("ng.in_block", Attribute::of_int(block));
  spec.attrs.set("ng.out_block", Attribute::of_int(block));
  for (size_t i : blocked_inputs) spec.inputs[i].value = to_blocked(spec.inputs[i].value, block);
  return spec;
}

// Runs `spec` plain and blocked (1, 2 and 3 threads) and requires the same bytes.
void expect_blocked_matches_plain(const OpSpec& spec, int64_t block, Marks marks, const std::string& what,
                                  const std::set<size_t>& blocked_inputs = {0}) {
  SCOPED_TRACE(what + ", block " + std::to_string(block));
  const Tensor want = eltest::run_op(spec).at(0);
  ASSERT_EQ(want.shape().size(), 4u);
  // Every run's output is kept to the end, so that no run's output lands in memory a run before it left
  // holding the right answer (that would hide a part of the output left unwritten).
  std::vector<Tensor> kept;
  for (int threads : {1, 2, 3}) {
    OpSpec blocked = with_block(spec, block, marks, blocked_inputs);
    blocked.threads = threads;
    Tensor got_blocked;
    try {
      got_blocked = eltest::run_op(blocked).at(0);
    } catch (const Error& e) {
      FAIL() << "blocked run failed: " << e.what();
    }
    ASSERT_EQ(got_blocked.shape(), want.shape());
    ASSERT_EQ(got_blocked.dtype(), want.dtype());
    // A [N, C, 1, 1] output has the same bytes in every layout: from_blocked is the identity there.
    const Tensor got = from_blocked(got_blocked, block);
    const size_t elem = dtype_size(want.dtype());
    const auto* a = static_cast<const unsigned char*>(want.data());
    const auto* b = static_cast<const unsigned char*>(got.data());
    int64_t bad = 0;
    for (int64_t i = 0; i < want.numel(); ++i)
      if (std::memcmp(a + i * elem, b + i * elem, elem) != 0 && bad++ < 5)
        ADD_FAILURE() << "element " << i << " differs (" << threads << " threads)";
    EXPECT_EQ(bad, 0) << "of " << want.numel() << " (" << threads << " threads)";
    kept.push_back(got_blocked);
  }
}

std::string blocked_error(const OpSpec& spec, int64_t block, Marks marks, const std::set<size_t>& blocked_inputs = {0}) {
  return eltest::error_of(with_block(spec, block, marks, blocked_inputs));
}

// Shapes and the blocks that divide their channels: 24 and 40 channels take 8 and 4 but not 16 (as under
// AVX-512 a 24-channel tensor is blocked by 8), 20 and 12 only 4; every case has several blocks.
struct BlockedShape {
  Shape shape;
  std::vector<int64_t> blocks;
};
const std::vector<BlockedShape> kShapes = {
    {{2, 24, 9, 7}, {4, 8}}, {{1, 48, 13, 11}, {4, 8, 16}}, {{1, 20, 6, 5}, {4}}, {{1, 40, 5, 8}, {4, 8}}};

struct Window {
  std::vector<int64_t> kernel, strides, pads, dilations;
  bool ceil_mode = false;
};

Attributes window_attrs(const Window& w) {
  Attributes a;
  a.set("kernel_shape", Attribute::of_ints(w.kernel));
  if (!w.strides.empty()) a.set("strides", Attribute::of_ints(w.strides));
  if (!w.pads.empty()) a.set("pads", Attribute::of_ints(w.pads));
  if (!w.dilations.empty()) a.set("dilations", Attribute::of_ints(w.dilations));
  if (w.ceil_mode) a.set("ceil_mode", Attribute::of_int(1));
  return a;
}

const std::vector<Window> kWindows = {
    {{3, 3}, {2, 2}, {1, 1, 1, 1}, {}, false},    // ResNet's stem pool
    {{2, 2}, {2, 2}, {}, {}, false},              // halving
    {{3, 3}, {2, 2}, {}, {}, true},               // ceil_mode, partial last window (SqueezeNet)
    {{3, 3}, {2, 2}, {0, 1, 1, 0}, {}, true},     // ceil_mode with asymmetric pads
    {{3, 3}, {1, 1}, {1, 1, 1, 1}, {}, false},    // same size
    {{2, 3}, {1, 2}, {1, 0, 0, 2}, {2, 1}, false},  // dilations, uneven kernel, strides and pads
    {{5, 5}, {3, 3}, {2, 2, 2, 2}, {}, true},     // windows reaching past the end pad
};

// ---------------------------------------------------------------------------------------------------
// Pools

TEST(Int8BlockedPools, MaxPoolOnUint8AndInt8MatchesPlain) {
  for (DataType t : {DataType::UInt8, DataType::Int8})
    for (size_t w = 0; w < kWindows.size(); ++w)
      for (size_t s = 0; s < kShapes.size(); ++s) {
        OpSpec spec{"MaxPool", {arg(random_bytes(t, kShapes[s].shape, 10 + w + 7 * s))}, window_attrs(kWindows[w])};
        for (int64_t block : kShapes[s].blocks)
          expect_blocked_matches_plain(spec, block, Marks::InAndOut,
                                       std::string(dtype_name(t)) + " MaxPool window #" + std::to_string(w) + " " +
                                           shape_str(kShapes[s].shape));
      }
}

TEST(Int8BlockedPools, GlobalMaxPoolOnUint8AndInt8MatchesPlain) {
  for (DataType t : {DataType::UInt8, DataType::Int8})
    for (size_t s = 0; s < kShapes.size(); ++s)
      for (int64_t block : kShapes[s].blocks)
        expect_blocked_matches_plain({"GlobalMaxPool", {arg(random_bytes(t, kShapes[s].shape, 30 + s))}, {}}, block,
                                     Marks::InAndOut, std::string(dtype_name(t)) + " GlobalMaxPool " +
                                                          shape_str(kShapes[s].shape));
}

// Quantisation parameters of the average pools: zero points at both ends and in between, and output
// scales that make some results saturate.
struct AverageQuant {
  float x_scale, y_scale;
  int64_t x_zero_point, y_zero_point;
};
const std::vector<AverageQuant> kAverageQuants = {{0.02f, 0.02f, 128, 128}, {0.05f, 0.013f, 0, 255},
                                                  {0.011f, 0.03f, 255, 0}, {0.1f, 0.07f, 37, 201}};

Attributes with_average_quant(Attributes a, const AverageQuant& q) {
  TensorQuant x{q.x_scale, static_cast<int32_t>(q.x_zero_point)}, y{q.y_scale, static_cast<int32_t>(q.y_zero_point)};
  write_tensor_quant(x, "x", a);
  write_tensor_quant(y, "y", a);
  return a;
}

TEST(Int8BlockedPools, QAveragePoolMatchesPlain) {
  for (size_t w = 0; w < kWindows.size(); ++w) {
    if (!kWindows[w].dilations.empty()) continue;  // AveragePool's dilations (opset 19): not in QDQ models
    for (size_t s = 0; s < kShapes.size(); ++s)
      for (int include_pad : {0, 1}) {
        const AverageQuant& q = kAverageQuants[(w + s + include_pad) % kAverageQuants.size()];
        Attributes a = window_attrs(kWindows[w]);
        a.set("count_include_pad", Attribute::of_int(include_pad));
        OpSpec spec{"ng.QAveragePool", {arg(random_bytes(DataType::UInt8, kShapes[s].shape, 50 + w + 7 * s))},
                    with_average_quant(a, q)};
        for (int64_t block : kShapes[s].blocks)
          expect_blocked_matches_plain(spec, block, Marks::InAndOut,
                                       "QAveragePool window #" + std::to_string(w) + " " +
                                           shape_str(kShapes[s].shape) + " count_include_pad " +
                                           std::to_string(include_pad));
      }
  }
}

TEST(Int8BlockedPools, PoolsOnPlanesThreadsSplitInRowBands) {
  // Outputs past the parallel grain (3x3/2 window: 42 x 39 from 83 x 77), split in bands of rows.
  const Tensor x = random_bytes(DataType::UInt8, {1, 32, 83, 77}, 22);
  for (int64_t block : {8, 16}) {
    expect_blocked_matches_plain(OpSpec{"MaxPool", {arg(x)}, window_attrs(kWindows[0])}, block, Marks::InAndOut,
                                 "uint8 MaxPool 3x3/2");
    expect_blocked_matches_plain(
        OpSpec{"ng.QAveragePool", {arg(x)}, with_average_quant(window_attrs(kWindows[0]), kAverageQuants[0])}, block,
        Marks::InAndOut, "QAveragePool 3x3/2");
  }
}

TEST(Int8BlockedPools, QGlobalAveragePoolMatchesPlain) {
  for (size_t s = 0; s < kShapes.size(); ++s)
    for (size_t qi = 0; qi < kAverageQuants.size(); ++qi)
      for (int64_t block : kShapes[s].blocks) {
        OpSpec spec{"ng.QGlobalAveragePool", {arg(random_bytes(DataType::UInt8, kShapes[s].shape, 70 + s))},
                    with_average_quant({}, kAverageQuants[qi])};
        expect_blocked_matches_plain(spec, block, Marks::InAndOut,
                                     "QGlobalAveragePool " + shape_str(kShapes[s].shape) + " quant #" +
                                         std::to_string(qi));
      }
  // Planes longer than the blocked kernel's 16-bit runs of 257 pixels (two whole runs and a part), random and
  // all 255 (every run's sums at 65535).
  const Shape large = {1, 16, 23, 29};
  Tensor full = Tensor::empty(DataType::UInt8, large);
  for (int64_t i = 0; i < full.numel(); ++i) static_cast<uint8_t*>(full.data())[i] = 255;
  for (size_t qi = 0; qi < kAverageQuants.size(); ++qi)
    for (const Tensor& x : {random_bytes(DataType::UInt8, large, 75), full})
      for (int64_t block : {4, 8, 16}) {
        OpSpec spec{"ng.QGlobalAveragePool", {arg(x)}, with_average_quant({}, kAverageQuants[qi])};
        expect_blocked_matches_plain(spec, block, Marks::InAndOut, "QGlobalAveragePool " + shape_str(large) +
                                                                       " quant #" + std::to_string(qi));
      }
}

// ---------------------------------------------------------------------------------------------------
// Pad and Slice on int8 data

TEST(Int8BlockedSpatial, PadMatchesPlain) {
  const std::vector<std::vector<int64_t>> pads = {
      {0, 0, 1, 1, 0, 0, 1, 1}, {0, 0, 2, 0, 0, 0, 0, 3}, {0, 0, -1, 2, 0, 0, 1, -2}, {0, 0, 4, 5, 0, 0, 4, 5}};
  for (DataType t : {DataType::UInt8, DataType::Int8}) {
    const Tensor x = random_bytes(t, {2, 24, 5, 6}, 90);
    Tensor fill = Tensor::empty(t, {});
    *static_cast<uint8_t*>(fill.data()) = 201;  // a fill value no lane would get by accident
    for (const char* mode : {"constant", "edge", "reflect", "wrap"})
      for (size_t i = 0; i < pads.size(); ++i) {
        Attributes a;
        a.set("mode", Attribute::of_string(mode));
        OpSpec spec{"Pad", {arg(x), konst(i64({8}, pads[i]))}, a};
        if (std::string(mode) == "constant") spec.inputs.push_back(konst(fill));
        for (int64_t block : {4, 8})
          expect_blocked_matches_plain(spec, block, Marks::InAndOut,
                                       std::string(dtype_name(t)) + " Pad " + mode + " #" + std::to_string(i));
      }
  }
}

TEST(Int8BlockedSpatial, SliceMatchesPlain) {
  auto slice = [](const Tensor& x, std::vector<int64_t> starts, std::vector<int64_t> ends, std::vector<int64_t> axes,
                  std::vector<int64_t> steps) {
    const int64_t n = static_cast<int64_t>(starts.size());
    return OpSpec{"Slice",
                  {arg(x), konst(i64({n}, starts)), konst(i64({n}, ends)), konst(i64({n}, axes)), konst(i64({n}, steps))},
                  {}};
  };
  for (DataType t : {DataType::UInt8, DataType::Int8}) {
    const Tensor x = random_bytes(t, {2, 40, 11, 10}, 91);
    for (int64_t block : {4, 8}) {
      const std::string name = std::string(dtype_name(t)) + " Slice ";
      expect_blocked_matches_plain(slice(x, {0}, {40}, {1}, {1}), block, Marks::InAndOut, name + "whole channels");
      expect_blocked_matches_plain(slice(x, {1, 2}, {10, 9}, {2, 3}, {1, 1}), block, Marks::InAndOut, name + "box");
      expect_blocked_matches_plain(slice(x, {0, -1}, {100, -100}, {-2, -1}, {3, -2}), block, Marks::InAndOut,
                                   name + "strided, reversed");
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// Nearest Resize on int8 data: a gather of bytes (kernels/ref/resize_nearest_ref.h), against its float
// twin (resize_ref: the float Resize of the same values, which copies each element too), then blocked
// against plain.

struct NearestCase {
  const char* name;
  std::vector<float> scales;  // or, when empty, sizes of height and width
  std::vector<int64_t> sizes_hw;
  const char* coords;
  const char* rounding;
  int opset = 0;
};
const std::vector<NearestCase> kNearest = {
    {"2x asymmetric floor (PyTorch's nearest)", {1, 1, 2, 2}, {}, "asymmetric", "floor"},
    {"2x half_pixel round_prefer_floor", {1, 1, 2, 2}, {}, "half_pixel", "round_prefer_floor"},
    {"1.5x align_corners ceil", {1, 1, 1.5f, 1.5f}, {}, "align_corners", "ceil"},
    {"down 0.5 x 0.75 round_prefer_ceil", {1, 1, 0.5f, 0.75f}, {}, "half_pixel", "round_prefer_ceil"},
    {"sizes 13x4 pytorch_half_pixel", {}, {13, 4}, "pytorch_half_pixel", "round_prefer_floor"},
    {"Resize-10 3x2", {1, 1, 3, 2}, {}, "", "", 10},
};

OpSpec nearest_spec(const NearestCase& c, const Tensor& x) {
  Attributes a;
  a.set("mode", Attribute::of_string("nearest"));
  if (c.opset == 10) return OpSpec{"Resize", {arg(x), konst(f32({4}, c.scales))}, a, 1, 10};
  a.set("coordinate_transformation_mode", Attribute::of_string(c.coords));
  a.set("nearest_mode", Attribute::of_string(c.rounding));
  if (!c.scales.empty()) return OpSpec{"Resize", {arg(x), eltest::omitted(), konst(f32({4}, c.scales))}, a};
  const Shape& s = x.shape();
  return OpSpec{"Resize",
                {arg(x), eltest::omitted(), eltest::omitted(), konst(i64({4}, {s[0], s[1], c.sizes_hw[0], c.sizes_hw[1]}))},
                a};
}

TEST(Int8Resize, NearestOnBytesGivesTheFloatResizesValues) {
  for (DataType t : {DataType::UInt8, DataType::Int8})
    for (const NearestCase& c : kNearest)
      for (const Shape& shape : {Shape{2, 3, 5, 7}, Shape{1, 17, 4, 9}}) {
        SCOPED_TRACE(std::string(dtype_name(t)) + " " + c.name + " " + shape_str(shape));
        const Tensor x = random_bytes(t, shape, 95);
        Tensor xf = Tensor::empty(DataType::Float32, shape);
        for (int64_t i = 0; i < x.numel(); ++i)
          xf.data_as<float>()[i] = t == DataType::UInt8 ? x.data_as<uint8_t>()[i] : x.data_as<int8_t>()[i];
        const Tensor want = eltest::run_op(nearest_spec(c, xf)).at(0);
        const Tensor got = eltest::run_op(nearest_spec(c, x)).at(0);
        ASSERT_EQ(got.dtype(), t);
        ASSERT_EQ(got.shape(), want.shape());
        for (int64_t i = 0; i < got.numel(); ++i) {
          const float v = t == DataType::UInt8 ? got.data_as<uint8_t>()[i] : got.data_as<int8_t>()[i];
          ASSERT_EQ(v, want.data_as<float>()[i]) << "element " << i;
        }
      }
}

TEST(Int8BlockedSpatial, NearestResizeMatchesPlain) {
  for (DataType t : {DataType::UInt8, DataType::Int8})
    for (size_t i = 0; i < kNearest.size(); ++i)
      for (size_t s = 0; s < kShapes.size(); ++s)
        for (int64_t block : kShapes[s].blocks)
          expect_blocked_matches_plain(nearest_spec(kNearest[i], random_bytes(t, kShapes[s].shape, 96 + s)), block,
                                       Marks::InAndOut,
                                       std::string(dtype_name(t)) + " Resize " + kNearest[i].name + " " +
                                           shape_str(kShapes[s].shape));
}

TEST(Int8BlockedSpatial, NearestResizeOnPlanesThreadsSplitInRowBands) {
  // A 2x upsampling (RetinaFace's FPN) whose output is past the parallel grain: threads split each plane
  // in bands of rows.
  const Tensor x = random_bytes(DataType::UInt8, {1, 32, 21, 19}, 99);
  for (int64_t block : {8, 16})
    expect_blocked_matches_plain(nearest_spec(kNearest[0], x), block, Marks::InAndOut, "uint8 Resize 2x of 21x19");
}

TEST(Int8Resize, OtherModesOnBytesAreRefused) {
  Attributes a;
  a.set("mode", Attribute::of_string("linear"));
  std::string e = eltest::error_of(
      {"Resize", {arg(random_bytes(DataType::UInt8, {1, 2, 3, 3}, 97)), eltest::omitted(), konst(f32({4}, {1, 1, 2, 2}))}, a});
  EXPECT_NE(e.find("node_under_test"), std::string::npos) << e;
  EXPECT_NE(e.find("nearest mode"), std::string::npos) << e;
  a.set("mode", Attribute::of_string("nearest"));
  a.set("coordinate_transformation_mode", Attribute::of_string("tf_crop_and_resize"));
  e = eltest::error_of({"Resize",
                        {arg(random_bytes(DataType::Int8, {1, 2, 3, 3}, 98)), konst(f32({8}, {0, 0, 0, 0, 1, 1, 1, 1})),
                         konst(f32({4}, {1, 1, 2, 2}))},
                        a});
  EXPECT_NE(e.find("tf_crop_and_resize"), std::string::npos) << e;
}

// ---------------------------------------------------------------------------------------------------
// The element-wise int8 ops: the plain loop serves every layout, and they refuse what it cannot serve

Attributes qadd_attrs() {
  Attributes a;
  write_tensor_quant({0.03f, 120}, "a", a);
  write_tensor_quant({0.05f, 7}, "b", a);
  write_tensor_quant({0.06f, 131}, "y", a);
  write_qclamp({131, 250}, a);  // a fused ReLU and an upper clamp
  return a;
}

TEST(Int8BlockedElementwise, QAddMatchesPlain) {
  for (size_t s = 0; s < kShapes.size(); ++s) {
    const Shape& shape = kShapes[s].shape;
    OpSpec spec{"ng.QAdd",
                {arg(random_bytes(DataType::UInt8, shape, 100 + s)), arg(random_bytes(DataType::UInt8, shape, 110 + s))},
                qadd_attrs()};
    for (int64_t block : kShapes[s].blocks)
      expect_blocked_matches_plain(spec, block, Marks::OutOnly, "QAdd " + shape_str(shape), {0, 1});
  }
}

TEST(Int8BlockedElementwise, QAddOnPlanesThreadsSplitInRowBands) {
  // Past the parallel grain, so that threads split each plane in bands of rows (37 rows: unequal bands).
  const Shape shape{1, 32, 37, 29};
  OpSpec spec{"ng.QAdd",
              {arg(random_bytes(DataType::UInt8, shape, 120)), arg(random_bytes(DataType::UInt8, shape, 121))},
              qadd_attrs()};
  for (int64_t block : {8, 16})
    expect_blocked_matches_plain(spec, block, Marks::OutOnly, "QAdd " + shape_str(shape), {0, 1});
}

TEST(Int8BlockedElementwise, QAddRefusesBroadcastWhenBlocked) {
  OpSpec spec{"ng.QAdd",
              {arg(random_bytes(DataType::UInt8, {1, 16, 4, 4}, 120)), arg(random_bytes(DataType::UInt8, {1, 16, 1, 1}, 121))},
              qadd_attrs()};
  EXPECT_EQ(eltest::error_of(spec), "");  // plain, the broadcast is fine
  const std::string e = blocked_error(spec, 8, Marks::OutOnly);
  EXPECT_NE(e.find("node_under_test"), std::string::npos) << e;
  EXPECT_NE(e.find("output's shape"), std::string::npos) << e;
}

OpSpec qconcat_spec(const std::vector<int64_t>& channels, int64_t axis, unsigned seed, QClamp clamp = {}) {
  OpSpec spec{"ng.QConcat", {}, {}};
  std::vector<float> scales;
  std::vector<int64_t> zero_points;
  for (size_t i = 0; i < channels.size(); ++i) {
    spec.inputs.push_back(arg(random_bytes(DataType::UInt8, {2, channels[i], 5, 3}, seed + static_cast<unsigned>(i))));
    scales.push_back(i == 1 ? 0.04f : 0.02f + 0.01f * static_cast<float>(i));  // input 1 is copied as it is
    zero_points.push_back(i == 1 ? 100 : static_cast<int64_t>(40 * i));
  }
  spec.attrs.set("axis", Attribute::of_int(axis));
  spec.attrs.set("x_scales", Attribute::of_floats(scales));
  spec.attrs.set("x_zero_points", Attribute::of_ints(zero_points));
  write_tensor_quant({0.04f, 100}, "y", spec.attrs);
  write_qclamp(clamp, spec.attrs);
  return spec;
}

TEST(Int8BlockedElementwise, QConcatOnChannelsMatchesPlain) {
  const std::set<size_t> all = {0, 1, 2};
  expect_blocked_matches_plain(qconcat_spec({8, 16, 24}, 1, 130), 8, Marks::OutOnly, "QConcat 8+16+24", all);
  expect_blocked_matches_plain(qconcat_spec({8, 16, 24}, -3, 131), 4, Marks::OutOnly, "QConcat 8+16+24, axis -3", all);
  expect_blocked_matches_plain(qconcat_spec({16, 32, 16}, 1, 132), 16, Marks::OutOnly, "QConcat 16+32+16", all);
  expect_blocked_matches_plain(qconcat_spec({4, 12, 20}, 1, 133), 4, Marks::OutOnly, "QConcat 4+12+20", all);
  // A fused ReLU (qmin = the output's zero point) and a Clip's both bounds: the copied input is clamped too.
  expect_blocked_matches_plain(qconcat_spec({8, 16, 24}, 1, 134, {100, 255}), 8, Marks::OutOnly, "QConcat ReLU", all);
  expect_blocked_matches_plain(qconcat_spec({16, 32, 16}, 1, 135, {90, 160}), 16, Marks::OutOnly, "QConcat clip", all);
}

// The x86 path of the inputs that need requantising (DequantizeLinear and QuantizeLinear kernels through a
// float buffer, ops/qconcat.cpp) against the reference's table, byte for byte: planes longer than the
// op's 1024-byte chunk and shorter, finer and coarser scales (the coarser saturating), zero points at both
// ends, no clamp, a ReLU and a Clip, every instruction set the CPU runs.
#if defined(__x86_64__)
TEST(Int8BlockedElementwise, QConcatFastPathMatchesTheTable) {
  const QClamp clamps[] = {{0, 255}, {100, 255}, {90, 160}};
  for (const QClamp& clamp : clamps) {
    for (const Shape& shape : {Shape{1, 0, 33, 37}, Shape{2, 0, 5, 3}}) {
      OpSpec spec{"ng.QConcat", {}, {}};
      const std::vector<int64_t> channels = {16, 8, 24};
      const std::vector<float> scales = {0.013f, 0.04f, 0.11f};
      const std::vector<int64_t> zero_points = {0, 100, 255};
      for (size_t i = 0; i < channels.size(); ++i) {
        Shape s = shape;
        s[1] = channels[i];
        spec.inputs.push_back(arg(random_bytes(DataType::UInt8, s, 140 + static_cast<unsigned>(i))));
      }
      spec.attrs.set("axis", Attribute::of_int(1));
      spec.attrs.set("x_scales", Attribute::of_floats(scales));
      spec.attrs.set("x_zero_points", Attribute::of_ints(zero_points));
      write_tensor_quant({0.04f, 100}, "y", spec.attrs);
      write_qclamp(clamp, spec.attrs);
      spec.isa = "ref";
      const Tensor want = eltest::run_op(spec).at(0);
      for (const char* isa : {"avx2", "avx512"}) {
        spec.isa = isa;
        const Tensor got = eltest::run_op(spec).at(0);
        ASSERT_EQ(got.numel(), want.numel());
        int64_t bad = 0;
        for (int64_t i = 0; i < want.numel(); ++i) bad += got.data_as<uint8_t>()[i] != want.data_as<uint8_t>()[i];
        EXPECT_EQ(bad, 0) << isa << " " << shape_str(shape) << " clamp " << clamp.qmin << "," << clamp.qmax;
      }
    }
  }
}
#endif

TEST(Int8BlockedElementwise, QRequantizeMatchesPlain) {
  for (size_t s = 0; s < kShapes.size(); ++s) {
    Attributes a;
    write_tensor_quant({0.03f, static_cast<int32_t>(s % 2 ? 0 : 255)}, "x", a);
    write_tensor_quant({0.021f, static_cast<int32_t>(40 * s)}, "y", a);
    write_qclamp({static_cast<int32_t>(s), 250}, a);
    const OpSpec spec{"ng.QRequantize", {arg(random_bytes(DataType::UInt8, kShapes[s].shape, 136 + s))}, a};
    for (int64_t block : kShapes[s].blocks)
      expect_blocked_matches_plain(spec, block, Marks::OutOnly, "QRequantize " + shape_str(kShapes[s].shape));
  }
}

TEST(Int8BlockedElementwise, QConcatRefusesWhatTheBlockDoesNotFit) {
  // Another axis than the channels'.
  OpSpec other_axis = qconcat_spec({8, 8, 8}, 2, 140);
  EXPECT_NE(blocked_error(other_axis, 8, Marks::OutOnly, {}).find("axis 1"), std::string::npos);
  // A block that does not divide every input's channels (12 by 8).
  OpSpec odd = qconcat_spec({8, 12, 8}, 1, 141);
  odd.attrs.set("ng.out_block", Attribute::of_int(8));
  const std::string e = eltest::error_of(odd);
  EXPECT_NE(e.find("does not divide the 12 channels"), std::string::npos) << e;
}

TEST(Int8BlockedElementwise, QuantizeAndDequantizePerTensorMatchPlain) {
  for (size_t s = 0; s < kShapes.size(); ++s) {
    const Shape& shape = kShapes[s].shape;
    for (DataType t : {DataType::UInt8, DataType::Int8}) {
      Tensor zp = Tensor::empty(t, {});
      *static_cast<uint8_t*>(zp.data()) = t == DataType::UInt8 ? 131 : static_cast<uint8_t>(-9);
      // Reals reaching past both ends of the range: saturation on both sides.
      OpSpec q{"QuantizeLinear", {arg(random_floats(shape, 150 + s, -3.f, 3.f)), konst(f32({}, {0.017f})), konst(zp)}, {}};
      OpSpec dq{"DequantizeLinear", {arg(random_bytes(t, shape, 160 + s)), konst(f32({}, {0.017f})), konst(zp)}, {}};
      for (int64_t block : kShapes[s].blocks) {
        expect_blocked_matches_plain(q, block, Marks::OutOnly, std::string("QuantizeLinear to ") + dtype_name(t));
        expect_blocked_matches_plain(dq, block, Marks::OutOnly, std::string("DequantizeLinear of ") + dtype_name(t));
      }
    }
  }
}

TEST(Int8BlockedElementwise, QuantizeLinearRefusesPerAxisScalesWhenBlocked) {
  const Tensor x = random_floats({1, 8, 3, 3}, 170, -1.f, 1.f);
  OpSpec q{"QuantizeLinear",
           {arg(x), konst(f32({8}, {0.1f, 0.2f, 0.1f, 0.2f, 0.1f, 0.2f, 0.1f, 0.2f})),
            konst(u8({8}, {1, 2, 3, 4, 5, 6, 7, 8}))},
           {}};
  EXPECT_EQ(eltest::error_of(q), "");
  const std::string e = blocked_error(q, 4, Marks::OutOnly);
  EXPECT_NE(e.find("one scale for the whole tensor"), std::string::npos) << e;
}

// ---------------------------------------------------------------------------------------------------
// ng.Reorder on int8 data

TEST(Int8Reorder, EveryBlockPairMatchesTheLayoutDefinition) {
  for (DataType t : {DataType::UInt8, DataType::Int8})
    for (const Shape& shape : {Shape{2, 48, 5, 7}, Shape{1, 16, 1, 1}, Shape{3, 16, 2, 9}})
      for (int64_t from : {1, 4, 8, 16})
        for (int64_t to : {1, 4, 8, 16}) {
          SCOPED_TRACE(std::string(dtype_name(t)) + " " + shape_str(shape) + " " + std::to_string(from) + " -> " +
                       std::to_string(to));
          const Tensor plain = random_bytes(t, shape, 180);
          Attributes a;
          a.set("from_block", Attribute::of_int(from));
          a.set("to_block", Attribute::of_int(to));
          for (int threads : {1, 2}) {
            OpSpec spec{"ng.Reorder", {arg(to_blocked(plain, from))}, a};
            spec.threads = threads;
            const Tensor got = eltest::run_op(spec).at(0);
            ASSERT_EQ(got.dtype(), t);
            const Tensor want = to_blocked(plain, to);
            EXPECT_EQ(std::memcmp(got.data(), want.data(), want.nbytes()), 0);
          }
        }
}

TEST(Int8Reorder, RefusesOtherTypesAndBlocksThatDoNotDivide) {
  Attributes a;
  a.set("from_block", Attribute::of_int(1));
  a.set("to_block", Attribute::of_int(16));
  std::string e = eltest::error_of({"ng.Reorder", {arg(random_bytes(DataType::UInt8, {1, 24, 2, 2}, 190))}, a});
  EXPECT_NE(e.find("must divide the 24 channels"), std::string::npos) << e;
  e = eltest::error_of({"ng.Reorder", {arg(i64({1, 16, 1, 1}, std::vector<int64_t>(16, 3)))}, a});
  EXPECT_NE(e.find("int64"), std::string::npos) << e;
}

}  // namespace
}  // namespace ninegrid
