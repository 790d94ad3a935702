// How one 2-D convolution runs, as a plain value (DESIGN.md technique 11, "The seam to keep clean"): which
// algorithm, on which instruction set, with which channel blocks, register tile, Winograd tile, Strassen
// depth and thread split. The conv policy (ops/conv_select.h) fills one in from the rules or from the
// tuning cache; the algorithm drivers (ops/conv_fast.h, conv_winograd.h, conv_strassen.h,
// conv_indirect.h) take it and decide nothing themselves.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/cpu_features.h"
#include "kernels/activation.h"
#include "kernels/conv_params.h"

namespace ninegrid {

// The algorithm (and, for the direct family, which of its kernels).
enum class ConvKernel : uint8_t {
  Ref,         // the reference kernel (no vector kernel applies)
  FirstLayer,  // plain NCHW image in, output pixels across the lanes (ops/conv_fast.h)
  Direct,      // register-blocked direct conv with nine-grid borders (ops/conv_fast.h)
  Pointwise,   // 1x1 convs, strided ones through a gather (ops/conv_fast.h)
  Depthwise,   // one group per channel (ops/conv_fast.h)
  Winograd,    // F(m x m, 3 x 3) (ops/conv_winograd.h)
  Strassen,    // 1x1 convs as a GEMM, with or without one level of Strassen (ops/conv_strassen.h)
  Indirect,    // indirection buffer of input rows (ops/conv_indirect.h)
};

// The AVX2 int8 direct and pointwise kernels' arithmetic (int8 plans only; None for float plans and for the
// other int8 kernels, which have one form each).
enum class QConvForm : uint8_t {
  None,
  Bytes,  // vpmaddubsw on 4 input channels per step; weight pairs past its 16-bit bound split into rest vectors
  Words,  // vpmaddwd on 2 input channels per step (sign-extended 16-bit weights: cannot saturate)
  Wide,   // Words on inputs widened to int16 once per chunk of pixels (pointwise only, kernels/x86)
};

// How a layer's work is split over the session's threads.
enum class ConvSplit : uint8_t {
  Auto,      // the driver's own rule (the rule-based default)
  Serial,    // on the calling thread only: a layer too small to pay for waking the others
  Channels,  // output channel blocks (direct family, indirect), the phases of each chunk of tiles (Winograd)
  Rows,      // output rows, every task all channel blocks (direct family; indirect: one band per thread)
  Tiles,     // Winograd: whole chunks of tiles per thread, each through all three phases
};

struct ConvPlan {
  ConvKernel kernel = ConvKernel::Ref;
  // The kernels' instruction set (its vector width: avx512 16 lanes, avx2 8, neon 4). A 16-lane kernel may
  // write 8-channel blocks, an 8-lane one plain NCHW, so this is not implied by the blocks.
  Isa isa = Isa::Ref;
  int64_t in_block = 1, out_block = 1;  // channel blocks of X and Y (1: plain NCHW)
  // Direct and pointwise kernels: output channel blocks per register tile, 2 (the kernels' widest) or 1.
  // Winograd: vectors of output channels per register tile of the multiply, 1 ("tall") or 2 ("wide"),
  // on planes whose chunks fit the tall tile (ops/conv_winograd.h, winograd_group_vectors). 0: the rule.
  int oc_tile = 0;
  int winograd_tile = 0;    // Winograd: the output tile m of F(m x m, 3 x 3), 2, 4 or 6
  int strassen_levels = 0;  // Strassen: 0 (one GEMM) or 1 level of recursion
  ConvSplit split = ConvSplit::Auto;
  QConvForm int8_form = QConvForm::None;  // int8 plans on the AVX2 direct and pointwise kernels

  bool operator==(const ConvPlan& o) const {
    return kernel == o.kernel && isa == o.isa && in_block == o.in_block && out_block == o.out_block &&
           oc_tile == o.oc_tile && winograd_tile == o.winograd_tile && strassen_levels == o.strassen_levels &&
           split == o.split && int8_form == o.int8_form;
  }
  bool operator!=(const ConvPlan& o) const { return !(*this == o); }
};

const char* conv_kernel_name(ConvKernel k);  // "ref", "first-layer", "direct", ..., "indirect"
const char* conv_split_name(ConvSplit s);    // "auto", "serial", "channels", "rows", "tiles"
const char* qconv_form_name(QConvForm f);    // "none", "bytes", "words", "wide"
// The name `ninegrid tune` shows: "winograd43/avx512 16>16", "direct/avx2 8>8 tile1 rows", ...
std::string describe_plan(const ConvPlan& plan);

// A one-line text form for the tuning cache: "winograd avx512 16 16 0 4 0 tiles", an int8 form appended
// where it is not None ("direct avx2 8 8 0 0 0 rows bytes"). parse_conv_plan reads it
// back and returns false on anything malformed (it checks the form, not whether the plan fits a conv:
// that is the policy's job, see ops/conv_select.h).
std::string format_conv_plan(const ConvPlan& plan);
bool parse_conv_plan(std::string_view text, ConvPlan* plan);

// What a plan is measured for: one conv as a session runs it (its shape, epilogue and layouts, the ISA
// cap and the session's threads). Convs with equal keys share a tuned plan, across layers and models.
struct ConvKey {
  Conv2dParams p;
  ActivationKind activation = ActivationKind::None;
  bool residual = false;
  int64_t in_block = 1, out_block = 1;
  Isa isa = Isa::Ref;  // the settings' cap (ExecSettings::isa)
  int threads = 1;
  // An int8 conv (ng.QConv: uint8 in and out, int8 weights). Its AVX2 vpmaddubsw kernels' cost depends on
  // the weights, so the key holds how many of their packed weight vectors need a rest vector, in tenths
  // rounded up (0: none; ops/qconv_select.h), or -1 where no AVX2 byte kernel is a choice.
  bool int8 = false;
  int w7_rest_tenths = -1;
};

// The key's one-line text form (the tuning cache's, and the lookup table's index):
// "1 64 64 1 56 56 56 56 3 3 1 1 1 1 1 1 1 1 Relu 0 16 16 avx512 2" (batch, channels in and out, groups,
// input and output plane, kernel, stride, dilation, pads top left bottom right, activation, residual,
// blocks in and out, ISA cap, threads), and for an int8 conv " int8 " and its rest tenths at the end.
// parse_conv_key reads it back, returning false on anything
// malformed or out of range (it checks every field, and that the output plane follows from the rest).
// Both parsers take numbers only as std::to_string writes them (no '+', no leading zero), so that what
// they accept with single spaces between words is exactly what the formatters write.
std::string format_conv_key(const ConvKey& k);
bool parse_conv_key(std::string_view text, ConvKey* key);

}  // namespace ninegrid
