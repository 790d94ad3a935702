// AVX2 tile variants of the int8 depthwise kernel (bench/qconv_depthwise_bench.h); compiled with the flags
// of src/kernels/x86/avx2/.
#include "kernels/x86/qconv_depthwise_avx2.h"
#include "kernels/x86/qconv_depthwise_impl.h"
#include "qconv_depthwise_bench.h"

namespace ninegrid {
namespace {

template <int ROWS, int COLS, int SP>
struct Avx2 : DwAvx2<8> {
  template <int K, int S>
  struct Tile {
    static constexpr int kRows = ROWS, kCols = COLS, kSpacing = SP;
  };
};
template <int ROWS, int COLS, int SP>
struct Avx2Wide : DwAvx2<16> {
  template <int K, int S>
  using Tile = typename Avx2<ROWS, COLS, SP>::template Tile<K, S>;
};

template <int ROWS, int COLS, int SP>
void run(const X86QConvArgs& a, const X86ConvRange& r) {
  if (a.in_block % 16 == 0) return qdepthwise_conv<Avx2Wide<ROWS, COLS, SP>>(a, r);
  qdepthwise_conv<Avx2<ROWS, COLS, SP>>(a, r);
}

}  // namespace

std::vector<QDepthwiseVariant> qdepthwise_variants_avx2() {
  return {{"1x8 sp2", run<1, 8, 2>}, {"1x8 sp1", run<1, 8, 1>}, {"2x4 sp2", run<2, 4, 2>},
          {"1x4 sp2", run<1, 4, 2>}, {"2x8 sp2", run<2, 8, 2>}};
}

}  // namespace ninegrid
