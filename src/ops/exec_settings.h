// The run-time settings ops read when they prepare their kernels: one value per session, made from the
// public Options (runtime/exec_settings.cpp), handed to Op::prepare. Ops read nothing else: no
// environment variable, no global.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "core/cpu_features.h"
#include "ops/conv_plan.h"

namespace ninegrid {

// The convolution algorithms a conv layer may choose among (ops/conv_select.h).
enum ConvAlgorithmFlags : unsigned {
  kConvWinograd = 1u << 0,
  kConvStrassen = 1u << 1,
  kConvDirect = 1u << 2,
  kConvIndirect = 1u << 3,
  kConvAll = kConvWinograd | kConvStrassen | kConvDirect | kConvIndirect,
};

struct ExecSettings {
  // The instruction set kernels use: the best the CPU has, or lower when capped (never higher).
  Isa isa = Isa::Ref;
  // A set of ConvAlgorithmFlags.
  unsigned conv_algorithms = kConvAll;
  // Winograd's output tile: 0 lets the cost model choose; 2, 4 or 6 forces it on every Winograd layer.
  int winograd_tile = 0;
  // The session's threads, the calling one included (tuned plans are measured per thread count).
  int threads = 1;
  // Conv plans measured on this CPU by `ninegrid tune` (the tuning cache), by format_conv_key; null for
  // the rules alone. The conv policy checks each against the conv and these settings before using it.
  std::shared_ptr<const std::map<std::string, ConvPlan>> tuned_plans;
};

// "winograd,direct" -> kConvWinograd | kConvDirect; "" -> kConvAll. Throws Error on an unknown name.
unsigned parse_conv_algorithms(const std::string& names);

}  // namespace ninegrid
