// The attributes shared by the sliding-window operators (Conv, ConvTranspose, MaxPool, AveragePool,
// LpPool): kernel_shape, strides, dilations, pads and auto_pad, and the output size they imply.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/attribute.h"
#include "ninegrid/tensor.h"

namespace ninegrid {

enum class AutoPad { NotSet, SameUpper, SameLower, Valid };

// Kernel sizes, strides, dilations and pads beyond this are refused: no real model comes close, and the
// bound keeps every window computation far from int64 overflow.
constexpr int64_t kMaxWindowValue = int64_t(1) << 30;

struct WindowAttrs {
  std::vector<int64_t> kernel_shape;  // empty when absent (Conv takes it from the weights)
  std::vector<int64_t> strides;       // empty when absent: all 1
  std::vector<int64_t> dilations;     // empty when absent: all 1
  std::vector<int64_t> pads;          // empty when absent: all 0; else begins of every axis, then ends
  AutoPad auto_pad = AutoPad::NotSet;
  bool ceil_mode = false;             // pools only
};

// Reads the attributes; throws Error (without the node's name) on a wrong kind or unknown auto_pad.
WindowAttrs read_window_attrs(const Attributes& attrs);

// The window on each spatial axis, resolved for one input shape.
struct WindowGeometry {
  std::vector<int64_t> in, kernel, stride, dilation, pad_begin, pad_end, out;
  int rank() const { return static_cast<int>(in.size()); }
};

// Resolves `attrs` for the spatial dimensions `in_spatial` and the kernel `kernel` (which must match
// attrs.kernel_shape when that is given). auto_pad SAME_* gives out = ceil(in / stride), with the odd
// padding at the end (SAME_UPPER) or the start (SAME_LOWER); VALID gives no padding; NOTSET uses `pads`.
// With ceil_mode the last partial window counts, unless it would start inside the end padding (as
// PyTorch and ONNX Runtime define it). Throws Error on lengths that do not match the rank, non-positive
// strides/dilations/kernel, negative pads, or an output smaller than one element.
WindowGeometry resolve_window(const WindowAttrs& attrs, const std::vector<int64_t>& in_spatial,
                              const std::vector<int64_t>& kernel);

// "auto_pad" as written in ONNX, for messages.
const char* auto_pad_name(AutoPad p);

}  // namespace ninegrid
