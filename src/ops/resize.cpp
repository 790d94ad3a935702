// Resize (ONNX opsets 10-19) and Upsample (opsets 7-9, the importer turns opset 7's scales attribute
// into an input) on float32, any rank, through kernels/ref/resize_ref; on uint8 and int8 (a quantised
// model's tensors) in nearest mode only. Nearest without tf_crop_and_resize, whatever the type, is a copy of
// elements (kernels/ref/resize_nearest_ref).
//
//   Resize-10:  X, scales.                 nearest (truncate / ceil when downsampling) or linear,
//                                          asymmetric coordinates (as ONNX Runtime runs this opset).
//   Resize-11+: X, roi, scales, sizes.     nearest (nearest_mode), linear, cubic (cubic_coeff_a,
//                                          exclude_outside); every coordinate_transformation_mode,
//                                          tf_crop_and_resize with extrapolation_value.
//   Resize-18+: also the axes and keep_aspect_ratio_policy attributes; antialias is refused.
//   Upsample:   X, scales.                 nearest or (bi)linear, asymmetric coordinates.
//
// The output shape follows from scales (floor(in * scale)) or sizes, so they (and roi for
// tf_crop_and_resize) must be known when the session plans: constants, computed from shapes, or computed
// from the contents of small model inputs (the session plans again when those change).
// Where only scales are given, coordinates use length_resized = in * scale before rounding, as the ONNX
// reference implementation does; with sizes, length_resized is the size.
//
// With ng.in_block = ng.out_block = B > 1 (set by the layout pass) X and Y are channel-blocked NCHW[B]c;
// the batch and channel axes must then map each index to itself (only height and width resized).
//
// With ng.add_operand = 4 (graph/passes/fuse_upsample_add.cpp, ir/fused_conv.h) a fifth input of Y's shape
// and layout is added to the result in the same pass (y = resize(x) + a, an FPN's top-down merge): nearest
// mode on float32 without tf_crop_and_resize only. A sixth input, one value per (batch, channel), gates that
// addend: y = resize(x) + (a * g + a), an FPN's lateral that is a squeeze-and-excitation residual.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/checked_math.h"
#include "ir/fused_conv.h"
#include "kernels/ref/resize_blocked_ref.h"
#include "kernels/ref/resize_nearest_add_ref.h"
#include "kernels/ref/resize_nearest_ref.h"
#include "kernels/ref/resize_ref.h"
#include "ops/blocked_layout.h"
#include "ops/elementwise_common.h"
#include "ops/op.h"
#include "core/thread_pool.h"

