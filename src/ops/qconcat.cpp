// ng.QConcat: Concat of uint8 tensors with different scales or zero points, what
// graph/passes/fuse_qdq_ops.cpp makes of Concat(DequantizeLinear(x_i)...) [-> Relu | Clip] ->
// QuantizeLinear. Each input is requantised into the output's scale and zero point and clamped to
// [qmin, qmax] by a table built from the float steps it replaces (kernels/ref/qlookup_ref.h), so the
// output is the unfused graph's bytes; an input that already has the output's parameters is copied (and
// clamped). Attributes: axis; x_scales and x_zero_points (one per input); y_scale, y_zero_point; qmin,
// qmax (default 0, 255; a fused ReLU is qmin = y_zero_point). With ng.out_block = B > 1 (set by the layout
// pass) the inputs and the output are channel-blocked NCHW[B]c, concatenated on the channel axis: B divides
// every input's channels, so each image's part of an input is one run of bytes in the output, as in plain
// NCHW, and the same loop serves.
//
// With vector kernels (ops/quantize_kernels.h: x86-64 and AArch64) an input that needs its table runs instead
// as one float multiply-add per byte where fit_affine_u8 finds one that gives the table's 256 bytes exactly
// (kernels/ref/qlookup_ref.h; requantize_u8_affine), else as the vector DequantizeLinear and QuantizeLinear
// kernels (dequantize_u8, quantize_u8, bit for bit the reference's, which built the table) through a float
// buffer in L1, then the clamp. On RetinaFace's SSH concats the multiply-add beat the float passes, and they
// the byte table (bench/REPORT.md).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "ir/quant_attrs.h"
#include "kernels/ref/qlookup_ref.h"
#include "ops/blocked_layout.h"
#include "ops/op.h"
#include "ops/quantize_kernels.h"

namespace ninegrid {
namespace {

class QConcat final : public Op {
 public:
  explicit QConcat(const Node& node) : Op(node) {
    std::vector<float> scales;
    std::vector<int64_t> zero_points;
    TensorQuant y;
    QClamp clamp;
    try {
      axis_attr_ = node.attrs.get_int("axis", 0);
      scales = node.attrs.get_floats("x_scales");
      zero_points = node.attrs.get_ints("x_zero_points");
      y = read_tensor_quant(node.attrs, "y");
      clamp = read_qclamp(node.attrs);
    } catch (const Error& e) {
      error(e.what());
    }
    if (scales.size() != zero_points.size())
      error("x_scales has " + std::to_string(scales.size()) + " values, x_zero_points " +
            std::to_string(zero_points.size()));
    for (size_t i = 0; i < scales.size(); ++i) {
      if (!(scales[i] > 0.f) || !std::isfinite(scales[i]))
        error("x_scales " + std::to_string(scales[i]) + " (input " + std::to_string(i) + ") is not a positive finite number");
      if (zero_points[i] < 0 || zero_points[i] > 255)
        error("x_zero_points " + std::to_string(zero_points[i]) + " (input " + std::to_string(i) +
              ") is outside a uint8's range [0, 255]");
      Input in;
      in.scale = scales[i], in.zero_point = static_cast<int32_t>(zero_points[i]);
      in.table = requantize_table(scales[i], static_cast<int32_t>(zero_points[i]), y.scale, y.zero_point, clamp.qmin,
                                  clamp.qmax);
      in.clamp_only = table_is_clamp(in.table, clamp.qmin, clamp.qmax);
      in.has_affine = fit_affine_u8(in.table, scales[i], in.zero_point, y.scale, y.zero_point, clamp.qmin, clamp.qmax,
                                    &in.affine);
      inputs_.push_back(in);
    }
    qmin_ = static_cast<uint8_t>(clamp.qmin), qmax_ = static_cast<uint8_t>(clamp.qmax);
    y_scale_ = y.scale, y_zero_point_ = y.zero_point;
    block_ = read_output_block(*this);
  }

  void prepare(const std::vector<TensorDesc>&, const ExecSettings& settings) override {
    const QuantizeKernels k = choose_quantize_kernels(settings.isa);
    fast_quantize_ = k.quantize, fast_dequantize_ = k.dequantize, fast_affine_ = k.requantize_affine;
    // "-affine" where some input is requantised by the multiply-add kernel (profile and info say so).
    bool affine = false;
    for (const Input& in : inputs_) affine = affine || (!in.clamp_only && in.has_affine);
    algorithm_ = std::string(k.algorithm) + (fast_affine_ && affine ? "-affine" : "");
  }

