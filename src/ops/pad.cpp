// Pad (ONNX opsets 11-21; older attribute forms arrive as inputs from the importer): any rank and
// element type. Inputs: data, pads (int64 [2 * axes]: all begins, then all ends; negative pads crop),
// constant_value (optional scalar, mode constant), axes (optional, opset 18). Modes constant, reflect,
// edge and wrap (opset 19). pads and axes decide the output shape, so they must be known at plan time.
// With ng.in_block = ng.out_block = B > 1 (set by the layout pass) data and output are channel-blocked
// NCHW[B]c float32, uint8 or int8 tensors, padded on height and width only.
#include <algorithm>
#include <cstring>
#include <functional>
#include <vector>

#include "kernels/ref/pad_ref.h"
#include "kernels/ref/spatial_blocked_ref.h"
#include "ops/blocked_layout.h"
#include "ops/op.h"
#include "core/thread_pool.h"

namespace ninegrid {
namespace {

class Pad final : public Op {
 public:
  explicit Pad(const Node& node) : Op(node) {
    std::string mode;
    try {
      mode = node.attrs.get_string("mode", "constant");
    } catch (const Error& e) {
      error(e.what());
    }
    if (mode == "constant") mode_ = PadMode::Constant;
    else if (mode == "reflect") mode_ = PadMode::Reflect;
    else if (mode == "edge") mode_ = PadMode::Edge;
    else if (mode == "wrap") mode_ = PadMode::Wrap;
    else error("unsupported: mode '" + mode + "' (constant, reflect, edge and wrap supported)");
    block_ = read_spatial_block(*this);
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 2, 4);
    const TensorDesc& x = in[0];
    expect_blockable_float_or_int8(*this, block_, x);
    if (dtype_size(x.dtype) == 0) error(std::string("unsupported: data of type ") + dtype_name(x.dtype));
    const int rank = static_cast<int>(x.shape.size());
    const std::vector<int64_t> pads = known_ints(in, 1, "pads");

    std::vector<int> axes;
    if (in.size() > 3 && in[3].present) {
      for (int64_t a : known_ints(in, 3, "axes")) axes.push_back(normalize_axis(a, rank));
      std::vector<int> sorted = axes;
      std::sort(sorted.begin(), sorted.end());
      if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) error("axes must not repeat an axis");
    } else {
      for (int a = 0; a < rank; ++a) axes.push_back(a);
    }
    const size_t na = axes.size();
    if (pads.size() != 2 * na)
      error("pads has " + std::to_string(pads.size()) + " values, expected " + std::to_string(2 * na) +
            " (a begin and an end for each of " + std::to_string(na) + " axes of data " + shape_str(x.shape) + ")");

    if (in.size() > 2 && in[2].present) {
      if (in[2].dtype != x.dtype)
        error(std::string("constant_value must have the data's type ") + dtype_name(x.dtype) + ", got " +
              dtype_name(in[2].dtype));
      if (shape_numel(in[2].shape) != 1)
        error("constant_value must hold one value, got shape " + shape_str(in[2].shape));
    }

    for (int64_t p : pads)
      if (p < -(int64_t(1) << 40) || p > (int64_t(1) << 40)) error("pads value " + std::to_string(p) + " is out of range");
    std::vector<int64_t> begin(rank, 0), end(rank, 0);
    for (size_t i = 0; i < na; ++i) {
      begin[axes[i]] = pads[i];
      end[axes[i]] = pads[na + i];
    }
    if (block_ > 1 && (begin[0] != 0 || end[0] != 0 || begin[1] != 0 || end[1] != 0))
      error("the channel-blocked layout (ng.in_block " + std::to_string(block_) +
            ") pads height and width only, but pads change the batch or channel axis of " + shape_str(x.shape));
    Shape y = x.shape;
    sources_.clear();  // built by prepare() or the first run, for these shapes
    for (int a = 0; a < rank; ++a) {
      y[a] = x.shape[a] + begin[a] + end[a];
      if (y[a] < 0)
        error("pads crop axis " + std::to_string(a) + " of data " + shape_str(x.shape) + " below zero (begin " +
              std::to_string(begin[a]) + ", end " + std::to_string(end[a]) + ")");
      const int64_t kept = x.shape[a] - std::max<int64_t>(0, -begin[a]) - std::max<int64_t>(0, -end[a]);
      if (mode_ != PadMode::Constant && kept <= 0 && (begin[a] > 0 || end[a] > 0))
        error("cannot pad an empty axis " + std::to_string(a) + " of data " + shape_str(x.shape) + " in mode " +
              node_.attrs.get_string("mode", "constant") + " (there is no value to repeat)");
    }
    begin_ = begin;
    end_ = end;
    in_shape_ = x.shape;
    out[0].dtype = x.dtype;
    out[0].shape = y;
  }

