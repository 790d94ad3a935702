// avx2 instantiations of the direct and pointwise kernels (kernels/x86/conv_direct_impl.h).
#include "kernels/x86/simd_avx2.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/x86/conv_direct_impl.h"

namespace ninegrid {
namespace avx2 {

void conv2d_direct(const X86ConvArgs& a, const X86ConvRange& r) { direct_conv<VecAvx2>(a, r); }

void conv2d_pointwise(const X86ConvArgs& a, const X86ConvRange& r) { pointwise_conv<VecAvx2>(a, r); }

}  // namespace avx2
}  // namespace ninegrid
