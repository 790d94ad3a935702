// QuantizeLinear and DequantizeLinear (ONNX opsets 10-21): per-tensor or per-axis scales and zero points,
// uint8, int8 and (DequantizeLinear, for biases) int32 quantised values. In an optimised graph most of
// them disappear into fused integer ops (graph/passes/fuse_qdq.cpp); what remains runs here.
//
// With ng.out_block = B > 1 (set by the layout pass) x and y are channel-blocked NCHW[B]c: each element
// is converted alone with the one scale and zero point, so the plain loop serves; per-axis scales are
// refused then (the layout pass never asks for them).
//
// One scale and zero point between float and uint8 run on the vector kernels (quantize_u8 and dequantize_u8,
// chosen by ops/quantize_kernels.h: x86-64's and AArch64's, bit for bit the reference's), the rest on the
// reference.
//
// A scale that is zero, negative, infinite or NaN, a zero point whose type or shape does not match the
// scale's, or per-axis scales whose count is not the axis's size are errors naming the node.
//
// A QuantizeLinear carrying ir/quant_attrs.h's kNcnnScale (models from the ncnn importer) rounds as ncnn
// does: q = float2int8(x * ncnn_scale) + zero_point, per tensor, int8 zero point 0 or uint8 128 (element
// by element, so channel-blocked tensors need nothing more).
#include <cmath>
#include <string>

#include "core/thread_pool.h"
#include "ir/quant_attrs.h"
#include "kernels/ref/quantize_linear_ref.h"
#include "ops/blocked_layout.h"
#include "ops/exec_settings.h"
#include "ops/op.h"
#include "ops/quantize_kernels.h"

namespace ninegrid {
namespace {

class QuantizeBase : public Op {
 public:
  explicit QuantizeBase(const Node& node, bool quantize) : Op(node), quantize_(quantize) {
    axis_attr_ = node.attrs.get_int("axis", 1);
    if (node.attrs.get_int("block_size", 0) != 0) error("unsupported: blocked quantisation (block_size)");
    if (node.attrs.has(kNcnnScale)) {
      if (!quantize) error(std::string(kNcnnScale) + " is an attribute of QuantizeLinear only");
      ncnn_ = true;
      ncnn_scale_ = node.attrs.get_float(kNcnnScale, 0.f);
      if (!(ncnn_scale_ > 0.f) || !std::isfinite(ncnn_scale_))
        error(std::string(kNcnnScale) + " " + std::to_string(ncnn_scale_) + " is not a positive finite number");
    }
    block_ = read_output_block(*this);
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 2, 3);
    const TensorDesc& x = in[0];
    const TensorDesc& scale = in[1];
    expect_float(scale, "scale");
    const bool has_zp = in.size() > 2 && in[2].present;
    DataType q_type = DataType::UInt8;
    if (has_zp) q_type = in[2].dtype;
    if (quantize_) {
      expect_float(x, "input x");
      if (q_type != DataType::UInt8 && q_type != DataType::Int8)
        error(std::string("unsupported: quantising to ") + dtype_name(q_type) + " (uint8 and int8 supported)");
    } else {
      q_type = x.dtype;
      if (q_type != DataType::UInt8 && q_type != DataType::Int8 && q_type != DataType::Int32)
        error(std::string("unsupported: dequantising ") + dtype_name(q_type) + " (uint8, int8 and int32 supported)");
      if (has_zp && in[2].dtype != q_type)
        error(std::string("zero point of type ") + dtype_name(in[2].dtype) + " for input of type " + dtype_name(q_type));
    }
    axis_ = {};
    if (scale.shape.size() > 1) error("scale must be a scalar or 1-D, got shape " + shape_str(scale.shape));
    const int64_t n = shape_numel(scale.shape);
    if (n != 1) {  // per axis (one value in a 1-D scale is per tensor)
      if (x.shape.empty()) error("a per-axis scale needs an input of rank 1 or more");
      const int axis = normalize_axis(axis_attr_, static_cast<int>(x.shape.size()));
      if (n != x.shape[axis])
        error("per-axis scale has " + std::to_string(n) + " values, but axis " + std::to_string(axis) + " of " +
              shape_str(x.shape) + " has " + std::to_string(x.shape[axis]));
      axis_.channels = n;
      for (size_t d = axis + 1; d < x.shape.size(); ++d) axis_.inner *= x.shape[d];
    }
    if (block_ > 1) {
      if (n != 1)
        error("the channel-blocked layout (ng.out_block " + std::to_string(block_) +
              ") needs one scale for the whole tensor, got " + std::to_string(n));
      if (x.shape.size() != 4 || x.shape[1] % block_ != 0)
        error("the channel-blocked layout (ng.out_block " + std::to_string(block_) +
              ") needs a 4-D input whose channels the block divides, got " + shape_str(x.shape));
    }
    if (has_zp && shape_numel(in[2].shape) != n)
      error("zero point has " + std::to_string(shape_numel(in[2].shape)) + " values, scale " + std::to_string(n));
    if (scale.value) check_scales(*scale.value);
    if (ncnn_) {
      if (n != 1) error(std::string("ncnn quantisation (") + kNcnnScale + ") is per tensor, but the scale has " +
                        std::to_string(n) + " values");
      if (!has_zp) error(std::string("ncnn quantisation (") + kNcnnScale + ") needs a zero point");
      if (in[2].value) check_ncnn_zero_point(*in[2].value);
    }
    out[0].dtype = quantize_ ? q_type : DataType::Float32;
    out[0].shape = x.shape;
    q_type_ = q_type;
    fast_quantize_ = nullptr, fast_dequantize_ = nullptr;
    algorithm_ = "";
  }

