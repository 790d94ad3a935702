// VNNI tile variants of the int8 depthwise kernel (bench/qconv_depthwise_bench.h); compiled with the
// flags of src/kernels/x86/vnni/.
#include "kernels/x86/qconv_depthwise_vnni.h"
#include "kernels/x86/qconv_depthwise_impl.h"
#include "qconv_depthwise_bench.h"

namespace ninegrid {
namespace {

template <int ROWS, int COLS, int SP3, int SP5>
struct Shape {
  template <int K, int S>
  struct Tile {
    static constexpr int kRows = ROWS, kCols = COLS, kSpacing = K == 3 ? SP3 : SP5;
  };
};

template <int ROWS, int COLS, int SP3, int SP5>
struct Vnni512 : DwVnni512 {
  template <int K, int S>
  using Tile = typename Shape<ROWS, COLS, SP3, SP5>::template Tile<K, S>;
};
template <int ROWS, int COLS, int SP3, int SP5>
struct Vnni256 : DwVnni256 {
  template <int K, int S>
  using Tile = typename Shape<ROWS, COLS, SP3, SP5>::template Tile<K, S>;
};

template <int ROWS, int COLS, int SP3, int SP5>
void run(const X86QConvArgs& a, const X86ConvRange& r) {
  if (a.in_block % 16 == 0) return qdepthwise_conv<Vnni512<ROWS, COLS, SP3, SP5>>(a, r);
  qdepthwise_conv<Vnni256<ROWS, COLS, SP3, SP5>>(a, r);
}

}  // namespace

std::vector<QDepthwiseVariant> qdepthwise_variants_vnni() {
  return {
      {"2x8 sp2/4", run<2, 8, 2, 4>}, {"2x8 sp4/4", run<2, 8, 4, 4>}, {"1x8 sp2/4", run<1, 8, 2, 4>},
      {"1x8 sp4/4", run<1, 8, 4, 4>}, {"4x4 sp2/4", run<4, 4, 2, 4>}, {"4x4 sp4/4", run<4, 4, 4, 4>},
      {"2x4 sp2/4", run<2, 4, 2, 4>}, {"2x8 sp1/2", run<2, 8, 1, 2>}, {"3x8 sp2/4", run<3, 8, 2, 4>},
  };
}

}  // namespace ninegrid
