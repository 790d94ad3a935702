#include "ops/blocked_layout.h"

#include "ir/fused_conv.h"
#include "kernels/ref/blocked_lanes.h"

namespace ninegrid {

int64_t read_spatial_block(const Op& op) {
  int64_t in = 1, out = 1;
  try {
    in = op.node().attrs.get_int(fused::kInBlock, 1);
    out = op.node().attrs.get_int(fused::kOutBlock, 1);
  } catch (const Error& e) {
    op.error(e.what());
  }
  if (in != out)
    op.error("ng.in_block " + std::to_string(in) + " and ng.out_block " + std::to_string(out) +
             " must be equal (this operator keeps its input's layout)");
  if (in < 1 || in > kMaxBlockLanes)
    op.error("ng.in_block must be between 1 and " + std::to_string(kMaxBlockLanes) + ", got " + std::to_string(in));
  return in;
}

int64_t read_output_block(const Op& op) {
  int64_t block = 1;
  try {
    block = op.node().attrs.get_int(fused::kOutBlock, 1);
  } catch (const Error& e) {
    op.error(e.what());
  }
  if (block < 1 || block > kMaxBlockLanes)
    op.error("ng.out_block must be between 1 and " + std::to_string(kMaxBlockLanes) + ", got " + std::to_string(block));
  return block;
}

namespace {

void expect_blockable_types(const Op& op, int64_t block, const TensorDesc& x, bool int8_too) {
  if (block <= 1) return;
  const bool type_ok =
      x.dtype == DataType::Float32 || (int8_too && (x.dtype == DataType::UInt8 || x.dtype == DataType::Int8));
  if (!type_ok || x.shape.size() != 4)
    op.error("the channel-blocked layout (ng.in_block " + std::to_string(block) + ") needs a 4-D " +
             (int8_too ? "float32, uint8 or int8" : "float32") + " input, got " + dtype_name(x.dtype) + " " +
             shape_str(x.shape));
  if (x.shape[1] % block != 0)
    op.error("block " + std::to_string(block) + " does not divide the " + std::to_string(x.shape[1]) +
             " channels of input " + shape_str(x.shape));
}

}  // namespace

void expect_blockable(const Op& op, int64_t block, const TensorDesc& x) { expect_blockable_types(op, block, x, false); }

void expect_blockable_float_or_int8(const Op& op, int64_t block, const TensorDesc& x) {
  expect_blockable_types(op, block, x, true);
}

}  // namespace ninegrid