namespace ninegrid {
namespace {

enum class AspectPolicy { Stretch, NotLarger, NotSmaller };

constexpr size_t kAddendInput = fused::kResizeAddendInput;  // with ng.add_operand
constexpr size_t kGateInput = fused::kResizeGateInput;      // optional, with it

class Resize final : public Op {
 public:
  explicit Resize(const Node& node) : Op(node) {
    is_upsample_ = node.op_type == "Upsample";
    // Resize-10 has Upsample's two inputs and rules; opset 0 means the latest.
    legacy_ = is_upsample_ || (node.opset > 0 && node.opset < 11);
    std::string mode, coords, nearest, policy;
    int64_t antialias = 0;
    try {
      mode = node.attrs.get_string("mode", "nearest");
      coords = node.attrs.get_string("coordinate_transformation_mode", "half_pixel");
      nearest = node.attrs.get_string("nearest_mode", "round_prefer_floor");
      policy = node.attrs.get_string("keep_aspect_ratio_policy", "stretch");
      options_.cubic_a = node.attrs.get_float("cubic_coeff_a", -0.75f);
      options_.exclude_outside = node.attrs.get_int("exclude_outside", 0) != 0;
      options_.extrapolation_value = node.attrs.get_float("extrapolation_value", 0.f);
      antialias = node.attrs.get_int("antialias", 0);
      axes_attr_ = node.attrs.get_ints("axes");
    } catch (const Error& e) {
      error(e.what());
    }

    block_ = read_spatial_block(*this);

    if (mode == "nearest") options_.mode = ResizeMode::Nearest;
    else if (mode == "linear" || (is_upsample_ && mode == "bilinear")) options_.mode = ResizeMode::Linear;
    else if (mode == "cubic" && !legacy_) options_.mode = ResizeMode::Cubic;
    else error("unsupported: mode '" + mode + "'");

    if (legacy_) {
      options_.coordinates = ResizeCoordinates::Asymmetric;
      options_.rounding = NearestRounding::Simple;
      return;
    }
    if (coords == "half_pixel") options_.coordinates = ResizeCoordinates::HalfPixel;
    else if (coords == "half_pixel_symmetric") options_.coordinates = ResizeCoordinates::HalfPixelSymmetric;
    else if (coords == "pytorch_half_pixel") options_.coordinates = ResizeCoordinates::PytorchHalfPixel;
    else if (coords == "align_corners") options_.coordinates = ResizeCoordinates::AlignCorners;
    else if (coords == "asymmetric") options_.coordinates = ResizeCoordinates::Asymmetric;
    else if (coords == "tf_half_pixel_for_nn") options_.coordinates = ResizeCoordinates::TfHalfPixelForNearest;
    else if (coords == "tf_crop_and_resize") options_.coordinates = ResizeCoordinates::TfCropAndResize;
    else error("unsupported: coordinate_transformation_mode '" + coords + "'");

    if (nearest == "round_prefer_floor") options_.rounding = NearestRounding::RoundPreferFloor;
    else if (nearest == "round_prefer_ceil") options_.rounding = NearestRounding::RoundPreferCeil;
    else if (nearest == "floor") options_.rounding = NearestRounding::Floor;
    else if (nearest == "ceil") options_.rounding = NearestRounding::Ceil;
    else error("unsupported: nearest_mode '" + nearest + "'");

    if (policy == "stretch") policy_ = AspectPolicy::Stretch;
    else if (policy == "not_larger") policy_ = AspectPolicy::NotLarger;
    else if (policy == "not_smaller") policy_ = AspectPolicy::NotSmaller;
    else error("unsupported: keep_aspect_ratio_policy '" + policy + "'");

    if (antialias != 0) error("unsupported: antialias = 1");

    const int64_t add = node.attrs.get_int(fused::kAddOperand, -1);
    if (add != -1 && add != static_cast<int64_t>(kAddendInput))
      error(std::string(fused::kAddOperand) + " must be " + std::to_string(kAddendInput) +
            " (the addend input), got " + std::to_string(add));
    fused_add_ = add != -1;
    if (fused_add_ &&
        (options_.mode != ResizeMode::Nearest || options_.coordinates == ResizeCoordinates::TfCropAndResize))
      error(std::string(fused::kAddOperand) + " needs nearest mode without tf_crop_and_resize");
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    if (fused_add_) expect_inputs(in, 1, kGateInput + 1);
    else expect_inputs(in, legacy_ ? 2 : 1, legacy_ ? 2 : 4);
    elem_size_ = 4;
    if (in[0].dtype == DataType::UInt8 || in[0].dtype == DataType::Int8) {
      // Quantised tensors (graph/passes/fuse_qdq_moves.cpp): nearest only, a copy of elements.
      if (options_.mode != ResizeMode::Nearest || options_.coordinates == ResizeCoordinates::TfCropAndResize)
        error(std::string("unsupported: input X of type ") + dtype_name(in[0].dtype) +
              " other than in nearest mode without tf_crop_and_resize (float32 takes every mode)");
      elem_size_ = 1;
      expect_blockable_float_or_int8(*this, block_, in[0]);
    } else {
      expect_float(in[0], "input X");
      expect_blockable(*this, block_, in[0]);
    }
    const Shape& x = in[0].shape;
    const int rank = static_cast<int>(x.size());
    if (rank == 0) error("input X must have rank 1 or more");

    // The axes that scales / sizes / roi list (opset 18), all by default.
    std::vector<int> axes;
    for (int64_t a : axes_attr_) axes.push_back(normalize_axis(a, rank));
    if (axes.empty())
      for (int a = 0; a < rank; ++a) axes.push_back(a);
    {
      std::vector<int> sorted = axes;
      std::sort(sorted.begin(), sorted.end());
      if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) error("axes must not repeat an axis");
    }
    const size_t na = axes.size();

