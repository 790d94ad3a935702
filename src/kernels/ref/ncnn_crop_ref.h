// Copies the box [offsets, offsets + out_shape) of a dense row-major tensor (the reference for ng.Crop).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ninegrid {
namespace ref {

// Every offsets[i] + out_shape[i] <= in_shape[i] (the caller checks). elem_size is the bytes per element.
void crop_box_ref(const void* src, const std::vector<int64_t>& in_shape, const std::vector<int64_t>& offsets,
                  const std::vector<int64_t>& out_shape, size_t elem_size, void* dst);

}  // namespace ref
}  // namespace ninegrid
