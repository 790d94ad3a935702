// avx512 instantiations of the Winograd kernels (kernels/x86/winograd_impl.h): 16 channels per zmm,
// register tiles of 12 tiles x 2 output-channel vectors (24 of the 32 zmm registers), or up
// to 16 tiles x 1 vector.
#include "kernels/x86/simd_avx512.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/x86/winograd_impl.h"

namespace ninegrid {
namespace avx512 {

void winograd_input_transform(const WinogradX86Args& a, int64_t first, int64_t t_begin, int64_t t_end) {
  winograd_input<VecAvx512>(a, first, t_begin, t_end);
}

void winograd_multiply(const WinogradX86Args& a, int64_t tiles, int64_t item_begin, int64_t item_end) {
  winograd_multiply_items<VecAvx512, kWinogradTileRows, kWinogradOcVectors, kWinogradTallRows>(a, tiles, item_begin, item_end);
}

void winograd_output_transform(const WinogradX86Args& a, int64_t first, int64_t t_begin, int64_t t_end) {
  winograd_output<VecAvx512>(a, first, t_begin, t_end);
}

}  // namespace avx512
}  // namespace ninegrid
