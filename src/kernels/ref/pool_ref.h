// Reference pooling kernels (ONNX MaxPool, AveragePool, LpPool and their Global forms) over up to three
// spatial axes, on dense [planes, spatial...] data where a plane is one (batch, channel) pair.
#pragma once

#include <cstdint>
#include <vector>

namespace ninegrid {

// Spatial axes are (depth, height, width); lower-rank pools leave the leading axes at size 1, kernel 1,
// stride 1, dilation 1, pad 0. Output pixel o's window reads input coordinates
// o * stride - pad_begin + k * dilation for k in [0, kernel); coordinates outside [0, in) are padding.
struct PoolParams {
  int64_t planes = 1;  // batch * channels
  int64_t in[3] = {1, 1, 1};
  int64_t out[3] = {1, 1, 1};
  int64_t kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1};
  int64_t dilation[3] = {1, 1, 1};
  int64_t pad_begin[3] = {0, 0, 0};
  int64_t pad_end[3] = {0, 0, 0};  // only for AveragePool's count_include_pad

  int64_t in_plane() const { return in[0] * in[1] * in[2]; }
  int64_t out_plane() const { return out[0] * out[1] * out[2]; }
};

// The window of one output coordinate along one axis.
struct PoolAxisWindow {
  int64_t start;           // input coordinate of tap 0 (may be negative)
  int64_t k_begin, k_end;  // taps inside [0, in)
  int64_t counted;         // taps inside [-pad_begin, in + pad_end) (count_include_pad's divisor)
};
// The windows of every output coordinate along `axis` (0 depth, 1 height, 2 width).
std::vector<PoolAxisWindow> pool_axis_windows(const PoolParams& p, int axis);

// Max over each window, padding ignored; a window without any input value gives the type's lowest value.
// If `indices` is non-null it receives, per output, the position of the maximum (the first one on ties)
// in the flattened input tensor: plane * in_plane + the spatial offset, row-major, or column-major over
// the spatial axes when `column_major` (ONNX storage_order = 1); -1 for an empty window.
// Defined for float, uint8_t and int8_t. Processes planes [plane_begin, plane_end).
template <class T>
void max_pool_ref(const PoolParams& p, const T* x, T* y, int64_t* indices, bool column_major, int64_t plane_begin,
                  int64_t plane_end);

// Mean over each window. The divisor counts the taps inside the input, or with count_include_pad also
// those in the padding (but never those past the end padding, which ceil_mode windows may reach).
// A window without any counted tap gives 0.
void average_pool_ref(const PoolParams& p, bool count_include_pad, const float* x, float* y, int64_t plane_begin,
                      int64_t plane_end);

// (sum over the window of |x|^p)^(1/p), padding counting as 0.
void lp_pool_ref(const PoolParams& p, float norm_p, const float* x, float* y, int64_t plane_begin, int64_t plane_end);

// Mean and max of each whole plane of `plane_size` values: y[plane].
void global_average_pool_ref(int64_t plane_size, const float* x, float* y, int64_t plane_begin, int64_t plane_end);
template <class T>
void global_max_pool_ref(int64_t plane_size, const T* x, T* y, int64_t plane_begin, int64_t plane_end);

}  // namespace ninegrid
