// Without NINEGRID_BENCH_TILE_VARIANTS: no tile variants, the benchmark times the library's chosen tiles only.
// (The variant files instantiate the depthwise template a dozen times per ISA and take minutes and gigabytes
// to compile, which every default and sanitizer build would otherwise pay.)
#include "qconv_depthwise_bench.h"

namespace ninegrid {

std::vector<QDepthwiseVariant> qdepthwise_variants_vnni() { return {}; }
std::vector<QDepthwiseVariant> qdepthwise_variants_avx2() { return {}; }

}  // namespace ninegrid
