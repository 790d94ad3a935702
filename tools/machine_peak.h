// The roofs of the roofline model, measured on this machine: the compute roof (one core's FMA peak:
// 12 independent FMA chains, enough to hide the FMA latency) and the memory roof (a streaming
// read+write over buffers much larger than the caches). Kernel efficiency is reported against these.
#pragma once

#include <string>

namespace ninegrid {

// How a measurement is timed: wall-clock, or the calling thread's CPU time. On a shared machine whose
// cores are time-sliced between processes only CPU-time rates are comparable, so the kernel benchmarks
// (which Google Benchmark times in CPU time) compare against a CPU-time peak.
enum class PeakClock { Wall, ThreadCpu };

// Peak fp32 GFLOP/s of one core with the vectors of `isa` ("avx512", "avx2", on Arm "neon" and "dotprod":
// 128-bit FMLA; anything else: scalar FMA),
// as ninegrid::Model::isa() names them. Throws std::invalid_argument if the CPU lacks that instruction
// set. Takes ~50 ms (more with ThreadCpu: the best of 9 runs rather than 3).
double measure_fma_peak_gflops(const std::string& isa, PeakClock clock = PeakClock::Wall);
// Peak int8 GOP/s of one core with AVX-512 VNNI (vpdpbusd: 64 multiply-adds per instruction); 0 if the
// CPU lacks it.
double measure_vnni_peak_gops(PeakClock clock = PeakClock::Wall);
// Sustained memory bandwidth of one core in GB/s (bytes read + bytes written per second). Takes ~100 ms.
double measure_memory_bandwidth_gbs();

}  // namespace ninegrid