    const size_t scales_input = legacy_ ? 1 : 2, sizes_input = 3, roi_input = 1;
    auto given = [&](size_t i) { return i < in.size() && in[i].present && shape_numel(in[i].shape) > 0; };
    const bool has_scales = given(scales_input), has_sizes = !legacy_ && given(sizes_input);
    if (has_scales == has_sizes) error(has_scales ? "give scales or sizes, not both" : "needs scales or sizes");

    std::vector<ResizeAxis> ax(static_cast<size_t>(rank));
    for (int a = 0; a < rank; ++a) {
      ax[a].in = ax[a].out = x[a];
      ax[a].length_resized = static_cast<double>(x[a]);
    }
    if (options_.coordinates == ResizeCoordinates::TfCropAndResize) {
      const std::vector<double> roi = known_floats(in, roi_input, "roi");
      if (roi.size() != 2 * na)
        error("roi has " + std::to_string(roi.size()) + " values, expected " + std::to_string(2 * na) +
              " (starts then ends of " + std::to_string(na) + " axes)");
      for (size_t i = 0; i < na; ++i) ax[axes[i]].roi_start = roi[i], ax[axes[i]].roi_end = roi[na + i];
    }

    if (has_scales) {
      const std::vector<double> scales = known_floats(in, scales_input, "scales");
      if (scales.size() != na)
        error("scales has " + std::to_string(scales.size()) + " values, expected " + std::to_string(na) +
              " (one per axis of X " + shape_str(x) + ")");
      for (size_t i = 0; i < na; ++i) {
        ResizeAxis& r = ax[axes[i]];
        if (!(scales[i] > 0) || !std::isfinite(scales[i]))
          error("scales must be positive and finite, got " + std::to_string(scales[i]) + " for axis " +
                std::to_string(axes[i]));
        if (is_upsample_ && scales[i] < 1) error("Upsample scales must be >= 1, got " + std::to_string(scales[i]));
        r.scale = scales[i];
        r.length_resized = static_cast<double>(r.in) * scales[i];
        const double crop = options_.coordinates == ResizeCoordinates::TfCropAndResize ? r.roi_end - r.roi_start : 1.0;
        const double size = std::floor(static_cast<double>(r.in) * crop * scales[i]);
        if (size > static_cast<double>(int64_t(1) << 40))
          error("scale " + std::to_string(scales[i]) + " makes axis " + std::to_string(axes[i]) + " too large");
        r.out = static_cast<int64_t>(size);
      }
    } else {
      const std::vector<int64_t> sizes = known_ints(in, sizes_input, "sizes");
      if (sizes.size() != na)
        error("sizes has " + std::to_string(sizes.size()) + " values, expected " + std::to_string(na) +
              " (one per axis of X " + shape_str(x) + ")");
      for (size_t i = 0; i < na; ++i) {
        if (sizes[i] < 0 || sizes[i] > (int64_t(1) << 40))
          error("sizes must be in [0, 2^40], got " + std::to_string(sizes[i]));
        if (x[axes[i]] == 0 && sizes[i] != 0) error("cannot resize the empty axis " + std::to_string(axes[i]));
      }
      // keep_aspect_ratio_policy: one scale for all listed axes, the smallest or the largest.
      double common = policy_ == AspectPolicy::NotLarger ? 1e300 : 0.0;
      for (size_t i = 0; i < na; ++i) {
        if (x[axes[i]] == 0) continue;
        const double s = static_cast<double>(sizes[i]) / static_cast<double>(x[axes[i]]);
        common = policy_ == AspectPolicy::NotLarger ? std::min(common, s) : std::max(common, s);
      }
      for (size_t i = 0; i < na; ++i) {
        ResizeAxis& r = ax[axes[i]];
        if (r.in == 0) continue;
        if (policy_ == AspectPolicy::Stretch) {
          r.out = sizes[i];
          r.scale = static_cast<double>(sizes[i]) / static_cast<double>(r.in);
        } else {
          r.scale = common;
          r.out = static_cast<int64_t>(std::round(common * static_cast<double>(r.in)));
        }
        r.length_resized = static_cast<double>(r.out);
        if (!(r.scale > 0)) error("sizes must be positive, got 0 for axis " + std::to_string(axes[i]));
      }
    }

