// avx2 instantiations of the Winograd kernels (kernels/x86/winograd_impl.h): 8 channels per ymm,
// register tiles of 6 tiles x 2 output-channel vectors (12 of the 16 ymm registers), or up
// to 12 tiles x 1 vector.
#include "kernels/x86/simd_avx2.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/x86/winograd_impl.h"

namespace ninegrid {
namespace avx2 {

void winograd_input_transform(const WinogradX86Args& a, int64_t first, int64_t t_begin, int64_t t_end) {
  winograd_input<VecAvx2>(a, first, t_begin, t_end);
}

void winograd_multiply(const WinogradX86Args& a, int64_t tiles, int64_t item_begin, int64_t item_end) {
  winograd_multiply_items<VecAvx2, kWinogradTileRows, kWinogradOcVectors, kWinogradTallRows>(a, tiles, item_begin, item_end);
}

void winograd_output_transform(const WinogradX86Args& a, int64_t first, int64_t t_begin, int64_t t_end) {
  winograd_output<VecAvx2>(a, first, t_begin, t_end);
}

}  // namespace avx2
}  // namespace ninegrid
