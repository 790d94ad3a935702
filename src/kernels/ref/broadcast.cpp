#include "kernels/ref/broadcast.h"

#include <stdexcept>

namespace ninegrid {
namespace ref {

bool broadcast_shape(const std::vector<std::vector<int64_t>>& shapes, std::vector<int64_t>* out) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  std::vector<int64_t> result(rank, 1);
  for (const auto& s : shapes) {
    const size_t lead = rank - s.size();  // shapes are aligned at their last dimension
    for (size_t d = 0; d < s.size(); ++d) {
      int64_t& r = result[lead + d];
      const int64_t v = s[d];
      if (v == r || v == 1) continue;
      if (r != 1) return false;
      r = v;  // also covers 0: a 0-size dimension broadcasts only against 1 or 0
    }
  }
  *out = std::move(result);
  return true;
}

BroadcastIndexer::BroadcastIndexer(const std::vector<int64_t>& out, const std::vector<std::vector<int64_t>>& inputs) {
  if (inputs.empty() || inputs.size() > static_cast<size_t>(kMaxInputs))
    throw std::invalid_argument("BroadcastIndexer: 1 to 3 inputs");
  num_inputs_ = static_cast<int>(inputs.size());
  const size_t rank = out.size();
  numel_ = 1;
  for (int64_t d : out) numel_ *= d;

  // Per kept output dimension: its size and, per input, whether the input spans it (else broadcasts).
  // Dimensions of size 1 are dropped; neighbours with the same pattern are merged.
  std::vector<unsigned> patterns;
  for (size_t d = 0; d < rank; ++d) {
    unsigned pattern = 0;
    for (int i = 0; i < num_inputs_; ++i) {
      const auto& s = inputs[i];
      if (s.size() > rank) throw std::invalid_argument("BroadcastIndexer: input has a higher rank than the output");
      const size_t lead = rank - s.size();
      const int64_t v = d < lead ? 1 : s[d - lead];
      if (v == out[d]) {
        pattern |= 1u << i;
      } else if (v != 1) {
        throw std::invalid_argument("BroadcastIndexer: input does not broadcast to the output shape");
      }
    }
    if (out[d] == 1) continue;
    if (!patterns.empty() && patterns.back() == pattern) {
      dims_.back() *= out[d];
    } else {
      dims_.push_back(out[d]);
      patterns.push_back(pattern);
    }
  }
  if (dims_.empty()) {  // a scalar, or all dimensions 1: one run of one element
    dims_.push_back(1);
    patterns.push_back(0);
  }
  for (int i = 0; i < num_inputs_; ++i) {
    strides_[i].assign(dims_.size(), 0);
    int64_t stride = 1;
    for (size_t k = dims_.size(); k-- > 0;) {
      if (patterns[k] & (1u << i)) {
        strides_[i][k] = stride;
        stride *= dims_[k];
      }
    }
  }
}

}  // namespace ref
}  // namespace ninegrid
