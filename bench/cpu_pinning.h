// Pinning a benchmark's threads to CPUs (Linux): the CPUs the process may run on, and pinning the calling
// thread to one of them. Shared by the benchmarks that measure one core against another.
#pragma once

#include <pthread.h>
#include <sched.h>

#include <cstddef>
#include <vector>

namespace ninegrid::bench {

// The CPUs in this process's affinity mask, lowest first, at most `most` of them.
inline std::vector<int> allowed_cpus(size_t most = CPU_SETSIZE) {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    for (int c = 0; c < CPU_SETSIZE && cpus.size() < most; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

// Pins the calling thread to `cpu`; false if the system refused.
inline bool pin_to_cpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

}  // namespace ninegrid::bench
