// Entry point of the x86 kernel that restages rows of NCHW planes into NCHW8c: the input of the fast
// transposed convolution's GEMM (ops/conv_transpose_fast.h), whose pointwise kernel reads eight channels
// of a pixel from one cache line instead of from eight planes. AVX2 only: every CPU that runs the fast
// path has it, and the AVX-512 kernels read 8-channel blocks too.
//
// Plain data only: the ISA files must not share inline or template code with generic code (CMakeLists.txt).
#pragma once

#include <cstdint>

namespace ninegrid {
namespace avx2 {

// dst[(c / 8) * pixels * 8 + p * 8 + c % 8] = src[c * src_plane + p] for p < pixels and channel blocks
// [block_begin, block_end) (channels c of a block: 8 * block .. 8 * block + 7). src points at the first
// pixel wanted of channel 0; src_plane is the distance between channels (the whole plane's size, so that
// a band of rows can be taken from the middle of an image).
void stage_rows_nchw8c(const float* src, float* dst, int64_t src_plane, int64_t pixels, int64_t block_begin,
                       int64_t block_end);

}  // namespace avx2
}  // namespace ninegrid
