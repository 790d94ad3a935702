// ng.Crop: ncnn's Crop layer. The batch dimension is kept; the box is chosen per ncnn's rules:
//   mode "reference" (2 inputs): the second input's w/h/d sizes (and c when both are 3-D or both 4-D),
//       starting at `offsets`;
//   mode "slice": numpy-style starts/ends/axes over ncnn's axes (negative values count from the end,
//       -233 means "from the start" / "to the end", and an end of 0 means the end, as in ncnn);
//   mode "offsets": from `offsets` to `end_offsets` before each end, at most `sizes` long (0 = no limit).
// `offsets`, `end_offsets` and `sizes` list ncnn's c, d, h, w; dimensions the blob lacks are ignored.
// A box that does not fit inside the input is an error (ncnn would read out of bounds).
// With ng.in_block = ng.out_block = B > 1 (set by the layout pass) X and Y are channel-blocked NCHW[B]c;
// the box must then keep every channel (a 4-D float tensor cropped on h and w only).
#include <algorithm>

#include "kernels/ref/ncnn_crop_ref.h"
#include "kernels/ref/spatial_blocked_ref.h"
#include "ops/blocked_layout.h"
#include "ops/ncnn_blob.h"
#include "ops/op.h"
#include "core/thread_pool.h"

namespace ninegrid {
namespace {

constexpr int64_t kAbsent = -233;
const char kFields[4] = {'c', 'd', 'h', 'w'};

class NcnnCrop final : public Op {
 public:
  explicit NcnnCrop(const Node& node) : Op(node) {
    const Attributes& a = node_.attrs;
    mode_ = a.get_string("mode", "offsets");
    if (mode_ != "reference" && mode_ != "slice" && mode_ != "offsets")
      error("mode must be reference, slice or offsets, got '" + mode_ + "'");
    offsets_ = a.get_ints("offsets", {0, 0, 0, 0});
    end_offsets_ = a.get_ints("end_offsets", {0, 0, 0, 0});
    sizes_ = a.get_ints("sizes", {0, 0, 0, 0});
    starts_ = a.get_ints("starts");
    ends_ = a.get_ints("ends");
    axes_ = a.get_ints("axes");
    if (offsets_.size() != 4 || end_offsets_.size() != 4 || sizes_.size() != 4)
      error("offsets, end_offsets and sizes need 4 values (c, d, h, w)");
    if (mode_ == "slice" && (starts_.size() != ends_.size() || (!axes_.empty() && axes_.size() != starts_.size())))
      error("starts, ends and axes must have the same length");
    block_ = read_spatial_block(*this);
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, mode_ == "reference" ? 2 : 1, mode_ == "reference" ? 2 : 1);
    const Shape& s = in[0].shape;
    const NcnnBlobDims x = ncnn_blob_dims(s);
    if (x.dims == 0) error("input must have rank 2 to 5 (an ncnn blob plus batch), got " + shape_str(s));
    box_offset_.assign(s.size(), 0);
    box_size_ = s;
    if (mode_ == "reference") {
      const NcnnBlobDims r = ncnn_blob_dims(in[1].shape);
      if (r.dims == 0) error("reference input must have rank 2 to 5, got " + shape_str(in[1].shape));
      const int64_t want[4] = {(x.dims == r.dims && x.dims >= 3) ? r.c : x.c, r.d, r.h, r.w};
      for (int f = 0; f < 4; ++f) set_axis(x.dims, f, offsets_[f], want[f], s);
    } else if (mode_ == "offsets") {
      for (int f = 0; f < 4; ++f) {
        const int ax = ncnn_axis(x.dims, kFields[f]);
        if (ax < 0) continue;
        int64_t size = s[ax] - offsets_[f] - end_offsets_[f];
        if (sizes_[f] > 0) size = std::min(size, sizes_[f]);
        set_axis(x.dims, f, offsets_[f], size, s);
      }
    } else {
      if (axes_.empty() && starts_.size() > static_cast<size_t>(x.dims))
        error("starts has " + std::to_string(starts_.size()) + " values for a " + std::to_string(x.dims) + "-D blob");
      for (size_t i = 0; i < starts_.size(); ++i) {
        const int64_t given = axes_.empty() ? static_cast<int64_t>(i) : axes_[i];
        const int64_t axis = given < 0 ? given + x.dims : given;
        if (axis < 0 || axis >= x.dims)
          error("axis " + std::to_string(given) + " is out of range for a " + std::to_string(x.dims) + "-D blob");
        const int64_t dim = s[axis + 1];
        int64_t start = starts_[i] == kAbsent ? 0 : starts_[i];
        int64_t end = ends_[i] == kAbsent ? dim : ends_[i];
        const int64_t offset = start >= 0 ? start : dim + start;
        const int64_t size = std::min(dim, end > 0 ? end : dim + end) - offset;
        check_box(static_cast<int>(axis + 1), offset, size, s);
      }
    }
    expect_blockable(*this, block_, in[0]);
    if (block_ > 1 && (box_size_[0] != s[0] || box_size_[1] != s[1]))
      error("the channel-blocked layout (ng.in_block " + std::to_string(block_) +
            ") crops height and width only, but the box " + shape_str(box_size_) + " cuts " + shape_str(s) +
            " on the batch or channel axis");
    out[0].dtype = in[0].dtype;
    out[0].shape = box_size_;
    elem_size_ = dtype_size(in[0].dtype);
    in_shape_ = s;
  }

  void run(OpContext& ctx) override {
    if (block_ > 1) {
      // Work in output rows of the block planes ((batch, channel block) pairs).
      const int64_t rows = in_shape_[0] * (in_shape_[1] / block_) * box_size_[2];
      auto fn = [&](int64_t b, int64_t e) {
        crop_pixels_blocked_ref(in_shape_[2], in_shape_[3], box_offset_[2], box_offset_[3], box_size_[2],
                                box_size_[3], block_, ctx.input(0).data_as<float>(), ctx.output(0).data_as<float>(), b,
                                e);
      };
      if (ctx.pool) ctx.pool->parallel_for(rows, fn);
      else fn(0, rows);
      return;
    }
    ref::crop_box_ref(ctx.input(0).data(), in_shape_, box_offset_, box_size_, elem_size_, ctx.output(0).data());
  }

 private:
  void set_axis(int dims, int field, int64_t offset, int64_t size, const Shape& s) {
    const int ax = ncnn_axis(dims, kFields[field]);
    if (ax >= 0) check_box(ax, offset, size, s);
  }

  void check_box(int axis, int64_t offset, int64_t size, const Shape& s) {
    if (offset < 0 || size < 1 || offset > s[axis] || size > s[axis] - offset)
      error("crop of " + std::to_string(size) + " at offset " + std::to_string(offset) + " does not fit axis " +
            std::to_string(axis) + " of input " + shape_str(s));
    box_offset_[axis] = offset;
    box_size_[axis] = size;
  }

  std::string mode_;
  std::vector<int64_t> offsets_, end_offsets_, sizes_, starts_, ends_, axes_;
  std::vector<int64_t> box_offset_;
  Shape box_size_, in_shape_;
  size_t elem_size_ = 4;
  int64_t block_ = 1;  // channel block of X and Y (1 = plain NCHW)
};

NINEGRID_REGISTER_OP("ng.Crop", NcnnCrop);

}  // namespace
}  // namespace ninegrid
