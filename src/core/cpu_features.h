// What the CPU can run, detected once (CPUID on x86-64, the auxiliary vector's HWCAP on AArch64), and the
// instruction set the kernels should use. NINEGRID_ISA=ref|avx2|avx512 (x86-64) or ref|neon|dotprod
// (AArch64) in the environment caps the choice (to test every path on one machine); it can lower the ISA
// but never raise it above what the CPU has.
#pragma once

#include <string>

namespace ninegrid {

// Each architecture's instruction sets in increasing order (Ref < Avx2 < Avx512, Ref < Neon < Dotprod);
// a CPU only ever has those of its own architecture, so comparisons between the two families never
// arise once a name is parsed (parse_isa refuses the other architecture's names).
//   Neon:    AArch64's Advanced SIMD (4 fp32 lanes), in every AArch64 core (Cortex-A53/A72, Raspberry Pi 3/4)
//   Dotprod: Advanced SIMD plus the Armv8.2 dot-product instructions (sdot/udot: Cortex-A55/A76 and later,
//            Neoverse, Raspberry Pi 5); the fp32 kernels are Neon's
enum class Isa { Ref = 0, Avx2 = 1, Avx512 = 2, Neon = 3, Dotprod = 4 };

struct CpuFeatures {
  bool avx2 = false, fma = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512dq = false, avx512vnni = false;
  // An AMD core: cost models use it where AMD's cores differ from Intel's (Zen 4 runs 512-bit FMAs at
  // half rate and has a larger L3 per core).
  bool amd = false;
  // AArch64 (HWCAP_ASIMD, HWCAP_ASIMDDP).
  bool asimd = false, asimddp = false;
};

// Detected once per process.
const CpuFeatures& cpu_features();
// The best ISA the CPU has, whatever NINEGRID_ISA says: kernels cap the ISA they are asked for with it,
// so no request (a test's, a benchmark's) can reach an illegal instruction.
Isa hardware_isa();
// The best ISA the CPU has, capped by NINEGRID_ISA.
Isa preferred_isa();
// Whether this CPU runs `isa`'s kernels: Ref always; another ISA when it is of the CPU's architecture and
// no better than hardware_isa() (an x86 ISA is never "below" an Arm one).
bool cpu_runs(Isa isa);
// The best ISA this CPU runs that `isa` allows: the lower of `isa` and hardware_isa() when both are of the
// same architecture, else Ref (a request for another architecture's ISA gets the reference kernels).
Isa runnable_isa(Isa isa);
// `name` ("ref", "avx2", "avx512", "neon", "dotprod") as a cap on hardware_isa(): the lower of the two.
// Throws Error naming `what` (the setting) for an unknown name or one of the other architecture's.
Isa parse_isa_cap(const std::string& name, const char* what);
const char* isa_name(Isa isa);
// The instruction sets a cap may name on this CPU's architecture, for messages ("ref, avx2, avx512").
const char* isa_choices();
// Whether the ISA is one of AArch64's (Neon, Dotprod).
inline bool is_arm_isa(Isa isa) { return isa == Isa::Neon || isa == Isa::Dotprod; }
// What tuned results are keyed by (the tuning cache, runtime/tuning_cache.h): the CPU's vendor and model
// name, its best ISA and its cache sizes, one line such as
// "AuthenticAMD|AMD EPYC 9R14 96-Core Processor|avx512|L1d 32K|L2 1024K|L3 32768K". Detected once per process
// (CPUID on x86-64; /proc/cpuinfo and /sys on AArch64); parts that cannot be read are "?".
const std::string& cpu_identity();
// Channels per SIMD register for the ISA: 16 (AVX-512), 8 (AVX2), 4 (NEON, fp32), 1 (reference kernels).
int isa_block(Isa isa);

}  // namespace ninegrid
