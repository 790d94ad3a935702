// NEON instantiations of the Winograd kernels (kernels/x86/winograd_impl.h): 4 channels per register,
// register tiles of 12 tiles x 2 output-channel vectors (24 of the 32 registers), or up to 16 tiles x 1.
#include "kernels/arm/simd_neon.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/x86/winograd_impl.h"

namespace ninegrid {
namespace neon {

void winograd_input_transform(const WinogradX86Args& a, int64_t first, int64_t t_begin, int64_t t_end) {
  winograd_input<VecNeon>(a, first, t_begin, t_end);
}

void winograd_multiply(const WinogradX86Args& a, int64_t tiles, int64_t item_begin, int64_t item_end) {
  winograd_multiply_items<VecNeon, kWinogradTileRows, kWinogradOcVectors, kWinogradTallRows>(a, tiles, item_begin, item_end);
}

void winograd_output_transform(const WinogradX86Args& a, int64_t first, int64_t t_begin, int64_t t_end) {
  winograd_output<VecNeon>(a, first, t_begin, t_end);
}

}  // namespace neon
}  // namespace ninegrid