  void prepare(const std::vector<TensorDesc>&, const ExecSettings& settings) override {
    QuantizeKernels k;  // none for ncnn's rounding, per-channel parameters or int8
    if (!ncnn_ && axis_.channels == 1 && q_type_ == DataType::UInt8) k = choose_quantize_kernels(settings.isa);
    fast_quantize_ = k.quantize, fast_dequantize_ = k.dequantize;
    algorithm_ = k.algorithm;
  }

  std::string algorithm() const override { return algorithm_; }

  void run(OpContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& scale = ctx.input(1);
    check_scales(scale);  // also when it arrived at run time
    const void* zp = ctx.has_input(2) ? ctx.input(2).data() : nullptr;
    Tensor& y = ctx.output(0);
    const float s0 = scale.data_as<float>()[0];
    const int32_t zp0 = zp && !ncnn_ ? static_cast<const uint8_t*>(zp)[0] : 0;  // (read only on the uint8 path)
    int32_t ncnn_zp = 0;
    if (ncnn_) ncnn_zp = check_ncnn_zero_point(ctx.input(2));
    auto fn = [&](int64_t b, int64_t e) {
      if (ncnn_)
        quantize_ncnn_ref(x.data_as<float>(), ncnn_scale_, ncnn_zp, y.dtype(), y.data(), b, e);
      else if (fast_quantize_ && quantize_)
        fast_quantize_(x.data_as<float>() + b, s0, zp0, y.data_as<uint8_t>() + b, e - b);
      else if (fast_quantize_)
        fast_dequantize_(x.data_as<uint8_t>() + b, s0, zp0, y.data_as<float>() + b, e - b);
      else if (quantize_)
        quantize_linear_ref(x.data_as<float>(), scale.data_as<float>(), zp, y.dtype(), y.data(), axis_, b, e);
      else
        dequantize_linear_ref(x.data(), x.dtype(), scale.data_as<float>(), zp, y.data_as<float>(), axis_, b, e);
    };
    const int64_t n = x.numel();
    if (ctx.pool && n >= (int64_t(1) << 15)) ctx.pool->parallel_for(n, fn);
    else fn(0, n);
  }

 private:
  void check_scales(const Tensor& scale) const {
    const float* s = scale.data_as<float>();
    for (int64_t i = 0; i < scale.numel(); ++i)
      if (!(s[i] > 0.f) || !std::isfinite(s[i]))
        error("scale " + std::to_string(s[i]) + (scale.numel() > 1 ? " (index " + std::to_string(i) + ")" : "") +
              " is not a positive finite number");
  }

  // ncnn's values are symmetric around the zero point: int8 0, or uint8 128 (the same values shifted).
  int32_t check_ncnn_zero_point(const Tensor& zp) const {
    const int32_t v = zp.dtype() == DataType::Int8 ? zp.data_as<int8_t>()[0] : zp.data_as<uint8_t>()[0];
    if (!((zp.dtype() == DataType::Int8 && v == 0) || (zp.dtype() == DataType::UInt8 && v == 128)))
      error(std::string("ncnn quantisation (") + kNcnnScale + ") needs an int8 zero point of 0 or a uint8 one of 128, got " +
            dtype_name(zp.dtype()) + " " + std::to_string(v));
    return v;
  }

  bool quantize_;
  DataType q_type_ = DataType::UInt8;  // the quantised side's type
  // The vector kernels prepare() chose (one scale and zero point, uint8, not ncnn's rounding), or null.
  void (*fast_quantize_)(const float*, float, int32_t, uint8_t*, int64_t) = nullptr;
  void (*fast_dequantize_)(const uint8_t*, float, int32_t, float*, int64_t) = nullptr;
  const char* algorithm_ = "";
  bool ncnn_ = false;
  float ncnn_scale_ = 0.f;
  int64_t axis_attr_ = 1;
  int64_t block_ = 1;  // channel block of x and y (1 = plain NCHW)
  QuantAxis axis_;
};

class QuantizeLinear final : public QuantizeBase {
 public:
  explicit QuantizeLinear(const Node& node) : QuantizeBase(node, true) {}
};
class DequantizeLinear final : public QuantizeBase {
 public:
  explicit DequantizeLinear(const Node& node) : QuantizeBase(node, false) {}
};

NINEGRID_REGISTER_OP("QuantizeLinear", QuantizeLinear);
NINEGRID_REGISTER_OP("DequantizeLinear", DequantizeLinear);

}  // namespace
}  // namespace ninegrid
