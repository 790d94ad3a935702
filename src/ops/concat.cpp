// Concat: joins tensors of one type along an axis. Every other dimension must match. Each input fills a
// band of every output row (the output viewed as outer x (axis * inner)), so the copy is row-wise memcpy.
// With one row (one image along the channels) each input is one span of the output's bytes: the planner
// may then have its producer write it there (input_offsets_in_output), and those inputs are not copied.
#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/ref/copy_strided.h"
#include "ops/blocked_layout.h"
#include "ops/data_movement.h"
#include "ops/elementwise_common.h"
#include "core/thread_pool.h"

namespace ninegrid {
namespace {

class Concat final : public Op {
 public:
  explicit Concat(const Node& node) : Op(node) {
    if (!node.attrs.has("axis")) error("attribute 'axis' is required");
    axis_attr_ = node.attrs.get_int("axis", 0);
    block_ = read_output_block(*this);
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, std::numeric_limits<size_t>::max());
    for (size_t i = 0; i < in.size(); ++i)
      if (!in[i].present) error("input #" + std::to_string(i) + " is missing");
    expect_sized(*this, in[0], "input #0");
    const Shape& first = in[0].shape;
    const int rank = static_cast<int>(first.size());
    if (rank == 0) error("cannot concatenate scalars (rank 0)");
    axis_ = normalize_axis(axis_attr_, rank);
    Shape shape = first;
    shape[axis_] = 0;
    for (size_t i = 0; i < in.size(); ++i) {
      const Shape& s = in[i].shape;
      if (in[i].dtype != in[0].dtype)
        error("input #" + std::to_string(i) + " is " + dtype_name(in[i].dtype) + " but input #0 is " +
              dtype_name(in[0].dtype));
      bool ok = s.size() == first.size();
      for (int d = 0; ok && d < rank; ++d) ok = d == axis_ || s[d] == first[d];
      if (!ok)
        error("input #" + std::to_string(i) + " has shape " + shape_str(s) + ", which does not match input #0's " +
              shape_str(first) + " outside axis " + std::to_string(axis_));
      shape[axis_] += s[axis_];
    }
    checked_numel(*this, shape, "output shape");
    out[0].dtype = in[0].dtype;
    out[0].shape = shape;
  }

  std::vector<size_t> input_offsets_in_output(const std::vector<TensorDesc>& in) const override {
    if (in.empty() || in[0].shape.size() <= static_cast<size_t>(axis_)) return {};
    for (int d = 0; d < axis_; ++d)
      if (in[0].shape[d] != 1) return {};
    if (block_ > 1 && axis_ != 1) return {};
    std::vector<size_t> offsets;
    size_t offset = 0;
    for (const TensorDesc& d : in) {
      if (block_ > 1 && (d.shape.size() != 4 || d.shape[1] % block_ != 0)) return {};
      offsets.push_back(offset);
      offset += static_cast<size_t>(shape_numel(d.shape)) * dtype_size(d.dtype);
    }
    return offsets;
  }

