// Multidirectional (numpy) broadcasting for element-wise kernels.
//
// broadcast_shape() computes the output shape of several inputs. BroadcastIndexer then walks that output
// in contiguous runs along its innermost (coalesced) dimension and gives each input's element offset at
// the start of the run; along a run an input either advances one element per output element or repeats
// one element. Adjacent dimensions that broadcast the same way are merged first, so equal shapes become
// one run over everything, a scalar operand is a run with step 0, and a per-channel operand such as
// (C,1,1) against (N,C,H,W) becomes runs of H*W with the channel's value repeated.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace ninegrid {
namespace ref {

// The numpy broadcast of `shapes` into `*out`. Returns false if some dimension pair is neither equal nor 1.
bool broadcast_shape(const std::vector<std::vector<int64_t>>& shapes, std::vector<int64_t>* out);

class BroadcastIndexer {
 public:
  static constexpr int kMaxInputs = 3;

  // Each of `inputs` (at most kMaxInputs) must broadcast to `out` (checked with broadcast_shape first);
  // throws std::invalid_argument otherwise.
  BroadcastIndexer(const std::vector<int64_t>& out, const std::vector<std::vector<int64_t>>& inputs);

  int64_t numel() const { return numel_; }
  // Whether input i advances by one element per output element along a run (false: it repeats one).
  bool steps_along_run(int i) const { return strides_[i].back() != 0; }

  // Calls fn(const int64_t* input_offsets, int64_t out_offset, int64_t n) for consecutive runs that
  // together cover output elements [begin, end). Runs never cross the innermost dimension's end.
  template <class Fn>
  void for_each_run(int64_t begin, int64_t end, Fn&& fn) const;

 private:
  int num_inputs_ = 0;
  int64_t numel_ = 0;
  std::vector<int64_t> dims_;                  // coalesced output dims, outermost first; never empty
  std::vector<int64_t> strides_[kMaxInputs];   // per input and coalesced dim; 0 where broadcast
};

template <class Fn>
void BroadcastIndexer::for_each_run(int64_t begin, int64_t end, Fn&& fn) const {
  end = std::min(end, numel_);
  if (begin >= end) return;
  const int outer_rank = static_cast<int>(dims_.size()) - 1;
  const int64_t inner = dims_.back();
  int64_t row = begin / inner;
  int64_t col = begin % inner;

  // Position of `row` in the outer dimensions, and each input's offset there.
  std::vector<int64_t> index(static_cast<size_t>(outer_rank), 0);
  int64_t row_offset[kMaxInputs] = {0, 0, 0};
  for (int d = outer_rank - 1; d >= 0; --d) {
    index[d] = row % dims_[d];
    row /= dims_[d];
    for (int i = 0; i < num_inputs_; ++i) row_offset[i] += index[d] * strides_[i][d];
  }

  int64_t run_offset[kMaxInputs] = {0, 0, 0};
  int64_t pos = begin;
  while (pos < end) {
    const int64_t n = std::min(inner - col, end - pos);
    for (int i = 0; i < num_inputs_; ++i) run_offset[i] = row_offset[i] + col * strides_[i][outer_rank];
    fn(static_cast<const int64_t*>(run_offset), pos, n);
    pos += n;
    col = 0;
    // Next row: an odometer over the outer dimensions.
    for (int d = outer_rank - 1; d >= 0; --d) {
      for (int i = 0; i < num_inputs_; ++i) row_offset[i] += strides_[i][d];
      if (++index[d] < dims_[d]) break;
      for (int i = 0; i < num_inputs_; ++i) row_offset[i] -= strides_[i][d] * dims_[d];
      index[d] = 0;
    }
  }
}

}  // namespace ref
}  // namespace ninegrid
