#include "core/cpu_features.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

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

// The printable characters of s, spaces collapsed and trimmed, '|' (the identity's separator) replaced.
std::string clean(const std::string& s) {
  std::string out;
  for (char ch : s) {
    const unsigned char u = static_cast<unsigned char>(ch);
    if (u < 0x20 || u > 0x7e || ch == '|') ch = ' ';
    if (ch == ' ' && (out.empty() || out.back() == ' ')) continue;
    out += ch;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out.empty() ? "?" : out;
}

std::string first_line(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  if (!f || !std::getline(f, line)) return "";
  return line;
}

// A cache level's size in KiB from sysconf or, failing that, Linux's /sys (index0 L1d, 2 L2, 3 L3).
std::string cache_kib(int sysconf_name, int sys_index) {
  long bytes = sysconf_name >= 0 ? sysconf(sysconf_name) : 0;
  if (bytes > 0) return std::to_string(bytes / 1024) + "K";
  const std::string size =
      first_line("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(sys_index) + "/size");
  return size.empty() ? "?" : clean(size);
}

std::string detect_identity() {
  std::string vendor = "?", model = "?";
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0, &a, &b, &c, &d)) {
    char v[13] = {};
    std::memcpy(v, &b, 4), std::memcpy(v + 4, &d, 4), std::memcpy(v + 8, &c, 4);
    vendor = clean(v);
  }
  unsigned top = __get_cpuid_max(0x80000000u, nullptr);
  if (top >= 0x80000004u) {
    char brand[49] = {};
    for (unsigned i = 0; i < 3; ++i) {
      __get_cpuid(0x80000002u + i, &a, &b, &c, &d);
      std::memcpy(brand + 16 * i, &a, 4), std::memcpy(brand + 16 * i + 4, &b, 4);
      std::memcpy(brand + 16 * i + 8, &c, 4), std::memcpy(brand + 16 * i + 12, &d, 4);
    }
    model = clean(brand);
  }
#elif defined(__aarch64__)
  // The Main ID Register names implementer, part and revision.
  const std::string midr = first_line("/sys/devices/system/cpu/cpu0/regs/identification/midr_el1");
  if (!midr.empty()) model = clean("MIDR " + midr);
  std::ifstream info("/proc/cpuinfo");
  std::string line;
  while (std::getline(info, line))
    if (line.rfind("CPU implementer", 0) == 0) {
      vendor = clean(line.substr(line.find(':') == std::string::npos ? 0 : line.find(':') + 1));
      break;
    }
#endif
#if defined(_SC_LEVEL1_DCACHE_SIZE)
  const std::string l1 = cache_kib(_SC_LEVEL1_DCACHE_SIZE, 0), l2 = cache_kib(_SC_LEVEL2_CACHE_SIZE, 2),
                    l3 = cache_kib(_SC_LEVEL3_CACHE_SIZE, 3);
#else
  const std::string l1 = cache_kib(-1, 0), l2 = cache_kib(-1, 2), l3 = cache_kib(-1, 3);
#endif
  return vendor + "|" + model + "|" + isa_name(hardware_isa()) + "|L1d " + l1 + "|L2 " + l2 + "|L3 " + l3;
}

}  // namespace

const std::string& cpu_identity() {
  static const std::string id = detect_identity();
  return id;
}

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