    in_shape_ = x;
    Shape y(static_cast<size_t>(rank));
    taps_.clear();  // built by prepare() or the first run (see build_taps)
    for (int a = 0; a < rank; ++a) y[a] = ax[a].out;
    axes_ = ax;
    out_shape_ = y;
    // The blocked layout keeps batch and channels: their taps must be the identity. They are built only
    // once the axes are known to keep their lengths, so they are no longer than the input's.
    if (block_ > 1 && shape_numel(y) > 0 &&
        (y[0] != x[0] || y[1] != x[1] || !identity_taps(resize_axis_taps(ax[0], options_), x[0]) ||
         !identity_taps(resize_axis_taps(ax[1], options_), x[1])))
      error("the channel-blocked layout (ng.in_block " + std::to_string(block_) +
            ") resizes height and width only, but these scales/sizes and coordinate mode resample the batch or "
            "channel axis of " + shape_str(x));
    out[0].dtype = in[0].dtype;
    out[0].shape = y;
    if (fused_add_) {
      if (in.size() <= kAddendInput || !in[kAddendInput].present)
        error("the fused addend (input " + std::to_string(kAddendInput) + ") is missing");
      const TensorDesc& a = in[kAddendInput];
      if (in[0].dtype != DataType::Float32 || a.dtype != DataType::Float32 || a.shape != y)
        error("the fused addend (input " + std::to_string(kAddendInput) + ") must be float32 of the output's shape " +
              shape_str(y) + " with a float32 X, got " + dtype_name(a.dtype) + " " + shape_str(a.shape));
      gated_ = in.size() > kGateInput && in[kGateInput].present;
      if (gated_) {
        const TensorDesc& g = in[kGateInput];
        Shape gs(g.shape.size() < 4 ? 4 - g.shape.size() : 0, 1);
        gs.insert(gs.end(), g.shape.begin(), g.shape.end());
        if (g.dtype != DataType::Float32 || y.size() != 4 || gs.size() != 4 || gs[2] != 1 || gs[3] != 1 ||
            (gs[0] != 1 && gs[0] != y[0]) || (gs[1] != 1 && gs[1] != y[1]))
          error("the addend's gate (input " + std::to_string(kGateInput) +
                ") must be float32 with one value per batch and channel of the 4-D output " + shape_str(y) +
                ", got " + dtype_name(g.dtype) + " " + shape_str(g.shape));
        gate_.channels = y[1];
        gate_.c_stride = gs[1] == 1 ? 0 : 1;
        gate_.n_stride = gs[0] == 1 ? 0 : gs[1];
      }
    }
  }

  void prepare(const std::vector<TensorDesc>&, const ExecSettings&) override { build_taps(); }

  // One multiply-add per tap: an output value sums the tensor product of its axes' taps, 2 per resampled
  // axis in linear mode and 4 in cubic (nearest copies). A resample of every axis of a 4-D tensor is
  // 16 (or 256) of them per output value, work a bound on MACs must see.
  int64_t macs() const override {
    const int64_t outputs = shape_numel(out_shape_);
    if (options_.mode == ResizeMode::Nearest || outputs == 0) return 0;
    const int64_t width = options_.mode == ResizeMode::Linear ? 2 : 4;
    int64_t macs = outputs;
    for (const ResizeAxis& a : axes_)
      if (a.out != a.in || options_.coordinates == ResizeCoordinates::TfCropAndResize) macs = saturating_mul(macs, width);
    return macs;
  }

