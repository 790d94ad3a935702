// The data movement of ncnn's (obsolete) Reshape with permute=1, which reshapes in channel-last order as
// TensorFlow/Caffe-converted models expect (the reference for ng.Reshape's permute mode).
#pragma once

#include <cstdint>

namespace ninegrid {
namespace ref {

// Rewrites one ncnn blob into channel-last order: (h,w) -> (w,h), (c,h,w) -> (h,w,c); 1-D is copied.
void ncnn_to_channel_last_ref(const float* src, int dims, int64_t c, int64_t h, int64_t w, float* dst);

// The inverse for an output blob of `dims` dimensions: data in (w,h) order -> (h,w), (h,w,c) -> (c,h,w).
void ncnn_from_channel_last_ref(const float* src, int dims, int64_t c, int64_t h, int64_t w, float* dst);

}  // namespace ref
}  // namespace ninegrid
