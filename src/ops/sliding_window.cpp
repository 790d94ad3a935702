#include "ops/sliding_window.h"

#include <algorithm>

namespace ninegrid {

namespace {

std::string ints_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// `v` if it has `rank` entries, `fallback` repeated if it is empty; otherwise an error.
std::vector<int64_t> per_axis(const std::vector<int64_t>& v, size_t rank, int64_t fallback, const char* name) {
  if (v.empty()) return std::vector<int64_t>(rank, fallback);
  if (v.size() != rank)
    throw Error(std::string(name) + " " + ints_str(v) + " must have " + std::to_string(rank) +
                " values (one per spatial axis)");
  return v;
}

}  // namespace

const char* auto_pad_name(AutoPad p) {
  switch (p) {
    case AutoPad::NotSet: return "NOTSET";
    case AutoPad::SameUpper: return "SAME_UPPER";
    case AutoPad::SameLower: return "SAME_LOWER";
    case AutoPad::Valid: return "VALID";
  }
  return "?";
}

WindowAttrs read_window_attrs(const Attributes& attrs) {
  WindowAttrs w;
  w.kernel_shape = attrs.get_ints("kernel_shape");
  w.strides = attrs.get_ints("strides");
  w.dilations = attrs.get_ints("dilations");
  w.pads = attrs.get_ints("pads");
  w.ceil_mode = attrs.get_int("ceil_mode", 0) != 0;
  std::string ap = attrs.get_string("auto_pad", "NOTSET");
  if (ap == "NOTSET" || ap.empty()) w.auto_pad = AutoPad::NotSet;
  else if (ap == "SAME_UPPER") w.auto_pad = AutoPad::SameUpper;
  else if (ap == "SAME_LOWER") w.auto_pad = AutoPad::SameLower;
  else if (ap == "VALID") w.auto_pad = AutoPad::Valid;
  else throw Error("unknown auto_pad '" + ap + "' (expected NOTSET, SAME_UPPER, SAME_LOWER or VALID)");
  return w;
}

WindowGeometry resolve_window(const WindowAttrs& attrs, const std::vector<int64_t>& in_spatial,
                              const std::vector<int64_t>& kernel) {
  const size_t rank = in_spatial.size();
  WindowGeometry g;
  g.in = in_spatial;
  g.kernel = kernel;
  if (kernel.size() != rank)
    throw Error("kernel " + ints_str(kernel) + " must have " + std::to_string(rank) + " values (one per spatial axis)");
  if (!attrs.kernel_shape.empty() && attrs.kernel_shape != kernel)
    throw Error("kernel_shape " + ints_str(attrs.kernel_shape) + " does not match the weights' kernel " +
                ints_str(kernel));
  g.stride = per_axis(attrs.strides, rank, 1, "strides");
  g.dilation = per_axis(attrs.dilations, rank, 1, "dilations");
  // With auto_pad the pads attribute is ignored (ONNX forbids using both).
  std::vector<int64_t> pads = attrs.auto_pad == AutoPad::NotSet ? per_axis(attrs.pads, 2 * rank, 0, "pads")
                                                                 : std::vector<int64_t>(2 * rank, 0);
  g.pad_begin.assign(pads.begin(), pads.begin() + rank);
  g.pad_end.assign(pads.begin() + rank, pads.end());
  g.out.resize(rank);

  for (size_t i = 0; i < rank; ++i) {
    auto in_range = [](int64_t v) { return v > 0 && v <= kMaxWindowValue; };
    if (g.in[i] < 0 || g.in[i] > (int64_t(1) << 40))
      throw Error("unsupported: spatial size " + ints_str(in_spatial) + " (at most 2^40 per axis)");
    if (!in_range(g.kernel[i])) throw Error("kernel " + ints_str(kernel) + " must be positive (and at most 2^30)");
    if (!in_range(g.stride[i])) throw Error("strides " + ints_str(g.stride) + " must be positive (and at most 2^30)");
    if (!in_range(g.dilation[i]))
      throw Error("dilations " + ints_str(g.dilation) + " must be positive (and at most 2^30)");
    const int64_t span = (g.kernel[i] - 1) * g.dilation[i] + 1;  // input extent of one window
    switch (attrs.auto_pad) {
      case AutoPad::SameUpper:
      case AutoPad::SameLower: {
        g.out[i] = (g.in[i] + g.stride[i] - 1) / g.stride[i];
        int64_t total = std::max<int64_t>(0, (g.out[i] - 1) * g.stride[i] + span - g.in[i]);
        int64_t small = total / 2;
        g.pad_begin[i] = attrs.auto_pad == AutoPad::SameUpper ? small : total - small;
        g.pad_end[i] = total - g.pad_begin[i];
        break;
      }
      case AutoPad::Valid:
        g.pad_begin[i] = g.pad_end[i] = 0;
        g.out[i] = g.in[i] >= span ? (g.in[i] - span) / g.stride[i] + 1 : 0;
        break;
      case AutoPad::NotSet: {
        if (g.pad_begin[i] < 0 || g.pad_end[i] < 0 || g.pad_begin[i] > kMaxWindowValue || g.pad_end[i] > kMaxWindowValue)
          throw Error("pads " + ints_str(pads) + " must not be negative (nor above 2^30)");
        // How far the window can slide; negative when it is longer than the padded input.
        const int64_t room = g.in[i] + g.pad_begin[i] + g.pad_end[i] - span;
        if (!attrs.ceil_mode) {
          g.out[i] = room < 0 ? 0 : room / g.stride[i] + 1;
        } else {
          // ceil(room / stride) + 1, also for a slightly negative room (a partial last window).
          g.out[i] = (room >= 0 ? (room + g.stride[i] - 1) / g.stride[i] : -(-room / g.stride[i])) + 1;
          // A last window that would start inside the end padding reads no input: drop it.
          if ((g.out[i] - 1) * g.stride[i] >= g.in[i] + g.pad_begin[i]) --g.out[i];
        }
        break;
      }
    }
    if (g.out[i] <= 0)
      throw Error("the window (kernel " + ints_str(kernel) + ", dilations " + ints_str(g.dilation) +
                  ") does not fit the input's spatial size " + ints_str(in_spatial) + " padded by " + ints_str(pads) +
                  " (auto_pad " + auto_pad_name(attrs.auto_pad) + ")");
  }
  return g;
}

}  // namespace ninegrid