  void run(OpContext& ctx) override {
    const int64_t n = ctx.output(0).numel();
    if (n == 0) return;
    build_taps();  // folding runs without prepare()
    // Nearest without tf_crop_and_resize's extrapolation is a gather whatever the element type: float32
    // too takes the byte kernels, which copy whole pixels of a block (and repeated rows) where the float
    // kernels multiply every value by its weight of 1 (a quarter of the time on RetinaFace's FPN upsampling:
    // bench/REPORT.md, "fp32 nearest Resize as a gather").
    if (elem_size_ == 1 || (options_.mode == ResizeMode::Nearest &&
                            options_.coordinates != ResizeCoordinates::TfCropAndResize)) {
      run_bytes(ctx);
      return;
    }
    const float* x = ctx.input(0).data_as<float>();
    float* y = ctx.output(0).data_as<float>();
    if (block_ > 1) {
      // Work in output rows of the block planes ((batch, channel block) pairs).
      const Shape& y_shape = ctx.output(0).shape();
      auto fn = [&](int64_t b, int64_t e) {
        resize_blocked_ref(in_shape_[2], in_shape_[3], taps_[2], taps_[3], block_, options_.extrapolation_value, x, y,
                           b, e);
      };
      parallel_row_bands(ctx.pool, y_shape, block_, n, fn);
      return;
    }
    auto fn = [&](int64_t b, int64_t e) { resize_ref(in_shape_, taps_, options_.extrapolation_value, x, y, b, e); };
    if (ctx.pool) ctx.pool->parallel_for(n, fn);
    else fn(0, n);
  }

 private:
  // Nearest: a gather of elem_size_-byte elements, by output rows (plus the addend, when fused).
  void run_bytes(OpContext& ctx) {
    if (fused_add_) {
      run_nearest_add(ctx);
      return;
    }
    const void* x = ctx.input(0).data();
    void* y = ctx.output(0).data();
    const Shape& y_shape = ctx.output(0).shape();
    if (block_ > 1) {
      auto fn = [&](int64_t b, int64_t e) {
        resize_nearest_blocked_ref(in_shape_[2], in_shape_[3], taps_[2], taps_[3],
                                   block_ * static_cast<int64_t>(elem_size_), x, y, b, e);
      };
      parallel_row_bands(ctx.pool, y_shape, block_, ctx.output(0).numel(), fn);
      return;
    }
    const int64_t rows = ctx.output(0).numel() / y_shape.back();
    auto fn = [&](int64_t b, int64_t e) { resize_nearest_ref(in_shape_, taps_, elem_size_, x, y, b, e); };
    if (ctx.pool) ctx.pool->parallel_for(rows, fn);
    else fn(0, rows);
  }

