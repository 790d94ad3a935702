// avx512 instantiations of the direct and pointwise kernels (kernels/x86/conv_direct_impl.h).
#include "kernels/x86/simd_avx512.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/x86/conv_direct_impl.h"

namespace ninegrid {
namespace avx512 {

void conv2d_direct(const X86ConvArgs& a, const X86ConvRange& r) { direct_conv<VecAvx512>(a, r); }

void conv2d_pointwise(const X86ConvArgs& a, const X86ConvRange& r) { pointwise_conv<VecAvx512>(a, r); }

}  // namespace avx512
}  // namespace ninegrid
