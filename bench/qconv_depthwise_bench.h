// The int8 depthwise tile variants compared by bench/qconv_depthwise_bench.cpp: the library's kernel
// template (kernels/x86/qconv_depthwise_impl.h) instantiated with other tile shapes and group spacings in
// files compiled for each ISA (qconv_depthwise_variants_{vnni,avx2}.cpp).
#pragma once

#include <vector>

#include "kernels/x86/conv_kernels_x86.h"
#include "kernels/x86/qconv_kernels_x86.h"

namespace ninegrid {

struct QDepthwiseVariant {
  const char* name;  // "<rows>x<cols> spacing 3x3/5x5"
  void (*run)(const X86QConvArgs&, const X86ConvRange&);
};

// Each uses the same weight layout as the library's kernel of its ISA and input block.
std::vector<QDepthwiseVariant> qdepthwise_variants_vnni();
std::vector<QDepthwiseVariant> qdepthwise_variants_avx2();

}  // namespace ninegrid
