// The vector ISAs whose kernels this build has, for the kernel tests to run once each (every test skips
// those the CPU lacks): AVX2 and AVX-512 on x86-64, NEON on AArch64.
#pragma once

#include <vector>

#include "core/cpu_features.h"

namespace ninegrid {

inline std::vector<Isa> vector_isas() {
#if defined(__aarch64__)
  return {Isa::Neon};
#else
  return {Isa::Avx2, Isa::Avx512};
#endif
}

}  // namespace ninegrid
