// ng.Reshape: ncnn's Reshape, whose target dimensions are ncnn's w/h/d/c: 0 copies the input's
// dimension of the same name (1 where the input lacks it) and -1 is inferred, so it differs from ONNX
// Reshape, whose 0 copies by position. The batch dimension is kept and each sample reshaped.
//
// Attributes: shape (the target, outermost first: [w], [h, w], [c, h, w] or [c, d, h, w]),
// permute (1: ncnn's obsolete channel-last reshape, for 1-3-D blobs; skipped, as in ncnn, when a 2-D
// blob keeps h or a 3-D blob keeps c).
#include <cstring>

#include "kernels/ref/ncnn_reshape_ref.h"
#include "ops/ncnn_blob.h"
#include "ops/op.h"

namespace ninegrid {
namespace {

class NcnnReshape final : public Op {
 public:
  explicit NcnnReshape(const Node& node) : Op(node) {
    target_ = node_.attrs.get_ints("shape");
    permute_ = node_.attrs.get_int("permute", 0) != 0;
    if (target_.empty() || target_.size() > 4) error("shape must have 1 to 4 values");
    int inferred = 0;
    for (int64_t t : target_) {
      if (t < -1) error("shape values must be > 0, 0 (keep) or -1 (infer)");
      if (t == -1) ++inferred;
    }
    if (inferred > 1) error("at most one shape value may be -1");
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, 1);
    const Shape& s = in[0].shape;
    const NcnnBlobDims x = ncnn_blob_dims(s);
    if (x.dims == 0) error("input must have rank 2 to 5 (an ncnn blob plus batch), got " + shape_str(s));
    const int ndim = static_cast<int>(target_.size());
    // The input's dimension of the same name for each target position.
    int64_t same[4];
    if (ndim == 1) same[0] = x.w;
    if (ndim == 2) same[0] = x.h, same[1] = x.w;
    if (ndim == 3) same[0] = x.c, same[1] = x.h, same[2] = x.w;
    if (ndim == 4) same[0] = x.c, same[1] = x.d, same[2] = x.h, same[3] = x.w;
    const int64_t total = x.w * x.h * x.d * x.c;
    Shape t(target_.begin(), target_.end());
    int64_t known = 1;
    int infer_at = -1;
    for (int i = 0; i < ndim; ++i) {
      if (t[i] == 0) t[i] = same[i];
      if (t[i] == -1) {
        infer_at = i;
      } else {
        if (t[i] != 0 && known > INT64_MAX / t[i]) error("target shape overflows");
        known *= t[i];
      }
    }
    if (infer_at >= 0) {
      if (known == 0 || total % known != 0)
        error("cannot infer a dimension: " + std::to_string(total) + " elements per sample are not a multiple of " +
              std::to_string(known));
      t[infer_at] = total / known;
      known = total;
    }
    if (known != total)
      error("cannot reshape " + shape_str(s) + " (" + std::to_string(total) + " elements per sample) to " +
            shape_str(t));
    in_ = x;
    out_dims_ = ndim;
    out_ = t;
    need_permute_ = permute_ && !((x.dims == 2 && ndim == 2 && x.h == t[0]) || (x.dims == 3 && ndim == 3 && x.c == t[0]));
    if (need_permute_ && (x.dims > 3 || ndim > 3))
      error("permute=1 reshape is defined for blobs of up to 3 dimensions only");
    out[0].dtype = in[0].dtype;
    out[0].shape = {x.batch};
    out[0].shape.insert(out[0].shape.end(), t.begin(), t.end());
    if (need_permute_) expect_float(in[0], "input");
  }

  void run(OpContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (!need_permute_) {
      if (y.data() != x.data()) std::memcpy(y.data(), x.data(), x.nbytes());
      return;
    }
    const int64_t per_sample = in_.w * in_.h * in_.d * in_.c;
    std::vector<float> tmp(static_cast<size_t>(per_sample));
    int64_t oc = 1, oh = 1, ow = out_.back();
    if (out_dims_ >= 2) oh = out_[out_.size() - 2];
    if (out_dims_ == 3) oc = out_[0];
    for (int64_t n = 0; n < in_.batch; ++n) {
      const float* src = x.data_as<float>() + n * per_sample;
      float* dst = y.data_as<float>() + n * per_sample;
      ref::ncnn_to_channel_last_ref(src, in_.dims, in_.c, in_.h, in_.w, tmp.data());
      ref::ncnn_from_channel_last_ref(tmp.data(), out_dims_, oc, oh, ow, dst);
    }
  }

  int aliases_input(int out_index) const override { return out_index == 0 && !permute_ ? 0 : -1; }

 private:
  std::vector<int64_t> target_;
  bool permute_ = false;
  bool need_permute_ = false;
  NcnnBlobDims in_;
  int out_dims_ = 0;
  Shape out_;
};

NINEGRID_REGISTER_OP("ng.Reshape", NcnnReshape);

}  // namespace
}  // namespace ninegrid
