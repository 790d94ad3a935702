#include "core/cpu_features.h"

#include <cstdlib>
#include <cstring>

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
#endif
  return f;
}

Isa detect_isa() {
  const Isa best = hardware_isa();
  const char* cap = std::getenv("NINEGRID_ISA");
  if (!cap || !*cap) return best;
  Isa want;
  if (std::strcmp(cap, "ref") == 0) want = Isa::Ref;
  else if (std::strcmp(cap, "avx2") == 0) want = Isa::Avx2;
  else if (std::strcmp(cap, "avx512") == 0) want = Isa::Avx512;
  else throw Error(std::string("NINEGRID_ISA='") + cap + "' is not one of ref, avx2, avx512");
  return want < best ? want : best;
}

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = detect();
  return f;
}

Isa hardware_isa() {
  const CpuFeatures& f = cpu_features();
  if (!f.avx2 || !f.fma) return Isa::Ref;
  return f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq ? Isa::Avx512 : Isa::Avx2;
}

Isa preferred_isa() {
  static const Isa isa = detect_isa();
  return isa;
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::Ref: return "ref";
    case Isa::Avx2: return "avx2";
    case Isa::Avx512: return "avx512";
  }
  return "?";
}

int isa_block(Isa isa) {
  switch (isa) {
    case Isa::Avx512: return 16;
    case Isa::Avx2: return 8;
    default: return 1;
  }
}

}  // namespace ninegrid
