#include "core/cpu_features.h"

#include <cstdlib>
#include <cstring>

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

#include "ninegrid/tensor.h"

namespace ninegrid {

namespace {

CpuFeatures detect() {
  CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  f.avx2 = __builtin_cpu_supports("avx2");
  f.fma = __builtin_cpu_supports("fma");
  f.avx512f = __builtin_cpu_supports("avx512f");
  f.avx512bw = __builtin_cpu_supports("avx512bw");
  f.avx512vl = __builtin_cpu_supports("avx512vl");
  f.avx512dq = __builtin_cpu_supports("avx512dq");
  f.avx512vnni = __builtin_cpu_supports("avx512vnni");
  f.amd = __builtin_cpu_is("amd");
#elif defined(__aarch64__) && defined(__linux__)
  // The kernel's view of the CPU (arch/arm64/include/uapi/asm/hwcap.h); the bits are spelt out so that
  // older C library headers without the names still build.
  constexpr unsigned long kHwcapAsimd = 1ul << 1, kHwcapAsimdDp = 1ul << 20;
  const unsigned long hwcap = getauxval(AT_HWCAP);
  f.asimd = (hwcap & kHwcapAsimd) != 0;
  f.asimddp = f.asimd && (hwcap & kHwcapAsimdDp) != 0;
#endif
  return f;
}

Isa detect_isa() {
  const char* cap = std::getenv("NINEGRID_ISA");
  if (!cap || !*cap) return hardware_isa();
  return parse_isa_cap(cap, "NINEGRID_ISA");
}

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = detect();
  return f;
}

Isa hardware_isa() {
  const CpuFeatures& f = cpu_features();
  if (f.asimd) return f.asimddp ? Isa::Dotprod : Isa::Neon;
  if (!f.avx2 || !f.fma) return Isa::Ref;
  return f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq ? Isa::Avx512 : Isa::Avx2;
}

bool cpu_runs(Isa isa) {
  if (isa == Isa::Ref) return true;
  const Isa best = hardware_isa();
  return best != Isa::Ref && is_arm_isa(isa) == is_arm_isa(best) && isa <= best;
}

Isa runnable_isa(Isa isa) {
  const Isa best = hardware_isa();
  if (isa == Isa::Ref || best == Isa::Ref || is_arm_isa(isa) != is_arm_isa(best)) return Isa::Ref;
  return isa < best ? isa : best;
}

Isa preferred_isa() {
  static const Isa isa = detect_isa();
  return isa;
}

const char* isa_choices() {
#if defined(__aarch64__)
  return "ref, neon, dotprod";
#else
  return "ref, avx2, avx512";
#endif
}

Isa parse_isa_cap(const std::string& name, const char* what) {
  Isa want;
  if (name == "ref") want = Isa::Ref;
  else if (name == "avx2") want = Isa::Avx2;
  else if (name == "avx512") want = Isa::Avx512;
  else if (name == "neon") want = Isa::Neon;
  else if (name == "dotprod") want = Isa::Dotprod;
  else throw Error(std::string(what) + " '" + name + "' is not one of " + isa_choices());
#if defined(__aarch64__)
  const bool own_architecture = want == Isa::Ref || is_arm_isa(want);
#else
  const bool own_architecture = !is_arm_isa(want);
#endif
  if (!own_architecture)
    throw Error(std::string(what) + " '" + name + "' is another architecture's instruction set; this build runs " +
                isa_choices());
  const Isa best = hardware_isa();
  return want < best ? want : best;
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::Ref: return "ref";
    case Isa::Avx2: return "avx2";
    case Isa::Avx512: return "avx512";
    case Isa::Neon: return "neon";
    case Isa::Dotprod: return "dotprod";
  }
  return "?";
}

int isa_block(Isa isa) {
  switch (isa) {
    case Isa::Avx512: return 16;
    case Isa::Avx2: return 8;
    case Isa::Neon:
    case Isa::Dotprod: return 4;
    default: return 1;
  }
}

}  // namespace ninegrid