  // y = nearest resize of x + the addend (gated: + addend * gate + addend), by output rows.
  void run_nearest_add(OpContext& ctx) {
    const float* x = ctx.input(0).data_as<float>();
    const float* a = ctx.input(kAddendInput).data_as<float>();
    float* y = ctx.output(0).data_as<float>();
    const Shape& y_shape = ctx.output(0).shape();
    if (gated_) {
      ResizeAddGate gate = gate_;
      gate.gate = ctx.input(kGateInput).data_as<float>();
      if (block_ > 1) {
        auto fn = [&](int64_t b, int64_t e) {
          resize_nearest_gated_add_blocked_ref(in_shape_[2], in_shape_[3], taps_[2], taps_[3], block_, x, a, gate, y,
                                               b, e);
        };
        parallel_row_bands(ctx.pool, y_shape, block_, ctx.output(0).numel(), fn);
        return;
      }
      auto fn = [&](int64_t b, int64_t e) { resize_nearest_gated_add_ref(in_shape_, taps_, x, a, gate, y, b, e); };
      const int64_t rows = ctx.output(0).numel() / y_shape.back();
      if (ctx.pool) ctx.pool->parallel_for(rows, fn);
      else fn(0, rows);
      return;
    }
    if (block_ > 1) {
      auto fn = [&](int64_t b, int64_t e) {
        resize_nearest_add_blocked_ref(in_shape_[2], in_shape_[3], taps_[2], taps_[3], block_, x, a, y, b, e);
      };
      parallel_row_bands(ctx.pool, y_shape, block_, ctx.output(0).numel(), fn);
      return;
    }
    const int64_t rows = ctx.output(0).numel() / y_shape.back();
    auto fn = [&](int64_t b, int64_t e) { resize_nearest_add_ref(in_shape_, taps_, x, a, y, b, e); };
    if (ctx.pool) ctx.pool->parallel_for(rows, fn);
    else fn(0, rows);
  }

  // The taps hold entries per output coordinate of each axis. Not built in infer(): an edited scale can
  // make an axis billions long, and the output is checked against the resource limits only after infer()
  // (found by fuzz/onnx_run_fuzzer: a 67 GB table). Within the limits they are at most the output's size.
  // An empty output needs none (it may still have a long axis).
  void build_taps() {
    if (!taps_.empty() || shape_numel(out_shape_) == 0) return;
    for (const ResizeAxis& a : axes_) taps_.push_back(resize_axis_taps(a, options_));
  }

  // A float input's values, which must be known at plan time because they decide the output shape.
  std::vector<double> known_floats(const std::vector<TensorDesc>& in, size_t i, const char* what) const {
    if (i >= in.size() || !in[i].present) error(std::string(what) + " is required here");
    const TensorDesc& t = in[i];
    if (!t.value) contents_needed(i, what);
    std::vector<double> v(static_cast<size_t>(t.value->numel()));
    if (t.value->dtype() == DataType::Float32) {
      for (size_t k = 0; k < v.size(); ++k) v[k] = t.value->data_as<float>()[k];
    } else if (t.value->dtype() == DataType::Float64) {
      for (size_t k = 0; k < v.size(); ++k) v[k] = t.value->data_as<double>()[k];
    } else {
      error(std::string(what) + " must be float32, got " + dtype_name(t.value->dtype()));
    }
    return v;
  }

  // Whether an axis of length `len` maps every output index to the same input index with weight 1.
  static bool identity_taps(const ResizeTaps& t, int64_t len) {
    if (static_cast<int64_t>(t.count.size()) != len) return false;
    for (int64_t o = 0; o < len; ++o)
      if (t.outside[o] || t.count[o] != 1 || t.index[o * t.width] != o || t.weight[o * t.width] != 1.f) return false;
    return true;
  }

  bool is_upsample_ = false;
  bool legacy_ = false;  // Upsample or Resize-10
  ResizeOptions options_;
  AspectPolicy policy_ = AspectPolicy::Stretch;
  std::vector<int64_t> axes_attr_;
  int64_t block_ = 1;  // channel block of X and Y (1 = plain NCHW)
  bool fused_add_ = false;  // ng.add_operand: y = resize(x) + input fused::kResizeAddendInput
  bool gated_ = false;      // with input fused::kResizeGateInput gating the addend (resolved by infer())
  ResizeAddGate gate_;      // its strides and channels; the pointer is set per run
  // Resolved by infer().
  size_t elem_size_ = 4;  // bytes per element: 4 (float32), 1 (uint8 or int8 X, nearest only)
  Shape in_shape_, out_shape_;
  std::vector<ResizeAxis> axes_;
  std::vector<ResizeTaps> taps_;
};

NINEGRID_REGISTER_OP("Resize", Resize);
NINEGRID_REGISTER_OP("Upsample", Resize);

}  // namespace
}  // namespace ninegrid
