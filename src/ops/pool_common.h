// What MaxPool, AveragePool and LpPool share: reading the window attributes, checking X, resolving the
// window for X's shape and describing it to the pooling kernels (kernels/ref/pool_ref.h).
#pragma once

#include <vector>

#include "kernels/ref/pool_ref.h"
#include "ops/op.h"
#include "ops/sliding_window.h"

namespace ninegrid {

class PoolOp : public Op {
 public:
  // Reads kernel_shape (required), strides, dilations, pads, auto_pad and ceil_mode.
  explicit PoolOp(const Node& node);

  // One tap per window position: outputs x kernel volume (comparisons for MaxPool, adds for the averages),
  // the work a bound on MACs must see, since a large kernel over a padded input costs it with few bytes.
  int64_t macs() const override;

 protected:
  // Checks X's rank (1 to 3 spatial axes), resolves the window and returns Y's shape [N, C, out...];
  // params() then describes it. The caller checks X's dtype.
  Shape infer_window(const TensorDesc& x);
  const PoolParams& params() const { return params_; }

  WindowAttrs window_;

 private:
  PoolParams params_;
};

}  // namespace ninegrid