  std::string algorithm() const override { return algorithm_; }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, 1 << 20);
    if (in.size() != inputs_.size())
      error(std::to_string(in.size()) + " inputs, but quantisation parameters for " + std::to_string(inputs_.size()));
    for (const TensorDesc& t : in) {
      if (!t.present) error("every input must be given");
      expect_dtype(t, DataType::UInt8, "input");
    }
    const Shape& first = in[0].shape;
    if (first.empty()) error("inputs must have rank 1 or more");
    axis_ = normalize_axis(axis_attr_, static_cast<int>(first.size()));
    Shape y = first;
    y[axis_] = 0;
    for (const TensorDesc& t : in) {
      bool fits = t.shape.size() == first.size();
      for (size_t d = 0; fits && d < first.size(); ++d) fits = static_cast<int>(d) == axis_ || t.shape[d] == first[d];
      if (!fits) error("input " + shape_str(t.shape) + " does not match " + shape_str(first) + " outside axis " +
                       std::to_string(axis_));
      y[axis_] += t.shape[axis_];
    }
    if (block_ > 1) {
      if (first.size() != 4 || axis_ != 1)
        error("the channel-blocked layout (ng.out_block " + std::to_string(block_) +
              ") needs 4-D inputs concatenated on axis 1, got axis " + std::to_string(axis_) + " of " +
              shape_str(first));
      for (const TensorDesc& t : in) expect_blockable_float_or_int8(*this, block_, t);
    }
    outer_ = 1;
    for (int d = 0; d < axis_; ++d) outer_ *= first[d];
    inner_ = 1;
    for (size_t d = axis_ + 1; d < first.size(); ++d) inner_ *= first[d];
    out[0].dtype = DataType::UInt8;
    out[0].shape = y;
  }

  void run(OpContext& ctx) override {
    uint8_t* y = ctx.output(0).data_as<uint8_t>();
    const int64_t y_row = ctx.output(0).shape()[axis_] * inner_;
    int64_t offset = 0;
    for (size_t i = 0; i < ctx.inputs.size(); ++i) {
      const Tensor& x = ctx.input(i);
      const int64_t row = x.shape()[axis_] * inner_;
      const uint8_t* xp = x.data_as<uint8_t>();
      const Input& p = inputs_[i];
      const bool copy = p.clamp_only && qmin_ == 0 && qmax_ == 255;
      for (int64_t o = 0; o < outer_; ++o) {
        uint8_t* to = y + o * y_row + offset;
        if (copy) std::memcpy(to, xp + o * row, static_cast<size_t>(row));
        else if (p.clamp_only) qclamp_ref(qmin_, qmax_, xp + o * row, to, row);
        else if (fast_affine_ && p.has_affine) fast_affine_(p.affine, xp + o * row, to, row);
        else if (fast_quantize_) requantize_fast(p, xp + o * row, to, row);
        else qlookup_ref(p.table, xp + o * row, to, row);
      }
      offset += row;
    }
  }

 private:
  int64_t axis_attr_ = 0;
  int axis_ = 0;
  int64_t outer_ = 1, inner_ = 1;
  struct Input {
    QuantizedTable table{};   // x -> y
    bool clamp_only = false;  // the table is the clamp [qmin, qmax]: same parameters in and out
    float scale = 1.f;        // the input's
    int32_t zero_point = 0;
    bool has_affine = false;  // the table as one multiply-add (fit_affine_u8)
    AffineU8 affine;
  };
  // The table's steps on the vector kernels, a chunk at a time: dequantised into a float buffer, quantised
  // into the output's scale and zero point, clamped.
  void requantize_fast(const Input& p, const uint8_t* x, uint8_t* y, int64_t n) const {
    constexpr int64_t kChunk = 1024;
    float real[kChunk];
    for (int64_t i = 0; i < n; i += kChunk) {
      const int64_t m = std::min(kChunk, n - i);
      fast_dequantize_(x + i, p.scale, p.zero_point, real, m);
      fast_quantize_(real, y_scale_, y_zero_point_, y + i, m);
      if (qmin_ != 0 || qmax_ != 255) qclamp_ref(qmin_, qmax_, y + i, y + i, m);
    }
  }

  std::vector<Input> inputs_;
  uint8_t qmin_ = 0, qmax_ = 255;
  float y_scale_ = 1.f;
  int32_t y_zero_point_ = 0;
  void (*fast_quantize_)(const float*, float, int32_t, uint8_t*, int64_t) = nullptr;
  void (*fast_dequantize_)(const uint8_t*, float, int32_t, float*, int64_t) = nullptr;
  void (*fast_affine_)(const AffineU8&, const uint8_t*, uint8_t*, int64_t) = nullptr;
  std::string algorithm_;
  int64_t block_ = 1;  // channel block of the inputs and the output (1 = plain NCHW)
};

NINEGRID_REGISTER_OP("ng.QConcat", QConcat);

}  // namespace
}  // namespace ninegrid
