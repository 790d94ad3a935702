// The instruction-set names and caps (core/cpu_features.h): each architecture's names, the other
// architecture's refused, caps never above the hardware, and, when the test runner says which CPU it
// emulates (scripts/test_arm.sh: NINEGRID_EXPECTED_HARDWARE_ISA, qemu's -cpu cortex-a72 or max), that the
// run-time detection (CPUID, AArch64's HWCAP) found that CPU's instruction set.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "core/cpu_features.h"
#include "ninegrid/tensor.h"

namespace ninegrid {
namespace {

std::string cap_error(const std::string& name) {
  try {
    parse_isa_cap(name, "Options::isa");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(CpuFeatures, NamesAndBlocks) {
  for (Isa isa : {Isa::Ref, Isa::Avx2, Isa::Avx512, Isa::Neon, Isa::Dotprod}) {
    const std::string name = isa_name(isa);
    EXPECT_NE(name, "?");
    EXPECT_EQ(is_arm_isa(isa), name == "neon" || name == "dotprod") << name;
  }
  EXPECT_EQ(isa_block(Isa::Avx512), 16);
  EXPECT_EQ(isa_block(Isa::Avx2), 8);
  EXPECT_EQ(isa_block(Isa::Neon), 4);
  EXPECT_EQ(isa_block(Isa::Dotprod), 4);
  EXPECT_EQ(isa_block(Isa::Ref), 1);
}

TEST(CpuFeatures, CapsAreThisArchitecturesNamesNeverAboveTheHardware) {
  EXPECT_EQ(parse_isa_cap("ref", "x"), Isa::Ref);
  const std::string unknown = cap_error("sse9");
  EXPECT_NE(unknown.find("'sse9'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("Options::isa"), std::string::npos) << unknown;
#if defined(__aarch64__)
  const char* own[] = {"neon", "dotprod"};
  const char* other[] = {"avx2", "avx512"};
#else
  const char* own[] = {"avx2", "avx512"};
  const char* other[] = {"neon", "dotprod"};
#endif
  for (const char* name : own) {
    const Isa isa = parse_isa_cap(name, "x");
    EXPECT_TRUE(cpu_runs(isa)) << name;
    EXPECT_LE(isa, hardware_isa()) << name;
  }
  for (const char* name : other) {
    const std::string error = cap_error(name);
    EXPECT_NE(error.find("another architecture"), std::string::npos) << name << ": " << error;
  }
  // Another architecture's ISA asked for directly (tests, benchmarks) runs the reference kernels.
  for (Isa isa : {Isa::Avx2, Isa::Avx512, Isa::Neon, Isa::Dotprod}) {
    const Isa runs = runnable_isa(isa);
    if (!cpu_runs(isa)) {
      EXPECT_TRUE(runs == Isa::Ref || is_arm_isa(runs) == is_arm_isa(isa)) << isa_name(isa);
    }
    EXPECT_TRUE(cpu_runs(runs)) << isa_name(isa);
  }
  EXPECT_EQ(runnable_isa(Isa::Ref), Isa::Ref);
}

// What the CPU detection found, against what the emulator was told to be.
TEST(CpuFeatures, DetectsTheExpectedCpu) {
  const char* expected = std::getenv("NINEGRID_EXPECTED_HARDWARE_ISA");
  if (!expected || !*expected) GTEST_SKIP() << "NINEGRID_EXPECTED_HARDWARE_ISA not set";
  EXPECT_STREQ(isa_name(hardware_isa()), expected);
  const CpuFeatures& f = cpu_features();
  if (std::string(expected) == "neon") {
    EXPECT_TRUE(f.asimd && !f.asimddp);
  } else if (std::string(expected) == "dotprod") {
    EXPECT_TRUE(f.asimd && f.asimddp);
  }
}

}  // namespace
}  // namespace ninegrid
