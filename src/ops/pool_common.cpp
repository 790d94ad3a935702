#include "ops/pool_common.h"

#include "core/checked_math.h"

namespace ninegrid {

PoolOp::PoolOp(const Node& node) : Op(node) {
  try {
    window_ = read_window_attrs(node.attrs);
  } catch (const Error& e) {
    error(e.what());
  }
  if (window_.kernel_shape.empty()) error("attribute kernel_shape is required");
}

Shape PoolOp::infer_window(const TensorDesc& x) {
  const int rank = static_cast<int>(x.shape.size());
  if (rank < 3) error("input X must have rank 3 or more ([N, C, spatial...]), got shape " + shape_str(x.shape));
  if (rank > 5)
    error("unsupported: " + node_.op_type + " with " + std::to_string(rank - 2) +
          " spatial dimensions (1 to 3 supported)");
  std::vector<int64_t> spatial(x.shape.begin() + 2, x.shape.end());
  WindowGeometry g;
  try {
    g = resolve_window(window_, spatial, window_.kernel_shape);
  } catch (const Error& e) {
    error(e.what());
  }
  // Right-align the spatial axes into the kernels' (depth, height, width).
  params_ = PoolParams();
  params_.planes = x.shape[0] * x.shape[1];
  const int skip = 3 - g.rank();
  for (int i = 0; i < g.rank(); ++i) {
    params_.in[skip + i] = g.in[i];
    params_.out[skip + i] = g.out[i];
    params_.kernel[skip + i] = g.kernel[i];
    params_.stride[skip + i] = g.stride[i];
    params_.dilation[skip + i] = g.dilation[i];
    params_.pad_begin[skip + i] = g.pad_begin[i];
    params_.pad_end[skip + i] = g.pad_end[i];
  }
  Shape y = {x.shape[0], x.shape[1]};
  y.insert(y.end(), g.out.begin(), g.out.end());
  return y;
}

int64_t PoolOp::macs() const {
  int64_t macs = params_.planes;
  for (int64_t f : {params_.out[0], params_.out[1], params_.out[2], params_.kernel[0], params_.kernel[1],
                    params_.kernel[2]})
    macs = saturating_mul(macs, f);
  return macs;
}

}  // namespace ninegrid
