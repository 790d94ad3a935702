// The layout-tolerant spatial operators (pools, global pools, Resize/Upsample, Pad, Slice, ng.Crop,
// ng.Interp) on channel-blocked tensors NCHW[B]c: each runs as a one-node session twice on the same
// random data, plain and with ng.in_block = ng.out_block = B (input rearranged into blocks here, output
// rearranged back), and the two results must be bit-identical: the blocked kernels do the same float
// operations in the same order. The plain operators are themselves tested against independent
// formulations (pool_op_test, resize_test, pad_test, ...). Also: the ops refuse blocked modes they cannot
// compute, and the layout pass marks them tolerant exactly when their parameters allow it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "graph/passes/passes.h"
#include "kernels/ref/reorder_ref.h"
#include "runtime/model_impl.h"
#include "unit/blocked_test_util.h"
#include "unit/elementwise_test_util.h"

namespace ninegrid {
namespace {

using eltest::arg;
using eltest::f32;
using eltest::i64;
using eltest::konst;
using eltest::OpSpec;

using blocked_test::from_blocked;
using blocked_test::random_tensor;
using blocked_test::to_blocked;

OpSpec with_block(OpSpec spec, int64_t block) {
  spec.attrs.set("ng.in_block", Attribute::of_int(block));
  spec.attrs.set("ng.out_block", Attribute::of_int(block));
  spec.inputs[0].value = to_blocked(spec.inputs[0].value, block);
  return spec;
}

// Runs `spec` plain and blocked (1 and 2 threads) and requires the same bits.
void expect_blocked_matches_plain(const OpSpec& spec, int64_t block, const std::string& what) {
  SCOPED_TRACE(what + ", block " + std::to_string(block));
  const Tensor want = eltest::run_op(spec).at(0);
  // Every run's output is kept to the end, so that no run's output lands in memory a run before it left
  // holding the right answer (that would hide a part of the output left unwritten).
  std::vector<Tensor> kept;
  for (int threads : {1, 2, 3}) {
    OpSpec blocked = with_block(spec, block);
    blocked.threads = threads;
    Tensor got_blocked;
    try {
      got_blocked = eltest::run_op(blocked).at(0);
    } catch (const Error& e) {
      FAIL() << "blocked run failed: " << e.what();
    }
    ASSERT_EQ(got_blocked.shape(), want.shape());
    ASSERT_EQ(want.shape().size(), 4u);
    const Tensor got = from_blocked(got_blocked, block);
    const float* a = want.data_as<float>();
    const float* b = got.data_as<float>();
    int64_t bad = 0;
    for (int64_t i = 0; i < want.numel(); ++i)  // bitwise: NaNs and the sign of zero included
      if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0 && bad++ < 5)
        ADD_FAILURE() << "element " << i << ": plain " << a[i] << ", blocked " << b[i];
    EXPECT_EQ(bad, 0) << "of " << want.numel() << " (" << threads << " threads)";
    kept.push_back(got_blocked);
  }
}

std::string blocked_error(const OpSpec& spec, int64_t block) {
  try {
    eltest::run_op(with_block(spec, block));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// ---------------------------------------------------------------------------------------------------
// Pools

struct Window {
  std::vector<int64_t> kernel, strides, pads, dilations;
  bool ceil_mode = false;
  std::string auto_pad;
};

Attributes window_attrs(const Window& w) {
  Attributes a;
  a.set("kernel_shape", Attribute::of_ints(w.kernel));
  if (!w.strides.empty()) a.set("strides", Attribute::of_ints(w.strides));
  if (!w.pads.empty()) a.set("pads", Attribute::of_ints(w.pads));
  if (!w.dilations.empty()) a.set("dilations", Attribute::of_ints(w.dilations));
  if (w.ceil_mode) a.set("ceil_mode", Attribute::of_int(1));
  if (!w.auto_pad.empty()) a.set("auto_pad", Attribute::of_string(w.auto_pad));
  return a;
}

const std::vector<Window> kWindows = {
    {{3, 3}, {2, 2}, {1, 1, 1, 1}, {}, false, ""},     // MobileNet / ResNet stem
    {{2, 2}, {2, 2}, {}, {}, false, ""},               // VGG-style halving
    {{3, 3}, {2, 2}, {}, {}, true, ""},                // ceil_mode, partial last window (SqueezeNet)
    {{3, 3}, {2, 2}, {0, 1, 1, 0}, {}, true, ""},      // ceil_mode with asymmetric pads
    {{3, 3}, {1, 1}, {1, 1, 1, 1}, {}, false, ""},     // same-size 3x3 (Inception branches)
    {{2, 3}, {1, 2}, {1, 0, 0, 2}, {2, 1}, false, ""}, // dilations, uneven kernel/strides/pads
    {{5, 5}, {3, 3}, {2, 2, 2, 2}, {}, true, ""},      // ceil_mode window reaching past the end pad
    {{3, 3}, {2, 2}, {}, {}, false, "SAME_UPPER"},
    {{3, 3}, {2, 2}, {}, {}, false, "SAME_LOWER"},
    {{2, 2}, {1, 1}, {}, {}, false, "VALID"},
};

std::string window_name(const Window& w, size_t i) { return "window #" + std::to_string(i); }

TEST(BlockedPools, MaxPoolMatchesPlain) {
  const std::vector<Shape> shapes = {{2, 16, 9, 7}, {1, 48, 13, 13}, {1, 16, 1, 5}};
  int unfit = 0;
  for (size_t i = 0; i < kWindows.size(); ++i)
    for (const Shape& s : shapes) {
      OpSpec spec{"MaxPool", {arg(random_tensor(s, 1 + i))}, window_attrs(kWindows[i])};
      // Some windows do not fit the one-row input: the plain op refuses those, nothing to compare.
      if (s[2] == 1 && !eltest::error_of(spec).empty()) {
        ++unfit;
        continue;
      }
      for (int64_t block : {8, 16})
        expect_blocked_matches_plain(spec, block, "MaxPool " + window_name(kWindows[i], i) + " " + shape_str(s));
    }
  EXPECT_LE(unfit, 4);
}

TEST(BlockedPools, LargePlanesSplitInRowBands) {
  // Outputs past kParallelGrain elements, which threads split in bands of each plane's rows: 42 x 39 with
  // the ResNet stem's 3x3/2 window, 41 x 38 with the 2x2 one (bands of unequal height at 3 threads).
  const Tensor x = random_tensor({1, 32, 83, 77}, 21);
  for (size_t i : {size_t(0), size_t(1)}) {
    for (int64_t block : {8, 16}) {
      expect_blocked_matches_plain(OpSpec{"MaxPool", {arg(x)}, window_attrs(kWindows[i])}, block,
                                   "MaxPool " + window_name(kWindows[i], i));
      expect_blocked_matches_plain(OpSpec{"AveragePool", {arg(x)}, window_attrs(kWindows[i])}, block,
                                   "AveragePool " + window_name(kWindows[i], i));
    }
  }
}

TEST(BlockedPools, AveragePoolMatchesPlain) {
  const std::vector<Shape> shapes = {{2, 16, 9, 7}, {1, 32, 12, 11}};
  for (size_t i = 0; i < kWindows.size(); ++i) {
    if (!kWindows[i].dilations.empty()) continue;  // AveragePool dilations: opset 19, tested plain only
    for (const Shape& s : shapes)
      for (int include_pad : {0, 1})
        for (int64_t block : {8, 16}) {
          Attributes a = window_attrs(kWindows[i]);
          a.set("count_include_pad", Attribute::of_int(include_pad));
          OpSpec spec{"AveragePool", {arg(random_tensor(s, 2 + i))}, a};
          expect_blocked_matches_plain(spec, block,
                                       "AveragePool " + window_name(kWindows[i], i) + " " + shape_str(s) +
                                           " count_include_pad " + std::to_string(include_pad));
        }
  }
}

TEST(BlockedPools, AveragePoolWithDilations) {
  Window w{{3, 2}, {2, 1}, {1, 1, 2, 0}, {2, 3}, true, ""};
  Attributes a = window_attrs(w);
  a.set("count_include_pad", Attribute::of_int(1));
  OpSpec spec{"AveragePool", {arg(random_tensor({1, 16, 11, 10}, 3))}, a};
  spec.opset = 19;
  expect_blocked_matches_plain(spec, 8, "AveragePool dilated");
}

TEST(BlockedPools, GlobalPoolsMatchPlain) {
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"})
    for (const Shape& s : std::vector<Shape>{{2, 32, 7, 5}, {1, 16, 1, 1}, {1, 64, 20, 20}})
      for (int64_t block : {8, 16}) {
        OpSpec spec{op, {arg(random_tensor(s, 4))}, {}};
        expect_blocked_matches_plain(spec, block, std::string(op) + " " + shape_str(s));
      }
}

TEST(BlockedPools, MaxPoolKeepsNaNAndZeroSignRules) {
  // max_pool_ref keeps a NaN met as a window's first tap, ignores later NaNs, and keeps the first of
  // equal zeros: the blocked kernel visits taps in the same order, so the bits agree.
  Tensor x = random_tensor({1, 16, 7, 8}, 26);
  float* p = x.data_as<float>();
  for (int64_t i = 0; i < x.numel(); i += 3) p[i] = (i / 3) % 2 ? -0.f : 0.f;
  for (int64_t i = 1; i < x.numel(); i += 11) p[i] = std::numeric_limits<float>::quiet_NaN();
  for (int64_t i = 2; i < x.numel(); i += 5) p[i] = -1.f;
  for (size_t w : {0, 2, 5}) {
    const OpSpec spec{"MaxPool", {arg(x)}, window_attrs(kWindows[w])};
    // The case means something only if some windows do give NaN and some -0.
    const Tensor plain = eltest::run_op(spec).at(0);
    int nans = 0, negative_zeros = 0;
    for (int64_t i = 0; i < plain.numel(); ++i) {
      const float v = plain.data_as<float>()[i];
      nans += std::isnan(v);
      negative_zeros += v == 0.f && std::signbit(v);
    }
    EXPECT_GT(nans, 0);
    EXPECT_GT(negative_zeros, 0);
    for (int64_t block : {8, 16}) expect_blocked_matches_plain(spec, block, "NaN and zeros, window #" + std::to_string(w));
  }
}

TEST(BlockedPools, OddBlockUsesTheRunTimeLaneLoop) {
  // Blocks other than 4, 8 and 16 take the generic lane loop: same results.
  OpSpec spec{"MaxPool", {arg(random_tensor({1, 12, 9, 9}, 5))}, window_attrs(kWindows[0])};
  expect_blocked_matches_plain(spec, 6, "MaxPool block 6");
  OpSpec avg{"AveragePool", {arg(random_tensor({1, 12, 9, 9}, 5))}, window_attrs(kWindows[2])};
  expect_blocked_matches_plain(avg, 12, "AveragePool block 12");
  OpSpec glob{"GlobalAveragePool", {arg(random_tensor({1, 12, 9, 9}, 5))}, {}};
  expect_blocked_matches_plain(glob, 6, "GlobalAveragePool block 6");
}

TEST(BlockedPools, RefusesWhatItCannotCompute) {
  OpSpec with_indices{"MaxPool", {arg(random_tensor({1, 16, 6, 6}, 6))}, window_attrs(kWindows[1])};
  with_indices.num_outputs = 2;
  EXPECT_NE(blocked_error(with_indices, 8).find("Indices"), std::string::npos) << blocked_error(with_indices, 8);

  // 12 channels cannot be stored in blocks of 8 (no data rearranged here: there is no such layout).
  OpSpec odd_channels{"MaxPool", {arg(random_tensor({1, 12, 6, 6}, 6))}, window_attrs(kWindows[1])};
  odd_channels.attrs.set("ng.in_block", Attribute::of_int(8));
  odd_channels.attrs.set("ng.out_block", Attribute::of_int(8));
  EXPECT_NE(eltest::error_of(odd_channels).find("does not divide"), std::string::npos);

  Attributes mismatched = window_attrs(kWindows[1]);
  mismatched.set("ng.in_block", Attribute::of_int(8));
  mismatched.set("ng.out_block", Attribute::of_int(16));
  EXPECT_NE(eltest::error_of({"AveragePool", {arg(random_tensor({1, 16, 6, 6}, 6))}, mismatched}).find("must be equal"),
            std::string::npos);

  Attributes pool3d;
  pool3d.set("kernel_shape", Attribute::of_ints({2, 2, 2}));
  OpSpec spec3d{"MaxPool", {arg(random_tensor({1, 16, 4, 4, 4}, 6))}, pool3d};
  spec3d.attrs.set("ng.in_block", Attribute::of_int(8));
  spec3d.attrs.set("ng.out_block", Attribute::of_int(8));
  EXPECT_NE(eltest::error_of(spec3d).find("4-D"), std::string::npos) << eltest::error_of(spec3d);
}

// ---------------------------------------------------------------------------------------------------
// Resize / Upsample

Attributes resize_attrs(const std::string& mode, const std::string& coords, const std::string& nearest = "") {
  Attributes a;
  a.set("mode", Attribute::of_string(mode));
  a.set("coordinate_transformation_mode", Attribute::of_string(coords));
  if (!nearest.empty()) a.set("nearest_mode", Attribute::of_string(nearest));
  return a;
}

OpSpec resize_by_scales(const Tensor& x, const std::vector<float>& scales, Attributes a) {
  return {"Resize", {arg(x), eltest::omitted(), konst(f32({4}, scales))}, std::move(a)};
}

OpSpec resize_by_sizes(const Tensor& x, const std::vector<int64_t>& sizes, Attributes a) {
  return {"Resize", {arg(x), eltest::omitted(), eltest::omitted(), konst(i64({4}, sizes))}, std::move(a)};
}

const char* kCoordinateModes[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                  "asymmetric"};

TEST(BlockedResize, NearestEveryRoundingAndCoordinateMode) {
  const Tensor x = random_tensor({2, 16, 5, 7}, 7);
  for (const char* coords : kCoordinateModes)
    for (const char* nearest : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})
      for (int64_t block : {8, 16}) {
        const std::string what = std::string("nearest ") + coords + " " + nearest;
        expect_blocked_matches_plain(resize_by_scales(x, {1, 1, 2, 2}, resize_attrs("nearest", coords, nearest)), block,
                                     what + " x2");
        expect_blocked_matches_plain(resize_by_scales(x, {1, 1, 0.6f, 1.5f}, resize_attrs("nearest", coords, nearest)),
                                     block, what + " x0.6/1.5");
        expect_blocked_matches_plain(resize_by_sizes(x, {2, 16, 11, 3}, resize_attrs("nearest", coords, nearest)),
                                     block, what + " sizes 11x3");
      }
}

TEST(BlockedResize, LargePlanesSplitInRowBands) {
  // Outputs past kParallelGrain elements, which threads split in bands of each plane's rows (odd heights,
  // so the bands differ in size); RetinaFace's FPN upsampling is the x2 nearest case.
  const Tensor x = random_tensor({1, 32, 21, 19}, 9);
  for (int64_t block : {8, 16}) {
    expect_blocked_matches_plain(resize_by_scales(x, {1, 1, 2, 2}, resize_attrs("nearest", "asymmetric", "floor")),
                                 block, "nearest x2");
    expect_blocked_matches_plain(resize_by_sizes(x, {1, 32, 43, 37}, resize_attrs("linear", "half_pixel", "floor")),
                                 block, "linear to 43x37");
  }
}

TEST(BlockedResize, LinearAndCubicEveryCoordinateMode) {
  const Tensor x = random_tensor({1, 32, 6, 9}, 8);
  for (const char* mode : {"linear", "cubic"})
    for (const char* coords : kCoordinateModes)
      for (int64_t block : {8, 16}) {
        const std::string what = std::string(mode) + " " + coords;
        expect_blocked_matches_plain(resize_by_scales(x, {1, 1, 2, 2}, resize_attrs(mode, coords)), block,
                                     what + " x2");
        expect_blocked_matches_plain(resize_by_scales(x, {1, 1, 0.5f, 1.7f}, resize_attrs(mode, coords)), block,
                                     what + " x0.5/1.7");
        expect_blocked_matches_plain(resize_by_sizes(x, {1, 32, 13, 4}, resize_attrs(mode, coords)), block,
                                     what + " sizes 13x4");
      }
}

TEST(BlockedResize, TfCropAndResizeWithHeightWidthRoi) {
  const Tensor x = random_tensor({1, 16, 8, 8}, 9);
  Attributes a = resize_attrs("linear", "tf_crop_and_resize");
  a.set("extrapolation_value", Attribute::of_float(-7.f));
  OpSpec spec{"Resize",
              {arg(x), konst(f32({8}, {0, 0, -0.2f, 0.1f, 1, 1, 0.9f, 1.3f})), konst(f32({4}, {1, 1, 1.5f, 2}))},
              a};
  expect_blocked_matches_plain(spec, 8, "tf_crop_and_resize");
}

TEST(BlockedResize, LegacyUpsampleAndResize10AndAxes) {
  const Tensor x = random_tensor({1, 16, 5, 6}, 10);
  Attributes nearest, linear;
  nearest.set("mode", Attribute::of_string("nearest"));
  linear.set("mode", Attribute::of_string("linear"));
  OpSpec up{"Upsample", {arg(x), konst(f32({4}, {1, 1, 2, 3}))}, nearest};
  up.opset = 9;
  expect_blocked_matches_plain(up, 16, "Upsample nearest");
  up.attrs = linear;
  expect_blocked_matches_plain(up, 8, "Upsample linear");
  OpSpec r10{"Resize", {arg(x), konst(f32({4}, {1, 1, 0.5f, 2.5f}))}, nearest};
  r10.opset = 10;
  expect_blocked_matches_plain(r10, 8, "Resize-10 nearest");
  // Opset 18 axes: only height and width listed.
  Attributes axes = resize_attrs("linear", "half_pixel");
  axes.set("axes", Attribute::of_ints({2, 3}));
  OpSpec r18{"Resize", {arg(x), eltest::omitted(), konst(f32({2}, {1.5f, 0.7f}))}, axes};
  r18.opset = 18;
  expect_blocked_matches_plain(r18, 16, "Resize-18 axes");
}

TEST(BlockedResize, RefusesChannelOrBatchResampling) {
  const Tensor x = random_tensor({1, 16, 4, 4}, 11);
  // Scale 1.05 keeps 16 channels (floor(16.8)) but maps channel c to c / 1.05: not a channel-preserving op.
  EXPECT_NE(blocked_error(resize_by_scales(x, {1, 1.05f, 2, 2}, resize_attrs("nearest", "asymmetric")), 8)
                .find("channel"),
            std::string::npos);
  // tf_half_pixel_for_nn with round_prefer_ceil reads channel c + 1 even at scale 1.
  EXPECT_NE(blocked_error(resize_by_scales(x, {1, 1, 2, 2},
                                           resize_attrs("nearest", "tf_half_pixel_for_nn", "round_prefer_ceil")),
                          8)
                .find("channel"),
            std::string::npos);
}

// ---------------------------------------------------------------------------------------------------
// Concat on channels with every input blocked (the layout pass records the block as ng.out_block); past
// 256 KiB threads copy it in bands of each plane's rows.

TEST(BlockedConcat, ChannelConcatOfBlockedInputsMatchesPlain) {
  for (int64_t block : {8, 16}) {
    for (const Shape& hw : {Shape{5, 7}, Shape{41, 37}}) {
      std::vector<Tensor> inputs;
      OpSpec plain{"Concat", {}, {}};
      plain.attrs.set("axis", Attribute::of_int(1));
      unsigned seed = 30;
      for (int64_t c : {16, 32, 16}) {
        inputs.push_back(random_tensor({1, c, hw[0], hw[1]}, ++seed));
        plain.inputs.push_back(arg(inputs.back()));
      }
      const Tensor want = eltest::run_op(plain).at(0);
      SCOPED_TRACE("block " + std::to_string(block) + ", planes " + shape_str(hw));
      std::vector<Tensor> kept;  // no run's output may land where an earlier one left the right answer
      for (int threads : {1, 2, 3}) {
        OpSpec blocked = plain;
        blocked.threads = threads;
        blocked.attrs.set("ng.out_block", Attribute::of_int(block));
        for (size_t i = 0; i < inputs.size(); ++i) blocked.inputs[i].value = to_blocked(inputs[i], block);
        const Tensor got_blocked = eltest::run_op(blocked).at(0);
        const Tensor got = from_blocked(got_blocked, block);
        ASSERT_EQ(got.shape(), want.shape());
        EXPECT_EQ(std::memcmp(got.data(), want.data(), want.nbytes()), 0) << threads << " threads";
        kept.push_back(got_blocked);
      }
    }
  }
}

TEST(BlockedInterp, NcnnInterpEveryTypeMatchesPlain) {
  struct Case {
    int type;
    std::vector<float> scales;
    std::vector<int64_t> size;
    int align;
  };
  const std::vector<Case> cases = {
      {1, {3.f, 1.5f}, {0, 0}, 0}, {1, {1, 1}, {7, 13}, 0},  {2, {2.f, 2.f}, {0, 0}, 0}, {2, {1, 1}, {9, 4}, 1},
      {2, {0.5f, 3.f}, {0, 0}, 0}, {3, {2.f, 1.7f}, {0, 0}, 0}, {3, {1, 1}, {11, 3}, 1}, {2, {1, 1}, {5, 8}, 0},
  };
  for (const Shape& shape : std::vector<Shape>{{1, 32, 5, 8}, {2, 16, 3, 2}})
    for (size_t i = 0; i < cases.size(); ++i)
      for (int64_t block : {8, 16}) {
        Attributes a;
        a.set("resize_type", Attribute::of_int(cases[i].type));
        a.set("scales", Attribute::of_floats(cases[i].scales));
        a.set("output_size", Attribute::of_ints(cases[i].size));
        a.set("align_corner", Attribute::of_int(cases[i].align));
        OpSpec spec{"ng.Interp", {arg(random_tensor(shape, 30 + i))}, a};
        expect_blocked_matches_plain(spec, block, "Interp case " + std::to_string(i) + " " + shape_str(shape));
      }
}

// ---------------------------------------------------------------------------------------------------
// Pad and ng.Crop

OpSpec pad_spec(const Tensor& x, const std::string& mode, const std::vector<int64_t>& pads, float value) {
  Attributes a;
  a.set("mode", Attribute::of_string(mode));
  OpSpec s{"Pad", {arg(x), konst(i64({static_cast<int64_t>(pads.size())}, pads))}, a};
  if (mode == "constant") s.inputs.push_back(konst(f32({}, {value})));
  return s;
}

TEST(BlockedPad, SpatialModesMatchPlain) {
  const Tensor x = random_tensor({2, 16, 5, 6}, 12);
  const std::vector<std::vector<int64_t>> pads = {
      {0, 0, 1, 1, 0, 0, 1, 1}, {0, 0, 2, 0, 0, 0, 0, 3}, {0, 0, 0, 0, 0, 0, 3, 4}, {0, 0, -1, 2, 0, 0, 1, -2},
      {0, 0, 4, 5, 0, 0, 4, 5}};
  for (const char* mode : {"constant", "edge", "reflect", "wrap"})
    for (size_t i = 0; i < pads.size(); ++i)
      for (int64_t block : {8, 16}) {
        expect_blocked_matches_plain(pad_spec(x, mode, pads[i], 2.5f), block,
                                     std::string("Pad ") + mode + " #" + std::to_string(i));
      }
  // Opset 18 axes.
  OpSpec axes{"Pad", {arg(x), konst(i64({4}, {1, 2, 0, 1})), konst(f32({}, {-1.f})), konst(i64({2}, {-2, 3}))}, {}};
  expect_blocked_matches_plain(axes, 8, "Pad axes");
}

TEST(BlockedPad, RefusesChannelPadding) {
  const Tensor x = random_tensor({1, 16, 4, 4}, 13);
  EXPECT_NE(blocked_error(pad_spec(x, "constant", {0, 8, 0, 0, 0, 0, 0, 0}, 0.f), 8).find("channel"),
            std::string::npos);
}

TEST(BlockedCrop, HeightWidthCropsMatchPlain) {
  const Tensor x = random_tensor({1, 32, 21, 20}, 14);
  // Reference mode, as RetinaFace's FPN crops the upsampled map to the lateral one.
  const Tensor ref = random_tensor({1, 32, 20, 19}, 15);
  Attributes reference;
  reference.set("mode", Attribute::of_string("reference"));
  reference.set("offsets", Attribute::of_ints({0, 0, 1, 0}));
  for (int64_t block : {8, 16})
    expect_blocked_matches_plain({"ng.Crop", {arg(x), arg(ref)}, reference}, block, "Crop reference");
  Attributes offsets;
  offsets.set("mode", Attribute::of_string("offsets"));
  offsets.set("offsets", Attribute::of_ints({0, 0, 3, 2}));
  offsets.set("end_offsets", Attribute::of_ints({0, 0, 1, 5}));
  for (int64_t block : {8, 16})
    expect_blocked_matches_plain({"ng.Crop", {arg(x)}, offsets}, block, "Crop offsets");
  Attributes slice;
  slice.set("mode", Attribute::of_string("slice"));
  slice.set("starts", Attribute::of_ints({-5, 2}));
  slice.set("ends", Attribute::of_ints({-233, -1}));
  slice.set("axes", Attribute::of_ints({1, 2}));
  expect_blocked_matches_plain({"ng.Crop", {arg(x)}, slice}, 16, "Crop slice");
}

TEST(BlockedCrop, RefusesChannelCrops) {
  const Tensor x = random_tensor({1, 32, 6, 6}, 16);
  Attributes offsets;
  offsets.set("mode", Attribute::of_string("offsets"));
  offsets.set("offsets", Attribute::of_ints({16, 0, 0, 0}));
  EXPECT_NE(blocked_error({"ng.Crop", {arg(x)}, offsets}, 16).find("channel"), std::string::npos);
}

OpSpec slice_spec(const Tensor& x, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                  const std::vector<int64_t>& axes, const std::vector<int64_t>& steps) {
  const int64_t n = static_cast<int64_t>(starts.size());
  return {"Slice",
          {arg(x), konst(i64({n}, starts)), konst(i64({n}, ends)), konst(i64({n}, axes)), konst(i64({n}, steps))},
          {}};
}

TEST(BlockedSlice, HeightWidthSlicesMatchPlain) {
  const Tensor x = random_tensor({2, 32, 11, 10}, 17);
  for (int64_t block : {8, 16}) {
    // RetinaFace's ONNX export crops the upsampled map with one Slice per axis (whole channels included).
    expect_blocked_matches_plain(slice_spec(x, {0}, {32}, {1}, {1}), block, "whole channels");
    expect_blocked_matches_plain(slice_spec(x, {1, 2}, {10, 9}, {2, 3}, {1, 1}), block, "box");
    expect_blocked_matches_plain(slice_spec(x, {0, -1}, {100, -100}, {-2, -1}, {3, -2}), block, "strided, reversed");
    expect_blocked_matches_plain(slice_spec(x, {0, 0, 4}, {2, 32, 5}, {0, 1, 2}, {1, 1, 1}), block, "one row");
  }
}

TEST(BlockedSlice, RefusesChannelSlices) {
  const Tensor x = random_tensor({1, 32, 4, 4}, 18);
  EXPECT_NE(blocked_error(slice_spec(x, {0}, {16}, {1}, {1}), 16).find("channel"), std::string::npos);
  EXPECT_NE(blocked_error(slice_spec(x, {-1}, {-100}, {1}, {-1}), 16).find("channel"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------------
// The layout pass: which of these ops it keeps blocked

// x [1, 3, 12, 12] -> Conv (16 channels) -> c -> the op under test -> y -> 1x1 Conv -> z (graph output).
// The op is added by the caller between "c" and "y"; `y_channels` is its output's channel count.
struct LayoutCase {
  Graph g;
  std::mt19937 rng{21};

  int value(const std::string& name) {
    const int id = g.find_value(name);
    return id >= 0 ? id : g.add_value(name);
  }
  int constant(const std::string& name, const Tensor& t) {
    const int id = value(name);
    g.values[id].constant = t;
    g.values[id].dtype = t.dtype();
    g.values[id].shape = t.shape();
    g.values[id].shape_known = true;
    return id;
  }
  Node& node(const std::string& op, const std::vector<std::string>& ins, const std::vector<std::string>& outs) {
    Node n;
    n.name = op + "_" + std::to_string(g.nodes.size());
    n.op_type = op;
    for (const auto& i : ins) n.inputs.push_back(i.empty() ? -1 : value(i));
    for (const auto& o : outs) n.outputs.push_back(value(o));
    g.nodes.push_back(n);
    return g.nodes.back();
  }
  LayoutCase() {
    const int x = value("x");
    g.values[x].dtype = DataType::Float32;
    g.values[x].shape = {1, 3, 12, 12};
    g.values[x].shape_known = true;
    g.inputs.push_back(x);
    constant("w1", random_tensor({16, 3, 3, 3}, 22));
    node("Conv", {"x", "w1"}, {"c"}).attrs.set("pads", Attribute::of_ints({1, 1, 1, 1}));
  }
  void finish(int64_t y_channels) {
    constant("w2", random_tensor({16, y_channels, 1, 1}, 23));
    node("Conv", {"y", "w2"}, {"z"});
    g.outputs.push_back(value("z"));
  }
};

int reorders(const Graph& g) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.op_type == "ng.Reorder";
  return n;
}

const Node* find_op(const Graph& g, const std::string& op) {
  for (const Node& n : g.nodes)
    if (n.op_type == op) return &n;
  return nullptr;
}

// Plans the layout with blocks of 16 and checks: the op under test and its input are blocked
// (ng.in_block 16) or both plain; and the planned graph computes what the unplanned one does.
void expect_layout(LayoutCase& lc, const std::string& op, bool tolerant) {
  SCOPED_TRACE(op + (tolerant ? " tolerant" : " dependent"));
  Graph planned = lc.g;
  plan_layout(planned, 16);
  const Node* n = find_op(planned, op);
  ASSERT_NE(n, nullptr);
  // The first conv's only reader is the op under test: the conv writes the op's layout directly, so no
  // reorder is needed either way; what differs is the layout chosen.
  const Node* conv = find_op(planned, "Conv");
  ASSERT_TRUE(conv && conv->outputs[0] == lc.g.find_value("c"));
  EXPECT_EQ(reorders(planned), 0);
  const int64_t want_block = tolerant ? 16 : 1;
  EXPECT_EQ(conv->attrs.get_int("ng.out_block", 1), want_block);
  EXPECT_EQ(n->attrs.get_int("ng.in_block", 1), want_block);
  EXPECT_EQ(n->attrs.get_int("ng.out_block", 1), want_block);
  Options o;
  o.opt_level = 0;
  auto plain = std::make_shared<Model>(std::make_unique<ModelImpl>(lc.g, o, "onnx"));
  auto blocked = std::make_shared<Model>(std::make_unique<ModelImpl>(planned, o, "onnx"));
  const Tensor x = random_tensor({1, 3, 12, 12}, 24);
  const Tensor want = plain->create_session()->run({{"x", x}}).at("z");
  const Tensor got = blocked->create_session()->run({{"x", x}}).at("z");
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < want.numel(); ++i)
    ASSERT_NEAR(got.data_as<float>()[i], want.data_as<float>()[i], 1e-4 * (1 + std::fabs(want.data_as<float>()[i])))
        << "element " << i;
}

TEST(BlockedLayoutPass, Pools) {
  {
    LayoutCase lc;
    Node& n = lc.node("MaxPool", {"c"}, {"y"});
    n.attrs = window_attrs(kWindows[0]);
    lc.finish(16);
    expect_layout(lc, "MaxPool", true);
  }
  {
    LayoutCase lc;
    Node& n = lc.node("AveragePool", {"c"}, {"y"});
    n.attrs = window_attrs(kWindows[3]);
    lc.finish(16);
    expect_layout(lc, "AveragePool", true);
  }
  {
    // The Indices output is a plain-layout index: the pool stays plain.
    LayoutCase lc;
    Node& n = lc.node("MaxPool", {"c"}, {"y", "indices"});
    n.attrs = window_attrs(kWindows[1]);
    lc.g.outputs.push_back(lc.value("indices"));
    lc.finish(16);
    expect_layout(lc, "MaxPool", false);
  }
  {
    // A global pool's [1, 16, 1, 1] output has the same bytes in every layout: Flatten reads it as is.
    LayoutCase lc;
    lc.node("GlobalAveragePool", {"c"}, {"y"});
    lc.node("Flatten", {"y"}, {"f"});
    lc.g.outputs.push_back(lc.value("f"));
    lc.finish(16);
    expect_layout(lc, "GlobalAveragePool", true);
  }
}

TEST(BlockedLayoutPass, Resize) {
  auto resize = [](const std::vector<float>& scales, const std::string& coords, const std::string& nearest) {
    auto lc = std::make_unique<LayoutCase>();
    lc->constant("scales", f32({4}, scales));
    Node& n = lc->node("Resize", {"c", "", "scales"}, {"y"});
    n.attrs = resize_attrs("nearest", coords, nearest);
    lc->finish(16);
    return lc;
  };
  expect_layout(*resize({1, 1, 2, 2}, "asymmetric", "floor"), "Resize", true);
  expect_layout(*resize({1, 1, 0.5f, 1.5f}, "half_pixel", "round_prefer_ceil"), "Resize", true);
  // 16 channels stay 16 at scale 1.05, but channel c then reads channel c / 1.05.
  expect_layout(*resize({1, 1.05f, 2, 2}, "asymmetric", "floor"), "Resize", false);
  // At scale 1 this mode still maps channel c to c + 1 (x + 0.5 rounded up).
  expect_layout(*resize({1, 1, 2, 2}, "tf_half_pixel_for_nn", "round_prefer_ceil"), "Resize", false);
  {
    LayoutCase lc;
    lc.constant("sizes", i64({4}, {1, 16, 7, 30}));
    Node& n = lc.node("Resize", {"c", "", "", "sizes"}, {"y"});
    n.attrs = resize_attrs("linear", "align_corners");
    lc.finish(16);
    expect_layout(lc, "Resize", true);
  }
}

TEST(BlockedLayoutPass, PadSliceCrop) {
  {
    LayoutCase lc;
    lc.constant("pads", i64({8}, {0, 0, 1, 2, 0, 0, 3, 0}));
    lc.node("Pad", {"c", "pads"}, {"y"}).attrs.set("mode", Attribute::of_string("reflect"));
    lc.finish(16);
    expect_layout(lc, "Pad", true);
  }
  {
    LayoutCase lc;
    lc.constant("pads", i64({8}, {0, 8, 0, 0, 0, 0, 0, 0}));
    lc.node("Pad", {"c", "pads"}, {"y"});
    lc.finish(24);
    expect_layout(lc, "Pad", false);
  }
  {
    LayoutCase lc;
    lc.constant("starts", i64({2}, {1, -1}));
    lc.constant("ends", i64({2}, {11, 0}));
    lc.constant("axes", i64({2}, {2, 3}));
    lc.constant("steps", i64({2}, {2, -1}));
    lc.node("Slice", {"c", "starts", "ends", "axes", "steps"}, {"y"});
    lc.finish(16);
    expect_layout(lc, "Slice", true);
  }
  {
    // Channels reversed: same count, different order.
    LayoutCase lc;
    lc.constant("starts", i64({1}, {-1}));
    lc.constant("ends", i64({1}, {-100}));
    lc.constant("axes", i64({1}, {1}));
    lc.constant("steps", i64({1}, {-1}));
    lc.node("Slice", {"c", "starts", "ends", "axes", "steps"}, {"y"});
    lc.finish(16);
    expect_layout(lc, "Slice", false);
  }
  {
    // The whole batch of this plan, but not "to the end": another batch size at run time would be cut.
    LayoutCase lc;
    lc.constant("starts", i64({2}, {0, 1}));
    lc.constant("ends", i64({2}, {1, 9}));
    lc.constant("axes", i64({2}, {0, 3}));
    lc.node("Slice", {"c", "starts", "ends", "axes"}, {"y"});
    lc.finish(16);
    expect_layout(lc, "Slice", false);
  }
  {
    LayoutCase lc;
    Node& n = lc.node("ng.Interp", {"c"}, {"y"});
    n.attrs.set("resize_type", Attribute::of_int(2));
    n.attrs.set("scales", Attribute::of_floats({1.5f, 3.f}));
    lc.finish(16);
    expect_layout(lc, "ng.Interp", true);
  }
  {
    // ncnn's FPN crop: the upsampled map cut to a reference map's size (read for its shape only).
    LayoutCase lc;
    lc.constant("w_ref", random_tensor({16, 16, 2, 2}, 25));
    lc.node("Conv", {"c", "w_ref"}, {"ref"});
    Node& n = lc.node("ng.Crop", {"c", "ref"}, {"y"});
    n.attrs.set("mode", Attribute::of_string("reference"));
    lc.finish(16);
    expect_layout(lc, "ng.Crop", true);
  }
}

}  // namespace
}  // namespace ninegrid
