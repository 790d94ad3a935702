// What the CPU can run, detected once with CPUID, and the instruction set the kernels should use.
// NINEGRID_ISA=ref|avx2|avx512 in the environment caps the choice (to test every path on one machine);
// it can lower the ISA but never raise it above what the CPU has.
#pragma once

namespace ninegrid {

enum class Isa { Ref = 0, Avx2 = 1, Avx512 = 2 };

struct CpuFeatures {
  bool avx2 = false, fma = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512dq = false, avx512vnni = false;
  // An AMD core: cost models use it where AMD's cores differ from Intel's (Zen 4 runs 512-bit FMAs at
  // half rate and has a larger L3 per core).
  bool amd = false;
};

// Detected once per process.
const CpuFeatures& cpu_features();
// The best ISA the CPU has, whatever NINEGRID_ISA says: kernels cap the ISA they are asked for with it,
// so no request (a test's, a benchmark's) can reach an illegal instruction.
Isa hardware_isa();
// The best ISA the CPU has, capped by NINEGRID_ISA.
Isa preferred_isa();
const char* isa_name(Isa isa);
// Channels per SIMD register for the ISA: 16 (AVX-512), 8 (AVX2), 1 (reference kernels).
int isa_block(Isa isa);

}  // namespace ninegrid
