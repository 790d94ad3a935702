// Reference Resize (ONNX Resize and Upsample): nearest, n-linear and cubic interpolation over any rank.
//
// Interpolation is separable: along each axis, every output coordinate maps to a few input coordinates
// with weights (its "taps", computed once per shape by resize_axis_taps), and an output value is the
// tensor-product sum over all axes' taps. This is the ONNX reference's recursive 1-D interpolation,
// written without the recursion.
#pragma once

#include <cstdint>
#include <vector>

namespace ninegrid {

enum class ResizeMode { Nearest, Linear, Cubic };

// How output coordinate x maps to input coordinate x_original (ONNX coordinate_transformation_mode).
enum class ResizeCoordinates {
  HalfPixel,               // (x + 0.5) / scale - 0.5
  HalfPixelSymmetric,      // half_pixel, re-centred when the output length was rounded (opset 19)
  PytorchHalfPixel,        // length_resized > 1 ? (x + 0.5) / scale - 0.5 : 0
  AlignCorners,            // length_resized == 1 ? 0 : x * (in - 1) / (length_resized - 1)
  Asymmetric,              // x / scale
  TfHalfPixelForNearest,   // (x + 0.5) / scale
  TfCropAndResize,         // roi_start * (in - 1) + x * (roi_end - roi_start) * (in - 1) / (length_resized - 1)
};

// How nearest mode rounds x_original (ONNX nearest_mode; Simple is Resize-10's and Upsample's rule:
// truncate when upsampling, ceil when downsampling, as ONNX Runtime does).
enum class NearestRounding { RoundPreferFloor, RoundPreferCeil, Floor, Ceil, Simple };

struct ResizeAxis {
  int64_t in = 1, out = 1;
  double scale = 1.0;           // out / in as the model gave it (or as computed from sizes)
  double length_resized = 1.0;  // in * scale: the output length before rounding (ONNX's length_resized)
  double roi_start = 0.0, roi_end = 1.0;  // tf_crop_and_resize only
};

struct ResizeOptions {
  ResizeMode mode = ResizeMode::Nearest;
  ResizeCoordinates coordinates = ResizeCoordinates::HalfPixel;
  NearestRounding rounding = NearestRounding::RoundPreferFloor;
  float cubic_a = -0.75f;
  bool exclude_outside = false;      // give taps outside the input weight 0 and renormalise
  float extrapolation_value = 0.f;   // tf_crop_and_resize: outputs mapped outside the input
};

// The taps of one axis: output coordinate o reads input coordinates index[o * width + t] with weights
// weight[o * width + t] for t < count[o]; outside[o] marks coordinates that get extrapolation_value.
// Input indices are always in [0, in) (interpolation repeats the border value).
struct ResizeTaps {
  int width = 1;
  std::vector<int64_t> index;
  std::vector<float> weight;
  std::vector<int> count;
  std::vector<unsigned char> outside;
};

// The input coordinate that output coordinate x maps to.
double resize_source_coordinate(const ResizeAxis& axis, ResizeCoordinates mode, double x);

ResizeTaps resize_axis_taps(const ResizeAxis& axis, const ResizeOptions& options);

// y[o] = sum over the taps of every axis of prod(weights) * x[taps], for output elements
// [begin, end) in row-major order. `in_shape` is x's shape and taps[a] describes axis a.
void resize_ref(const std::vector<int64_t>& in_shape, const std::vector<ResizeTaps>& taps,
                float extrapolation_value, const float* x, float* y, int64_t begin, int64_t end);

}  // namespace ninegrid