  void prepare(const std::vector<TensorDesc>&, const ExecSettings&) override { build_tables(); }

  void run(OpContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const size_t elem = dtype_size(x.dtype());
    if (ctx.output(0).numel() > 0) build_tables();  // folding runs without prepare()
    // The fill value: constant_value's bytes, or zero of the element type.
    std::vector<unsigned char> constant(elem, 0);
    if (mode_ == PadMode::Constant && ctx.has_input(2)) std::memcpy(constant.data(), ctx.input(2).data(), elem);
    if (ctx.output(0).numel() == 0) return;
    if (block_ > 1) {
      // Work in output rows of the block planes ((batch, channel block) pairs).
      const Shape& y = ctx.output(0).shape();
      const int64_t rows = y[0] * (y[1] / block_) * y[2];
      std::function<void(int64_t, int64_t)> fn;
      if (elem == sizeof(float)) {
        float fill = 0.f;
        std::memcpy(&fill, constant.data(), sizeof(float));
        fn = [&, fill](int64_t b, int64_t e) {
          gather_pixels_blocked_ref(in_shape_[2], in_shape_[3], sources_[2].data(), y[2], sources_[3].data(), y[3],
                                    block_, fill, x.data_as<float>(), ctx.output(0).data_as<float>(), b, e);
        };
      } else {  // uint8 or int8 (expect_blockable_float_or_int8): bytes
        const uint8_t fill = constant[0];
        fn = [&, fill](int64_t b, int64_t e) {
          gather_pixels_blocked_ref(in_shape_[2], in_shape_[3], sources_[2].data(), y[2], sources_[3].data(), y[3],
                                    block_, fill, static_cast<const uint8_t*>(x.data()),
                                    static_cast<uint8_t*>(ctx.output(0).data()), b, e);
        };
      }
      if (ctx.pool) ctx.pool->parallel_for(rows, fn);
      else fn(0, rows);
      return;
    }
    pad_ref(in_shape_, sources_, elem, x.data(), constant.data(), ctx.output(0).data());
  }

 private:
  // The index tables hold one entry per output coordinate of each axis. They are not built in infer():
  // an edited pad can make an axis 2^40 long, and only after infer() are the output's bytes checked
  // against the resource limits (found by fuzz/onnx_load_fuzzer: an 8.8 TB table). Within the limits a
  // table is at most the output's element count. An empty output needs none (it may still have a long axis).
  void build_tables() {
    if (!sources_.empty() || shape_numel(out_shape()) == 0) return;
    const int rank = static_cast<int>(in_shape_.size());
    sources_.resize(rank);
    for (int a = 0; a < rank; ++a) sources_[a] = pad_source_index(in_shape_[a], begin_[a], end_[a], mode_);
  }
  Shape out_shape() const {
    Shape y = in_shape_;
    for (size_t a = 0; a < y.size(); ++a) y[a] += begin_[a] + end_[a];
    return y;
  }

  PadMode mode_ = PadMode::Constant;
  std::vector<int64_t> begin_, end_;  // per axis, from pads (negative: crop)
  int64_t block_ = 1;  // channel block of data and output (1 = plain NCHW)
  Shape in_shape_;
  std::vector<std::vector<int64_t>> sources_;  // per axis, from pad_source_index
};

NINEGRID_REGISTER_OP("Pad", Pad);

}  // namespace
}  // namespace ninegrid
