// DepthToSpace and SpaceToDepth: move blocksize x blocksize tiles of pixels between the channel axis and
// the spatial axes of an NCHW tensor. Both are one 6-D strided copy:
//   DepthToSpace DCR: out[n][c][h][i][w][j] = in[n][(i*bs + j)*C' + c][h][w]
//   DepthToSpace CRD: out[n][c][h][i][w][j] = in[n][c*bs*bs + i*bs + j][h][w]
//   SpaceToDepth:     out[n][i][j][c][h][w] = in[n][c][h*bs + i][w*bs + j]   (that is, channel (i*bs+j)*C + c)
// DepthToSpace DCR also runs on channel-blocked float tensors (set by the layout pass, as after a
// ConvTranspose made pointwise; kernels/ref/depth_to_space_blocked, by bands of rows):
//   ng.in_block = ng.out_block = P dividing C': each tap's C' channels are whole blocks, so one pixel's vector
//   is copied per output pixel;
//   ng.in_block = P, ng.out_block = 1 (no block divides C', as a one-channel map): each output row gathers its
//   values from the blocks' lanes.
// Plain float32 DCR runs the same row kernel (the strided copy moves one element at a time).
#include "ir/fused_conv.h"
#include "kernels/ref/blocked_lanes.h"
#include "kernels/ref/depth_to_space_blocked.h"
#include "ops/blocked_layout.h"
#include "ops/data_movement.h"
#include "ops/elementwise_common.h"

namespace ninegrid {
namespace {

class SpaceDepthBase : public Op {
 public:
  explicit SpaceDepthBase(const Node& node) : Op(node) {
    if (!node.attrs.has("blocksize")) error("attribute 'blocksize' is required");
    bs_ = node.attrs.get_int("blocksize", 0);
    if (bs_ < 1 || bs_ > (int64_t(1) << 20)) error("blocksize must be positive, got " + std::to_string(bs_));
  }

  void run(OpContext& ctx) override {
    if (run_by_rows(ctx)) return;
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    Shape view;
    std::vector<int64_t> strides;
    source_view(x.shape(), view, strides);
    parallel_copy_strided(ctx.pool, y.data(), x.data(), dtype_size(x.dtype()), view, strides);
  }

 protected:
  // Runs the op by its own rows (channel-blocked data, or plain float32 DCR) and returns true, or returns
  // false for the strided copy.
  virtual bool run_by_rows(OpContext&) { return false; }
  // The 6-D view of the input, in output order, and its element strides.
  virtual void source_view(const Shape& in, Shape& view, std::vector<int64_t>& strides) const = 0;

  void expect_nchw(const std::vector<TensorDesc>& in) const {
    expect_inputs(in, 1, 1);
    expect_sized(*this, in[0], "input");
    if (in[0].shape.size() != 4) error("input must be 4-D (NCHW), got shape " + shape_str(in[0].shape));
  }

  int64_t bs_ = 1;
};

class DepthToSpace final : public SpaceDepthBase {
 public:
  explicit DepthToSpace(const Node& node) : SpaceDepthBase(node) {
    const std::string mode = node.attrs.get_string("mode", "DCR");
    if (mode != "DCR" && mode != "CRD") error("mode '" + mode + "' is unsupported (DCR or CRD)");
    crd_ = mode == "CRD";
    try {
      in_block_ = node.attrs.get_int(fused::kInBlock, 1);
      out_block_ = node.attrs.get_int(fused::kOutBlock, 1);
    } catch (const Error& e) {
      error(e.what());
    }
    if (in_block_ < 1 || in_block_ > kMaxBlockLanes || (out_block_ != 1 && out_block_ != in_block_))
      error("ng.in_block " + std::to_string(in_block_) + " and ng.out_block " + std::to_string(out_block_) +
            " must be equal or the output plain (1), with blocks of at most " + std::to_string(kMaxBlockLanes));
    if (in_block_ > 1 && crd_)
      error("the channel-blocked layout (ng.in_block " + std::to_string(in_block_) + ") needs mode DCR");
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_nchw(in);
    const Shape& s = in[0].shape;
    const int64_t block = checked_mul(*this, bs_, bs_, "blocksize squared");
    if (s[1] % block != 0)
      error("channels (" + std::to_string(s[1]) + ") must be a multiple of blocksize^2 (" + std::to_string(block) + ")");
    out[0].dtype = in[0].dtype;
    out[0].shape = {s[0], s[1] / block, checked_mul(*this, s[2], bs_, "output height"),
                    checked_mul(*this, s[3], bs_, "output width")};
    if (in_block_ > 1) expect_blockable(*this, in_block_, in[0]);
    if (out_block_ > 1 && out[0].shape[1] % out_block_ != 0)
      error("the channel-blocked layout (ng.out_block " + std::to_string(out_block_) +
            ") needs output channels that are a multiple of it, got " + std::to_string(out[0].shape[1]));
  }

 private:
  bool run_by_rows(OpContext& ctx) override {
    if (crd_ || ctx.input(0).dtype() != DataType::Float32) return false;
    const Shape& xs = ctx.input(0).shape();
    const Shape& ys = ctx.output(0).shape();
    const float* x = ctx.input(0).data_as<float>();
    float* y = ctx.output(0).data_as<float>();
    const int64_t in_block = in_block_, out_block = out_block_, bs = bs_;
    auto fn = [&](int64_t begin, int64_t end) {
      if (out_block > 1) depth_to_space_dcr_blocked(x, y, ys[1], xs[2], xs[3], bs, out_block, begin, end);
      else depth_to_space_dcr_plain(x, in_block, y, ys[1], xs[2], xs[3], bs, begin, end);
    };
    parallel_row_bands(ctx.pool, ys, out_block, ctx.output(0).numel(), fn);
    return true;
  }

  void source_view(const Shape& s, Shape& view, std::vector<int64_t>& strides) const override {
    const int64_t C = s[1], H = s[2], W = s[3], c_out = C / (bs_ * bs_), hw = H * W;
    view = {s[0], c_out, H, bs_, W, bs_};
    if (crd_)
      strides = {C * hw, bs_ * bs_ * hw, W, bs_ * hw, 1, hw};
    else
      strides = {C * hw, hw, W, bs_ * c_out * hw, 1, c_out * hw};
  }

  bool crd_ = false;
  int64_t in_block_ = 1, out_block_ = 1;  // ng.in_block, ng.out_block (1: plain NCHW)
};

class SpaceToDepth final : public SpaceDepthBase {
 public:
  using SpaceDepthBase::SpaceDepthBase;

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_nchw(in);
    const Shape& s = in[0].shape;
    if (s[2] % bs_ != 0 || s[3] % bs_ != 0)
      error("height and width (" + std::to_string(s[2]) + ", " + std::to_string(s[3]) +
            ") must be multiples of blocksize " + std::to_string(bs_));
    out[0].dtype = in[0].dtype;
    out[0].shape = {s[0], checked_mul(*this, s[1], bs_ * bs_, "output channels"), s[2] / bs_, s[3] / bs_};
  }

 private:
  void source_view(const Shape& s, Shape& view, std::vector<int64_t>& strides) const override {
    const int64_t C = s[1], H = s[2], W = s[3];
    view = {s[0], bs_, bs_, C, H / bs_, W / bs_};
    strides = {C * H * W, W, 1, H * W, bs_ * W, bs_};
  }
};

NINEGRID_REGISTER_OP("DepthToSpace", DepthToSpace);
NINEGRID_REGISTER_OP("SpaceToDepth", SpaceToDepth);

}  // namespace
}  // namespace ninegrid
