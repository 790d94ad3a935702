// The int8 conv policy: the one place that decides how an ng.QConv runs, the twin of the float convs'
// ops/conv_select.h. It returns a ConvPlan (ops/conv_plan.h) for the conv's ConvKey (with key.int8 set),
// from one of two sources:
//
//   the rules   hand-fitted from measurements (bench/REPORT.md), the first match wins:
//     depthwise     one group per channel: the C16-style depthwise kernels;
//     first-layer   a plain image of up to 4 channels (x86-64; not with a fused residual);
//     winograd      F(2x2, 3x3) on AVX2 without VNNI, for 3x3 stride-1 convs with 16-channel groups and
//                   enough tiles (prefer_winograd in qconv_select.cpp);
//     indirect      x86-64: convs whose output channels fill 8-lane vectors better than the direct
//                   kernel's, and grouped convs the direct kernel cannot take;
//     direct / pointwise   the register-blocked kernels (a strided 1x1 conv gathers its pixels first and
//                   runs the pointwise kernel); on AVX2 without VNNI in one of three forms (QConvForm):
//                   vpmaddubsw on bytes where few enough weight vectors need a rest vector (the key's
//                   w7_rest_tenths against a bound per shape), else vpmaddwd on words, widened once per
//                   chunk for wide pointwise convs;
//   the tuner   plans measured on this CPU by `ninegrid tune`, handed over in ExecSettings::tuned_plans
//               under the conv's key; each passes qconv_plan_fits before it replaces the rules' plan.
//
// FastQConv2d (ops/qconv_fast.h) builds exactly the plan it is given.
#pragma once

#include <cstdint>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/conv_params.h"
#include "ops/conv_plan.h"
#include "ops/exec_settings.h"

// The x86 int8 conv kernels (kernels/x86/{vnni,avx2}/qconv_*.cpp). A build configured with
// -DNINEGRID_X86_INT8_CONV_KERNELS=OFF (the fuzz build: those files cost most of its compile time and parse
// nothing) leaves them out, and every int8 conv runs the reference kernel, as on a CPU without AVX2.
#if defined(__x86_64__) && !defined(NINEGRID_NO_X86_INT8_CONV_KERNELS)
#define NINEGRID_X86_INT8_CONV 1
#else
#define NINEGRID_X86_INT8_CONV 0
#endif

namespace ninegrid {

// A kernel family forced by a caller (tests, benchmarks) or by ExecSettings::conv_algorithms. Auto: the rules
// above. NoIndirect: Auto without the indirect kernel (the int8 twin of a float conv's "direct" algorithm
// setting); a conv whose groups only the indirect kernel takes has no fast kernel then. Direct, Indirect,
// FirstLayer and Winograd force that family where it computes the conv (a plain 1x1 conv forced Direct runs
// the pointwise kernel, a strided one the direct kernel on its strided input); depthwise convs always run the
// depthwise kernel, and Indirect, FirstLayer and Winograd are refused for them. FirstLayer with a fused
// residual (which that kernel does not take) chooses as Auto would without it.
enum class QConvKernel { Auto, Direct, Indirect, FirstLayer, NoIndirect, Winograd };

// How many of the conv's weight vectors, as the AVX2 vpmaddubsw kernels pack them ([8 output channels][4
// input channels] at one tap, each group's input channels padded to a multiple of 4), hold a pair of input
// channels 2j, 2j + 1 whose weights sum past 128 in magnitude (which vpmaddubsw could saturate, so the
// kernel adds a rest vector for it): in tenths, rounded up (0 only when none does).
int qconv_w7_rest_tenths(const Conv2dParams& p, const int8_t* w);

// Whether AVX2 byte kernels are among this conv's choices with the ISA cap `isa` on this CPU (x86-64, AVX2
// runs, not depthwise, and no VNNI under the cap or groups VNNI's 16-lane direct kernel cannot take), so
// that its key needs qconv_w7_rest_tenths.
bool qconv_needs_rest_class(const Conv2dParams& p, Isa isa);

// The key of an int8 conv (activation None: ReLU is part of the requantisation's clamp). w: its OIHW
// weights, read only when qconv_needs_rest_class.
ConvKey qconv_key(const Conv2dParams& p, bool residual, int64_t in_block, int64_t out_block,
                  const ExecSettings& settings, const int8_t* w);

// The rules' plan with a forced family (ConvKernel::Ref: no fast kernel computes the conv so). A key whose
// w7_rest_tenths is -1 where the class matters is planned as one with no rest vectors.
ConvPlan qconv_forced_plan(const ConvKey& key, QConvKernel kernel, bool allow_winograd = true);

// The rules' plan under the settings (conv_algorithms: without "indirect", NoIndirect; with "indirect" but
// not "direct", the indirect kernel where it fits; without "winograd", no Winograd).
ConvPlan rule_qconv_plan(const ConvKey& key, const ExecSettings& settings);

// Whether FastQConv2d computes the conv with `plan` on this CPU within the settings: blocks (the key's),
// ISA (run by the CPU, within the cap), kernel family (allowed, and fitting the shape), AVX2 form (bytes
// only where the key's rest class is known), Winograd tile 2, split (auto and serial everywhere, rows for
// the direct, pointwise and depthwise kernels). Every tuned plan passes this before it is used.
bool qconv_plan_fits(const ConvPlan& plan, const ConvKey& key, const ExecSettings& settings);

// Whether FastQConv2d computes a conv of this shape (with a fused residual or not) correctly with `plan` on
// this CPU, settings aside: the kernel family takes the shape and blocks, the CPU runs the ISA, the form
// and split are the family's. FastQConv2d refuses a plan that fails it; qconv_plan_fits includes it.
bool qconv_plan_computes(const ConvPlan& plan, const Conv2dParams& p, bool residual);

// Every plan the tuner may time for the conv: each family, ISA and form that fits, with each split when
// the settings have more than one thread (the rules' plan among them: it fits, unless ConvKernel::Ref).
std::vector<ConvPlan> qconv_plan_candidates(const ConvKey& key, const ExecSettings& settings);

// The tuned plan when the settings hold a fitting one for the key (then *tuned is set), else the rules'.
ConvPlan choose_qconv_plan(const ConvKey& key, const ExecSettings& settings, bool* tuned = nullptr);

// Whether the direct and pointwise kernels read an input in blocks of in_block, icpg channels per group, as
// it is at `depth` channels per multiply-add: blocks 16, 8 or 4 (AArch64's: 4 only, the layout planner's
// int8 block there) holding whole steps, each group starting on one. FastQConv2d stages any other.
bool qconv_reads_unstaged(int64_t in_block, int64_t icpg, int64_t depth);

// The channels per multiply-add of a direct or pointwise plan's kernel (4: VNNI, vpmaddubsw, sdot; 2:
// vpmaddwd, NEON's smull).
int64_t qconv_plan_depth(const ConvPlan& plan);

}  // namespace ninegrid
