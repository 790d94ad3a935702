// vnni instantiation of the int8 requantisation epilogue (kernels/x86/qconv_epilogue_impl.h).
#include "kernels/x86/simd_int8_avx512.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/x86/qconv_epilogue_impl.h"

namespace ninegrid {
namespace vnni {

void requantize_sums(const int32_t* acc, int64_t channels, int64_t plane, const X86Requantize& q, int64_t out_block,
                     int64_t block_begin, int64_t block_end, uint8_t* y) {
  requantize_sums_impl<QVecVnni>(acc, channels, plane, q, out_block, block_begin, block_end, y);
}

}  // namespace vnni
}  // namespace ninegrid
