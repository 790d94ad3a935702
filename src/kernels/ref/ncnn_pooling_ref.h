// ncnn's 2-D pooling, reproduced exactly (the reference for ng.Pooling).
//
// ncnn pads the input into a "bordered" plane, then slides the window over it without bounds checks:
//   pad_mode 0 ("full"): the given pads, plus a tail on the bottom/right so the last window fits, i.e.
//                        the output size rounds up like ceil_mode;
//   pad_mode 1 ("valid"): the given pads only (output rounds down);
//   pad_mode 2/3: TensorFlow/ONNX SAME_UPPER/SAME_LOWER padding (the given pads are ignored for padding).
// Max pooling pads with -FLT_MAX and starts from the window's first element. Average pooling pads with
// 0 and divides either by the whole window (count_include_pad) or by the number of elements inside
// [pad_top, bordered_h - pad_bottom - tail) x [pad_left, bordered_w - pad_right - tail), where the pads
// are the layer's parameters even for SAME padding (so SAME padding counts as data there, as in ncnn).
#pragma once

#include <cstdint>

namespace ninegrid {
namespace ref {

struct NcnnPoolingParams {
  int pooling_type = 0;  // 0 max, 1 average
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int pad_mode = 0;
  bool count_include_pad = false;
};

struct NcnnPoolingGeometry {
  int64_t out_h = 0, out_w = 0;
  int64_t border_top = 0, border_left = 0;  // where the input starts in the bordered plane
  int64_t bordered_h = 0, bordered_w = 0;
  int64_t tail_h = 0, tail_w = 0;           // pad_mode 0's extra bottom/right padding
};

// Fills `g` for an input plane of h x w. Returns false if no window fits (output would be empty).
bool ncnn_pooling_geometry(const NcnnPoolingParams& p, int64_t h, int64_t w, NcnnPoolingGeometry* g);

// Pools one h x w plane into g.out_h x g.out_w.
void ncnn_pooling_plane_ref(const float* in, int64_t h, int64_t w, float* out, const NcnnPoolingParams& p,
                            const NcnnPoolingGeometry& g);

}  // namespace ref
}  // namespace ninegrid
