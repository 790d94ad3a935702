// The analytic cost models behind the rule-based conv policy (ops/conv_select.h): Winograd's tile and
// its speed-up over the direct conv, Strassen's saving. They guess from constants fitted on two kinds of
// core; `ninegrid tune` measures instead (runtime/tuner.h), and its results replace these guesses where
// a tuning cache holds them.
#pragma once

#include "core/cpu_features.h"
#include "kernels/conv_params.h"

namespace ninegrid {

// The kinds of core the Winograd cost model has constants for (conv_cost_model.cpp): full-rate 512-bit
// FMAs (Intel's AVX-512 Xeons) or half-rate (AMD's Zen 4).
enum class WinogradCore { FullRate512, HalfRate512 };
// The kind of core this process runs on, as the cost model sees it.
WinogradCore this_winograd_core();

// The output tile the rules pick: 4 or 2, whichever a cost model of the kernels (GEMM rate, streaming of
// the transformed weights, transforms) finds faster for this conv on `isa` (capped by the CPU). 6 is
// never chosen on its own: it rounds worse than 4, past the optimiser tests' tolerance (see
// conv_cost_model.cpp); Options::winograd_tile forces it.
int winograd_default_tile(const Conv2dParams& p, Isa isa, WinogradCore core);

// The same model's estimate of (direct conv time) / (Winograd time with the default tile) for one image
// (0 when not applicable): Winograd pays on planes large enough to reuse its alpha^2 / 9 times larger
// transformed weights, e.g. about 2.5 for ResNet's 64-channel 56x56 layers, about 1.2 at 512 channels
// 7x7, where the weights' streaming from memory bounds both. A per-layer choice can require > 1.
double winograd_estimated_speedup(const Conv2dParams& p, Isa isa, WinogradCore core);

// Strassen (a 1x1 conv as a GEMM): one level saves a half-size product and costs the X-side sums and
// extra read-modify-writes of the output quadrants. The net saving of one level as a fraction of the
// plain GEMM's time (negative when recursion costs more than it saves): about 0 at 1024 channels, 0.06 at
// 2048; and whether it is positive at all.
double strassen_estimated_saving(const Conv2dParams& p, Isa isa);
bool strassen_recursion_pays(const Conv2dParams& p, Isa isa);

}  // namespace ninegrid