  void run(OpContext& ctx) override {
    Tensor& y = ctx.output(0);
    if (y.numel() == 0) return;
    const size_t elem = dtype_size(y.dtype());
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis_; ++d) outer *= y.dim(d);
    for (int d = axis_ + 1; d < y.rank(); ++d) inner *= y.dim(d);
    const size_t out_row = static_cast<size_t>(y.dim(axis_) * inner) * elem;
    // Byte offset of each input's band within an output row; with one row, the inputs the planner placed
    // in the output already (their data is their band) are skipped.
    std::vector<size_t> band(ctx.inputs.size());
    std::vector<char> in_place(ctx.inputs.size(), 0);
    size_t offset = 0, placed = 0;
    for (size_t i = 0; i < ctx.inputs.size(); ++i) {
      band[i] = offset;
      offset += static_cast<size_t>(ctx.input(i).dim(axis_) * inner) * elem;
      in_place[i] = outer == 1 && ctx.input(i).data() == static_cast<const uint8_t*>(y.data()) + band[i];
      placed += in_place[i];
    }
    if (placed == ctx.inputs.size()) return;
    auto copy = [&](int64_t begin, int64_t end) {
      for (size_t i = 0; i < ctx.inputs.size(); ++i) {
        if (in_place[i]) continue;
        const Tensor& x = ctx.input(i);
        const size_t in_row = static_cast<size_t>(x.dim(axis_) * inner) * elem;
        ref::copy_rows(static_cast<uint8_t*>(y.data()) + begin * out_row + band[i], out_row,
                       static_cast<const uint8_t*>(x.data()) + begin * in_row, in_row, end - begin, in_row);
      }
    };
    const bool threaded = ctx.pool && ctx.pool->size() > 1 && y.nbytes() >= (size_t(256) << 10);
    if (threaded && outer == 1 && block_ > 1 && axis_ == 1 && y.rank() == 4 && whole_blocks(ctx)) {
      // Channel blocks of one image: each input is whole planes of the output, copied in the bands of
      // rows the convs around give each thread.
      const int64_t h = y.dim(2), row = y.dim(3) * block_ * static_cast<int64_t>(elem);
      std::vector<int64_t> first_plane(ctx.inputs.size() + 1, 0);
      for (size_t i = 0; i < ctx.inputs.size(); ++i) first_plane[i + 1] = first_plane[i] + ctx.input(i).dim(1) / block_;
      parallel_row_bands(ctx.pool, y.shape(), block_, y.numel(), [&](int64_t begin, int64_t end) {
        size_t i = 0;
        while (begin < end) {
          const int64_t p = begin / h, stop = std::min(end, (p + 1) * h);
          while (first_plane[i + 1] <= p) ++i;
          const int64_t at = begin - first_plane[i] * h;  // the row within input i
          if (!in_place[i])
            std::memcpy(static_cast<uint8_t*>(y.data()) + begin * row,
                        static_cast<const uint8_t*>(ctx.input(i).data()) + at * row, (stop - begin) * row);
          begin = stop;
        }
      });
      return;
    }
    if (threaded && outer == 1) {
      // One row (batch 1, channel concat): split the inputs' bytes into pieces the threads share.
      constexpr size_t kPiece = size_t(64) << 10;
      std::vector<size_t> first_piece(ctx.inputs.size() + 1, 0);
      for (size_t i = 0; i < ctx.inputs.size(); ++i)
        first_piece[i + 1] = first_piece[i] + (ctx.input(i).nbytes() + kPiece - 1) / kPiece;
      ctx.pool->parallel_for(static_cast<int64_t>(first_piece.back()), [&](int64_t begin, int64_t end) {
        for (int64_t piece = begin; piece < end; ++piece) {
          size_t i = 0;
          while (first_piece[i + 1] <= static_cast<size_t>(piece)) ++i;
          if (in_place[i]) continue;
          const Tensor& x = ctx.input(i);
          const size_t from = (static_cast<size_t>(piece) - first_piece[i]) * kPiece;
          const size_t bytes = std::min(kPiece, x.nbytes() - from);
          std::memcpy(static_cast<uint8_t*>(y.data()) + band[i] + from, static_cast<const uint8_t*>(x.data()) + from,
                      bytes);
        }
      });
    } else if (threaded && outer > 1) {
      ctx.pool->parallel_for(outer, copy);
    } else {
      copy(0, outer);
    }
  }

 private:
  // Whether every input is whole channel blocks (the layout pass blocks only such concats).
  bool whole_blocks(const OpContext& ctx) const {
    for (size_t i = 0; i < ctx.inputs.size(); ++i)
      if (ctx.input(i).rank() != 4 || ctx.input(i).dim(1) % block_ != 0) return false;
    return true;
  }

  int64_t axis_attr_ = 0;
  int axis_ = 0;
  int64_t block_ = 1;  // channel block of the inputs and output (ng.out_block, set by the layout pass)
};

NINEGRID_REGISTER_OP("Concat", Concat);

}  // namespace
}  // namespace ninegrid
